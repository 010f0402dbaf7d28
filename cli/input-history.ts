import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { userDataDir, workspaceKey } from "./session-location.js";

/** Lines a workspace's history keeps (the oldest go first). */
export const HISTORY_MAX = 500;

/**
 * The lines typed in a workspace, oldest first, walked with Up and Down as a shell does: Up from
 * the line being typed keeps it as a draft, Down past the newest gives it back.
 */
export interface InputHistory {
  /** The entry before the one shown (the newest first); `undefined` at the oldest. */
  up(current: string): string | undefined;
  /** The entry after the one shown, or the draft past the newest; `undefined` when not walking. */
  down(): string | undefined;
  /** A line sent: the newest entry (not twice in a row), saved; the walk starts over. */
  add(line: string): void;
  readonly entries: readonly string[];
}

/**
 * Where a workspace's typed lines are kept: `<user data folder>/history/<workspace key>.jsonl`,
 * next to its sessions and out of the repository.
 *
 * @example
 * ```ts
 * historyFile("/home/ana/src/app", process.env); // ".../agent-machine/history/home-ana-src-app-3f2a9c1d.jsonl"
 * ```
 */
export function historyFile(cwd: string, env: Record<string, string | undefined>): string {
  return path.join(userDataDir(env), "history", `${workspaceKey(cwd)}.jsonl`);
}

/**
 * A history kept in `file` (one JSON string a line, readable only by the user: it holds what was
 * typed), or in memory only without one. A line that cannot be read is skipped; a file that cannot
 * be written leaves the history in memory (the session goes on).
 *
 * @example
 * ```ts
 * const history = createInputHistory(historyFile(cwd, process.env));
 * history.add("npm test");
 * history.up(""); // "npm test"
 * ```
 */
export function createInputHistory(file?: string, max = HISTORY_MAX): InputHistory {
  const entries = file ? readHistory(file).slice(-max) : [];
  /** The entry shown, as an index into `entries`; `entries.length`: the draft. */
  let at = entries.length;
  let draft = "";
  let writable = file !== undefined;
  return {
    get entries() {
      return entries;
    },
    up(current) {
      if (at === 0) return undefined;
      if (at === entries.length) draft = current;
      at--;
      return entries[at];
    },
    down() {
      if (at >= entries.length) return undefined;
      at++;
      return at === entries.length ? draft : entries[at];
    },
    add(line) {
      draft = "";
      const kept = line.trim() !== "" && entries.at(-1) !== line;
      if (kept) entries.push(line);
      const over = entries.length > max;
      if (over) entries.splice(0, entries.length - max);
      at = entries.length;
      if (!kept || !writable) return;
      try {
        mkdirSync(path.dirname(file!), { recursive: true, mode: 0o700 });
        if (over) {
          writeFileSync(file!, entries.map((e) => `${JSON.stringify(e)}\n`).join(""), { mode: 0o600 });
        } else appendFileSync(file!, `${JSON.stringify(line)}\n`, { mode: 0o600 });
        chmodSync(file!, 0o600);
      } catch {
        writable = false;
      }
    },
  };
}

function readHistory(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "string") lines.push(value);
    } catch {
      // A torn last line (killed mid-write): the others still count.
    }
  }
  return lines;
}
