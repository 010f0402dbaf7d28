// An app's agents as MCP tools: a client (Claude Desktop, an IDE, another agent) calls a tool, the
// agent runs the prompt, the answer comes back (typed output as structured content). Built on the
// in-process agent behind `McpAgentTool.create`, so moving to another agent contract changes one
// function.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Agent } from "../agent/agent.js";
import type { AgentEvent } from "../core/events.js";
import type { RunOutcome } from "../core/run-outcome.js";

/**
 * One agent served as an MCP tool.
 *
 * @example
 * ```ts
 * const tool: McpAgentTool = {
 *   description: "Answers questions about the codebase",
 *   create: () => createAgent({ provider, tools: codingTools({ cwd }) }),
 * };
 * ```
 */
export interface McpAgentTool {
  description: string;
  /** A fresh agent for one call: each call is a conversation of its own. */
  create(): Agent;
  /**
   * The answer's schema (a zod object): the run is asked for an object of it, returned as the
   * tool's `structuredContent` (and as JSON text for clients that read only text).
   */
  output?: z.ZodObject;
}

/**
 * Options of {@link createMcpAgentServer}.
 *
 * @example
 * ```ts
 * const options: McpAgentServerOptions = { name: "my-agents", version: "1.0.0" };
 * ```
 */
export interface McpAgentServerOptions {
  name?: string;
  version?: string;
}

/**
 * How long an approval asked of the client (an `elicitation/create`) may wait for its answer: as
 * long as a timer can (about 24.8 days). The SDK's default, 60 s, would deny a call while the person
 * still reads the dialog; the call's own request (cancelled, or its client gone) ends the question.
 *
 * @example
 * ```ts
 * await server.server.elicitInput(params, { signal, timeout: APPROVAL_WAIT_MS });
 * ```
 */
export const APPROVAL_WAIT_MS = 2_147_483_647;

/** What the model reads when a call needed an approval the client cannot give. */
export const NO_ELICITATION_REFUSAL =
  "Refused: this call needs a human's approval, and the MCP client that started the run cannot ask for one (it does not support elicitation).";

/**
 * An MCP server (the official SDK's `McpServer`) with one tool per agent. A call runs the `prompt`
 * argument on a fresh agent and returns its answer: progress as `notifications/progress` when the
 * client sent a progress token (one per turn and per tool call), the client's cancellation as
 * `agent.abort()`, each approval the agent asks for as an elicitation when the client supports it
 * (accept with `approve: true` runs the call; anything else denies it), and a refusal the model
 * reads where it does not. A run that ends in an error is a tool result with `isError`.
 * Connect it to any transport: `StdioServerTransport`, or {@link createMcpHttpHandler} for HTTP.
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
 * const server = createMcpAgentServer({ researcher: { description: "Researches", create: () => createAgent({ provider }) } });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createMcpAgentServer(
  agents: Record<string, McpAgentTool>,
  options: McpAgentServerOptions = {},
): McpServer {
  const server = new McpServer(
    { name: options.name ?? "agent-machine", version: options.version ?? "0.0.0" },
    { capabilities: { tools: {} } },
  );
  for (const [name, tool] of Object.entries(agents)) {
    server.registerTool(
      name,
      {
        description: tool.description,
        inputSchema: {
          // A blank prompt would send the model an empty message, which providers refuse mid-run.
          prompt: z.string().regex(/\S/, "prompt must not be blank").describe("What to ask the agent"),
        },
        ...(tool.output && { outputSchema: tool.output }),
      },
      (args, extra) =>
        runAgentCall(server, tool, String(args.prompt), {
          signal: extra.signal,
          progressToken: extra._meta?.progressToken,
          notify: (notification) => extra.sendNotification(notification),
        }),
    );
  }
  return server;
}

interface CallContext {
  signal: AbortSignal;
  progressToken: string | number | undefined;
  notify: (notification: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; message?: string };
  }) => Promise<void>;
}

/**
 * One tool call: a fresh agent runs `prompt`; progress, cancellation and approvals go through the
 * MCP request. Exported for tests and for apps with their own MCP server.
 *
 * @example
 * ```ts
 * const result = await runAgentCall(server, tool, "Summarise README.md", { signal, progressToken: undefined, notify });
 * ```
 */
export async function runAgentCall(
  server: McpServer,
  tool: McpAgentTool,
  prompt: string,
  context: CallContext,
): Promise<CallToolResult> {
  const agent = tool.create();
  let progress = 0;
  const report = (message: string) => {
    if (context.progressToken === undefined) return;
    void context
      .notify({
        method: "notifications/progress",
        params: { progressToken: context.progressToken, progress: ++progress, message },
      })
      .catch(() => {});
  };
  const subscription = agent.events$.subscribe((event) => {
    const message = progressMessage(event);
    if (message) report(message);
    if (event.type === "approval_requested") void decide(server, agent, event, context.signal);
  });
  const abort = () => agent.abort();
  context.signal.addEventListener("abort", abort, { once: true });
  try {
    const outcome = await agent.prompt(prompt, tool.output ? { output: tool.output } : undefined);
    return callResultOf(tool, outcome);
  } finally {
    context.signal.removeEventListener("abort", abort);
    subscription.unsubscribe();
    agent.stop();
  }
}

