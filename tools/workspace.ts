import * as path from "node:path";
import { writeFileInside } from "./internal/safe-fs.js";
import { WorkspaceError } from "./internal/workspace-error.js";
import type { ResolvedPath, Workspace } from "../core/workspace.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

export type { ResolvedPath, Workspace } from "../core/workspace.js";

/**
 * Folders no tool may write into, whatever the permission rules say.
 *
 * @example
 * ```ts
 * if (PROTECTED_WRITE_DIRS.includes(firstSegment)) console.log("read-only for the agent");
 * ```
 */
export const PROTECTED_WRITE_DIRS: readonly string[] = [".git", ".husky", "node_modules"];

/**
 * Where cut tool results keep their full output, relative to the workspace root. Its parent folder
 * gets a `.gitignore` of `*`, so none of it ends up in a commit.
 */
export const TOOL_OUTPUT_DIR = ".agent-machine/tool-output";

export { WorkspaceError };

/**
 * The protected folder a path segment names, if any. Compared as macOS and Windows file systems
 * compare names: without case (`.GIT/hooks` is `.git/hooks` there) and, for Windows, without
 * trailing dots and spaces (`.git.` is `.git`).
 */
function protectedDirOf(segment: string): string | undefined {
  const name = segment.replace(/[. ]+$/, "").toLowerCase();
  return PROTECTED_WRITE_DIRS.find((dir) => dir === name);
}

/**
 * A workspace from a root folder, or the workspace itself: what every built-in tool's `workspace`
 * option accepts.
 *
 * @example
 * ```ts
 * const workspace = toWorkspace(process.cwd());
 * ```
 */
export function toWorkspace(workspace: string | Workspace): Workspace {
  return typeof workspace === "string" ? createWorkspace(workspace) : workspace;
}

/**
 * Creates a workspace sandbox rooted at `root`. Relative paths resolve against the root; absolute
 * paths are accepted only when they lie inside it. Symlinks are followed with `realpath`, and for a
 * file that does not exist yet the nearest existing parent is checked, so a link pointing out of the
 * workspace cannot be used to read or write outside it.
 *
 * @example
 * ```ts
 * const ws = createWorkspace("/home/me/project");
 * const { absolute } = await ws.resolve("src/index.ts");
 * await ws.resolveForWrite(".git/config"); // throws WorkspaceError
 * ```
 */
export function createWorkspace(root: string): Workspace {
  const realRoot = nodeFs().realpathSync(path.resolve(root));

  const relative = (absolute: string): string => {
    const rel = path.relative(realRoot, absolute);
    return rel === "" ? "." : rel.split(path.sep).join("/");
  };

  const isInside = (absolute: string): boolean => {
    const rel = path.relative(realRoot, absolute);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  };

  const resolve = async (input: string): Promise<ResolvedPath> => {
    if (typeof input !== "string" || input.trim() === "") throw new WorkspaceError("Path is empty");
    if (input.includes("\0")) throw new WorkspaceError("Path contains a NUL byte");
    // A shell would expand it; here it would name a folder "~" inside the workspace.
    if (input === "~" || input.startsWith("~/") || input.startsWith("~\\")) {
      throw new WorkspaceError(
        `Path "${input}" starts with ~, which file tools do not expand (the home folder is outside the workspace); use a path relative to the workspace root`,
      );
    }
    const lexical = path.resolve(realRoot, input);
    if (!isInside(lexical)) {
      throw new WorkspaceError(
        `Path "${input}" is outside the workspace (${realRoot}); use a path inside it, relative to the workspace root`,
      );
    }
    const real = await realpathOfNearest(lexical);
    if (!isInside(real)) {
      throw new WorkspaceError(
        `Path "${input}" resolves through a symlink to ${real}, which is outside the workspace (${realRoot})`,
      );
    }
    return { absolute: real, relative: relative(real) };
  };

  const resolveForWrite = async (input: string): Promise<ResolvedPath> => {
    const resolved = await resolve(input);
    // Any component, so nested folders (packages/x/node_modules) and the folders themselves count.
    let protectedDir: string | undefined;
    for (const part of resolved.relative.split("/")) protectedDir ??= protectedDirOf(part);
    if (protectedDir !== undefined) {
      throw new WorkspaceError(
        `Writing into ${protectedDir}/ is not allowed ("${input}"): ${PROTECTED_WRITE_DIRS.map((d) => `${d}/`).join(", ")} are protected`,
      );
    }
    return resolved;
  };

  const saveToolOutput = async (fileName: string, text: string): Promise<string> => {
    if (!/^[A-Za-z0-9._-]+$/.test(fileName))
      throw new WorkspaceError(`Invalid tool output file name "${fileName}"`);
    // Through the sandbox, and written the way write_file writes (folders opened one by one without
    // following links), so a .agent-machine swapped for a symlink cannot lead the write outside.
    const ignore = await resolveForWrite(`${path.posix.dirname(TOOL_OUTPUT_DIR)}/.gitignore`);
    await writeFileInside(realRoot, ignore.relative, "*\n", { exclusive: true }).catch(() => {});
    const file = await resolveForWrite(`${TOOL_OUTPUT_DIR}/${fileName}`);
    await writeFileInside(realRoot, file.relative, text, { exclusive: true });
    return file.relative;
  };

  return { root: realRoot, resolve, resolveForWrite, relative, saveToolOutput };
}

/**
 * The real path of `absolute`; for a path that does not exist, the real path of its nearest existing
 * parent joined with the missing rest, so not-yet-created files are checked too.
 */
async function realpathOfNearest(absolute: string, depth = 0): Promise<string> {
  if (depth > 40) throw new WorkspaceError(`Too many levels of symbolic links in ${absolute}`);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await nodeFsPromises().realpath(current);
      return missing.length === 0 ? real : path.join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      // A dangling symlink: writing to it would create its target, so follow the target instead.
      const link = await nodeFsPromises()
        .readlink(current)
        .catch(() => undefined);
      if (link !== undefined) {
        const target = path.resolve(path.dirname(current), link);
        return realpathOfNearest(path.join(target, ...missing.reverse()), depth + 1);
      }
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}
