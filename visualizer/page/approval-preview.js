// What an approval card shows about the call it approves: the assistant text that proposed it, the
// command of a bash call as one block, the change of an edit as a diff, the arguments otherwise. Plain
// data, no DOM: the page renders it and the tests call it directly. The CLI's approvalPreview
// (cli/file-changes.ts) shows the same things from the workspace's files; the page has no files, so an
// edit's diff is of its old and new strings.

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
 * A line diff of `before` → `after` (longest common subsequence, for the short strings of an edit):
 * rows of `{ sign: " " | "-" | "+", text }`.
 *
 * @example
 * lineDiff("a\nb", "a\nc"); // [{ sign: " ", text: "a" }, { sign: "-", text: "b" }, { sign: "+", text: "c" }]
 */
export function lineDiff(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  // Past a few hundred lines each, the table grows too large: show all removed, then all added.
  if (a.length * b.length > 250_000)
    return [...a.map((text) => ({ sign: "-", text })), ...b.map((text) => ({ sign: "+", text }))];
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const rows = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      rows.push({ sign: " ", text: a[i] });
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
      // Removed lines before added ones, as `diff -u` writes them.
      rows.push({ sign: "-", text: a[i++] });
    } else rows.push({ sign: "+", text: b[j++] });
  }
  return rows;
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
    return { kind: "diff", path: String(a.path ?? ""), rows: lineDiff(a.old_string, a.new_string) };
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
