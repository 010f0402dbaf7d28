// The server's transcript as AI SDK UIMessages: what a `useChat` client holds after the host's
// streams, built from the transcript alone (load a thread's page with it: `messages` of `useChat`).
import type { PendingApproval } from "../agent/agent.js";
import { deniedText } from "../actors/denied-text.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../core/messages.js";
import type { FinishedCall } from "./protocol.js";
import { textOf } from "../core/messages.js";

/** A UI message part, as the AI SDK client builds it (the fields this host's streams set). */
export type UIPart = { type: string } & Record<string, unknown>;

/** An AI SDK `UIMessage` (structurally; `ai` is not a dependency). */
export interface UIMessage {
  id: string;
  role: "user" | "assistant" | "system";
  parts: UIPart[];
  metadata?: unknown;
}

/** Which AI SDK client a stream or a UI transcript is for: `7` (default) or `6`. */
export type AiSdkTarget = 6 | 7;

/**
 * A user message that opens an assistant UI message (one per prompt): not a steered or queued
 * one, which the AI SDK shows inside the assistant message that takes it.
 */
export function opensTurnGroup(message: AgentMessage): boolean {
  return message.role === "user" && message.source !== "steer" && message.source !== "followUp";
}

/** The id of the reasoning part of block `index` of assistant message `messageId`. */
export function reasoningPartId(messageId: string | undefined, index: number): string {
  return `${messageId ?? "message"}:${index}`;
}

/**
 * A tool result as the AI SDK `output`: its text when it is only text, otherwise
 * `{ content, details }`.
 */
export function toolOutputOf(result: { content: ToolResultMessage["content"]; details?: unknown }): unknown {
  const textOnly = result.content.every((block) => block.type === "text");
  if (textOnly && result.details === undefined) return textOf(result.content);
  return result.details === undefined
    ? { content: result.content }
    : { content: result.content, details: result.details };
}

/** The parts a steered / queued user message shows as inside the assistant message. */
export function steeringPart(message: AgentMessage, target: AiSdkTarget): UIPart {
  const text = message.role === "user" ? textOf(message.content) : "";
  const parts = [{ type: "text", text }];
  return target === 7
    ? { type: "steering-message", id: message.id, parts }
    : { type: "data-agent-machine-steering", id: message.id, data: { text, source: sourceOf(message) } };
}

/** A custom message (a notice, a compaction summary) as a persisted data part. */
export function customPart(message: AgentMessage): UIPart | undefined {
  if (message.role !== "custom") return undefined;
  return {
    type: "data-agent-machine-message",
    id: message.id,
    data: { customType: message.customType, source: message.source, text: textOf(message.content) },
  };
}

function sourceOf(message: AgentMessage): string | undefined {
  return message.role === "user" || message.role === "custom" ? message.source : undefined;
}

/**
 * What the approval of a call waiting in a sub-agent carries as its `descriptor` (the AI SDK keeps
 * it in the tool part's `approval`): the nested call's tool and input, and where it waits. The
 * part is the top agent's call it runs in; the approval's id is the nested call's id.
 *
 * @example
 * ```ts
 * const part = message.parts.find((p) => p.state === "approval-requested");
 * const { toolName, input } = part.approval.descriptor; // "refund", { amount: 20 }
 * ```
 */
export interface NestedApprovalDescriptor {
  /** The nested call's tool. */
  toolName: string;
  /** The nested call's arguments. */
  input: unknown;
  /** The call ids from the top agent's call down to the nested call (its own id last). */
  path: string[];
  /** The sub-agents' ids, from the top call's child down to the one the call waits in. */
  agents: string[];
  /**
   * What the call waits for: `"approval"` (answer with `addToolApprovalResponse`), or `"result"`, a
   * client-run tool's call (`defineClientTool` in a sub-agent): the page runs it and sends its
   * result in the next request's body, `sendMessage(undefined, { body: { toolResults: [{ toolCallId:
   * approval.id, result }] } })` (or denies it with `addToolApprovalResponse({ approved: false })`).
   */
  waitsFor: "approval" | "result";
}

