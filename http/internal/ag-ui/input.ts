import type { ImageContent, TextContent, UserMessage } from "../../../core/messages.js";
import type { Tool } from "../../../core/tool.js";
import { defineClientTool } from "../../../tools/define-tool.js";
import { type ApprovalAnswer, type ThreadAgent, type ToolCallAnswer } from "../../protocol.js";
import { toAgUiMessages } from "./messages.js";
import type { AgUiResumeEntry, RunAgentInput } from "./types.js";
import { AgentCallError } from "../../../core/agent-handle.js";

/** What one AG-UI request asks of its thread, read from its `RunAgentInput`. */
export interface AgUiRequest {
  input: RunAgentInput;
  /** A 0.0.x client (no `protocolVersion` in its input): CopilotKit's today. */
  legacy: boolean;
  /** The new user message, when the client added one (its id kept). */
  message?: UserMessage;
  approvals: ApprovalAnswer[];
  toolResults: ToolCallAnswer[];
  /** The client's own tools (`RunAgentInput.tools`), as client-run tools for the run. */
  tools: Tool[];
}

const bad = (message: string) => new AgentCallError(400, "bad_request", message);

/**
 * Checks a `RunAgentInput` body and reads it against the thread's agent, whose transcript is the
 * truth: the client's history only gives the new user message (the last one whose id the
 * transcript lacks), the answers to the agent's pending approvals (`resume[]`, or the legacy
 * `forwardedProps.command.resume`) and the results of its pending client-run calls (`tool`
 * messages). A message the server never wrote (an assistant or tool message with an unknown id,
 * a tool result for a call that waits for none) is refused with a 400, nothing applied.
 *
 * @example
 * ```ts
 * const request = readRunAgentInput(await host.readJson(req), thread.agent);
 * ```
 */
export function readRunAgentInput(body: unknown, agent: ThreadAgent | undefined): AgUiRequest {
  const input = checkedRunAgentInput(body);
  const known = new Set(agent ? toAgUiMessages(agent.messages).map((m) => m.id) : []);
  const pendingCalls = new Set((agent?.pendingToolCalls() ?? []).map((c) => c.toolCallId));
  const pendingApprovals = (agent?.pendingApprovals() ?? []).map((c) => c.toolCallId);
  // A sub-agent's client-run calls are interrupts too (event-encoder.ts): `resume` answers them.
  const clientInterrupts = new Set(
    (agent?.pendingToolCalls() ?? []).filter((c) => (c.path?.length ?? 0) > 1).map((c) => c.toolCallId),
  );

  let message: UserMessage | undefined;
  let messageIndex = -1;
  // User messages after the last one the thread has that came before the newest: messages the
  // host refused (a run was going on) or never got, which the client keeps. Never taken, so the
  // model never reads them; refusing them would refuse every later message of the thread. (With
  // no message of the thread in the history, two new ones are still refused: which one is meant?)
  const lastKnown = input.messages.findLastIndex((m) => known.has(m.id));
  const toolResults: ToolCallAnswer[] = [];
  input.messages.forEach((m, index) => {
    if (known.has(m.id)) return;
    if (m.role === "user") {
      if (message && (lastKnown < 0 || messageIndex < lastKnown)) {
        throw bad(`messages: more than one new user message (${message.id}, ${m.id}); send one per request`);
      }
      messageIndex = index;
      message = { role: "user", id: m.id, content: userContent(m.content, index), timestamp: Date.now() };
    } else if (m.role === "tool") {
      if (!pendingCalls.has(m.toolCallId)) {
        throw bad(
          `messages[${index}]: a tool result for call "${m.toolCallId}", which waits for no client result`,
        );
      }
      const content = textOfContent(m.content as unknown);
      toolResults.push(
        typeof m.error === "string" && m.error !== ""
          ? { toolCallId: m.toolCallId, error: m.error }
          : { toolCallId: m.toolCallId, result: content },
      );
    } else if (m.role !== "activity" && m.role !== "reasoning") {
      // Activity and reasoning messages are the client's view of progress: never read, never
      // refused (a withdrawn attempt's reasoning may linger there, empty).
      throw bad(`messages[${index}]: ${m.role} message "${m.id}" is not in the thread's transcript`);
    }
  });
  if (message && (toolResults.length > 0 || input.resume?.length)) {
    throw bad("a new user message cannot come with answers to pending calls: answer them first");
  }
  const answers = approvalsOf(input, [...pendingApprovals, ...clientInterrupts]);
  const approvals: ApprovalAnswer[] = [];
  for (const answer of answers) {
    if (clientInterrupts.has(answer.toolCallId)) toolResults.push(clientResultOf(answer));
    else {
      const { payload: _payload, ...decision } = answer;
      approvals.push(decision);
    }
  }
  return {
    input,
    legacy: typeof input.protocolVersion !== "string",
    ...(message && { message }),
    approvals,
    toolResults,
    tools: input.tools.map((tool, index) => {
      if (typeof tool?.name !== "string" || tool.name === "")
        throw bad(`tools[${index}].name must be a string`);
      return defineClientTool({
        name: tool.name,
        description: typeof tool.description === "string" ? tool.description : "",
        parameters: isObject(tool.parameters) ? tool.parameters : { type: "object", properties: {} },
      });
    }),
  };
}

/**
 * Checks the shape of a `RunAgentInput` body (what needs no thread); a 400 {@link AgentCallError} says
 * what is wrong.
 *
 * @example
 * ```ts
 * const input = checkedRunAgentInput(await host.readJson(request));
 * ```
 */
