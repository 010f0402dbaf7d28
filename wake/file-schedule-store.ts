import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ScheduleRecord, ScheduleStore } from "./schedule-store.js";

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
  const records = new Map<string, ScheduleRecord>();
  let writing: Promise<void> = Promise.resolve();
  const save = () => {
    const text = JSON.stringify([...records.values()], null, 1);
    writing = writing.then(async () => {
      await mkdir(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, path);
    });
    return writing;
  };
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed)) throw new Error(`${path}: not a list of schedules`);
      records.clear();
      for (const record of parsed as ScheduleRecord[]) records.set(record.id, record);
      return [...records.values()].map((record) => structuredClone(record));
    },
    put(record) {
      records.set(record.id, structuredClone(record));
      return save();
    },
    delete(id) {
      records.delete(id);
      return save();
    },
  };
}
