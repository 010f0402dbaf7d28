// The session host's own protocol, for agent-machine's clients (`createRemoteAgentStore` of
// `agent-machine/react`): the agent's events as they are, numbered, as server-sent events. Where
// the chat protocols translate (and lose the machine's detail: progress lines, queued steering,
// the statechart's state), this one forwards, so a remote thread shows exactly what an agent in the
// page shows. `POST {base}/threads/{id}/run` starts a run (`{ message }`) or resumes a quiescent one
// (`{ approvals }` / `{ toolResults }`); `GET {base}/threads/{id}/events` follows the response in
// progress from its start (204 when there is none), or with `?runId=…&seq=…` that run's events from
// that seq as the thread's agent keeps them (204 when it does not).
import type { AgentEvent } from "../core/events.js";
import type { AssistantMessage } from "../core/messages.js";
import { type EncoderFactory, type ResponseContext, SSE_HEADERS, sseFrame } from "./encoder.js";
import { objectOf } from "./internal/json.js";
import { runInputOf } from "./internal/run-input.js";
import type { HostedThread, HostProtocol } from "./protocol.js";
import { AgentCallError } from "../core/agent-handle.js";

/**
 * The encoder of the agent-machine protocol: `{ type: "open", kind, runId, messages }`, then
 * `{ type: "event", seq, event }` for each event (`agent_start`'s with the run's `runId`), then
 * `{ type: "close", ending }`. A streamed
 * message's updates carry their delta and the one tool call they are about, not the whole partial
 * message each time (which would make a long answer cost its length squared).
 *
 * @example
 * ```ts
 * const host = createSessionHost({ agent: options, authorize, protocols: [aiSdkProtocol(), agentMachineProtocol()] });
 * ```
 */
export const agentMachineEncoder: EncoderFactory = () => {
  let opened: ResponseContext | undefined;
  return {
    headers: SSE_HEADERS,
    open: (context) => {
      opened = context;
      return sseFrame({ type: "open", kind: context.kind, runId: context.runId, messages: context.messages });
    },
    // A run's first event names it: a client that started the run learns its id there.
    event: (event, seq) =>
      event.type === "agent_start"
        ? sseFrame({ type: "event", seq, event, runId: opened?.currentRunId?.() ?? opened?.runId })
        : sseFrame({ type: "event", seq, event: slim(event) }),
    close: (ending) => sseFrame({ type: "close", ending }),
  };
};

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
          const from = replayFrom(new URL(request.url).searchParams);
          return thread.reconnect(agentMachineEncoder(), from) ?? new Response(null, { status: 204 });
        },
      },
    ],
  };
}

/**
 * `?runId=…&seq=…`: the run's events from that seq (what `remoteAgentHandle`'s `eventsSince` asks),
 * rather than the response in progress from its start; `seq` defaults to 0.
 */
function replayFrom(query: URLSearchParams): { runId: string; seq: number } | undefined {
  const runId = query.get("runId");
  if (runId === null) return undefined;
  const seq = Number(query.get("seq") ?? "0");
  if (runId === "" || !Number.isSafeInteger(seq) || seq < 0) {
    throw new AgentCallError(400, "bad_request", "runId must be a run's id and seq a whole number from 0");
  }
  return { runId, seq };
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
