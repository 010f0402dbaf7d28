import { summarizeArgs } from "./event-view.js";
import { visibleText } from "./terminal-text.js";

const record = (args: unknown): Record<string, unknown> =>
  args && typeof args === "object" ? (args as Record<string, unknown>) : {};

/**
 * The first line of what an approval is about, above its preview: the tool and, for a file tool,
 * the whole path (for `bash`, the model's description if it gave one: the command itself follows
 * in full, so it is not repeated). Invisible characters are shown as escapes; nothing is cut (the
 * screen wraps it).
 *
 * @example
 * ```ts
 * approvalHeading("write_file", { path: "src/a.ts", content: "…" }); // "Approval needed: write_file src/a.ts"
 * approvalHeading("bash", { command: "npm test" }); // "Approval needed: bash"
 * ```
 */
export function approvalHeading(toolName: string, args: unknown): string {
  const a = record(args);
  const about =
    toolName === "bash"
      ? typeof a.description === "string"
        ? `— ${a.description}`
        : ""
      : ((["path", "file_path", "pattern", "query", "url"]
          .map((k) => a[k])
          .find((v) => typeof v === "string") as string | undefined) ?? "");
  const shown = visibleText(about.trim(), { newlines: "mark" });
  return `Approval needed: ${visibleText(toolName, { newlines: "mark" })}${shown ? ` ${shown}` : ""}`;
}

/**
 * The approval question under the input line: which call (a `bash` command is in full just above
 * it, so only the tool is named) and the answers. The screen wraps it at any width, so every
 * answer shows, at 60 columns too.
 *
 * @example
 * ```ts
 * approvalQuestion("bash", { command: "npm test" });
 * // "? Allow bash  [y]es / [n]o / [r] no, say why / [a]lways for bash"
 * ```
 */
export function approvalQuestion(toolName: string, args: unknown): string {
  const tool = visibleText(toolName, { newlines: "mark" });
  const about = toolName === "bash" ? "" : summarizeArgs(toolName, args);
  return `? Allow ${tool}${about ? ` ${about}` : ""}  [y]es / [n]o / [r] no, say why / [a]lways for ${tool}`;
}
