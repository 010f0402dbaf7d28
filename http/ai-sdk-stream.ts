// The AI SDK UI message stream (what `useChat`, AI Elements and assistant-ui read), encoded from an
// agent's events for one response of the session host. One response is one assistant UIMessage:
// steps, text and reasoning parts, tool calls with their inputs and outputs, approvals, steered
// messages. Version 7 is the default; `target: 6` leaves out the chunks an `ai` 6 client refuses
// (its transport fails the whole response on a chunk type it does not know).
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import type { AgentMessage, AssistantMessage } from "../core/messages.js";
import type { PendingApproval } from "../agent/agent.js";
import { textOf } from "../core/messages.js";
import {
  type ContinuedThread,
  type EncoderFactory,
  type ResponseContext,
  type ResponseEnding,
  sseFrame,
  type StreamEncoder,
} from "./encoder.js";
import {
  type AiSdkTarget,
  customPart,
  nestedApprovalDescriptor,
  type NestedApprovalDescriptor,
  opensTurnGroup,
  reasoningPartId,
  steeringPart,
  toolOutputOf,
  toUIMessages,
} from "./ui-messages.js";
import { approvalReason } from "./internal/ai-sdk-client-version.js";
import { chunksOfUIMessage } from "./internal/ui-message-chunks.js";

/** Options of {@link aiSdkStream}. */
export interface AiSdkStreamOptions {
  /** The `ai` major version of the client (default 7). `6`: no `reset-step`, `steering-message`, `tool-approval-response`. */
  target?: AiSdkTarget;
}

/** A chunk of the UI message stream (structurally; `ai` is not a dependency). */
export type UIMessageChunk = { type: string } & Record<string, unknown>;

/** The headers `ai`'s `createUIMessageStreamResponse` sends. */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/**
 * The AI SDK UI message stream encoder, for the session host (`aiSdkProtocol` uses it).
 *
 * @example
 * ```ts
 * const encoder = aiSdkStream({ target: 6 })(); // one per response
 * encoder.open({ kind: "run", threadId: "t1", runId: undefined, messages: [] });
 * ```
 */
export function aiSdkStream(options: AiSdkStreamOptions = {}): EncoderFactory {
  const target = options.target ?? 7;
  return () => new AiSdkEncoder(target);
}

/**
 * The chunks one response's events become, without SSE framing (what the encoder writes, one
 * `data:` frame each, then `[DONE]`): for tests and for apps that write chunks themselves.
 *
 * @example
 * ```ts
 * const chunks = encodeUIMessageChunks({ kind: "run", threadId: "t", runId: undefined, messages: [] }, events, ending);
 * ```
 */
export function encodeUIMessageChunks(
  context: ResponseContext,
  events: readonly AgentEvent[],
  ending: ResponseEnding,
  options: AiSdkStreamOptions = {},
): UIMessageChunk[] {
  const encoder = new AiSdkEncoder(options.target ?? 7);
  encoder.raw = true;
  encoder.open(context);
  for (const event of events) encoder.event(event);
  encoder.close(ending);
  return encoder.chunks;
}

class AiSdkEncoder implements StreamEncoder {
  readonly headers = UI_MESSAGE_STREAM_HEADERS;
  /** Collect chunks instead of framing them (encodeUIMessageChunks). */
  raw = false;
  readonly chunks: UIMessageChunk[] = [];
  private messageId: string | undefined;
  /** Chunks held until the assistant message's id is known (the `start` chunk carries it). */
  private held: UIMessageChunk[] | undefined;
  private stepOpen = false;
  private textId: string | undefined;
  private reasoningId: string | undefined;
  private readonly denied = new Set<string>();
  /** The host's pending approvals and client-run calls, when it gives them (the next nested one to show). */
  private pendingApprovals: (() => readonly PendingApproval[]) | undefined;
  private pendingToolCalls: (() => readonly PendingApproval[]) | undefined;
  /**
   * The nested approval each call of the top agent shows (by the call's id). A tool part holds one
   * approval at a time: a second nested approval under the same call waits its turn, and is
   * requested when the one shown is decided.
   */
  private readonly shownNested = new Map<string, string>();
  /**
   * For an ai 6 client, the tool-input chunks of the message being streamed, sent when it ends: it
   * has no reset-step, so a retried attempt's calls must never reach it (it would wait for their
   * outputs, and run a client-run tool the agent dropped).
   */
  private heldCalls: UIMessageChunk[] | undefined;

