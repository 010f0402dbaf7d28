// What an approval card shows about the call it approves: the assistant text that proposed it, the
// command of a bash call as one block, the change of an edit as a diff, the arguments otherwise. Plain
// data, no DOM: the page renders it and the tests call it directly. The CLI's approvalPreview
// (cli/file-changes.ts) shows the same things from the workspace's files, with the same diff
// (diff-rows.js); the page has no files, so an edit's diff is of its old and new strings.
import { diffRows } from "./diff-rows.js";

/** The text of the assistant message that holds this tool call, or "" (an older message left the model). */
export function proposingText(messages, toolCallId) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    if (!message.content.some((part) => part.type === "toolCall" && part.id === toolCallId)) continue;
    return message.content
      .filter((part) => part.type === "text")
      .map((part) => part.text)
      .join("")
      .trim();
  }
  return "";
}

/**
 * What a card shows for a call: `{ kind: "command", text }` for bash, `{ kind: "diff", path, rows }` for
 * an edit or a write, `{ kind: "args", text }` (indented JSON) for any other tool.
 *
 * @example
 * approvalPreview("bash", { command: "npm run deploy" }); // { kind: "command", text: "npm run deploy" }
 */
export function approvalPreview(toolName, args) {
  const a = args && typeof args === "object" ? args : {};
  if (typeof a.command === "string" && (toolName === "bash" || toolName.endsWith("bash")))
    return { kind: "command", text: a.command };
  if (toolName === "edit_file" && typeof a.old_string === "string" && typeof a.new_string === "string")
    return { kind: "diff", path: String(a.path ?? ""), rows: diffRows(a.old_string, a.new_string) };
  if (toolName === "write_file" && typeof a.content === "string")
    return {
      kind: "diff",
      path: String(a.path ?? ""),
      rows: a.content
        .replace(/\n$/, "")
        .split("\n")
        .map((text) => ({ sign: "+", text })),
    };
  return { kind: "args", text: JSON.stringify(args ?? {}, null, 2) };
}
