// Which `ai` major a chat request comes from. ai 6 and ai 7 send the same request (same body, same
// headers), and the first request of a chat carries nothing but the user's message. What differs is
// what each keeps of the stream: ai 7 stores the `reason` of a `tool-approval-request` as the
// approval's `requestReason` and sends it back with the answer; ai 6 drops it. The host sends a
// reason with every approval request, so an answer tells the clients apart exactly where it matters
// (only ai 7 takes the `tool-approval-response` the resumed run starts with).
import type { AiSdkTarget } from "../ui-messages.js";

type Json = Record<string, unknown>;

/**
 * The client a chat request comes from, as far as its messages show: `7` when a tool part carries
 * an approval with the `requestReason` only ai 7 keeps, else `6`: the stream both majors accept
 * (no `reset-step`, `steering-message` or `tool-approval-response`).
 *
 * @example
 * ```ts
 * clientTargetOf([{ role: "assistant", parts: [{ type: "dynamic-tool", approval: { id: "c1", requestReason: "…" } }] }]); // 7
 * ```
 */
export function clientTargetOf(messages: readonly Json[]): AiSdkTarget {
  for (const message of messages) {
    if (message.role !== "assistant" || !Array.isArray(message.parts)) continue;
    for (const part of message.parts as unknown[]) {
      const approval = (part as { approval?: unknown } | null)?.approval;
      if (approval && typeof (approval as Json).requestReason === "string") return 7;
    }
  }
  return 6;
}

/** The reason sent with an approval request: what ai 7 shows and sends back (see above). */
export function approvalReason(toolName: string): string {
  return `${toolName} needs your approval`;
}
