import { type Dirent, readdirSync } from "node:fs";
import * as path from "node:path";

/** What {@link scanWorkspace} found. */
export interface WorkspaceScan {
  /** Entries (files or folders) whose name matched one of the patterns, at any depth. */
  matches: string[];
  /** Every `.git` entry (a folder, or a file pointing elsewhere) below the root, the root's own included. */
  repositories: string[];
  /** True when the walk stopped at `maxDirs` folders: deeper entries were not looked at. */
  truncated: boolean;
}

/**
 * Folders listed per command at most. The scan runs before every sandboxed command, so it must stay
 * cheap on a large monorepo (`node_modules` is never entered).
 */
export const MAX_SCANNED_DIRS = 20_000;

/**
 * Walks the workspace (synchronously, symlinks not followed, `node_modules` and the insides of `.git`
 * skipped) for entries whose name matches one of `patterns` and for repositories. The sandbox hides
 * or protects what it finds for the next command.
 *
 * @example
 * ```ts
 * scanWorkspace("/work/app", [/^\.env$/]); // { matches: ["/work/app/api/.env"], repositories: ["/work/app/.git"], ... }
 * ```
 */
export function scanWorkspace(
  root: string,
  patterns: readonly RegExp[],
  maxDirs = MAX_SCANNED_DIRS,
): WorkspaceScan {
  const matches: string[] = [];
  const repositories: string[] = [];
  const stack = [root];
  let listed = 0;
  while (stack.length > 0) {
    if (listed >= maxDirs) return { matches, repositories, truncated: true };
    const dir = stack.pop()!;
    listed++;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable or gone: nothing to protect there
    }
    for (const entry of entries) {
      const absolute = path.join(dir, entry.name);
      if (patterns.some((re) => re.test(entry.name))) matches.push(absolute);
      if (entry.name === ".git") {
        if (entry.isDirectory() || entry.isFile()) repositories.push(absolute);
        continue;
      }
      if (entry.isDirectory() && entry.name !== "node_modules") stack.push(absolute);
    }
  }
  return { matches, repositories, truncated: false };
}
