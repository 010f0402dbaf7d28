import * as path from "node:path";
import { createRedactor, redactSecrets } from "../core/redact.js";
import { createImageStash, type ImageStash } from "./session-images.js";

// Node's modules load on first use, not with the package (issue 44): `--help` needs neither.
const nodeCrypto = () => process.getBuiltinModule("node:crypto");
const nodeFs = () => process.getBuiltinModule("node:fs");

/** A session's files and folders are its user's alone: transcripts hold what the tools read. */
const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

/**
 * Makes a session's folder, its files and its `images/` private to the user (0700 / 0600): a
 * session written by a version that left them world-readable is fixed when it is opened. Symbolic
 * links are left alone (never followed to change something else).
 */
export function makeSessionPrivate(dir: string): void {
  fixMode(dir, PRIVATE_DIR);
  for (const entry of safeReaddir(dir)) {
    const file = path.join(dir, entry);
    if (entry === "images") {
      fixMode(file, PRIVATE_DIR);
      for (const image of safeReaddir(file)) fixMode(path.join(file, image), PRIVATE_FILE);
    } else {
      fixMode(file, PRIVATE_FILE);
    }
  }
}

/** Sets a file's or folder's mode when it differs (never through a symbolic link). */
function fixMode(target: string, mode: number): void {
  try {
    const stat = nodeFs().lstatSync(target);
    if (stat.isSymbolicLink() || (stat.mode & 0o777) === mode) return;
    nodeFs().chmodSync(target, mode);
  } catch {
    // Gone meanwhile, or a file system without modes: nothing to fix.
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return nodeFs().lstatSync(dir).isDirectory() ? nodeFs().readdirSync(dir) : [];
  } catch {
    return [];
  }
}

/** What `meta.json` says about a session. */
export interface SessionMeta {
  id: string;
  createdAt: string;
  updatedAt: string;
  cwd: string;
  provider: string;
  model: string;
  /** The first prompt, shortened: what `--resume` lists. */
  title?: string;
  /** `running` while a run is under way (or when the process died during one), else `idle`. */
  status: "running" | "idle";
}

/** One session on disk: `<root>/<id>/{meta.json, snapshot.json, events.jsonl}`. */
export interface Session {
  readonly id: string;
  readonly dir: string;
  readonly meta: SessionMeta;
  /** Replaces `snapshot.json` atomically (not when it would be written the same again). */
  saveSnapshot(snapshot: unknown): void;
  /** Appends one line to `events.jsonl`. */
  appendEvent(record: unknown): void;
  /** Changes `meta.json` (atomically). */
  updateMeta(patch: Partial<Omit<SessionMeta, "id" | "createdAt">>): void;
  /**
   * The last saved snapshot, or `undefined` when none was saved yet; throws
   * {@link SessionDamagedError} when `snapshot.json` is damaged.
   */
  loadSnapshot(): unknown;
  /** Every record of `events.jsonl`; a torn last line (crash mid-append) is skipped. */
  loadEvents(): unknown[];
}

/** A session whose `meta.json` cannot be read, as `list()` shows it. */
export interface DamagedSessionListing {
  id: string;
  /** When its folder last changed (its meta cannot say). */
  updatedAt: string;
  /** What is wrong, e.g. `meta.json is not valid JSON (…)`. */
  damaged: string;
}

/** One entry of `list()`: a readable session, or a damaged one (never left out). */
export type SessionListing = (SessionMeta & { damaged?: undefined }) | DamagedSessionListing;

/** What can still be read of a session, whatever is damaged in it. */
export interface SessionInspection {
  id: string;
  dir: string;
  meta?: SessionMeta;
  /** Why `meta.json` cannot be used, when it cannot. */
  metaProblem?: string;
  /** The persisted snapshot, when `snapshot.json` exists and is intact. */
  snapshot?: unknown;
  /** Why `snapshot.json` cannot be used, when it exists and cannot. */
  snapshotProblem?: string;
  /** The readable records of `events.jsonl`. */
  events: unknown[];
  /** Lines of `events.jsonl` that are not valid JSON (a torn last line after a crash is one). */
  unreadableEventLines: number;
}

/**
 * A session that cannot be resumed as it is: names the session, the damaged file and why, and says
 * what can be recovered and how. Nothing is changed when it is thrown: the damaged files stay as
 * they are, for the user (or `--recover`) to use.
 */
