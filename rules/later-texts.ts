import type { ImageContent, TextContent } from "../core/messages.js";
import type { ToolResult } from "../core/tool.js";
import { cutText } from "../tools/result-budget.js";
import type { LaterResultRecord } from "./later-record.js";

// What the model reads about a tool that answers later: the call's own answer, then exactly one
// message per handle (the result, a failure, a timeout, or a cancellation).

/**
 * The answer the call gets at once: the work started, its result will come as a message.
 *
 * @example
 * ```ts
 * startedText({ id: "later_1", toolName: "render", deadline: Date.now() + 600_000 } as LaterResultRecord);
 * ```
 */
export function startedText(record: LaterResultRecord): string {
  const by = record.deadline === undefined ? "" : `, at the latest by ${iso(record.deadline)}`;
  return (
    `Started ${record.toolName} in the background (handle ${record.id}). Its result will come later, ` +
    `in a message of its own${by}: do not wait for it or call ${record.toolName} again for it.`
  );
}

/**
 * The message that brings a result (an error result says the work failed): a header naming the
 * call, then the result's text (cut to `maxChars`, head and tail) and images.
 *
 * @example
 * ```ts
 * resultContent(record, { content: [{ type: "text", text: "video.mp4, 12 s" }] }, 50_000);
 * ```
 */
export function resultContent(
  record: LaterResultRecord,
  result: ToolResult,
  maxChars: number,
): string | (TextContent | ImageContent)[] {
  const header = result.isError
    ? `${record.toolName} (handle ${record.id}, started ${iso(record.startedAt)}) failed:`
    : `The result of ${record.toolName} (handle ${record.id}, started ${iso(record.startedAt)}):`;
  const parts = result.content.map((part) =>
    part.type === "text" ? { type: "text" as const, text: cut(part.text, maxChars) } : part,
  );
  if (parts.every((part) => part.type === "text")) {
    return [header, ...parts.map((part) => part.text)].join("\n\n");
  }
  return [{ type: "text", text: header }, ...parts];
}

/**
 * The message a handle's timeout brings.
 *
 * @example
 * ```ts
 * timedOutText(record); // "render (handle later_1) timed out: no result within 10 min. …"
 * ```
 */
export function timedOutText(record: LaterResultRecord): string {
  const within =
    record.deadline === undefined ? "" : ` within ${duration(record.deadline - record.startedAt)}`;
  return (
    `${record.toolName} (handle ${record.id}) timed out: no result${within}. ` +
    "Its work was stopped; no result will come."
  );
}

/**
 * The notice a cancelled handle leaves for the agent's next turn.
 *
 * @example
 * ```ts
 * cancelledText(record, "the user closed the ticket");
 * ```
 */
export function cancelledText(record: LaterResultRecord, reason?: string): string {
  const why = reason?.trim() ? `: ${reason.trim()}` : "";
  return `${record.toolName} (handle ${record.id}) was cancelled${why}. No result will come.`;
}

function cut(text: string, maxChars: number): string {
  return cutText(text, maxChars, ({ cutChars }) => `[… ${cutChars} characters cut …]`).text;
}

function iso(time: number): string {
  return new Date(time).toISOString();
}

/** A duration the model reads at a glance: `45 s`, `10 min`, `2 h`, `1.5 h`. */
export function duration(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}
