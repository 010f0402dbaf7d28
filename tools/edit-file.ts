import { z } from "zod";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { openForReadInside, writeFileInside } from "./internal/safe-fs.js";
import { toWorkspace, type Workspace } from "./workspace.js";

/** Options of {@link createEditFileTool}. */
export interface EditFileToolOptions {
  /** Workspace root (a path) or a {@link Workspace}. */
  workspace: string | Workspace;
  /** Largest file edited in memory. Default 10 MB. */
  maxFileBytes?: number;
}

/** `details` of an edit_file result. */
export interface EditFileDetails {
  path: string;
  replacements: number;
  /** 1-based line of the first replacement. */
  firstLine: number;
}

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    path: z.string().describe("File path, relative to the workspace root"),
    old_string: z
      .string()
      .min(1)
      .describe("The exact text to replace; it must occur exactly once unless replace_all"),
    new_string: z.string().describe("The replacement text"),
    replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one"),
  }),
);

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  let index = haystack.indexOf(needle);
  while (index !== -1) {
    count++;
    index = haystack.indexOf(needle, index + needle.length);
  }
  return count;
}

/** Reads the file to edit through a descriptor verified to lie inside the workspace. */
async function readInside(
  root: string,
  absolute: string,
  relative: string,
  shown: string,
  maxFileBytes: number,
): Promise<string> {
  const handle = await openForReadInside(root, absolute, relative).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") throw new Error(`File not found: ${shown} (use write_file to create it)`);
    if (error.code === "ENOTDIR") {
      throw new Error(`File not found: ${shown} (a part of its path is a file, not a folder)`);
    }
    if (error.code === "EISDIR") throw new Error(`${shown} is not a regular file`);
    throw error;
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`${shown} is not a regular file`);
    if (info.size > maxFileBytes) {
      throw new Error(`${shown} has ${info.size} bytes, more than the ${maxFileBytes} bytes edit_file edits`);
    }
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * The 1-based line where `needle` would match `text` if each line's leading and trailing whitespace
 * were ignored (tabs for spaces, a stray `\r`): what the model got wrong when an edit finds nothing.
 *
 * @example
 * ```ts
 * lineOfLooseMatch("a\n\tb\n", "    b"); // 2
 * ```
 */
export function lineOfLooseMatch(text: string, needle: string): number | undefined {
  const wanted = needle.split("\n").map((line) => line.trim());
  while (wanted.length > 1 && wanted.at(-1) === "") wanted.pop();
  if (wanted.every((line) => line === "")) return undefined;
  const lines = text.split("\n").map((line) => line.trim());
  // The needle may start and end inside a line: its first line ends one, its last starts one.
  const fits = (start: number) =>
    wanted.length === 1
      ? lines[start]!.includes(wanted[0]!)
      : lines[start]!.endsWith(wanted[0]!) &&
        wanted.slice(1, -1).every((line, i) => lines[start + 1 + i] === line) &&
        lines[start + wanted.length - 1]!.startsWith(wanted.at(-1)!);
  for (let start = 0; start + wanted.length <= lines.length; start++) {
    if (fits(start)) return start + 1;
  }
  return undefined;
}

/**
 * One `edit_file` call applied to a file's text: the new text, how many replacements and the line of
 * the first. Throws the error the model reads when the old text is missing, ambiguous or the same as
 * the new. Shared by every side that does the I/O (the disk here, an ACP editor's buffers).
 *
 * @example
 * ```ts
 * applyEdit("a b", { path: "f", old_string: "a", new_string: "c" }, "f"); // { updated: "c b", replacements: 1, firstLine: 1 }
 * ```
 */
export function applyEdit(
  text: string,
  args: z.output<ReturnType<typeof parameters>>,
  relative: string,
): { updated: string; replacements: number; firstLine: number } {
  if (args.old_string === args.new_string)
    throw new Error("old_string and new_string are the same; nothing to do");
  let { old_string: oldString, new_string: newString } = args;
  let count = countOccurrences(text, oldString);
  // Models write "\n"; a Windows-style file has "\r\n". Match it the way the file spells it.
  if (count === 0 && text.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r\n")) {
    oldString = oldString.replace(/\n/g, "\r\n");
    newString = newString.replace(/\r?\n/g, "\r\n");
    count = countOccurrences(text, oldString);
  }
  if (count === 0) {
    const near = lineOfLooseMatch(text, oldString);
    const hint =
      near === undefined
        ? "read the file again to copy the current text."
        : `it does match at line ${near} if each line's leading and trailing whitespace is ignored, so the indentation (tabs or spaces?) or line ends differ: read the file again there and copy the lines exactly.`;
    throw new Error(
      `old_string was not found in ${relative} (0 matches). It must match exactly, including whitespace and indentation; ${hint}`,
    );
  }
  if (count > 1 && !args.replace_all) {
    throw new Error(
      `old_string matches ${count} times in ${relative}; it must be unique. Include more surrounding lines to pick one, or set replace_all to replace all ${count}.`,
    );
  }
  const firstIndex = text.indexOf(oldString);
  const firstLine = text.slice(0, firstIndex).split("\n").length;
  // A replacer function, so "$&" or "$1" in new_string stay literal.
  const updated = args.replace_all
    ? text.split(oldString).join(newString)
    : text.replace(oldString, () => newString);
  return { updated, replacements: args.replace_all ? count : 1, firstLine };
}

/**
 * The result the model reads after an edit.
 *
 * @example
 * ```ts
 * editResult("a.ts", 1, 3).content; // [{ type: "text", text: "Edited a.ts: 1 replacement (first at line 3)" }]
 * ```
 */
export function editResult(
  relative: string,
  replacements: number,
  firstLine: number,
): ToolResult<EditFileDetails> {
  return {
    content: [
      {
        type: "text",
        text: `Edited ${relative}: ${replacements} replacement${replacements === 1 ? "" : "s"} (first at line ${firstLine})`,
      },
    ],
    details: { path: relative, replacements, firstLine },
  };
}

/**
 * The `edit_file` tool: replaces an exact piece of text in a file. The text must occur exactly once
 * (or `replace_all` is set); otherwise the model gets an error that says how often it occurred, and
 * the file is left unchanged.
 *
 * @example
 * ```ts
 * const edit = createEditFileTool({ workspace: process.cwd() });
 * ```
 */
export function createEditFileTool(
  options: EditFileToolOptions,
): Tool<z.output<ReturnType<typeof parameters>>, EditFileDetails> {
  checkOptionKeys("createEditFileTool", options, { workspace: true, maxFileBytes: true });
  const workspace = toWorkspace(options.workspace);
  const maxFileBytes = options.maxFileBytes ?? 10 * 1024 * 1024;
  return defineTool({
    name: "edit_file",
    description:
      "Replaces old_string with new_string in a file of the workspace. old_string must match the file exactly (whitespace included) and occur exactly once; include surrounding lines to make it unique, or set replace_all to change every occurrence.",
    parameters: parameters(),
    readOnly: false,
    workspace,
    async execute(args): Promise<ToolResult<EditFileDetails>> {
      const { absolute, relative } = await workspace.resolveForWrite(args.path);
      const text = await readInside(workspace.root, absolute, relative, args.path, maxFileBytes);
      const { updated, replacements, firstLine } = applyEdit(text, args, relative);
      await writeFileInside(workspace.root, relative, updated, { mustExist: true });
      return editResult(relative, replacements, firstLine);
    },
  });
}