export class SessionDamagedError extends Error {
  override name = "SessionDamagedError";
  constructor(
    readonly sessionId: string,
    readonly file: "meta.json" | "snapshot.json",
    readonly path: string,
    readonly problem: string,
    readonly inspection: SessionInspection,
  ) {
    super(damageReport(sessionId, file, path, problem, inspection));
  }
}

/** The sessions of one workspace. */
export interface SessionStore {
  readonly root: string;
  create(meta: Omit<SessionMeta, "id" | "createdAt" | "updatedAt" | "status">): Session;
  /** Opens a session; throws {@link SessionDamagedError} when its `meta.json` is damaged. */
  open(id: string): Session;
  /**
   * Sessions, most recently updated first, damaged ones included (marked). A date from the future
   * is not believed: such a session is listed by when its files changed, at most now.
   */
  list(): SessionListing[];
  /** The most recently updated session, if any; throws {@link SessionDamagedError} when it is damaged. */
  latest(): Session | undefined;
  /**
   * Reads what can be read of a session, without changing anything. `{ images: false }` leaves the
   * images of its transcript in their files (a list that only counts messages reads no screenshot).
   */
  inspect(id: string, options?: { images?: boolean }): SessionInspection;
}

/**
 * Writes `data` to `file` so that a crash at any point leaves either the old file or the new one,
 * never a mix: write a temporary file in the same directory, fsync it, rename it over the target,
 * then fsync the directory so the rename itself survives a power cut.
 *
 * @example
 * ```ts
 * writeFileAtomic("session/snapshot.json", JSON.stringify(snapshot));
 * ```
 */
export function writeFileAtomic(file: string, data: string): void {
  const dir = path.dirname(file);
  const temp = path.join(
    dir,
    `.${path.basename(file)}.${process.pid}.${nodeCrypto().randomBytes(4).toString("hex")}.tmp`,
  );
  const fd = nodeFs().openSync(temp, "w", 0o600);
  try {
    nodeFs().writeSync(fd, data);
    nodeFs().fsyncSync(fd);
  } finally {
    nodeFs().closeSync(fd);
  }
  nodeFs().renameSync(temp, file);
  try {
    const dirFd = nodeFs().openSync(dir, "r");
    try {
      nodeFs().fsyncSync(dirFd);
    } finally {
      nodeFs().closeSync(dirFd);
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  }
}

/**
 * A new session id, `YYYYMMDD-HHMMSSmmm-xxxxxx` (UTC, to the millisecond, then 6 random hex digits):
 * ids sort by creation time, also for two sessions started within the same second.
 */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:.]/g, "").replace("T", "-").slice(0, 18);
  return `${stamp}-${nodeCrypto().randomBytes(3).toString("hex")}`;
}

/** A file system error in words: `permission denied (EACCES)` rather than Node's whole message. */
function fileProblem(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const words = /^[A-Z]+: ([^,]+)/.exec(message ?? "")?.[1];
  return words && code ? `${words} (${code})` : String(message ?? error);
}

