import { dirname } from "node:path";
import type { ScheduleStore, WakeRecord } from "./schedule-store.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

/**
 * A store in one JSON file, written whole to a temporary file and renamed over the old one, so a
 * crash mid-write leaves the previous version (private to the user: mode 0600). Writes are
 * serialised. Fits thousands of schedules; for more, implement {@link ScheduleStore} on a database.
 *
 * @example
 * ```ts
 * const scheduler = createScheduler({ agents, store: createFileScheduleStore(".agent/schedules.json") });
 * await scheduler.start();
 * ```
 */
export function createFileScheduleStore(path: string): ScheduleStore {
  const records = new Map<string, WakeRecord>();
  let writing: Promise<void> = Promise.resolve();
  // The file is read once, before anything else: the scheduler and the late results share the
  // store, and a second `load` returns what is held, their writes included.
  let loaded: Promise<void> | undefined;
  const ensureLoaded = async () => {
    loaded ??= readAll(path).then((read) => {
      for (const record of read) records.set(record.id, record);
    });
    try {
      await loaded;
    } catch (error) {
      loaded = undefined;
      throw error;
    }
  };
  const save = () => {
    const text = JSON.stringify([...records.values()], null, 1);
    // A failed write does not stop the ones after it (each writes every record).
    writing = writing
      .catch(() => {})
      .then(async () => {
        await nodeFsPromises().mkdir(dirname(path), { recursive: true });
        const temporary = `${path}.${process.pid}.tmp`;
        await nodeFsPromises().writeFile(temporary, text, { mode: 0o600 });
        await nodeFsPromises().rename(temporary, path);
      });
    return writing;
  };
  return {
    async load() {
      await ensureLoaded();
      return [...records.values()].map((record) => structuredClone(record));
    },
    async put(record) {
      await ensureLoaded();
      records.set(record.id, structuredClone(record));
      return save();
    },
    async delete(id) {
      await ensureLoaded();
      records.delete(id);
      return save();
    },
  };
}

async function readAll(path: string): Promise<WakeRecord[]> {
  let text: string;
  try {
    text = await nodeFsPromises().readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Left as it is (nothing is written over a file that was not read): fix or move it, then start again.
    throw new Error(
      `${path}: not the JSON of a schedule store (${(error as Error).message}); it was left as it is`,
      { cause: error },
    );
  }
  if (!Array.isArray(parsed)) throw new Error(`${path}: not a list of schedules; it was left as it is`);
  parsed.forEach((entry, index) => {
    const problem = recordProblem(entry);
    // One bad entry would crash the load or wake no one; the file is left for a person to fix.
    if (problem) throw new Error(`${path}: entry ${index} ${problem}; it was left as it is`);
  });
  return parsed as WakeRecord[];
}

/**
 * What makes a stored entry unreadable as a record (a schedule or a late result's handle), else
 * `undefined`. Only what every record needs is checked: a schedule with nonsense in it is reported
 * when its slot comes, and waits.
 *
 * @example
 * ```ts
 * recordProblem(null); // "is not an object (null)"
 * recordProblem({ id: "daily", agentId: "ada" }); // undefined
 * ```
 */
export function recordProblem(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return `is not an object (${entry === null ? "null" : Array.isArray(entry) ? "a list" : typeof entry})`;
  }
  const { id, agentId } = entry as { id?: unknown; agentId?: unknown };
  if (typeof id !== "string" || id === "") return "has no id";
  if (typeof agentId !== "string" || agentId === "") return `(${JSON.stringify(id)}) has no agentId`;
  return undefined;
}
