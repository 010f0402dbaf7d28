// The session host's own protocol, for agent-machine's clients (`createRemoteAgentStore` of
// `agent-machine/react`): the agent's events as they are, numbered, as server-sent events. Where
// the chat protocols translate (and lose the machine's detail: progress lines, queued steering,
// the statechart's state), this one forwards, so a remote thread shows exactly what an agent in the
// page shows. `POST {base}/threads/{id}/run` starts a run (`{ message }`) or resumes a quiescent one
// (`{ approvals }` / `{ toolResults }`); `GET {base}/threads/{id}/events` follows the response in
// progress from its start (204 when there is none).
import type { AgentEvent } from "../core/events.js";
import type { AssistantMessage } from "../core/messages.js";
import { type EncoderFactory, SSE_HEADERS, sseFrame } from "./encoder.js";
import { idOf, objectOf, optionalString } from "./internal/json.js";
import { userMessageOf } from "./internal/thread-routes.js";
import {
  type ApprovalAnswer,
  type HostedThread,
  type HostProtocol,
  type ThreadInput,
  type ToolCallAnswer,
} from "./protocol.js";
import { AgentCallError } from "../core/agent-handle.js";

/**
 * The encoder of the agent-machine protocol: `{ type: "open", kind, runId, messages }`, then
 * `{ type: "event", seq, event }` for each event, then `{ type: "close", ending }`. A streamed
 * message's updates carry their delta and the one tool call they are about, not the whole partial
 * message each time (which would make a long answer cost its length squared).
 *
 * @example
 * ```ts
 * const host = createSessionHost({ agent: options, authorize, protocols: [aiSdkProtocol(), agentMachineProtocol()] });
 * ```
 */
export const agentMachineEncoder: EncoderFactory = () => ({
  headers: SSE_HEADERS,
  open: (context) =>
    sseFrame({ type: "open", kind: context.kind, runId: context.runId, messages: context.messages }),
  event: (event, seq) => sseFrame({ type: "event", seq, event: slim(event) }),
  close: (ending) => sseFrame({ type: "close", ending }),
});

/**
 * The agent-machine protocol's routes, for `createSessionHost({ protocols: [..., agentMachineProtocol()] })`.
 *
 * @example
 * ```ts
 * const host = createSessionHost({ agent: options, authorize, basePath: "/api", protocols: [aiSdkProtocol(), agentMachineProtocol()] });
 * // in the page: createRemoteAgentStore({ url: "/api", threadId })
 * ```
 */
export function agentMachineProtocol(): HostProtocol {
  return {
    name: "agent-machine",
    routes: [
      {
        method: "POST",
        path: "/threads/:id/run",
        async handle(request, { id }, host) {
          const body = objectOf(await host.readJson(request), "the body");
          const input = runInputOf(body);
          const thread = await host.thread(request, id, { create: input.message !== undefined });
          return thread.respond(input, agentMachineEncoder());
        },
      },
      {
        method: "GET",
        path: "/threads/:id/events",
        async handle(request, { id }, host) {
          let thread: HostedThread;
          try {
            thread = await host.thread(request, id);
          } catch (error) {
            if (error instanceof AgentCallError && error.status === 404)
              return new Response(null, { status: 204 });
            throw error;
          }
          return thread.reconnect(agentMachineEncoder()) ?? new Response(null, { status: 204 });
        },
      },
    ],
  };
}

/** `{ message }` (`{ text | content, id? }`), or `{ approvals, toolResults }`. */
function runInputOf(body: Record<string, unknown>): ThreadInput {
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

/** A `message_update` with its delta and, for a tool call's update, that call alone. */
function slim(event: AgentEvent): AgentEvent {
  if (event.type !== "message_update") return event;
  const { message } = event;
  const content: AssistantMessage["content"] =
    "toolCallId" in event
      ? message.content.filter((c) => c.type === "toolCall" && c.id === event.toolCallId)
      : [];
  return { ...event, message: { ...message, content } };
}
