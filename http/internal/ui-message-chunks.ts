// A UI message as the chunks that build it: what a resumed stream sends first when the response in
// progress continues an assistant message (after an Approve, a client-run tool's output, a decision
// on a side route). The AI SDK's transport treats a resumed stream as the whole message (a reloaded
// page has nothing else to build on), so the replay must carry the message's earlier parts too:
// without them its chunks name calls the client no longer has ("No tool invocation found ...").
import type { UIMessageChunk } from "../ai-sdk-stream.js";
import type { UIMessage } from "../ui-messages.js";
import { approvalReason } from "./ai-sdk-client-version.js";

/**
 * The chunks that rebuild `message`'s parts on a client, after its `start` chunk: a step per
 * `step-start`, text and reasoning whole, each tool call's input then where it stands.
 *
 * @example
 * ```ts
 * chunksOfUIMessage({ id: "a1", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: "Hi" }] });
 * // start-step, text-start, text-delta "Hi", text-end, finish-step
 * ```
 */
export function chunksOfUIMessage(message: UIMessage): UIMessageChunk[] {
  const chunks: UIMessageChunk[] = [];
  let stepOpen = false;
  for (const [index, part] of message.parts.entries()) {
    const id = `${message.id}:rebuilt:${index}`;
    switch (part.type) {
      case "step-start":
        if (stepOpen) chunks.push({ type: "finish-step" });
        chunks.push({ type: "start-step" });
        stepOpen = true;
        break;
      case "text":
        chunks.push(
          { type: "text-start", id },
          { type: "text-delta", id, delta: part.text },
          { type: "text-end", id },
        );
        break;
      case "reasoning":
        chunks.push(
          { type: "reasoning-start", id },
          { type: "reasoning-delta", id, delta: part.text },
          { type: "reasoning-end", id },
        );
        break;
      case "dynamic-tool":
        chunks.push(...toolChunks(part));
        break;
      default:
        // Data parts and steered messages are their own chunks.
        chunks.push(part);
    }
  }
  if (stepOpen) chunks.push({ type: "finish-step" });
  return chunks;
}

function toolChunks(part: UIMessage["parts"][number]): UIMessageChunk[] {
  const { toolCallId, toolName, input } = part;
  const chunks: UIMessageChunk[] = [
    { type: "tool-input-available", toolCallId, toolName, input, dynamic: true },
  ];
  if (part.state === "output-available")
    chunks.push({ type: "tool-output-available", toolCallId, output: part.output, dynamic: true });
  else if (part.state === "output-error")
    chunks.push({ type: "tool-output-error", toolCallId, errorText: part.errorText, dynamic: true });
  else if (part.state === "output-denied") chunks.push({ type: "tool-output-denied", toolCallId });
  else if (part.state === "approval-requested") {
    const approval = part.approval as { id: string; descriptor?: unknown };
    chunks.push({
      type: "tool-approval-request",
      approvalId: approval.id,
      toolCallId,
      // A sub-agent's call shown on its top call's part: what it is comes back with it.
      ...(approval.descriptor !== undefined && { approvalDescriptor: approval.descriptor }),
      reason: approvalReason(String(toolName)),
    });
  }
  return chunks;
}
