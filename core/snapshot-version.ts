/**
 * The layout of a persisted agent snapshot. Bump it when the meaning of the saved data changes in
 * a way the machine's structure hash cannot see (a value's unit, a message field's meaning), and
 * register a migration from the previous version. Format 2: every message carries an `id`.
 */
export const SNAPSHOT_FORMAT = 2;

/** Which agent machine wrote a persisted snapshot: the format and a hash of the machine's structure. */
export interface SnapshotVersion {
  format: number;
  /** `machineStructureHash(agentMachine)` of the writer. */
  machine: string;
}

/**
 * Turns a snapshot written by one machine version into what the next version reads. Migrations
 * ship with the release that changes the machine (see docs/snapshots.md); apps may pass their own
 * (`createAgent({ snapshotMigrations })`).
 *
 * @example
 * ```ts
 * const addAnswerFlag: SnapshotMigration = {
 *   from: { format: 1, machine: "64c8fa88055e" },
 *   to: { format: 1, machine: "a1b2c3d4e5f6" },
 *   description: "run.answeringLimit (the answer at a limit) is new",
 *   migrate: (snapshot) => ({ ...snapshot, context: { ...snapshot.context, run: { ...snapshot.context.run, answeringLimit: false } } }),
 * };
 * ```
 */
export interface SnapshotMigration {
  from: SnapshotVersion;
  to: SnapshotVersion;
  /** What changed, for the error message when a later step fails. */
  description: string;
  /** Receives the snapshot without its version stamp and returns it as `to` would have written it. */
  migrate(snapshot: PersistedSnapshotData): PersistedSnapshotData;
}

/** A persisted snapshot as JSON: XState's fields (`value`, `context`, `children`, …). */
export type PersistedSnapshotData = { context: Record<string, any> } & Record<string, any>;

/** The key a persisted snapshot carries its {@link SnapshotVersion} under. */
export const SNAPSHOT_VERSION_KEY = "snapshotVersion";
