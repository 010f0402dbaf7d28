// The side routes the chat protocols lack: steer, follow-up, abort, approve, deny, a client-run
// tool's result, and a thread's status with its transcript. All answer JSON; none streams.
import type { ToolResult } from "../../core/tool.js";
import type { ApprovalAnswer, HostApi, HostRoute, ToolCallAnswer } from "../protocol.js";
import { runInputOf, userMessageOf } from "./run-input.js";
import type { HostedThreadImpl } from "./hosted-thread.js";
import { idOf, jsonResponse, objectOf, optionalString } from "./json.js";
import { AgentCallError } from "../../core/agent-handle.js";

/** The host's own routes under its base path. */
export function threadRoutes(): HostRoute[] {
  return [
    {
      method: "GET",
      path: "/threads/:id",
      handle: async (request, { id }, host) => status(request, id, host),
    },
    post("steer", (thread, body) => queue(thread, body, "steer")),
    post("follow-up", (thread, body) => queue(thread, body, "followUp")),
    post("abort", async (thread) => jsonResponse({ aborted: await thread.agent.abort() })),
    post("approve", async (thread, body) => {
      const toolCallId = idOf(body.toolCallId, "toolCallId");
      await thread.nestedAsked([toolCallId]);
      checkPendingApproval(thread, toolCallId);
      const answer = { toolCallId, approved: true, ...(body.args !== undefined ? { args: body.args } : {}) };
      return applied(await thread.applyAnswers([answer], []), { approved: toolCallId });
    }),
    post("deny", async (thread, body) => {
      const toolCallId = idOf(body.toolCallId, "toolCallId");
      const reason = optionalString(body.reason, "reason");
      await thread.nestedAsked([toolCallId]);
      checkPendingApproval(thread, toolCallId);
      return applied(await thread.applyAnswers([{ toolCallId, approved: false, reason }], []), {
        denied: toolCallId,
      });
    }),
    // Answers checked as the run would take them, none applied (AgentHandle.check over HTTP).
    post("check", async (thread, body) => {
      const { approvals, toolResults } = answersOf(body);
      await thread.checkOnly(approvals, toolResults);
      return jsonResponse({ checked: approvals.length + toolResults.length });
    }),
    post("tool-result", async (thread, body) => {
      const answer = toolCallAnswerOf(body);
      await thread.nestedAsked([answer.toolCallId]);
      thread.checkAnswer(answer.toolCallId, pendingCalls(thread), new Set(), "result");
      return applied(await thread.applyAnswers([], [answer]), { resolved: answer.toolCallId });
    }),
  ];
}

function post(
  name: string,
  run: (thread: HostedThreadImpl, body: Record<string, unknown>) => Response | Promise<Response>,
): HostRoute {
  return {
    method: "POST",
    path: `/threads/:id/${name}`,
    async handle(request, { id }, host) {
      const thread = (await host.thread(request, id)) as HostedThreadImpl;
      const raw = request.headers.get("content-length") === "0" ? {} : await readOptionalJson(request, host);
      return run(thread, objectOf(raw, "the body"));
    },
  };
}

async function readOptionalJson(request: Request, host: HostApi): Promise<unknown> {
  try {
    return await host.readJson(request);
  } catch (error) {
    // abort needs no body: an empty one is fine for every side route that reads none.
    if (error instanceof AgentCallError && error.code === "bad_request" && error.message.includes("no body"))
      return {};
    throw error;
  }
}

async function status(request: Request, id: string, host: HostApi): Promise<Response> {
  const thread = (await host.thread(request, id)) as HostedThreadImpl;
  return jsonResponse({ ...thread.status(), messages: thread.agent.messages });
}

async function queue(
  thread: HostedThreadImpl,
  body: Record<string, unknown>,
  how: "steer" | "followUp",
): Promise<Response> {
  const message = userMessageOf(body);
  thread.checkNewMessageId(message);
  const already = new Set(
    [...thread.agent.queued.steering, ...thread.agent.queued.followUp].map((m) => m.id),
  );
  if (message.id !== undefined && already.has(message.id)) {
    throw new AgentCallError(409, "duplicate_message", `message ${message.id} is already queued`);
  }
  if (how === "steer") await thread.agent.steer(message);
  else await thread.agent.followUp(message);
  return jsonResponse({ queued: how, id: message.id, running: thread.agent.state !== "idle" }, 202);
}

function checkPendingApproval(thread: HostedThreadImpl, toolCallId: string): void {
  const pending = new Set(thread.agent.pendingApprovals().map((p) => p.toolCallId));
  thread.checkAnswer(toolCallId, pending, new Set(), "approval");
}

function pendingCalls(thread: HostedThreadImpl): Set<string> {
  return new Set(thread.agent.pendingToolCalls().map((p) => p.toolCallId));
}

function toolCallAnswerOf(body: Record<string, unknown>): ToolCallAnswer {
  const toolCallId = idOf(body.toolCallId, "toolCallId");
  if (body.error !== undefined) {
    if (typeof body.error !== "string")
      throw new AgentCallError(400, "bad_request", "error must be a string");
    return { toolCallId, error: body.error };
  }
  const result = body.result;
  if (typeof result === "string") return { toolCallId, result };
  if (isToolResult(result)) return { toolCallId, result };
  throw new AgentCallError(400, "bad_request", "result must be text or { content: [...] } (or give error)");
}

function isToolResult(value: unknown): value is ToolResult {
  return (
    typeof value === "object" && value !== null && Array.isArray((value as { content?: unknown }).content)
  );
}

/** `{ approvals?, toolResults? }` as the agent-machine protocol's run route takes them. */
function answersOf(body: Record<string, unknown>): {
  approvals: ApprovalAnswer[];
  toolResults: ToolCallAnswer[];
} {
  const input = runInputOf({ approvals: body.approvals ?? [], toolResults: body.toolResults ?? [] });
  return { approvals: input.approvals ?? [], toolResults: input.toolResults ?? [] };
}

function applied(refused: AgentCallError | undefined, body: Record<string, string>): Response {
  if (refused) throw refused;
  return jsonResponse(body);
}
