import type { Dirent } from "node:fs";
import * as path from "node:path";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");

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
 * Folders never entered: installed packages, virtual environments, caches and build output, which
 * are large, regenerated, and not where a user keeps secrets or repositories of their own.
 */
export const UNSCANNED_DIRS: ReadonlySet<string> = new Set([
  "node_modules",
  ".venv",
  "venv",
  "__pycache__",
  ".tox",
  ".mypy_cache",
  ".pytest_cache",
  ".next",
  ".nuxt",
  ".turbo",
  ".cache",
  ".gradle",
  "target",
]);

/**
 * Folders listed per command at most. The scan runs before every sandboxed command, so it must stay
 * cheap on a large monorepo (`node_modules` is never entered).
 */
export const MAX_SCANNED_DIRS = 10_000;

/**
 * Walks the workspace breadth first (synchronously, symlinks not followed, {@link UNSCANNED_DIRS}
 * and the insides of `.git` skipped, at most `maxDirs` folders, the shallowest first) for entries
 * whose name matches one of `patterns` and for repositories. The sandbox hides or protects what it
 * finds for the next command.
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
  const queue = [root];
  for (let next = 0; next < queue.length; next++) {
    if (next >= maxDirs) return { matches, repositories, truncated: true };
    const dir = queue[next]!;
    let entries: Dirent[];
    try {
      entries = nodeFs().readdirSync(dir, { withFileTypes: true });
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
      if (entry.isDirectory() && !UNSCANNED_DIRS.has(entry.name)) queue.push(absolute);
    }
  }
  return { matches, repositories, truncated: false };
}
