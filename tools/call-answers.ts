// The rules every side applies to an answer to a waiting call, in one place: the agent in this
// process (approve, resolveToolCall), the host (a request's answers, checked before any is applied),
// the durable session's handlers, and every AgentHandle's `check`/`answer`. Written once so the
// copies cannot drift: the same answer is taken or refused, with the same words, wherever the
// agent runs.
import * as z from "zod";
import { AgentCallError, type CallAnswer, type PendingCall } from "../core/agent-handle.js";
import type { Tool, ToolResult } from "../core/tool.js";

/**
 * Arguments a human corrected at approval, checked by the tool's schema like the model's: the
 * parsed arguments, or the error that refuses them (the call then keeps waiting).
 *
 * @example
 * ```ts
 * checkEditedArgs(tool, { path: 42 }); // { ok: false, error: "✖ Invalid input: expected string ..." }
 * ```
 */
export function checkEditedArgs(
  tool: Tool,
  args: unknown,
): { ok: true; args: unknown } | { ok: false; error: string } {
  try {
    const parsed = tool.parameters.safeParse(args);
    return parsed.success
      ? { ok: true, args: parsed.data }
      : { ok: false, error: z.prettifyError(parsed.error) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Edited arguments for call `toolCallId` of tool `toolName`, checked by that tool's schema (`tool`
 * undefined: the agent does not know the tool, which refuses the edit): the parsed arguments, or the
 * refusal in the words every side uses.
 *
 * @example
 * ```ts
 * const checked = editedArgsOf("call_1", "write_file", tool, { path: 42 });
 * if (!checked.ok) throw new TypeError(checked.refusal); // '... fail the schema of tool write_file: ...'
 * ```
 */
export function editedArgsOf(
  toolCallId: string,
  toolName: string,
  tool: Tool | undefined,
  args: unknown,
): { ok: true; args: unknown } | { ok: false; refusal: string } {
  const checked = tool ? checkEditedArgs(tool, args) : { ok: false as const, error: "unknown tool" };
  if (checked.ok) return checked;
  return {
    ok: false,
    refusal:
      `approve("${toolCallId}", { args }): the edited arguments fail the schema of tool ${toolName}: ` +
      `${checked.error}. The call still waits for approval.`,
  };
}

/**
 * A client's answer to a client-run call (`resolveToolCall`, in process or on a durable session)
 * as the call's result, or the reason it cannot be one: text, or a {@link ToolResult} whose
 * content is text and image blocks.
 *
 * @example
 * ```ts
 * clientResultOf("blue"); // { content: [{ type: "text", text: "blue" }] }
 * clientResultOf({ content: "blue" }); // 'the result must be text or a ToolResult (…)'
 * ```
 */
export function clientResultOf(result: unknown): ToolResult | string {
  if (typeof result === "string") return { content: [{ type: "text", text: result }] };
  if (
    typeof result === "object" &&
    result !== null &&
    Array.isArray((result as ToolResult).content) &&
    (result as ToolResult).content.every(
      (block) =>
        (block?.type === "text" && typeof block.text === "string") ||
        (block?.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string"),
    )
  ) {
    return result as ToolResult;
  }
  return 'the result must be text or a ToolResult ({ content: [{ type: "text", text }], isError? })';
}

/**
 * A client-run call's result as the call takes it, or the refusal in the words every side uses.
 *
 * @example
 * ```ts
 * const checked = clientResultFor("call_2", { content: "blue" });
 * if (typeof checked === "string") throw new TypeError(checked); // 'resolveToolCall("call_2"): the result must be ...'
 * ```
 */
export function clientResultFor(toolCallId: string, result: unknown): ToolResult | string {
  const checked = clientResultOf(result);
  return typeof checked === "string"
    ? `resolveToolCall("${toolCallId}"): ${checked}. The call still waits for its result.`
    : checked;
}

/** The calls an agent has waiting, as `AgentStatus` reports them. */
export interface WaitingCalls {
  /** Calls waiting for approve / deny. */
  pendingApprovals: readonly PendingCall[];
  /** Calls of client-run tools waiting for their result. */
  pendingToolCalls: readonly PendingCall[];
}

/**
 * Why an agent refuses `answers` to its `waiting` calls, or `undefined` when it takes them all, in
 * order: a malformed answer or one call answered twice (`bad_request`), an answer to a call that does
 * not wait for that kind of answer (`not_found`: unknown, already decided, or the wrong kind),
 * edited arguments that fail the tool's schema or a client result of the wrong shape (`refused`).
 * `toolNamed` finds a call's tool, to check edited arguments; a tool it does not find refuses the
 * edit. Every `AgentHandle` checks answers with this before it applies any (`check`, `answer`).
 *
 * @example
 * ```ts
 * const refusal = answersRefusal([{ toolCallId: "call_1", approve: { args: { path: 42 } } }], status, tools.get.bind(tools));
 * if (refusal) throw refusal; // AgentCallError 400 "refused": the edited arguments fail the schema ...
 * ```
 */
export function answersRefusal(
  answers: readonly CallAnswer[],
  waiting: WaitingCalls,
  toolNamed: (name: string) => Tool | undefined,
): AgentCallError | undefined {
  if (!Array.isArray(answers)) return badRequest("the answers must be an array");
  const seen = new Set<string>();
  for (const answer of answers as readonly unknown[]) {
    const kind = answerKind(answer);
    if (typeof kind === "object") return kind;
    const { toolCallId } = answer as CallAnswer;
    if (seen.has(toolCallId)) return badRequest(`call ${toolCallId} is answered twice`);
    seen.add(toolCallId);
    const approval = kind === "approve" || kind === "deny";
    const pending = (approval ? waiting.pendingApprovals : waiting.pendingToolCalls).find(
      (call) => call.toolCallId === toolCallId,
    );
    if (!pending) {
      return new AgentCallError(
        404,
        "not_found",
        `no call ${toolCallId} waits for ${approval ? "an approval" : "a client result"} (it is unknown, or already decided or answered)`,
      );
    }
    const refusal = answerShapeRefusal(answer as CallAnswer, pending.toolName, toolNamed);
    if (refusal !== undefined) return new AgentCallError(400, "refused", refusal);
  }
  return undefined;
}

/**
 * Why the agent refuses this answer's content (edited arguments against the schema of tool
 * `toolName`, a client result's shape), or `undefined`; whether the call waits is checked elsewhere.
 *
 * @example
 * ```ts
 * answerShapeRefusal({ toolCallId: "c1", result: { content: "x" } }, "pick_color", () => undefined);
 * // 'resolveToolCall("c1"): the result must be text or a ToolResult (…). The call still waits for its result.'
 * ```
 */
export function answerShapeRefusal(
  answer: CallAnswer,
  toolName: string,
  toolNamed: (name: string) => Tool | undefined,
): string | undefined {
  if ("approve" in answer && answer.approve.args !== undefined) {
    const checked = editedArgsOf(answer.toolCallId, toolName, toolNamed(toolName), answer.approve.args);
    return checked.ok ? undefined : checked.refusal;
  }
  if ("result" in answer) {
    const checked = clientResultFor(answer.toolCallId, answer.result);
    return typeof checked === "string" ? checked : undefined;
  }
  return undefined;
}

/** The kind of a well-formed answer, or the `bad_request` that says what is wrong with it. */
function answerKind(answer: unknown): "approve" | "deny" | "result" | "reject" | AgentCallError {
  if (typeof answer !== "object" || answer === null) return badRequest("each answer must be an object");
  const a = answer as Record<string, unknown>;
  if (typeof a.toolCallId !== "string" || a.toolCallId === "") {
    return badRequest("each answer needs a toolCallId (a non-empty string)");
  }
  const kinds = (["approve", "deny", "result", "reject"] as const).filter((key) => a[key] !== undefined);
  if (kinds.length !== 1) {
    return badRequest(`answer to ${a.toolCallId} must have exactly one of approve, deny, result, reject`);
  }
  const kind = kinds[0]!;
  const value = a[kind];
  if (kind === "result") return kind;
  if (typeof value !== "object" || value === null) return badRequest(`${kind} must be an object`);
  const reason = (value as { reason?: unknown }).reason;
  if (kind === "reject" && typeof reason !== "string") return badRequest("reject.reason must be a string");
  if (kind === "deny" && reason !== undefined && typeof reason !== "string") {
    return badRequest("deny.reason must be a string");
  }
  return kind;
}

function badRequest(message: string): AgentCallError {
  return new AgentCallError(400, "bad_request", message);
}
