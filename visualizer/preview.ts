import type { VisualizerMessage } from "./wire.js";

/** Characters of a tool result the live page gets: more than the transcript shows (1,200). */
export const PREVIEW_CHARS = 2_000;

type Part = { type?: string; text?: string; data?: string; [key: string]: unknown };

/** A text cut to `max` characters, saying how much was left out. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… [${(text.length - max).toLocaleString("en-US")} more characters not sent to the page]`;
}

/** Content parts as previews: texts cut, image bytes left out (the page shows "[image]"). */
function previewParts(content: unknown, max: number): unknown {
  if (!Array.isArray(content)) return typeof content === "string" ? cut(content, max) : content;
  let changed = false;
  const parts = (content as Part[]).map((part) => {
    if (part?.type === "text" && typeof part.text === "string" && part.text.length > max) {
      changed = true;
      return { ...part, text: cut(part.text, max) };
    }
    if (part?.type === "image" && typeof part.data === "string" && part.data.length > 0) {
      changed = true;
      return { ...part, data: "" };
    }
    return part;
  });
  return changed ? parts : content;
}

/**
 * A message as the live page gets it: tool results (and images) as previews, not whole. A 120-turn run
 * whose tools return 200 KB each would otherwise send a late tab 100 MB it never shows; the agent, its
 * transcript and recordings keep everything.
 *
 * @example
 * ```ts
 * const data = JSON.stringify(previewForPage(toWire(event)));
 * ```
 */
export function previewForPage(message: VisualizerMessage, max = PREVIEW_CHARS): VisualizerMessage {
  if (message.kind !== "event") return message;
  const event = message.event as { type: string; [key: string]: unknown };
  const withContent = (holder: unknown): unknown => {
    if (!holder || typeof holder !== "object") return holder;
    const content = (holder as { content?: unknown }).content;
    const preview = previewParts(content, max);
    return preview === content ? holder : { ...holder, content: preview };
  };
  let next: Record<string, unknown> | undefined;
  switch (event.type) {
    case "tool_execution_end": {
      const result = withContent(event.result);
      if (result !== event.result) next = { ...event, result };
      break;
    }
    case "tool_execution_update": {
      const partialResult = withContent(event.partialResult);
      if (partialResult !== event.partialResult) next = { ...event, partialResult };
      break;
    }
    case "turn_end": {
      // The turn's results are in the transcript already: previews here.
      const results = event.toolResults;
      if (Array.isArray(results)) {
        const previews = results.map(withContent);
        if (previews.some((preview, i) => preview !== results[i])) next = { ...event, toolResults: previews };
      }
      break;
    }
    case "agent_end":
      // Every message of the run, again: the page has them all, message by message.
      if (Array.isArray(event.messages))
        next = { ...event, messages: `[${event.messages.length} messages: see the transcript]` };
      break;
    case "message_start":
    case "message_end": {
      const role = (event.message as { role?: string } | undefined)?.role;
      if (role !== "toolResult" && role !== "user") break;
      const inner = withContent(event.message);
      if (inner !== event.message) next = { ...event, message: inner };
      break;
    }
  }
  return next ? ({ ...message, event: next } as VisualizerMessage) : message;
}