/**
 * The descriptor of a nested call's approval (see {@link NestedApprovalDescriptor}); `waitsFor`
 * `"result"` for a client-run tool's call.
 *
 * @example
 * ```ts
 * nestedApprovalDescriptor({ toolCallId: "p1/c1", toolName: "refund", args: { amount: 20 }, path: ["p1", "c1"], agents: ["researcher-p1"] });
 * ```
 */
export function nestedApprovalDescriptor(
  call: PendingApproval,
  waitsFor: NestedApprovalDescriptor["waitsFor"] = "approval",
): NestedApprovalDescriptor {
  return {
    toolName: call.toolName,
    input: call.args,
    path: call.path ?? [],
    agents: call.agents ?? [],
    waitsFor,
  };
}

/** Options of {@link toUIMessages}. */
export interface ToUIMessagesOptions {
  /** The `ai` major of the page (default 7): an ai 6 page gets steered messages as data parts. */
  target?: AiSdkTarget;
  /** `agent.pendingApprovals()`: their calls show as `approval-requested` (taken from a thread's JSON when given one). */
  pendingApprovals?: readonly PendingApproval[];
  /**
   * `agent.pendingToolCalls()`: a sub-agent's client-run call shows on the part of the top call it
   * runs in, as the stream shows it (taken from a thread's JSON when given one).
   */
  pendingToolCalls?: readonly PendingApproval[];
  /** The host's `finishedCalls`: results a client has seen that the transcript does not hold yet. */
  finishedCalls?: readonly FinishedCall[];
}

/** What `GET /threads/{id}` answers, as far as {@link toUIMessages} reads it. */
export interface UIThreadSource {
  messages: readonly AgentMessage[];
  pendingApprovals?: readonly PendingApproval[];
  pendingToolCalls?: readonly PendingApproval[];
  finishedCalls?: readonly FinishedCall[];
}

function isMessageList(source: readonly AgentMessage[] | UIThreadSource): source is readonly AgentMessage[] {
  return Array.isArray(source);
}

/**
 * The transcript as the UIMessages an AI SDK client holds after following this host: one user
 * message per prompt and one assistant message for everything the agent did in answer (its
 * steps, tool calls with their outputs, steered messages).
 *
 * @example
 * ```ts
 * // A page (re)load: the thread as the host answers it, its waiting approvals as cards.
 * const initialMessages = toUIMessages(await (await fetch(`/api/threads/${chatId}`)).json());
 * // useChat({ id: chatId, messages: initialMessages, ... })
 * ```
 */
export function toUIMessages(
  source: readonly AgentMessage[] | UIThreadSource,
  options: ToUIMessagesOptions = {},
): UIMessage[] {
  // The body of GET /threads/{id} as it is: its waiting calls and finished results come with it.
  const thread: UIThreadSource = isMessageList(source) ? { messages: source } : source;
  const messages = thread.messages;
  options = {
    ...options,
    pendingApprovals: options.pendingApprovals ?? thread.pendingApprovals,
    pendingToolCalls: options.pendingToolCalls ?? thread.pendingToolCalls,
    finishedCalls: options.finishedCalls ?? thread.finishedCalls,
  };
  const target = options.target ?? 7;
  const awaiting = approvalsByPart(options.pendingApprovals ?? [], options.pendingToolCalls ?? []);
  const results = new Map<string, ToolResultMessage>();
  for (const m of messages) if (m.role === "toolResult") results.set(m.toolCallId, m);
  for (const call of options.finishedCalls ?? []) {
    if (!results.has(call.toolCallId)) {
      results.set(call.toolCallId, { role: "toolResult", ...call.result, ...call, timestamp: 0 });
    }
  }
  const out: UIMessage[] = [];
  let group: UIMessage | undefined;
  const ensureGroup = (id: string | undefined): UIMessage => {
    if (!group) {
      group = { id: id ?? "", role: "assistant", parts: [] };
      out.push(group);
    } else if (group.id === "" && id) group.id = id;
    return group;
  };
  for (const message of messages) {
    if (opensTurnGroup(message) && message.role === "user") {
      group = undefined;
      out.push({ id: message.id ?? "", role: "user", parts: userParts(message.content) });
    } else if (message.role === "user") {
      ensureGroup(undefined).parts.push(steeringPart(message, target));
    } else if (message.role === "custom") {
      const part = customPart(message);
      if (part) ensureGroup(undefined).parts.push(part);
    } else if (message.role === "assistant") {
      ensureGroup(message.id).parts.push(
        { type: "step-start" },
        ...assistantParts(message, results, awaiting),
      );
    }
  }
  return out;
}

