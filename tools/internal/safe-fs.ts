import type { FileHandle } from "node:fs/promises";
import { lazy } from "../../core/lazy.js";
import * as path from "node:path";
import { WorkspaceError } from "./workspace-error.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

// The workspace check (`Workspace.resolve`) looks at a path; between that look and the open, another
// process can swap a folder for a symlink to elsewhere. These functions close that window: what is
// written is reached from the workspace root one folder at a time, each opened without following
// links (`/proc/self/fd/<fd>/<name>` is the openat(2) Node lacks), and what is read is verified after
// opening, by the real path of the open descriptor. Where /proc is missing (macOS), they fall back to
// opening with O_NOFOLLOW on the last component, a narrower guarantee (see docs/tools.md).

/** open(2)'s flags, read on first use like the module they come from. */
const flags = lazy(() => nodeFs().constants);

/** Whether descriptors can be resolved and used as folders through /proc (Linux). */
const hasProcFd = lazy(() => process.platform === "linux" && nodeFs().existsSync("/proc/self/fd"));

function fdPath(handle: FileHandle, name?: string): string {
  return name === undefined ? `/proc/self/fd/${handle.fd}` : `/proc/self/fd/${handle.fd}/${name}`;
}

function isInside(root: string, absolute: string): boolean {
  const rel = path.relative(root, absolute);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function changedError(relative: string, what: string): WorkspaceError {
  return new WorkspaceError(
    `"${relative}" changed while it was being opened: ${what}. Nothing was read or written; try again once the workspace is settled`,
  );
}

/** The real location of an open descriptor; `undefined` where it cannot be known. */
async function realPathOf(handle: FileHandle): Promise<string | undefined> {
  if (!hasProcFd()) return undefined;
  const target = await nodeFsPromises().readlink(fdPath(handle));
  return target.endsWith(" (deleted)") ? target.slice(0, -" (deleted)".length) : target;
}

/**
 * Opens `absolute` (a path `Workspace.resolve` returned) for reading, refusing to follow a symlink in
 * its last component and, on Linux, verifying that the opened file really lies inside `root`
 * (whatever happened to its folders meanwhile). Never blocks on a FIFO. The caller closes the handle.
 *
 * @example
 * ```ts
 * const handle = await openForReadInside(ws.root, resolved.absolute, resolved.relative);
 * try { console.log(await handle.readFile("utf8")); } finally { await handle.close(); }
 * ```
 */
export async function openForReadInside(
  root: string,
  absolute: string,
  relative: string,
): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await nodeFsPromises().open(
      absolute,
      flags().O_RDONLY | flags().O_NOFOLLOW | flags().O_NONBLOCK,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw changedError(relative, "it is now a symbolic link");
    throw error;
  }
  try {
    const real = await realPathOf(handle);
    if (real !== undefined && !isInside(root, real)) {
      throw changedError(relative, "a folder on its path now leads outside the workspace");
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Opens the folder `absolute` for listing, with the same guarantees as {@link openForReadInside}.
 * Its entries are then read with `readdir(handleDirPath(handle))`.
 *
 * @example
 * ```ts
 * const dir = await openDirInside(ws.root, abs, rel);
 * try { console.log(await readdir(handleDirPath(dir))); } finally { await dir.close(); }
 * ```
 */
export async function openDirInside(root: string, absolute: string, relative: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await nodeFsPromises().open(
      absolute,
      flags().O_RDONLY | flags().O_DIRECTORY | flags().O_NOFOLLOW,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") throw changedError(relative, "it is no longer a folder");
    throw error;
  }
  try {
    const real = await realPathOf(handle);
    if (real !== undefined && !isInside(root, real)) {
      throw changedError(relative, "a folder on its path now leads outside the workspace");
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The path under which an open folder's entries can be read or created: its descriptor's /proc path
 * on Linux (so a folder swapped afterwards changes nothing), else its own path.
 */
export function handleDirPath(handle: FileHandle, fallback: string): string {
  return hasProcFd() ? fdPath(handle) : fallback;
}

/**
 * Opens the folder `relativeDir` of the workspace, walking from the root one folder at a time
 * without following symlinks, and creating missing folders when `create` is set. A component that
 * is (or became) a symlink or a file is refused; nothing is created outside the workspace.
 */
async function openDirBeneath(root: string, relativeDir: string, create: boolean): Promise<FileHandle> {
  let current = await nodeFsPromises().open(root, flags().O_RDONLY | flags().O_DIRECTORY);
  const realRoot = await realPathOf(current);
  if (realRoot !== undefined && realRoot !== root) {
    await current.close();
    throw new WorkspaceError(`The workspace root ${root} has moved; nothing was written`);
  }
  const parts = relativeDir === "." || relativeDir === "" ? [] : relativeDir.split("/");
  let walked = "";
  try {
    for (const part of parts) {
      walked = walked === "" ? part : `${walked}/${part}`;
      const next = hasProcFd() ? fdPath(current, part) : path.join(root, walked);
      let handle: FileHandle | undefined;
      for (let attempt = 0; handle === undefined; attempt++) {
        try {
          handle = await nodeFsPromises().open(
            next,
            flags().O_RDONLY | flags().O_DIRECTORY | flags().O_NOFOLLOW,
          );
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT" && create && attempt < 3) {
            await nodeFsPromises()
              .mkdir(next)
              .catch((mkdirError: NodeJS.ErrnoException) => {
                if (mkdirError.code === "ENOENT")
                  throw changedError(walked, "a folder on its path was removed");
                if (mkdirError.code !== "EEXIST") throw mkdirError;
              });
            continue;
          }
          if (code === "ENOENT") throw changedError(walked, "a folder on its path was removed");
          if (code === "ENOTDIR" && (await isPlainFile(next))) {
            throw new WorkspaceError(
              `"${walked}" is a file, not a folder, so nothing can be written inside it. Write to another path, or remove or rename the file first`,
            );
          }
          if (code === "ELOOP" || code === "ENOTDIR") {
            throw changedError(
              walked,
              "it is no longer a folder inside the workspace (a symbolic link or a file took its place)",
            );
          }
          throw error;
        }
      }
      await current.close();
      current = handle;
    }
    return current;
  } catch (error) {
    await current.close();
    throw error;
  }
}

/** Whether `file` is a regular file (not a symlink): the model named a file as a folder. */
async function isPlainFile(file: string): Promise<boolean> {
  const info = await nodeFsPromises()
    .lstat(file)
    .catch(() => undefined);
  return info?.isFile() ?? false;
}

/** What {@link writeFileInside} found and did. */
export interface WriteInsideResult {
  /** The file did not exist before. */
  created: boolean;
}

/**
 * Writes `data` to the workspace file `relative` (a path `Workspace.resolveForWrite` returned), safe
 * against a folder swapped for a symlink at any moment: its folders are opened (and, when missing,
 * created) one at a time from the root without following links, and the file is written as a new
 * file in that opened folder and renamed over the old one. So nothing is ever created or written
 * outside the workspace, a reader never sees half a file, a hard link to the old file is not written
 * through, and the file's permission bits are kept. With `exclusive` the file is only created, never
 * replaced (an existing file is an `EEXIST` error).
 *
 * @example
 * ```ts
 * const { relative } = await ws.resolveForWrite("src/new.ts");
 * await writeFileInside(ws.root, relative, "export {};\n");
 * ```
 */
export async function writeFileInside(
  root: string,
  relative: string,
  data: string | Uint8Array,
  options: { mustExist?: boolean; exclusive?: boolean } = {},
): Promise<WriteInsideResult> {
  const name = path.posix.basename(relative);
  const dirRelative = path.posix.dirname(relative);
  const dir = await openDirBeneath(root, dirRelative, !options.mustExist);
  try {
    const base = handleDirPath(dir, path.join(root, dirRelative));
    const target = `${base}/${name}`;
    const existing = await nodeFsPromises()
      .lstat(target)
      .catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined;
        throw error;
      });
    if (existing?.isSymbolicLink()) throw changedError(relative, "it is now a symbolic link");
    if (existing?.isDirectory()) throw new Error(`${relative} is a directory`);
    if (existing && !existing.isFile()) throw new Error(`${relative} is not a regular file`);
    if (!existing && options.mustExist) throw changedError(relative, "the file is gone");
    if (options.exclusive) {
      // Create only, never replace: written in place (O_EXCL also refuses a symlink put there).
      const handle = await nodeFsPromises().open(
        target,
        flags().O_WRONLY | flags().O_CREAT | flags().O_EXCL | flags().O_NOFOLLOW,
        0o666,
      );
      try {
        await handle.writeFile(data);
      } finally {
        await handle.close();
      }
      return { created: true };
    }

    const { randomBytes } = process.getBuiltinModule("node:crypto"); // on first use (issue 44)
    const temp = `${base}/.${name}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await nodeFsPromises()
      .open(temp, flags().O_WRONLY | flags().O_CREAT | flags().O_EXCL | flags().O_NOFOLLOW, 0o666)
      .catch((error: NodeJS.ErrnoException) => {
        // The folder we hold was removed meanwhile: nothing can be created in it.
        if (error.code === "ENOENT") throw changedError(relative, "its folder was removed");
        throw error;
      });
    try {
      try {
        if (existing) await handle.chmod(existing.mode & 0o7777);
        await handle.writeFile(data);
      } finally {
        await handle.close();
      }
      await nodeFsPromises().rename(temp, target);
    } catch (error) {
      await nodeFsPromises()
        .unlink(temp)
        .catch(() => undefined);
      if ((error as NodeJS.ErrnoException).code === "ENOENT")
        throw changedError(relative, "its folder was removed");
      throw error;
    }
    return { created: existing === undefined };
  } finally {
    await dir.close();
  }
}
