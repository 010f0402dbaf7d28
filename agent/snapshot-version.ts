import type { AnyStateMachine } from "xstate";
import type { AgentMessage } from "../core/messages.js";
import {
  type PersistedSnapshotData,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION_KEY,
  type SnapshotMigration,
  type SnapshotVersion,
} from "../core/snapshot-version.js";
import { machineStructureHash } from "./machine-structure.js";
import { messagesOfSnapshot } from "./snapshot-transcript.js";

/**
 * Thrown by `createAgent({ snapshot })` when a snapshot cannot be restored: written by another
 * machine version with no migration to this one, by a newer release, or not an agent snapshot at
 * all. Nothing is lost: `messages` holds the snapshot's transcript, every tool call answered, ready
 * for `createAgent({ ...options, messages: error.messages })`.
 *
 * @example
 * ```ts
 * try {
 *   agent = createAgent({ ...options, snapshot });
 * } catch (error) {
 *   if (!(error instanceof SnapshotVersionError)) throw error;
 *   agent = createAgent({ ...options, messages: error.messages });
 * }
 * ```
 */
export class SnapshotVersionError extends Error {
  override name = "SnapshotVersionError";
  constructor(
    message: string,
    /** The version the snapshot carries (`undefined` when it carries none). */
    readonly found: SnapshotVersion | undefined,
    /** The version this agent-machine reads and writes. */
    readonly expected: SnapshotVersion,
    /** The snapshot's transcript, every tool call answered. */
    readonly messages: AgentMessage[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The version of snapshots a machine writes.
 *
 * @example
 * ```ts
 * snapshotVersionOf(agentMachine); // { format: 1, machine: "64c8fa88055e" }
 * ```
 */
export function snapshotVersionOf(machine: AnyStateMachine): SnapshotVersion {
  return { format: SNAPSHOT_FORMAT, machine: machineStructureHash(machine) };
}

/** `format 1, machine 64c8fa88055e`: how errors and docs name a version. */
export function formatVersion(version: SnapshotVersion | undefined): string {
  return version ? `format ${version.format}, machine ${version.machine}` : "no version stamp";
}

/**
 * Adds the version stamp to a persisted snapshot.
 *
 * @example
 * ```ts
 * const json = stampSnapshot(actor.getPersistedSnapshot(), agentMachine);
 * json.snapshotVersion; // { format: 1, machine: "64c8fa88055e" }
 * ```
 */
export function stampSnapshot<T extends object>(
  persisted: T,
  machine: AnyStateMachine,
): T & { snapshotVersion: SnapshotVersion } {
  return { ...persisted, [SNAPSHOT_VERSION_KEY]: snapshotVersionOf(machine) } as T & {
    snapshotVersion: SnapshotVersion;
  };
}

/**
 * Checks a persisted snapshot against the machine that is to restore it and returns what XState
 * restores: the same version as it is, an older one through the chain of migrations from its
 * version to this one. A snapshot without a stamp is taken as this version (it came from
 * `actor.getPersistedSnapshot()` in this process) but must fit the machine. Anything else throws a
 * {@link SnapshotVersionError} naming both versions and carrying the transcript.
 *
 * @example
 * ```ts
 * const persisted = prepareSnapshotForRestore(saved, agentMachine, BUILT_IN_MIGRATIONS);
 * createActor(agentMachine, { snapshot: persisted });
 * ```
 */
export function prepareSnapshotForRestore(
  snapshot: unknown,
  machine: AnyStateMachine,
  migrations: readonly SnapshotMigration[],
): PersistedSnapshotData {
  const expected = snapshotVersionOf(machine);
  // A snapshot passed as its JSON text: read it for the error (its version, its transcript).
  const parsed = typeof snapshot === "string" ? parseJson(snapshot) : snapshot;
  const refuse = (found: SnapshotVersion | undefined, reason: string, cause?: unknown): never => {
    const messages = messagesOfSnapshot(parsed);
    throw new SnapshotVersionError(
      `Cannot restore this agent snapshot (${formatVersion(found)}) with this agent-machine ` +
        `(${formatVersion(expected)}): ${reason}. ` +
        (messages.length > 0
          ? `Its transcript (${messages.length} messages) is still readable: error.messages, or messagesOfSnapshot(snapshot).`
          : "It holds no transcript to recover."),
      found,
      expected,
      messages,
      cause === undefined ? undefined : { cause },
    );
  };

  if (typeof snapshot === "string" && isRecord(parsed)) {
    const holds = isVersion(parsed[SNAPSHOT_VERSION_KEY]) ? parsed[SNAPSHOT_VERSION_KEY] : undefined;
    return refuse(
      holds,
      "it is a string (the snapshot as JSON text), not the snapshot object: did you forget JSON.parse? " +
        "Pass createAgent({ snapshot: JSON.parse(saved) })",
    );
  }
  if (!isRecord(snapshot) || !isRecord(snapshot.context) || !Array.isArray(snapshot.context.messages)) {
    const stamp = isRecord(snapshot) ? snapshot[SNAPSHOT_VERSION_KEY] : undefined;
    if (isVersion(stamp) && isRecord(snapshot) && isRecord(snapshot.context)) {
      return refuse(
        stamp,
        `it is damaged: its context.messages is ${describe(snapshot.context.messages)}, not an array of messages`,
      );
    }
    const what = !isRecord(snapshot)
      ? `it is ${describe(snapshot)}`
      : !isRecord(snapshot.context)
        ? "it has no context"
        : "its context has no messages";
    return refuse(isVersion(stamp) ? stamp : undefined, `it is not a persisted agent snapshot (${what})`);
  }
  const stamp = snapshot[SNAPSHOT_VERSION_KEY];
  if (stamp !== undefined && !isVersion(stamp)) {
    return refuse(undefined, `its ${SNAPSHOT_VERSION_KEY} is malformed (${JSON.stringify(stamp)})`);
  }
  const { [SNAPSHOT_VERSION_KEY]: _stamp, ...unstamped } = snapshot;
  let data = unstamped as PersistedSnapshotData;
  let version = stamp ?? expected;

  if (version.format > expected.format) {
    return refuse(stamp, "it was written by a newer release; upgrade agent-machine to restore it");
  }
  const applied: SnapshotMigration[] = [];
  while (!sameVersion(version, expected)) {
    const step = migrations.find((migration) => sameVersion(migration.from, version));
    if (!step || applied.includes(step)) {
      const path = applied.length ? ` (migrated as far as ${formatVersion(version)})` : "";
      return refuse(stamp, `no migration is registered from its version${path}`);
    }
    try {
      data = step.migrate(data);
    } catch (error) {
      return refuse(stamp, `the migration "${step.description}" failed: ${errorText(error)}`, error);
    }
    applied.push(step);
    version = step.to;
  }

  const misfit = misfitOf(data, machine);
  if (misfit) return refuse(stamp, misfit);
  return data;
}

/**
 * Why a persisted snapshot cannot be restored by `machine`, if it cannot: a state the machine
 * lacks, or a child actor it does not know (child machines are checked the same way).
 */
function misfitOf(data: Record<string, any>, machine: AnyStateMachine, where = ""): string | undefined {
  if (data.status !== "active") return `${where}its status is ${JSON.stringify(data.status)}, not "active"`;
  const missing = missingState(machine.root as unknown as { states: Record<string, any> }, data.value);
  if (missing) return `${where}its state "${missing}" does not exist in this machine`;
  const actors =
    (machine as { implementations?: { actors?: Record<string, unknown> } }).implementations?.actors ?? {};
  for (const [id, child] of Object.entries(isRecord(data.children) ? data.children : {})) {
    const src = isRecord(child) ? child.src : undefined;
    const logic = typeof src === "string" ? actors[src] : undefined;
    if (!logic)
      return `${where}its child actor "${id}" runs ${JSON.stringify(src)}, which this machine does not know`;
    const childSnapshot = (child as { snapshot?: unknown }).snapshot;
    if (isMachine(logic) && isRecord(childSnapshot)) {
      const misfit = misfitOf(childSnapshot, logic, `${where}child "${id}": `);
      if (misfit) return misfit;
    }
  }
  return undefined;
}

function isMachine(logic: unknown): logic is AnyStateMachine {
  return isRecord(logic) && "root" in logic && "config" in logic;
}

/** The first state of `value` the machine lacks, as a dotted path. */
function missingState(node: { states: Record<string, any> }, value: unknown, path = ""): string | undefined {
  if (typeof value === "string") return node.states[value] ? undefined : `${path}${value}`;
  if (!isRecord(value)) return `${path}${JSON.stringify(value)}`;
  for (const [key, child] of Object.entries(value)) {
    const next = node.states[key];
    if (!next) return `${path}${key}`;
    const missing = missingState(next, child, `${path}${key}.`);
    if (missing) return missing;
  }
  return undefined;
}

function sameVersion(a: SnapshotVersion, b: SnapshotVersion): boolean {
  return a.format === b.format && a.machine === b.machine;
}

function isVersion(value: unknown): value is SnapshotVersion {
  return isRecord(value) && typeof value.format === "number" && typeof value.machine === "string";
}

function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