export function checkedRunAgentInput(body: unknown): RunAgentInput {
  if (!isObject(body)) throw bad("the body must be a RunAgentInput JSON object");
  const input = body as Partial<RunAgentInput>;
  if (typeof input.threadId !== "string" || input.threadId === "")
    throw bad("threadId must be a non-empty string");
  if (typeof input.runId !== "string" || input.runId === "") throw bad("runId must be a non-empty string");
  if (!Array.isArray(input.messages)) throw bad("messages must be an array");
  input.messages.forEach((m, index) => {
    if (!isObject(m) || typeof m.id !== "string" || typeof m.role !== "string") {
      throw bad(`messages[${index}] must be a message with a string id and role`);
    }
  });
  if (input.tools !== undefined && !Array.isArray(input.tools)) throw bad("tools must be an array");
  if (input.resume !== undefined && !Array.isArray(input.resume)) throw bad("resume must be an array");
  return { ...input, tools: input.tools ?? [], context: input.context ?? [] } as RunAgentInput;
}

/** The answers to pending approvals: `resume[]` (1.0), or the legacy `forwardedProps.command.resume`. */
function approvalsOf(
  input: RunAgentInput,
  pending: readonly string[],
): (ApprovalAnswer & { payload?: unknown })[] {
  if (input.resume?.length) {
    return input.resume.map((entry, index) => {
      if (!isObject(entry) || typeof entry.interruptId !== "string") {
        throw bad(`resume[${index}] must have a string interruptId`);
      }
      if (entry.status !== "resolved" && entry.status !== "cancelled") {
        throw bad(`resume[${index}].status must be "resolved" or "cancelled"`);
      }
      return decisionOf(
        entry.interruptId,
        entry.status === "cancelled" ? { approved: false } : entry.payload,
      );
    });
  }
  const legacy = (input.forwardedProps as { command?: { resume?: unknown } } | undefined)?.command?.resume;
  if (legacy === undefined) return [];
  if (Array.isArray(legacy))
    return approvalsOf({ ...input, resume: legacy as AgUiResumeEntry[], forwardedProps: undefined }, pending);
  // One pending call: the payload is its answer. Several: a map from call id to answer.
  if (pending.length === 1 && !(isObject(legacy) && pending[0]! in legacy))
    return [decisionOf(pending[0]!, legacy)];
  if (!isObject(legacy)) {
    throw bad(
      `forwardedProps.command.resume: ${pending.length} calls wait; answer them by id ({ "<toolCallId>": answer })`,
    );
  }
  return Object.entries(legacy).map(([toolCallId, answer]) => decisionOf(toolCallId, answer));
}

/**
 * The answer to a sub-agent's client-run call's interrupt, read as a decision first: `resolved`
 * with `{ result }` (text or `{ content }`) is its result, `{ error }` or `cancelled` tells the
 * model the client did not run it.
 */
function clientResultOf(answer: ApprovalAnswer & { payload?: unknown }): ToolCallAnswer {
  const { toolCallId, payload } = answer;
  if (!answer.approved)
    return { toolCallId, error: answer.reason ?? "the client did not run it (the interrupt was cancelled)" };
  if (isObject(payload) && typeof payload.error === "string") return { toolCallId, error: payload.error };
  const result = isObject(payload) ? payload.result : undefined;
  if (typeof result === "string") return { toolCallId, result };
  if (isObject(result) && Array.isArray(result.content)) return { toolCallId, result: result as never };
  throw bad(
    `the answer to "${toolCallId}" (a client-run tool's call) must be { result: text or { content } } or { error }`,
  );
}

/** A decision from an answer: `true`/`false`, or `{ approved, reason?, editedArgs? }` (approved unless it says not). */
function decisionOf(toolCallId: string, payload: unknown): ApprovalAnswer & { payload?: unknown } {
  if (typeof payload === "boolean") return { toolCallId, approved: payload };
  if (payload === undefined || payload === null) return { toolCallId, approved: true };
  // Kept for a client-run call's interrupt (its result); not a field of the decision itself.
  if (isObject(payload) && ("result" in payload || "error" in payload))
    return { toolCallId, approved: true, payload };
  if (!isObject(payload))
    throw bad(`the answer to "${toolCallId}" must be a boolean or { approved, reason?, editedArgs? }`);
  const approved = payload.approved !== false;
  return {
    toolCallId,
    approved,
    ...(typeof payload.reason === "string" && { reason: payload.reason }),
    ...(approved && payload.editedArgs !== undefined && { args: payload.editedArgs }),
  };
}

function userContent(content: unknown, index: number): UserMessage["content"] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw bad(`messages[${index}].content must be a string or content parts`);
  return content.map((part: unknown): TextContent | ImageContent => {
    const p = part as {
      type?: unknown;
      text?: unknown;
      source?: { type?: unknown; value?: unknown; mimeType?: unknown };
    };
    if (p?.type === "text" && typeof p.text === "string") return { type: "text", text: p.text };
    if (
      p?.type === "image" &&
      p.source?.type === "data" &&
      typeof p.source.value === "string" &&
      typeof p.source.mimeType === "string"
    ) {
      return { type: "image", data: p.source.value, mimeType: p.source.mimeType };
    }
    throw bad(`messages[${index}].content: only text parts and inline (data) images are accepted`);
  });
}

function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p: { type?: string; text?: string }) => (p?.type === "text" ? (p.text ?? "") : ""))
      .join("");
  }
  return JSON.stringify(content ?? "");
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
