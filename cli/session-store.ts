import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import * as path from "node:path";

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
  /** Replaces `snapshot.json` atomically. */
  saveSnapshot(snapshot: unknown): void;
  /** Appends one line to `events.jsonl`. */
  appendEvent(record: unknown): void;
  /** Changes `meta.json` (atomically). */
  updateMeta(patch: Partial<Omit<SessionMeta, "id" | "createdAt">>): void;
  /** The last saved snapshot, or `undefined` when none was saved yet. */
  loadSnapshot(): unknown;
  /** Every record of `events.jsonl`; a torn last line (crash mid-append) is skipped. */
  loadEvents(): unknown[];
}

/** The sessions of one workspace. */
export interface SessionStore {
  readonly root: string;
  create(meta: Omit<SessionMeta, "id" | "createdAt" | "updatedAt" | "status">): Session;
  open(id: string): Session;
  /** Sessions, most recently updated first. */
  list(): SessionMeta[];
  /** The most recently updated session, if any. */
  latest(): Session | undefined;
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
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  try {
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  }
}

/** A new session id: sortable by time, unique enough for one workspace. */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

const SESSION_ID = /^[A-Za-z0-9._-]+$/;

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, "utf8"));
}

function openSession(dir: string, meta: SessionMeta): Session {
  const metaFile = path.join(dir, "meta.json");
  const snapshotFile = path.join(dir, "snapshot.json");
  const eventsFile = path.join(dir, "events.jsonl");
  let current = meta;
  return {
    id: meta.id,
    dir,
    get meta() {
      return current;
    },
    saveSnapshot(snapshot) {
      writeFileAtomic(snapshotFile, JSON.stringify(snapshot));
    },
    appendEvent(record) {
      appendFileSync(eventsFile, `${JSON.stringify(record)}\n`);
    },
    updateMeta(patch) {
      current = { ...current, ...patch, updatedAt: new Date().toISOString() };
      writeFileAtomic(metaFile, `${JSON.stringify(current, null, 2)}\n`);
    },
    loadSnapshot() {
      return existsSync(snapshotFile) ? readJson(snapshotFile) : undefined;
    },
    loadEvents() {
      if (!existsSync(eventsFile)) return [];
      const records: unknown[] = [];
      for (const line of readFileSync(eventsFile, "utf8").split("\n")) {
        if (!line.trim()) continue;
        try {
          records.push(JSON.parse(line));
        } catch {
          // A line torn by a crash mid-append: everything before it is intact.
        }
      }
      return records;
    },
  };
}

/**
 * The session store of a workspace: `<cwd>/.agent-machine/sessions/<id>/` holds `meta.json`,
 * `snapshot.json` (the persisted machine snapshot, replaced atomically) and `events.jsonl` (every
 * event, appended as it happens).
 *
 * @example
 * ```ts
 * const store = createSessionStore(process.cwd());
 * const session = store.create({ cwd: process.cwd(), provider: "anthropic", model: "claude-sonnet-4-5" });
 * session.saveSnapshot(agent.getPersistedSnapshot());
 * ```
 */
export function createSessionStore(cwd: string): SessionStore {
  const root = path.join(cwd, ".agent-machine", "sessions");

  const readMeta = (id: string): SessionMeta | undefined => {
    try {
      return readJson(path.join(root, id, "meta.json")) as SessionMeta;
    } catch {
      return undefined;
    }
  };

  const store: SessionStore = {
    root,
    create(fields) {
      const now = new Date();
      const id = newSessionId(now);
      const dir = path.join(root, id);
      mkdirSync(dir, { recursive: true });
      const meta: SessionMeta = {
        ...fields,
        id,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
        status: "idle",
      };
      const session = openSession(dir, meta);
      session.updateMeta({});
      return session;
    },
    open(id) {
      if (!SESSION_ID.test(id)) throw new Error(`Invalid session id "${id}"`);
      const meta = readMeta(id);
      if (!meta) {
        const known = store
          .list()
          .slice(0, 5)
          .map((m) => m.id);
        throw new Error(
          `No session "${id}" in ${root}${known.length ? ` (recent: ${known.join(", ")})` : " (there are none)"}`,
        );
      }
      const dir = path.join(root, id);
      // Temporary files of a save that a crash cut short: the real files are intact without them.
      for (const entry of readdirSync(dir)) {
        if (entry.startsWith(".") && entry.endsWith(".tmp")) rmSync(path.join(dir, entry), { force: true });
      }
      return openSession(dir, meta);
    },
    list() {
      if (!existsSync(root)) return [];
      const metas: SessionMeta[] = [];
      for (const entry of readdirSync(root)) {
        if (!SESSION_ID.test(entry) || !statSync(path.join(root, entry)).isDirectory()) continue;
        const meta = readMeta(entry);
        if (meta) metas.push(meta);
      }
      return metas.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id));
    },
    latest() {
      const [meta] = store.list();
      return meta ? store.open(meta.id) : undefined;
    },
  };
  return store;
}
