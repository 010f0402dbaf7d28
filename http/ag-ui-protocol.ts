// The AG-UI routes of the session host: `POST {base}/ag-ui` takes what `HttpAgent` sends (a
// RunAgentInput) and answers with AG-UI events over SSE; `POST {base}/ag-ui/connect` re-attaches a
// client to the response in progress (replayed from its start, then live), the reconnect the
// protocol's HTTP client lacks.
import { SSE_HEADERS } from "./encoder.js";
import { agUiEncoder } from "./ag-ui.js";
import { checkedRunAgentInput, readRunAgentInput } from "./internal/ag-ui/input.js";
import { type HostApi, type HostedThread, type HostProtocol } from "./protocol.js";
import { AgentCallError } from "../core/agent-handle.js";

/** Options of {@link agUiProtocol}. */
export interface AgUiProtocolOptions {
  /** The route under the host's base path (default `"/ag-ui"`; reconnect is `{path}/connect`). */
  path?: string;
  /**
   * Which client the responses are shaped for: `"auto"` (default) reads it from the request (a
   * 1.0 client sends `protocolVersion`; 0.0.x clients, CopilotKit's, do not), `"1.0"` or
   * `"legacy"` force one.
   */
  client?: "auto" | "1.0" | "legacy";
  /** Send the legacy `CUSTOM on_interrupt` event with interrupts (default `true`). */
  legacyInterruptEvent?: boolean;
}

/**
 * AG-UI on the session host, for `HttpAgent` (`@ag-ui/client` 1.0 or 0.0.x) and CopilotKit's
 * runtime: `POST {base}/ag-ui` and `POST {base}/ag-ui/connect`.
 *
 * @example
 * ```ts
 * const host = createSessionHost({ agent: { provider, tools }, authorize, basePath: "/api", protocols: [agUiProtocol()] });
 * // client: new HttpAgent({ url: "/api/ag-ui", threadId })
 * ```
 */
export function agUiProtocol(options: AgUiProtocolOptions = {}): HostProtocol {
  const path = options.path ?? "/ag-ui";
  const clientOf = (protocolVersion: unknown) =>
    options.client === "1.0" || options.client === "legacy"
      ? options.client
      : typeof protocolVersion === "string"
        ? ("1.0" as const)
        : ("legacy" as const);
  const encoderFor = (runId: string, protocolVersion: unknown, heldMessageIds?: ReadonlySet<string>) =>
    agUiEncoder({
      runId,
      client: clientOf(protocolVersion),
      ...(heldMessageIds && { heldMessageIds }),
      ...(options.legacyInterruptEvent !== undefined && {
        legacyInterruptEvent: options.legacyInterruptEvent,
      }),
    });
  return {
    name: "ag-ui",
    routes: [
      {
        method: "POST",
        path,
        async handle(request, _params, host) {
          const body = checkedRunAgentInput(await host.readJson(request));
          const thread = await threadFor(host, request, body.threadId, () =>
            readRunAgentInput(body, undefined),
          );
          const read = readRunAgentInput(body, thread.agent);
          return thread.respond(
            {
              ...(read.message && { message: read.message }),
              ...(read.approvals.length > 0 && { approvals: read.approvals }),
              ...(read.toolResults.length > 0 && { toolResults: read.toolResults }),
              ...(read.tools.length > 0 && { tools: read.tools }),
            },
            encoderFor(body.runId, body.protocolVersion),
          );
        },
      },
      {
        method: "POST",
        path: `${path}/connect`,
        async handle(request, _params, host) {
          const body = (await host.readJson(request)) as {
            threadId?: unknown;
            runId?: unknown;
            protocolVersion?: unknown;
            messages?: unknown;
          };
          if (
            typeof body !== "object" ||
            body === null ||
            typeof body.threadId !== "string" ||
            body.threadId === ""
          ) {
            throw new AgentCallError(400, "bad_request", "threadId must be a non-empty string");
          }
          const runId =
            typeof body.runId === "string" && body.runId !== "" ? body.runId : `connect-${Date.now()}`;
          const thread = await host.thread(request, body.threadId);
          const encoder = encoderFor(runId, body.protocolVersion, heldMessageIdsOf(body.messages));
          const live = thread.reconnect(encoder);
          if (live) return live;
          // Nothing in progress: the transcript, and how the thread stands: waiting for the
          // client (the same interrupts or pending client calls again), or over.
          const messages = thread.agent.messages;
          const status = thread.status();
          const text =
            encoder.open({ kind: "replay", threadId: thread.threadId, runId: thread.agent.runId, messages }) +
            encoder.close(
              status.status === "waiting"
                ? {
                    kind: "quiescent",
                    approvals: status.pendingApprovals,
                    toolCalls: status.pendingToolCalls,
                    messages,
                  }
                : { kind: "gone", messages },
            );
          return new Response(text, { status: 200, headers: SSE_HEADERS });
        },
      },
    ],
  };
}

/**
 * The ids of the messages a reconnecting client says it holds (`RunAgentInput.messages`; anything
 * else in the body is ignored: a reconnect applies nothing, resume entries included).
 */
function heldMessageIdsOf(messages: unknown): Set<string> | undefined {
  if (!Array.isArray(messages)) return undefined;
  const ids = new Set<string>();
  for (const message of messages as unknown[]) {
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id === "string") ids.add(id);
  }
  return ids;
}

/**
 * The thread a request names. A thread that does not exist yet is created only once the request
 * has proved well-formed for a new thread (`check`), so a bad request stores nothing.
 */
async function threadFor(
  host: HostApi,
  request: Request,
  threadId: string,
  check: () => unknown,
): Promise<HostedThread> {
  try {
    return await host.thread(request, threadId);
  } catch (error) {
    if (!(error instanceof AgentCallError) || error.status !== 404) throw error;
    check();
    return host.thread(request, threadId, { create: true });
  }
}