  constructor(private readonly target: AiSdkTarget) {}

  open(context: ResponseContext): string {
    this.pendingApprovals = context.pendingApprovals;
    this.pendingToolCalls = context.pendingToolCalls;
    const known = groupIdOf(context);
    if (known !== undefined) {
      this.messageId = known;
      let out = this.emit({ type: "start", messageId: known });
      // A reconnect to a response that continues the message: the client may hold nothing of it.
      if (context.kind === "replay" && context.continues) {
        for (const chunk of this.rebuilt(context.continues, known)) out += this.emit(chunk);
      }
      for (const chunk of resolvedCards(context)) out += this.emit(chunk);
      return out;
    }
    this.held = [];
    return "";
  }

  /** The chunks that rebuild assistant message `id` as the continued response found it. */
  private rebuilt(thread: ContinuedThread, id: string): UIMessageChunk[] {
    const message = toUIMessages(thread.messages, {
      target: this.target,
      pendingApprovals: thread.pendingApprovals,
      pendingToolCalls: thread.pendingToolCalls ?? [],
      finishedCalls: thread.finishedCalls,
    }).findLast((m) => m.id === id);
    return message ? chunksOfUIMessage(message) : [];
  }

  event(event: AgentEvent): string {
    let out = "";
    const write = (chunk: UIMessageChunk): void => {
      out += this.emit(chunk);
    };
    switch (event.type) {
      case "message_start":
        if (event.message.role === "assistant") {
          out += this.learnId(event.message.id);
          if (!this.stepOpen) {
            write({ type: "start-step" });
            this.stepOpen = true;
          }
        }
        break;
      case "message_update":
        this.onUpdate(event, write);
        break;
      case "message_end":
        this.onMessageEnd(event, write);
        break;
      case "turn_end":
        this.closeParts(write);
        if (this.stepOpen) write({ type: "finish-step" });
        this.stepOpen = false;
        break;
      case "tool_execution_update":
        write({
          type: "tool-output-available",
          toolCallId: event.toolCallId,
          output: toolOutputOf(event.partialResult),
          dynamic: true,
          preliminary: true,
        });
        break;
      case "tool_progress":
        write(
          dataChunk("tool-progress", {
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            text: event.text,
          }),
        );
        break;
      case "approval_requested":
        if (isNested(event)) this.requestNested(event, "approval", write);
        else write(approvalRequestChunk(event, "approval"));
        break;
      case "tool_result_requested":
        // A top-level call's part waits for the page's output already; a sub-agent's call has no
        // part of its own: it shows on its top call's part, answered by its path id.
        if (isNested(event)) this.requestNested(event, "result", write);
        break;
      case "approval_decided":
        if (!event.approved && !isNested(event)) this.denied.add(event.toolCallId);
        if (this.target === 7) {
          write({ type: "tool-approval-response", approvalId: event.toolCallId, approved: event.approved });
        }
        if (isNested(event)) this.nextNested(event, write);
        break;
      case "tool_execution_end":
        write(this.outputChunk(event));
        break;
      case "retry":
        write(dataChunk("retry", { attempt: event.attempt, delayMs: event.delayMs, error: event.error }));
        break;
      // Typed results (docs/output.md) too: the partial object as it streams, and the answer checks.
      case "compaction":
      case "limit_reached":
      case "loop_detected":
      case "context_window_learned":
      case "input_rejected":
      case "output_delta":
      case "output_invalid":
      case "output_filter": {
        const { type, ...data } = event;
        write(dataChunk(type.replace(/_/g, "-"), data));
        break;
      }
    }
    return out;
  }

