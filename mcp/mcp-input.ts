// An MCP server's request for input during a tool call (an elicitation: pushed on the older
// revisions, in band as `input_required` on 2026-07-28, or a task's `inputRequests`) asked as an
// approval of the agent: it waits in `agent.pendingApprovals()` under the call's id
// (`callId/input-1`), as a sub-agent's call would, and `agent.approve` / `agent.deny` answer it.
import { prefixed, registerSubAgent } from "../agent/nested-calls.js";
import type { ToolContext } from "../core/tool.js";
import { runtimeOf, type AgentRuntime, type NestedAgent } from "../core/runtime.js";

/** An elicitation as the server sent it. */
export interface McpInputRequest {
  method: string;
  params?: Record<string, unknown>;
}

/** The client's answer to an elicitation. */
export interface McpInputAnswer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

/** What an approval of a server's question shows: the question and the form it came with. */
export interface McpInputArgs {
  question: string;
  form?: unknown;
}

/**
 * Asks the agent running `ctx`'s call (its human, through approvals) what a server's elicitation
 * asks. Approving answers `accept` with the approval's edited `args` as the content (or, without
 * them, each boolean of the form `true` and each field with a default its default); denying
 * answers `decline`. With no agent to ask (a tool run by hand), or when the call ends first, the
 * answer is `decline`/`cancel`.
 *
 * @example
 * ```ts
 * const answer = await askAsApproval(ctx, "deploy", "input-1", { method: "elicitation/create", params: { message: "Go on?" } });
 * ```
 */
export function askAsApproval(
  ctx: ToolContext,
  toolName: string,
  key: string,
  request: McpInputRequest,
): Promise<McpInputAnswer> {
  const runtime = ctx.actor ? agentRuntime(ctx.actor) : undefined;
  if (!runtime || request.method !== "elicitation/create" || ctx.signal.aborted) {
    return Promise.resolve({ action: "decline" });
  }
  const params = request.params ?? {};
  const args: McpInputArgs = {
    question: typeof params.message === "string" ? params.message : "The MCP server asks for input.",
    ...(params.requestedSchema !== undefined && { form: params.requestedSchema }),
  };
  const id = key.replaceAll("/", "_");
  const agentId = `mcp:${toolName}`;
  const surfaced = (event: object) => prefixed(ctx.toolCallId, agentId, event as never);

  return new Promise<McpInputAnswer>((resolve) => {
    let settled = false;
    const settle = (answer: McpInputAnswer, approved: boolean | undefined, editedArgs?: unknown) => {
      if (settled) return;
      settled = true;
      unregister();
      ctx.signal.removeEventListener("abort", onAbort);
      if (approved !== undefined) {
        runtime.publish(
          surfaced({
            type: "approval_decided",
            toolCallId: id,
            toolName,
            approved,
            ...(editedArgs !== undefined && { editedArgs }),
          }) as never,
        );
      }
      resolve(answer);
    };
    const check = (toolCallId: string) => {
      if (toolCallId !== id || settled) {
        throw new Error(`No approval "${toolCallId}" waits in the MCP call ${ctx.toolCallId}`);
      }
    };
    const desk: NestedAgent = {
      id: agentId,
      pendingApprovals: () => (settled ? [] : [{ toolCallId: id, toolName, args }]),
      pendingToolCalls: () => [],
      approve(toolCallId, options) {
        check(toolCallId);
        const content = options?.args ?? defaultsOf(args.form);
        settle({ action: "accept", content: content as Record<string, unknown> }, true, options?.args);
      },
      deny(toolCallId) {
        check(toolCallId);
        settle({ action: "decline" }, false);
      },
      resolveToolCall(toolCallId) {
        throw new Error(`No client-run call "${toolCallId}" waits in the MCP call ${ctx.toolCallId}`);
      },
      rejectToolCall(toolCallId) {
        throw new Error(`No client-run call "${toolCallId}" waits in the MCP call ${ctx.toolCallId}`);
      },
    };
    const onAbort = () => settle({ action: "cancel" }, undefined);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    const unregister = registerSubAgent(runtime, `${ctx.toolCallId}`, desk);
    runtime.publish(surfaced({ type: "approval_requested", toolCallId: id, toolName, args }) as never);
  });
}

/**
 * The content an approval without edited arguments answers a form with: each boolean `true`, each
 * field with a default its default.
 *
 * @example
 * ```ts
 * defaultsOf({ type: "object", properties: { ok: { type: "boolean" }, env: { type: "string", default: "prod" } } });
 * // { ok: true, env: "prod" }
 * ```
 */
export function defaultsOf(form: unknown): Record<string, unknown> {
  const properties = (
    form as { properties?: Record<string, { type?: string; default?: unknown }> } | undefined
  )?.properties;
  const content: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties ?? {})) {
    if (property?.default !== undefined) content[name] = property.default;
    else if (property?.type === "boolean") content[name] = true;
  }
  return content;
}

function agentRuntime(actor: NonNullable<ToolContext["actor"]>): AgentRuntime | undefined {
  try {
    return runtimeOf(actor);
  } catch {
    return undefined;
  }
}
