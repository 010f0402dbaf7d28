// What the agent-machine protocol's run route and the side routes read from a body: a user
// message, and answers to waiting calls.
import type { UserMessage } from "../../core/messages.js";
import { AgentCallError } from "../../core/agent-handle.js";
import type { ApprovalAnswer, ThreadInput, ToolCallAnswer } from "../protocol.js";
import { idOf, objectOf, optionalString } from "./json.js";

/** `{ message }` (`{ text | content, id? }`), or `{ approvals, toolResults }`. */
export function runInputOf(body: Record<string, unknown>): ThreadInput {
  const input: ThreadInput = {};
  if (body.message !== undefined) input.message = userMessageOf(objectOf(body.message, "message"));
  if (body.approvals !== undefined) {
    if (!Array.isArray(body.approvals))
      throw new AgentCallError(400, "bad_request", "approvals must be an array");
    input.approvals = body.approvals.map((raw, i): ApprovalAnswer => {
      const answer = objectOf(raw, `approvals[${i}]`);
      if (typeof answer.approved !== "boolean") {
        throw new AgentCallError(400, "bad_request", `approvals[${i}].approved must be true or false`);
      }
      const reason = optionalString(answer.reason, `approvals[${i}].reason`);
      return {
        toolCallId: idOf(answer.toolCallId, `approvals[${i}].toolCallId`),
        approved: answer.approved,
        ...(reason !== undefined && { reason }),
        ...(answer.args !== undefined && { args: answer.args }),
      };
    });
  }
  if (body.toolResults !== undefined) {
    if (!Array.isArray(body.toolResults))
      throw new AgentCallError(400, "bad_request", "toolResults must be an array");
    input.toolResults = body.toolResults.map((raw, i): ToolCallAnswer => {
      const answer = objectOf(raw, `toolResults[${i}]`);
      const toolCallId = idOf(answer.toolCallId, `toolResults[${i}].toolCallId`);
      if (typeof answer.error === "string") return { toolCallId, error: answer.error };
      const result = answer.result;
      if (typeof result === "string") return { toolCallId, result };
      if (
        typeof result === "object" &&
        result !== null &&
        Array.isArray((result as { content?: unknown }).content)
      ) {
        return { toolCallId, result: result as Extract<ToolCallAnswer, { result: unknown }>["result"] };
      }
      throw new AgentCallError(
        400,
        "bad_request",
        `toolResults[${i}] needs a result (text or { content }) or an error`,
      );
    });
  }
  return input;
}

/** `{ text, id? }` or `{ content, id? }` (content: text or text/image blocks). */
export function userMessageOf(body: Record<string, unknown>): UserMessage {
  const id = body.id === undefined ? undefined : idOf(body.id, "id");
  const content = body.text ?? body.content;
  if (typeof content === "string") {
    if (content.trim() === "") throw new AgentCallError(400, "bad_request", "the message is empty");
    return { role: "user", content, timestamp: Date.now(), ...(id ? { id } : {}) };
  }
  if (!Array.isArray(content) || content.length === 0 || !content.every(isUserBlock)) {
    throw new AgentCallError(
      400,
      "bad_request",
      "text must be a string (or content an array of text/image blocks)",
    );
  }
  return { role: "user", content, timestamp: Date.now(), ...(id ? { id } : {}) };
}

function isUserBlock(block: unknown): block is { type: "text"; text: string } {
  if (typeof block !== "object" || block === null) return false;
  const b = block as Record<string, unknown>;
  if (b.type === "text") return typeof b.text === "string";
  return b.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string";
}