/** What a session id is made of: a folder name inside the sessions folder, never `.` or `..`. */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A file's JSON, `{ missing }` when it does not exist, or `{ problem }` when it cannot be read as JSON. */
function readJsonFile(
  file: string,
  parse: (text: string) => unknown = JSON.parse,
): { value: unknown } | { missing: true } | { problem: string } {
  let text: string;
  try {
    text = nodeFs().readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { missing: true };
    return { problem: `cannot be read (${(error as Error).message})` };
  }
  try {
    return { value: parse(text) };
  } catch (error) {
    return { problem: `is not valid JSON (${(error as Error).message})` };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function metaProblemOf(value: unknown, id: string): string | undefined {
  if (!isRecord(value)) return "does not describe a session (it is not an object)";
  if (value.id !== id) return `names another session (${JSON.stringify(value.id)})`;
  if (typeof value.updatedAt !== "string" || typeof value.createdAt !== "string")
    return "has no dates (createdAt, updatedAt)";
  return undefined;
}

function snapshotProblemOf(value: unknown): string | undefined {
  if (!isRecord(value)) return "does not hold a snapshot (it is not an object)";
  if (
    isRecord(value.context) &&
    value.context.messages !== undefined &&
    !Array.isArray(value.context.messages)
  )
    return "holds no transcript (context.messages is not a list)";
  return undefined;
}

function readEvents(
  file: string,
  parse: (text: string) => unknown = JSON.parse,
): { records: unknown[]; unreadable: number } {
  if (!nodeFs().existsSync(file)) return { records: [], unreadable: 0 };
  const records: unknown[] = [];
  let unreadable = 0;
  for (const line of nodeFs().readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      records.push(parse(line));
    } catch {
      // A line torn by a crash mid-append (or damaged otherwise): the others are intact.
      unreadable++;
    }
  }
  return { records, unreadable };
}

/** Messages the event log holds (each `message_end` but a retried attempt's, in order). */
export function messagesInEventLog(events: readonly unknown[]): number {
  return events.filter((e) => isRecord(e) && e.type === "message_end" && e.discarded !== true).length;
}

/**
 * Whether a session holds no message at all, neither in its snapshot nor in its event log: what
 * `/clear` (or quitting before the first prompt) leaves. Such a session is never what `--continue`
 * resumes, and `--resume` does not list it: there is nothing in it to go on from.
 *
 * @example
 * ```ts
 * isEmptySession(store.inspect(id, { images: false })); // true for a session never prompted
 * ```
 */
export function isEmptySession(inspection: SessionInspection): boolean {
  if (inspection.metaProblem !== undefined || inspection.snapshotProblem !== undefined) return false;
  const context = isRecord(inspection.snapshot) ? inspection.snapshot.context : undefined;
  const held = (key: string) =>
    isRecord(context) && Array.isArray(context[key]) ? (context[key] as unknown[]).length : 0;
  return held("messages") + held("pending") === 0 && messagesInEventLog(inspection.events) === 0;
}

/**
 * The session `--continue` resumes: the most recently updated one that holds a message. An empty
 * session (see {@link isEmptySession}) is passed over; a damaged one is not (it is opened, so the
 * damage is reported rather than an older session silently resumed instead).
 *
 * @example
 * ```ts
 * const session = latestResumable(createSessionStore(process.cwd()));
 * ```
 */
export function latestResumable(store: SessionStore): Session | undefined {
  for (const listing of store.list()) {
    if (listing.damaged === undefined && isEmptySession(store.inspect(listing.id, { images: false })))
      continue;
    return store.open(listing.id);
  }
  return undefined;
}

function damageReport(
  id: string,
  file: string,
  filePath: string,
  problem: string,
  inspection: SessionInspection,
): string {
  const lines = [
    `Session ${id} is damaged: ${file} ${problem}.`,
    `  ${filePath}`,
    "Nothing was changed: the damaged file is left as it is.",
  ];
  const recoverable: string[] = [];
  if (inspection.snapshot !== undefined) {
    const messages =
      (inspection.snapshot as { context?: { messages?: unknown[] } }).context?.messages?.length ?? 0;
    recoverable.push(`snapshot.json is intact (the transcript: ${messages} messages)`);
  }
  const logged = messagesInEventLog(inspection.events);
  if (inspection.events.length > 0) {
    recoverable.push(
      `events.jsonl holds ${inspection.events.length} events with ${logged} messages${
        inspection.unreadableEventLines
          ? ` (${inspection.unreadableEventLines} unreadable lines skipped)`
          : ""
      }`,
    );
  }
  if (recoverable.length === 0) {
    lines.push("Nothing can be recovered from it: there is no intact snapshot and no event log.");
  } else {
    lines.push(`What can be recovered: ${recoverable.join("; ")}.`);
    lines.push(
      `To go on from it, run: agent-machine --recover ${id}   (a new session starts from what is recoverable; this one stays as it is)`,
    );
  }
  return lines.join("\n");
}

function openSession(
  dir: string,
  meta: SessionMeta,
  inspect: () => SessionInspection,
  images: ImageStash = createImageStash(dir),
): Session {
  const metaFile = path.join(dir, "meta.json");
  const snapshotFile = path.join(dir, "snapshot.json");
  const eventsFile = path.join(dir, "events.jsonl");
  let current = meta;
  let lastSnapshot: string | undefined;
  // Secrets never reach the disk. Two redactors, each remembering the long strings of its last
  // value: a snapshot (and a run's closing event) holds mostly the transcript already redacted.
  const redactSnapshot = createRedactor();
  const redactEvent = createRedactor();
  return {
    id: meta.id,
    dir,
    get meta() {
      return current;
    },
    saveSnapshot(snapshot) {
      const json = images.stringify(redactSnapshot(snapshot));
      if (json === lastSnapshot) return;
      writeFileAtomic(snapshotFile, json);
      lastSnapshot = json;
    },
    appendEvent(record) {
      nodeFs().appendFileSync(eventsFile, `${images.stringify(redactEvent(record))}\n`, {
        mode: PRIVATE_FILE,
      });
    },
    updateMeta(patch) {
      current = redactSecrets({ ...current, ...patch, updatedAt: new Date().toISOString() });
      writeFileAtomic(metaFile, `${JSON.stringify(current, null, 2)}\n`);
    },
    loadSnapshot() {
      const read = readJsonFile(snapshotFile, images.parse);
      if ("missing" in read) {
        const inspection = inspect();
        if (inspection.snapshotProblem === undefined) return undefined;
        throw new SessionDamagedError(meta.id, "snapshot.json", snapshotFile, "is missing", inspection);
      }
      const problem = "problem" in read ? read.problem : snapshotProblemOf(read.value);
      if (problem !== undefined) {
        throw new SessionDamagedError(meta.id, "snapshot.json", snapshotFile, problem, inspect());
      }
      return (read as { value: unknown }).value;
    },
    loadEvents() {
      return readEvents(eventsFile, images.parse).records;
    },
  };
}

/**
 * When a session was last used, as far as it can be trusted: its stored `updatedAt`, unless that is
 * unreadable or later than `now` (a session dated 2099 would otherwise sort first and be what
 * `--continue` resumes); then the latest time its files changed that is not in the future either,
 * or the epoch when every one is (such a session sorts last).
 *
 * @example
 * ```ts
 * trustedUpdatedAt("2099-01-01T00:00:00.000Z", (now) => latestFileTimeUpTo(now)); // the files' time
 * ```
 */
export function trustedUpdatedAt(
  stored: string,
  changedAtMs: (notAfter: number) => number,
  now: number = Date.now(),
): string {
  const claimed = Date.parse(stored);
  if (Number.isFinite(claimed) && claimed <= now) return new Date(claimed).toISOString();
  return new Date(Math.min(changedAtMs(now), now)).toISOString();
}

/**
 * The session store of a workspace: `<root>/<id>/` holds `meta.json`,
 * `snapshot.json` (the persisted machine snapshot, replaced atomically) and `events.jsonl` (every
 * event, appended as it happens). `root` is where the command keeps the workspace's sessions
 * (`sessionsRoot`: the user's data folder); it defaults to `<cwd>/.agent-machine/sessions`, where
 * they were kept before.
 *
 * @example
 * ```ts
 * const store = createSessionStore(process.cwd());
 * const session = store.create({ cwd: process.cwd(), provider: "anthropic", model: "claude-sonnet-4-5" });
 * session.saveSnapshot(agent.getPersistedSnapshot());
 * ```
 */
export function createSessionStore(
  cwd: string,
  root: string = path.join(cwd, ".agent-machine", "sessions"),
): SessionStore {
  const inspect = (id: string, { images = true }: { images?: boolean } = {}): SessionInspection => {
    const dir = path.join(root, id);
    const inspection: SessionInspection = { id, dir, events: [], unreadableEventLines: 0 };
    const parse = images ? createImageStash(dir).parse : JSON.parse;
    const meta = readJsonFile(path.join(dir, "meta.json"));
    if ("value" in meta) {
      const problem = metaProblemOf(meta.value, id);
      if (problem === undefined) inspection.meta = meta.value as SessionMeta;
      else inspection.metaProblem = problem;
    } else {
      inspection.metaProblem = "missing" in meta ? "is missing" : meta.problem;
    }
    const events = readEvents(path.join(dir, "events.jsonl"), parse);
    inspection.events = events.records;
    inspection.unreadableEventLines = events.unreadable;
    const snapshot = readJsonFile(path.join(dir, "snapshot.json"), parse);
    if ("value" in snapshot) {
      const problem = snapshotProblemOf(snapshot.value);
      if (problem === undefined) inspection.snapshot = snapshot.value;
      else inspection.snapshotProblem = problem;
    } else if ("problem" in snapshot) {
      inspection.snapshotProblem = snapshot.problem;
    } else if (messagesInEventLog(events.records) > 0) {
      // The snapshot is written as the agent starts, before any message: a session whose log holds
      // messages lost it (deleted, a disk fault). Resumed without it, the model would get nothing.
      inspection.snapshotProblem = "is missing";
    }
    return inspection;
  };

  const isSessionDir = (id: string) => {
    try {
      return SESSION_ID.test(id) && nodeFs().statSync(path.join(root, id)).isDirectory();
    } catch {
      return false;
    }
  };

  /** The session's meta; throws when the folder is there but its meta is damaged. */
  const readMeta = (id: string): SessionMeta | undefined => {
    if (!isSessionDir(id)) return undefined;
    const read = readJsonFile(path.join(root, id, "meta.json"));
    const problem =
      "value" in read ? metaProblemOf(read.value, id) : "missing" in read ? "is missing" : read.problem;
    if (problem === undefined) return (read as { value: SessionMeta }).value;
    const file = path.join(root, id, "meta.json");
    throw new SessionDamagedError(id, "meta.json", file, problem, inspect(id));
  };

  /** When a session's folder (or any file in it) last changed: the order of damaged sessions. */
  const changedAtMs = (id: string, notAfter = Date.now()): number => {
    const dir = path.join(root, id);
    // A time from the future is as untrusted as a date: an archive can carry any mtime.
    const upTo = (ms: number) => (ms <= notAfter ? ms : 0);
    let latest = upTo(nodeFs().statSync(dir).mtimeMs);
    for (const entry of nodeFs().readdirSync(dir)) {
      try {
        latest = Math.max(latest, upTo(nodeFs().statSync(path.join(dir, entry)).mtimeMs));
      } catch {
        // gone meanwhile
      }
    }
    return latest;
  };

  const store: SessionStore = {
    root,
    create(fields) {
      const now = new Date();
      const id = newSessionId(now);
      const dir = path.join(root, id);
      const meta: SessionMeta = {
        ...fields,
        id,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
        status: "idle",
      };
      try {
        nodeFs().mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
        fixMode(root, PRIVATE_DIR);
        const session = openSession(dir, meta, () => inspect(id));
        session.updateMeta({});
        return session;
      } catch (error) {
        // No half-made session is left to be listed or resumed.
        try {
          nodeFs().rmSync(dir, { recursive: true, force: true });
        } catch {}
        throw new Error(
          `Cannot save the session in ${root}: ${fileProblem(error)}; choose a folder you can write to with --sessions-dir <dir>`,
          { cause: error },
        );
      }
    },
    open(id) {
      if (!SESSION_ID.test(id)) throw new Error(`Invalid session id "${id}"`);
      const meta = readMeta(id);
      if (!meta) {
        const known = store
          .list()
          .slice(0, 5)
          .map((m) => (m.damaged ? `${m.id} (damaged)` : m.id));
        throw new Error(
          `No session "${id}" in ${root}${known.length ? ` (recent: ${known.join(", ")})` : " (there are none)"}`,
        );
      }
      const dir = path.join(root, id);
      // Temporary files of a save that a crash cut short: the real files are intact without them.
      for (const entry of nodeFs().readdirSync(dir)) {
        if (entry.startsWith(".") && entry.endsWith(".tmp"))
          nodeFs().rmSync(path.join(dir, entry), { force: true });
      }
      // Written by a version that left them readable to everyone: private from now on.
      fixMode(root, PRIVATE_DIR);
      makeSessionPrivate(dir);
      return openSession(dir, meta, () => inspect(id));
    },
    list() {
      if (!nodeFs().existsSync(root)) return [];
      const listings: SessionListing[] = [];
      const now = Date.now();
      for (const entry of nodeFs().readdirSync(root)) {
        if (!isSessionDir(entry)) continue;
        try {
          const meta = readMeta(entry);
          if (meta)
            listings.push({
              ...meta,
              updatedAt: trustedUpdatedAt(meta.updatedAt, (upTo) => changedAtMs(entry, upTo), now),
            });
        } catch (error) {
          if (!(error instanceof SessionDamagedError)) throw error;
          listings.push({
            id: entry,
            updatedAt: new Date(changedAtMs(entry, now)).toISOString(),
            damaged: `${error.file} ${error.problem}`,
          });
        }
      }
      return listings.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id));
    },
    latest() {
      // The most recent session, damaged or not: a damaged one is reported, never skipped for an older one.
      const [listing] = store.list();
      return listing ? store.open(listing.id) : undefined;
    },
    inspect(id, options) {
      if (!SESSION_ID.test(id)) throw new Error(`Invalid session id "${id}"`);
      return inspect(id, options);
    },
  };
  return store;
}