/**
 * The approval each tool part shows: its own call's, or for a call waiting in a sub-agent, on the
 * part of the top call it runs in (the first such, as the stream shows them one at a time; a
 * sub-agent's client-run calls after its approvals). A top-level client-run call shows no approval:
 * its part waits for the page's output.
 */
function approvalsByPart(
  approvals: readonly PendingApproval[],
  toolCalls: readonly PendingApproval[],
): Map<string, Record<string, unknown>> {
  const byPart = new Map<string, Record<string, unknown>>();
  const show = (call: PendingApproval, waitsFor: NestedApprovalDescriptor["waitsFor"]) => {
    const nested = call.path !== undefined && call.path.length > 1;
    if (!nested && waitsFor === "result") return;
    const part = nested ? call.path![0]! : call.toolCallId;
    if (byPart.has(part)) return;
    byPart.set(
      part,
      nested
        ? { id: call.toolCallId, descriptor: nestedApprovalDescriptor(call, waitsFor) }
        : { id: call.toolCallId },
    );
  };
  for (const call of approvals) show(call, "approval");
  for (const call of toolCalls) show(call, "result");
  return byPart;
}

function userParts(content: AgentMessage["content"]): UIPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const parts: UIPart[] = [];
  for (const block of content) {
    if (block.type === "text") parts.push({ type: "text", text: block.text });
    else if (block.type === "image") {
      parts.push({
        type: "file",
        mediaType: block.mimeType,
        url: `data:${block.mimeType};base64,${block.data}`,
      });
    }
  }
  return parts;
}

function assistantParts(
  message: AssistantMessage,
  results: Map<string, ToolResultMessage>,
  awaiting: Map<string, Record<string, unknown>>,
): UIPart[] {
  const parts: UIPart[] = [];
  for (const [index, block] of message.content.entries()) {
    if (block.type === "text") {
      if (block.text !== "") parts.push({ type: "text", text: block.text, state: "done" });
    } else if (block.type === "thinking") {
      if (!block.redacted && block.thinking !== "")
        parts.push({
          type: "reasoning",
          id: reasoningPartId(message.id, index),
          text: block.thinking,
          state: "done",
        });
    } else {
      const part = toolPart(block.id, block.name, block.arguments, results.get(block.id));
      const approval = awaiting.get(block.id);
      parts.push(approval ? { ...part, state: "approval-requested", approval } : part);
    }
  }
  return parts;
}

function toolPart(
  toolCallId: string,
  toolName: string,
  input: unknown,
  result: ToolResultMessage | undefined,
): UIPart {
  const part: UIPart = { type: "dynamic-tool", toolName, toolCallId, state: "input-available", input };
  if (!result) return part;
  // The note that tells the model a human edited the arguments is not the tool's output: a live
  // client never saw it.
  if (result.editedArgs !== undefined) result = { ...result, content: result.content.slice(1) };
  const denied = deniedResult(result);
  if (denied) return { ...part, state: "output-denied" };
  if (result.isError) return { ...part, state: "output-error", errorText: textOf(result.content) };
  return { ...part, state: "output-available", output: toolOutputOf(result) };
}

// A denial's result is the agent's own denial text (the transcript keeps no other mark of it).
function deniedResult(result: ToolResultMessage): boolean {
  return result.isError && textOf(result.content).startsWith(deniedText());
}