  close(ending: ResponseEnding): string {
    let out = "";
    const write = (chunk: UIMessageChunk): void => {
      out += this.emit(chunk);
    };
    if (ending.kind === "end") out += this.learnId(firstAssistantIdOf(ending.event.messages));
    out += this.learnId(undefined);
    this.closeParts(write);
    if (this.stepOpen) write({ type: "finish-step" });
    this.stepOpen = false;
    if (ending.kind === "end") this.writeEnd(ending.event, write);
    else if (ending.kind === "quiescent") {
      this.showWaitingNested(ending.approvals, ending.toolCalls, write);
      write({ type: "finish", finishReason: "tool-calls" });
    } else write({ type: "finish", finishReason: "other" });
    return out + (this.raw ? "" : "data: [DONE]\n\n");
  }

  // --- pieces ---

  /**
   * A call waiting in a sub-agent shows on the part of the top agent's call it runs in (the only
   * call the client has a part for), its approval id the nested call's id and its descriptor
   * naming the nested call; unless that part already shows one.
   */
  private requestNested(
    call: PendingApproval & { path: string[] },
    waitsFor: NestedApprovalDescriptor["waitsFor"],
    write: (chunk: UIMessageChunk) => void,
  ): void {
    const top = call.path[0]!;
    if (this.shownNested.has(top)) return;
    this.shownNested.set(top, call.toolCallId);
    write(approvalRequestChunk(call, waitsFor));
  }

  /**
   * When the response ends waiting: a top call's part that shows nothing this response while a
   * call waits under it shows it (answered by a request body, a sub-agent's client-run call leaves
   * no event behind it, so a second one under the same call would otherwise never show).
   */
  private showWaitingNested(
    approvals: readonly PendingApproval[],
    toolCalls: readonly PendingApproval[],
    write: (chunk: UIMessageChunk) => void,
  ): void {
    for (const call of approvals) if (isNested(call)) this.requestNested(call, "approval", write);
    for (const call of toolCalls) if (isNested(call)) this.requestNested(call, "result", write);
  }

  /** After a nested decision: the next call waiting under the same top call, if any, shows. */
  private nextNested(
    decided: { toolCallId: string; path: string[] },
    write: (chunk: UIMessageChunk) => void,
  ): void {
    const top = decided.path[0]!;
    if (this.shownNested.get(top) === decided.toolCallId) this.shownNested.delete(top);
    if (this.shownNested.has(top)) return;
    const under = (p: PendingApproval) =>
      p.toolCallId !== decided.toolCallId && isNested(p) && p.path[0] === top;
    const approval = (this.pendingApprovals?.() ?? []).find(under);
    if (approval)
      return this.requestNested(approval as PendingApproval & { path: string[] }, "approval", write);
    const call = (this.pendingToolCalls?.() ?? []).find(under);
    if (call) this.requestNested(call as PendingApproval & { path: string[] }, "result", write);
  }

  private emit(chunk: UIMessageChunk): string {
    if (this.held) {
      this.held.push(chunk);
      return "";
    }
    if (this.raw) {
      this.chunks.push(chunk);
      return "";
    }
    return sseFrame(chunk);
  }

  /** Sends `start` (with the id, when known) and what was held for it. */
  private learnId(id: string | undefined): string {
    if (!this.held) return "";
    const held = this.held;
    this.held = undefined;
    this.messageId = id;
    let out = this.emit(id === undefined ? { type: "start" } : { type: "start", messageId: id });
    for (const chunk of held) out += this.emit(chunk);
    return out;
  }

