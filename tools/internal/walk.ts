import type { Dirent } from "node:fs";
import * as path from "node:path";
import { handleDirPath, openDirInside } from "./safe-fs.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

/** Folders the listing and search tools skip unless asked for explicitly. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([".git", "node_modules"]);

/** One entry found by {@link walk}. */
export interface WalkEntry {
  /** Path relative to the workspace root, `/`-separated. */
  relative: string;
  absolute: string;
  isDirectory: boolean;
  /** A symbolic link (to a file or a folder; never followed by the walk). */
  isSymbolicLink: boolean;
}

/**
 * Walks `startAbsolute` depth-first in sorted order, yielding files and folders. Skips `.git` and
 * `node_modules` below the start, does not follow symlinked folders (so it cannot leave the workspace
 * or loop), lists each folder through a descriptor verified to lie inside `root` (so a folder swapped
 * for a symlink mid-walk is skipped, not listed), and stops between entries when `signal` fires.
 *
 * @example
 * ```ts
 * for await (const entry of walk(ws.root, ws.root)) console.log(entry.relative);
 * ```
 */
export async function* walk(
  root: string,
  startAbsolute: string,
  options: { maxDepth?: number; signal?: AbortSignal } = {},
): AsyncGenerator<WalkEntry> {
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const stack: { dir: string; depth: number }[] = [{ dir: startAbsolute, depth: 1 }];
  while (stack.length > 0) {
    if (options.signal?.aborted) return;
    const { dir, depth } = stack.pop()!;
    let entries: Dirent[];
    try {
      const handle = await openDirInside(root, dir, path.relative(root, dir) || ".");
      try {
        entries = await nodeFsPromises().readdir(handleDirPath(handle, dir), { withFileTypes: true });
      } finally {
        await handle.close();
      }
    } catch {
      continue; // unreadable (or swapped) folder: skip it, as rg does
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const entry of entries) {
      const absolute = path.join(dir, entry.name);
      const relative = path.relative(root, absolute).split(path.sep).join("/");
      const isDirectory = entry.isDirectory();
      if (isDirectory && SKIPPED_DIRS.has(entry.name)) continue;
      yield { relative, absolute, isDirectory, isSymbolicLink: entry.isSymbolicLink() };
      if (isDirectory && depth < maxDepth) subdirs.push(absolute);
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push({ dir: subdirs[i]!, depth: depth + 1 });
  }
}
