import type { SnapshotMigration } from "../core/snapshot-version.js";

/**
 * The migrations this release ships, oldest first: one for every change of the agent machine's
 * structure hash (or of `SNAPSHOT_FORMAT`) since snapshots were first stamped, so a snapshot written
 * by any earlier release restores. The rule for adding one is in docs/snapshots.md.
 */
export const BUILT_IN_MIGRATIONS: readonly SnapshotMigration[] = [];