  private onUpdate(event: AgentEventOf<"message_update">, writeNow: (chunk: UIMessageChunk) => void): void {
    const write = (chunk: UIMessageChunk): void => {
      if (this.heldCalls && chunk.type.startsWith("tool-input")) this.heldCalls.push(chunk);
      else writeNow(chunk);
    };
    if (this.target === 6 && event.kind === "toolcall_start") this.heldCalls ??= [];
    switch (event.kind) {
      case "text_delta":
        if (this.reasoningId) this.endReasoning(write);
        if (!this.textId) {
          this.textId = partIdOf(event.message);
          write({ type: "text-start", id: this.textId });
        }
        if (event.delta !== "") write({ type: "text-delta", id: this.textId, delta: event.delta });
        break;
      case "thinking_delta":
        if (this.textId) this.endText(write);
        if (!this.reasoningId) {
          this.reasoningId = partIdOf(event.message);
          write({ type: "reasoning-start", id: this.reasoningId });
        }
        if (event.delta !== "") write({ type: "reasoning-delta", id: this.reasoningId, delta: event.delta });
        break;
      case "toolcall_start": {
        this.closeParts(write);
        const call = callOf(event.message, event.toolCallId);
        write({
          type: "tool-input-start",
          toolCallId: event.toolCallId,
          toolName: call?.name ?? "",
          dynamic: true,
        });
        if (event.delta !== "")
          write({ type: "tool-input-delta", toolCallId: event.toolCallId, inputTextDelta: event.delta });
        break;
      }
      case "toolcall_delta":
        if (event.delta !== "")
          write({ type: "tool-input-delta", toolCallId: event.toolCallId, inputTextDelta: event.delta });
        break;
      case "toolcall_end": {
        const call = callOf(event.message, event.toolCallId);
        write({
          type: "tool-input-available",
          toolCallId: event.toolCallId,
          toolName: call?.name ?? "",
          input: call?.arguments ?? {},
          dynamic: true,
        });
        break;
      }
    }
  }

  private onMessageEnd(event: AgentEventOf<"message_end">, write: (chunk: UIMessageChunk) => void): void {
    const message = event.message;
    if (message.role === "assistant") {
      this.closeParts(write);
      const calls = this.heldCalls ?? [];
      this.heldCalls = undefined;
      // The failed attempt is withdrawn (v7); a v6 client keeps its text, and never saw its calls.
      if (event.discarded && this.target === 7) write({ type: "reset-step" });
      if (!event.discarded) for (const chunk of calls) write(chunk);
      return;
    }
    if (message.role === "user" && !opensTurnGroup(message)) {
      write(steeringPart(message, this.target));
      return;
    }
    if (message.role === "custom") {
      const part = customPart(message);
      if (part) write(part);
    }
  }

  private outputChunk(event: AgentEventOf<"tool_execution_end">): UIMessageChunk {
    const { toolCallId } = event;
    if (this.denied.has(toolCallId)) return { type: "tool-output-denied", toolCallId };
    if (event.isError)
      return {
        type: "tool-output-error",
        toolCallId,
        errorText: textOf(event.result.content),
        dynamic: true,
      };
    return { type: "tool-output-available", toolCallId, output: toolOutputOf(event.result), dynamic: true };
  }

  private writeEnd(event: AgentEventOf<"agent_end">, write: (chunk: UIMessageChunk) => void): void {
    write(
      dataChunk("end", {
        reason: event.reason,
        usage: event.usage,
        ...(event.errorMessage ? { errorMessage: event.errorMessage } : {}),
        ...("output" in event && { output: event.output }),
        ...(event.outputWarnings && { outputWarnings: event.outputWarnings }),
        ...(event.rejection !== undefined && { rejection: event.rejection }),
      }),
    );
    switch (event.reason) {
      case "stop":
        write({ type: "finish", finishReason: "stop" });
        break;
      case "aborted":
        write({ type: "abort", reason: "aborted" });
        write({ type: "finish", finishReason: "other" });
        break;
      case "error":
      case "rejected":
        write({ type: "error", errorText: event.errorMessage ?? `the run ended: ${event.reason}` });
        write({ type: "finish", finishReason: "error" });
        break;
      case "limit":
        write({ type: "finish", finishReason: "length" });
        break;
      case "loop":
        write({ type: "finish", finishReason: "other" });
        break;
    }
  }

