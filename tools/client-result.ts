import type { ToolResult } from "../core/tool.js";

/**
 * A client's answer to a client-run call (`resolveToolCall`, in process or on a durable session)
 * as the call's result, or the reason it cannot be one: text, or a {@link ToolResult} whose
 * content is text and image blocks.
 *
 * @example
 * ```ts
 * clientResultOf("blue"); // { content: [{ type: "text", text: "blue" }] }
 * clientResultOf({ content: "blue" }); // 'the result must be text or a ToolResult (…)'
 * ```
 */
export function clientResultOf(result: unknown): ToolResult | string {
  if (typeof result === "string") return { content: [{ type: "text", text: result }] };
  if (
    typeof result === "object" &&
    result !== null &&
    Array.isArray((result as ToolResult).content) &&
    (result as ToolResult).content.every(
      (block) =>
        (block?.type === "text" && typeof block.text === "string") ||
        (block?.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string"),
    )
  ) {
    return result as ToolResult;
  }
  return 'the result must be text or a ToolResult ({ content: [{ type: "text", text }], isError? })';
}
