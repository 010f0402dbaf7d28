import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import type { Workspace } from "../core/workspace.js";
import { createWorkspace } from "../tools/workspace.js";

/** A temporary folder for tools to work in, with helpers to set it up and read it back. */
export interface TestWorkspace {
  /** The folder's real path: give it to `codingTools({ cwd })`, `createPermissions({ cwd })`. */
  readonly cwd: string;
  /** The workspace the built-in tools take (`createWriteFileTool({ workspace })`). */
  readonly workspace: Workspace;
  /** Writes a file (parent folders made), relative to the root. */
  write(path: string, content: string): void;
  /** A file's text, or `undefined` when there is none. */
  read(path: string): string | undefined;
  /** Every file below the root, relative, sorted (`.git/` and `node_modules/` included). */
  files(): string[];
  /** Deletes the folder. */
  remove(): void;
}

/**
 * A fresh temporary workspace holding `files`, for tests of tools that read and write files.
 *
 * @example
 * ```ts
 * const ws = createTestWorkspace({ "a.txt": "hello" });
 * const edit = createEditFileTool({ workspace: ws.workspace });
 * await runTool(edit, { path: "a.txt", old_string: "hello", new_string: "bye" });
 * ws.read("a.txt"); // "bye"
 * ws.remove();
 * ```
 */
export function createTestWorkspace(files: Record<string, string> = {}): TestWorkspace {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "agent-workspace-")));
  const write = (path: string, content: string) => {
    const absolute = join(cwd, path);
    mkdirSync(dirname(absolute), { recursive: true });
    writeFileSync(absolute, content);
  };
  for (const [path, content] of Object.entries(files)) write(path, content);
  return {
    cwd,
    workspace: createWorkspace(cwd),
    write,
    read: (path) => {
      const absolute = join(cwd, path);
      return existsSync(absolute) ? readFileSync(absolute, "utf8") : undefined;
    },
    files: () =>
      (
        readdirSync(cwd, { recursive: true, withFileTypes: true }) as {
          isFile(): boolean;
          name: string;
          parentPath?: string;
          path?: string;
        }[]
      )
        .filter((entry) => entry.isFile())
        .map((entry) =>
          relative(cwd, join(entry.parentPath ?? entry.path ?? cwd, entry.name))
            .split(sep)
            .join("/"),
        )
        .sort(),
    remove: () => rmSync(cwd, { recursive: true, force: true }),
  };
}