/**
 * The tool result of a finished run: the typed output as `structuredContent` (and JSON text), else
 * the last answer; a run that ended in an error, or otherwise than by answering, says so.
 *
 * @example
 * ```ts
 * const result = callResultOf(tool, await agent.prompt("Summarise README.md"));
 * ```
 */
export function callResultOf(tool: McpAgentTool, outcome: RunOutcome): CallToolResult {
  if (outcome.reason === "error") {
    return { isError: true, content: [{ type: "text", text: outcome.errorMessage ?? "The run failed" }] };
  }
  if (tool.output && outcome.output !== undefined) {
    return {
      content: [{ type: "text", text: JSON.stringify(outcome.output) }],
      structuredContent: outcome.output as Record<string, unknown>,
    };
  }
  const answer = lastAnswer(outcome.messages);
  if (outcome.reason !== "stop") {
    return {
      isError: tool.output !== undefined,
      content: [{ type: "text", text: `${answer}${answer ? "\n" : ""}[the run ended: ${outcome.reason}]` }],
    };
  }
  return { content: [{ type: "text", text: answer }] };
}

/**
 * The form an approval is asked with (elicitation): one boolean, `approve`.
 *
 * @example
 * ```ts
 * await server.server.elicitInput({ message: approvalQuestion(call), requestedSchema: approvalForm() });
 * ```
 */
export function approvalForm(): {
  type: "object";
  properties: { approve: { type: "boolean"; title: string } };
  required: string[];
} {
  return {
    type: "object",
    properties: { approve: { type: "boolean", title: "Allow this call" } },
    required: ["approve"],
  };
}

/**
 * The question a client shows for a call waiting for approval.
 *
 * @example
 * ```ts
 * approvalQuestion({ toolName: "deploy", args: { env: "prod" } }); // "The agent wants to run deploy with {...}. Allow it?"
 * ```
 */
export function approvalQuestion(call: { toolName: string; args: unknown }): string {
  return `The agent wants to run ${call.toolName} with ${JSON.stringify(call.args)}. Allow it?`;
}

/** Asks the client (elicitation) whether a pending call may run, or refuses it when it cannot ask. */
async function decide(
  server: McpServer,
  agent: Agent,
  event: Extract<AgentEvent, { type: "approval_requested" }>,
  signal: AbortSignal,
): Promise<void> {
  let approved = false;
  let reason = NO_ELICITATION_REFUSAL;
  if (answersForms(server.server.getClientCapabilities()?.elicitation)) {
    try {
      const answer = await server.server.elicitInput(
        {
          message: approvalQuestion(event),
          requestedSchema: approvalForm(),
        },
        { signal, timeout: APPROVAL_WAIT_MS },
      );
      approved = answer.action === "accept" && answer.content?.approve === true;
      reason = "The user refused this call.";
    } catch {
      reason = "The approval could not be asked (the request ended).";
    }
  }
  try {
    if (approved) agent.approve(event.toolCallId);
    else agent.deny(event.toolCallId, reason);
  } catch {
    // Already decided: the call was cancelled and the run aborted.
  }
}

/**
 * Whether a client's declared `elicitation` capability takes a form (an approval is one):
 * `{}` (before modes, form only) or with `form`; a client with `url` alone cannot answer one.
 *
 * @example
 * ```ts
 * answersForms({ url: {} }); // false
 * answersForms({}); // true
 * ```
 */
export function answersForms(elicitation: unknown): boolean {
  if (typeof elicitation !== "object" || elicitation === null) return false;
  return "form" in elicitation || !("url" in elicitation);
}

/**
 * A progress line for the events a client follows a run by (a turn, a tool call), else `undefined`.
 *
 * @example
 * ```ts
 * progressMessage({ type: "turn_start", turn: 2 }); // "turn 2"
 * ```
 */
export function progressMessage(event: AgentEvent): string | undefined {
  if (event.type === "turn_start") return `turn ${event.turn}`;
  if (event.type === "tool_execution_start") return `running ${event.toolName}`;
  return undefined;
}

function lastAnswer(messages: readonly { role: string; content?: unknown }[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    return (message.content as { type: string; text?: string }[])
      .filter((part) => part.type === "text")
      .map((part) => part.text)
      .join("");
  }
  return "";
}