  private closeParts(write: (chunk: UIMessageChunk) => void): void {
    if (this.textId) this.endText(write);
    if (this.reasoningId) this.endReasoning(write);
  }

  private endText(write: (chunk: UIMessageChunk) => void): void {
    write({ type: "text-end", id: this.textId });
    this.textId = undefined;
  }

  private endReasoning(write: (chunk: UIMessageChunk) => void): void {
    write({ type: "reasoning-end", id: this.reasoningId });
    this.reasoningId = undefined;
  }
}

/**
 * The top calls' parts that showed a sub-agent's client-run call this request answers, back to
 * `input-available` (the card is answered; the sub-agent works on): the answer leaves no event.
 */
function resolvedCards(context: ResponseContext): UIMessageChunk[] {
  const tops = new Set(
    (context.resolvedCalls ?? []).filter((id) => id.includes("/")).map((id) => id.slice(0, id.indexOf("/"))),
  );
  const chunks: UIMessageChunk[] = [];
  for (const message of context.messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type === "toolCall" && tops.has(block.id))
        chunks.push({
          type: "tool-input-available",
          toolCallId: block.id,
          toolName: block.name,
          input: block.arguments,
          dynamic: true,
        });
    }
  }
  return chunks;
}

/** A call waiting in a sub-agent (its path runs through a call of this agent). */
function isNested<T extends { path?: string[] }>(call: T): call is T & { path: string[] } {
  return call.path !== undefined && call.path.length > 1;
}

/**
 * The `tool-approval-request` of a waiting call: on its own part, or for a nested call on the part
 * of the top call it runs in, described (tool, input, path) in the approval's `descriptor`.
 */
function approvalRequestChunk(
  call: PendingApproval,
  waitsFor: NestedApprovalDescriptor["waitsFor"],
): UIMessageChunk {
  const nested = isNested(call);
  return {
    type: "tool-approval-request",
    approvalId: call.toolCallId,
    toolCallId: nested ? call.path[0] : call.toolCallId,
    ...(nested && { approvalDescriptor: nestedApprovalDescriptor(call, waitsFor) }),
    // ai 7 keeps it and sends it back with the answer: how the host tells ai 7 from ai 6.
    reason: approvalReason(call.toolName),
  };
}

/** A transient `data-agent-machine-<name>` chunk (the client's `onData` gets it; it is not kept as a part). */
function dataChunk(name: string, data: unknown): UIMessageChunk {
  return { type: `data-agent-machine-${name}`, data, transient: true };
}

/** A text or reasoning part's id: the message's id and the block's index (what toUIMessages gives it). */
function partIdOf(message: AssistantMessage): string {
  return reasoningPartId(message.id, message.content.length - 1);
}

function callOf(message: AssistantMessage, toolCallId: string) {
  return message.content.find((c) => c.type === "toolCall" && c.id === toolCallId) as
    { name: string; arguments: Record<string, unknown> } | undefined;
}

/**
 * The assistant UIMessage id of the turn group a response continues: the first assistant message
 * after the last prompt in the transcript. `undefined` for a new run (learnt from its first
 * assistant message) or when the group has no assistant message yet.
 */
function groupIdOf(context: ResponseContext): string | undefined {
  if (context.kind === "run") return undefined;
  const messages = context.messages;
  let start = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (opensTurnGroup(messages[i])) {
      start = i;
      break;
    }
  }
  return firstAssistantIdOf(messages.slice(start + 1));
}

function firstAssistantIdOf(messages: readonly AgentMessage[]): string | undefined {
  let last: string | undefined;
  for (const m of messages) {
    if (opensTurnGroup(m)) last = undefined;
    else if (m.role === "assistant" && last === undefined) last = m.id;
  }
  return last;
}
