import type { AgentEvent, AgentEventOf } from "../../../core/events.js";
import type { AgentMessage, AssistantMessage, Usage } from "../../../core/messages.js";
import { plainText, reasoningId, toAgUiMessages } from "./messages.js";
import type { AgUiEvent, AgUiInterrupt, AgUiMessage } from "./types.js";

/** A call waiting for the client: an approval or a client-run tool's result. */
export interface WaitingCall {
  toolCallId: string;
  toolName: string;
  args: unknown;
  /** For a call waiting in a sub-agent: the call ids from the top agent's down to it. */
  path?: string[];
  /** For a call waiting in a sub-agent: the sub-agents' ids down to the one it waits in. */
  agents?: string[];
}

/** Why the response ends (the session host's ending, seen by this encoder). */
export type AgUiEnding =
  | { kind: "end"; event: AgentEventOf<"agent_end">; messages: readonly AgentMessage[] }
  | {
      kind: "quiescent";
      approvals: readonly WaitingCall[];
      toolCalls: readonly WaitingCall[];
      messages: readonly AgentMessage[];
    }
  | { kind: "gone"; messages: readonly AgentMessage[] };

/** Options of {@link AgUiEventEncoder}. */
export interface AgUiEventEncoderOptions {
  threadId: string;
  /** The AG-UI run id (the client's `RunAgentInput.runId`). */
  runId: string;
  /**
   * `"1.0"` (default) or `"legacy"`: a 0.0.x client (what CopilotKit ships) fails a run on a
   * `cancelled` outcome, so an aborted run ends with a plain `RUN_FINISHED` for it.
   */
  client?: "1.0" | "legacy";
  /** Also send the legacy `CUSTOM on_interrupt` event before an interrupt outcome (default `true`). */
  legacyInterruptEvent?: boolean;
  /**
   * The ids of the messages the client already holds (a reconnect's `RunAgentInput.messages`).
   * A tool result or a whole message it holds is not sent again: the clients add a message per
   * `TOOL_CALL_RESULT` even when they hold its id, and a snapshot keeps both copies.
   */
  heldMessageIds?: ReadonlySet<string>;
}

/** The prefix of every `CUSTOM` event name this encoder makes up. */
export const CUSTOM_PREFIX = "agent-machine.";

/** The interrupt reason of a sub-agent's client-run call (an approval's is `"tool_call"`). */
export const CLIENT_TOOL_REASON = "client_tool";

const JSON_SCHEMA_OF_DECISION = {
  type: "object",
  properties: {
    approved: { type: "boolean" },
    reason: { type: "string" },
    editedArgs: { type: "object", description: "The arguments to run the call with instead" },
  },
  required: ["approved"],
};

/**
 * Turns the agent events of one AG-UI response into AG-UI 1.0 events, keeping what the clients'
 * verifiers check: one step per turn, text and reasoning opened once and closed before the run
 * finishes, every message where the transcript has it. Tool calls are sent whole when the model's
 * message ends, so a retried attempt's calls (a discarded message) never reach the client, which
 * would otherwise take them for frontend tools it must answer; the attempt's text is withdrawn by
 * a snapshot of the transcript without it.
 *
 * @example
 * ```ts
 * const encoder = new AgUiEventEncoder({ threadId: "t1", runId: "r1" });
 * const out = [...encoder.open(agent.messages), ...events.flatMap((e) => encoder.event(e)), ...encoder.close(ending)];
 * ```
 */
export class AgUiEventEncoder {
  private step: string | undefined;
  private text: string | undefined;
  private reasoning: string | undefined;
  /**
   * The assistant message in progress (its transcript id), and how many of its attempts could not
   * be withdrawn: each of those leaves its text on the client, so the next streams under `<id>~N`.
   */
  private assistantId: string | undefined;
  private kept = 0;
  /** The current attempt streamed reasoning (under `reasoningId(streamId)`). */
  private reasoned = false;
  /**
   * The transcript as the client should hold it now: the response's first, plus every message
   * that ended since (`undefined` once a compaction rewrote it behind the events' back, until
   * `live` reads it again).
   */
  private transcript: AgentMessage[] | undefined;
  /** Reads the agent's transcript now, when the host gives a way to (never for a replay). */
  private live: (() => readonly AgentMessage[]) | undefined;
  /** A compaction rewrote the transcript: the client gets the new one before the next event. */
  private resync = false;
  /** Tool calls sent (`TOOL_CALL_START` … `END`) in this response. */
  private readonly sentCalls = new Set<string>();
  /** Sub-agents started and not finished, by the tool call running them. */
  private readonly subagents = new Map<string, string>();
  private usage: Usage | undefined;
  private closed = false;
  /** An output filter ended the run: its `RUN_ERROR` says so rather than blaming the input. */
  private outputRejected = false;

  constructor(private readonly options: AgUiEventEncoderOptions) {}

  /**
   * `RUN_STARTED`. `messages` is the transcript when the response opens (`undefined` when unknown,
   * as for a replay). A response that resumes a run mid-turn (after approvals) opens no step: the
   * turn's step was finished with the response before, and the next turn opens the next one.
   */
  open(messages?: readonly AgentMessage[], transcript?: () => readonly AgentMessage[]): AgUiEvent[] {
    this.transcript = messages && [...messages];
    this.live = transcript;
    return [{ type: "RUN_STARTED", threadId: this.options.threadId, runId: this.options.runId }];
  }

  /**
   * `RUN_STARTED` of a replay (a reconnect re-reading a response from its first event), and, when
   * the client lacks messages of the transcript as it stood when the response began (`before`: a
   * page reloaded while a run it had left went on), those messages first. Else the replay's
   * results and answer would come before them, and the closing `MESSAGES_SNAPSHOT` keeps the
   * order a client already holds (AG-UI 0.0.x appends the messages it lacks after it).
   */
  openReplay(before?: readonly AgentMessage[]): AgUiEvent[] {
    const started = this.open();
    if (!before?.length) return started;
    const held = this.options.heldMessageIds;
    const messages = toAgUiMessages(before);
    if (held && messages.every((message) => held.has(message.id))) return started;
    return [...started, { type: "MESSAGES_SNAPSHOT", messages }];
  }

  /** The AG-UI events of one agent event (none for what the client needs not see). */
  event(event: AgentEvent): AgUiEvent[] {
    if (this.closed) return [];
    const out: AgUiEvent[] = [];
    if (this.resync && this.live) {
      // The compaction is in the transcript by now (it is written after its event goes out).
      this.resync = false;
      this.transcript = [...this.live()];
      out.push(...resynchronised(toAgUiMessages(this.transcript)));
    }
    switch (event.type) {
      case "turn_start":
        this.closeStep(out);
        this.openStep(out, `turn ${event.turn}`);
        break;
      case "turn_end":
        this.closeMessage(out);
        this.closeStep(out);
        break;
      case "message_start":
        if (event.message.role === "assistant") this.startAttempt(event.message);
        break;
      case "message_update":
        if (event.kind === "text_delta") this.textDelta(out, event.delta);
        else if (event.kind === "thinking_delta") this.thinkingDelta(out, event.delta);
        // Tool calls go out whole at message_end: a discarded attempt's must never reach the client.
        break;
      case "message_end":
        this.messageEnd(out, event.message, event.discarded === true);
        break;
      case "tool_execution_update": {
        const child = childAgentOf(event.partialResult);
        if (child !== undefined) this.startSubagent(out, event.toolCallId, event.toolName, child);
        out.push(
          custom("tool_execution_update", {
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            text: plainText(event.partialResult.content),
          }),
        );
        break;
      }
      case "tool_progress":
        out.push(
          custom("tool_progress", {
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            text: event.text,
          }),
        );
        break;
      case "tool_execution_end":
        if (event.childAgentId !== undefined) {
          this.startSubagent(out, event.toolCallId, event.toolName, event.childAgentId);
          this.finishSubagent(
            out,
            event.toolCallId,
            event.isError ? plainText(event.result.content) : undefined,
          );
        }
        break;
      case "approval_decided":
        out.push(
          custom("approval_decided", {
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            ...(event.path && { path: event.path }),
            approved: event.approved,
            ...(event.editedArgs !== undefined && { editedArgs: event.editedArgs }),
          }),
        );
        break;
      case "agent_end":
        this.usage = event.usage;
        break;
      case "compaction":
        this.transcript = undefined;
        this.resync = true;
        out.push(
          custom("compaction", {
            level: event.level,
            tokensBefore: event.tokensBefore,
            tokensAfter: event.tokensAfter,
          }),
        );
        break;
      case "retry":
      case "context_window_learned":
      case "limit_reached":
      case "loop_detected":
      case "input_rejected":
      case "output_delta":
      case "output_invalid":
      case "output_filter": {
        if (event.type === "output_filter" && event.action === "end") this.outputRejected = true;
        const { type, ...value } = event;
        out.push(custom(type, value));
        break;
      }
      default:
        // agent_start is RUN_STARTED; tool_execution_start, approval_requested and
        // tool_result_requested become the calls' events and the run's outcome.
        break;
    }
    return out;
  }

  /** Closes what is open, sends the transcript, and finishes the run as `ending` says. */
  close(ending: AgUiEnding): AgUiEvent[] {
    if (this.closed) return [];
    this.closed = true;
    const out: AgUiEvent[] = [];
    this.closeMessage(out);
    for (const toolCallId of [...this.subagents.keys()]) this.finishSubagent(out, toolCallId, undefined);
    this.closeStep(out);
    out.push({ type: "MESSAGES_SNAPSHOT", messages: toAgUiMessages(ending.messages) });
    const { threadId, runId } = this.options;
    const legacy = this.options.client === "legacy";
    if (ending.kind === "quiescent") {
      // A sub-agent's client-run call has no tool call of its own in the client's messages (it
      // could not answer it with a `tool` message): it is an interrupt, answered through `resume`.
      const nestedCalls = ending.toolCalls.filter(isNestedCall);
      if (ending.approvals.length + nestedCalls.length > 0) {
        const interrupts = [...ending.approvals.map(interruptOf), ...nestedCalls.map(clientCallInterruptOf)];
        if (this.options.legacyInterruptEvent !== false) {
          out.push({ type: "CUSTOM", name: "on_interrupt", value: JSON.stringify(interrupts) });
        }
        out.push({ type: "RUN_FINISHED", threadId, runId, outcome: { type: "interrupt", interrupts } });
      } else {
        const pendingToolCallIds = ending.toolCalls.map((c) => c.toolCallId);
        out.push({
          type: "RUN_FINISHED",
          threadId,
          runId,
          outcome: { type: "success", ...(!legacy && { pendingToolCallIds }) },
        });
      }
      return out;
    }
    if (ending.kind === "gone") {
      out.push({ type: "RUN_FINISHED", threadId, runId, outcome: { type: "success" } });
      return out;
    }
    const end = ending.event;
    const usage = !legacy && this.usage ? { usage: [tokenUsageOf(this.usage)] } : {};
    switch (end.reason) {
      case "error":
      case "rejected":
        out.push({
          type: "RUN_ERROR",
          message:
            end.errorMessage ??
            (end.reason === "rejected" ? (end.rejection ?? "The input was rejected") : "The run failed"),
          code:
            end.reason === "rejected"
              ? this.outputRejected
                ? "output_rejected"
                : "input_rejected"
              : (end.errorKind ?? "error"),
        });
        break;
      case "aborted":
        out.push(
          legacy
            ? { type: "RUN_FINISHED", threadId, runId, result: { reason: "aborted" } }
            : {
                type: "RUN_FINISHED",
                threadId,
                runId,
                outcome: { type: "cancelled" },
                result: { reason: "aborted" },
                ...usage,
              },
        );
        break;
      default:
        out.push({
          type: "RUN_FINISHED",
          threadId,
          runId,
          outcome: { type: "success" },
          ...(end.reason !== "stop" && { result: { reason: end.reason } }),
          ...(end.reason === "stop" &&
            end.output !== undefined && {
              result: {
                output: end.output,
                ...(end.outputWarnings && { outputWarnings: end.outputWarnings }),
              },
            }),
          ...usage,
        });
    }
    return out;
  }

  private openStep(out: AgUiEvent[], stepName: string): void {
    this.step = stepName;
    out.push({ type: "STEP_STARTED", stepName });
  }

  private closeStep(out: AgUiEvent[]): void {
    if (this.step === undefined) return;
    out.push({ type: "STEP_FINISHED", stepName: this.step });
    this.step = undefined;
  }

  /** A new attempt of an assistant message (a retry keeps the message's id). */
  private startAttempt(message: AssistantMessage): void {
    const id = message.id ?? "assistant";
    if (id !== this.assistantId) this.kept = 0;
    this.assistantId = id;
    this.reasoned = false;
  }

  /** The id the current attempt streams under: the transcript's, unless an earlier attempt stayed. */
  private get streamId(): string {
    const id = this.assistantId ?? "assistant";
    return this.kept > 0 ? `${id}~${this.kept + 1}` : id;
  }

  private textDelta(out: AgUiEvent[], delta: string): void {
    if (delta === "") return;
    if (this.text === undefined) {
      this.text = this.streamId;
      out.push({ type: "TEXT_MESSAGE_START", messageId: this.text, role: "assistant" });
    }
    out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: this.text, delta });
  }

  private thinkingDelta(out: AgUiEvent[], delta: string): void {
    if (delta === "") return;
    if (this.reasoning === undefined) {
      this.reasoning = reasoningId(this.streamId);
      this.reasoned = true;
      out.push({ type: "REASONING_START", messageId: this.reasoning });
      out.push({ type: "REASONING_MESSAGE_START", messageId: this.reasoning, role: "reasoning" });
    }
    out.push({ type: "REASONING_MESSAGE_CONTENT", messageId: this.reasoning, delta });
  }

  private closeMessage(out: AgUiEvent[]): void {
    if (this.reasoning !== undefined) {
      out.push({ type: "REASONING_MESSAGE_END", messageId: this.reasoning });
      out.push({ type: "REASONING_END", messageId: this.reasoning });
      this.reasoning = undefined;
    }
    if (this.text !== undefined) {
      out.push({ type: "TEXT_MESSAGE_END", messageId: this.text });
      this.text = undefined;
    }
  }

  private messageEnd(out: AgUiEvent[], message: AgentMessage, discarded: boolean): void {
    switch (message.role) {
      case "assistant": {
        const streamId = this.streamId;
        this.closeMessage(out);
        if (discarded) {
          out.push(custom("discarded", { messageId: streamId, error: message.errorMessage ?? "" }));
          this.withdraw(out, streamId);
          return;
        }
        this.transcript?.push(message);
        for (const block of message.content) {
          if (block.type !== "toolCall" || this.sentCalls.has(block.id)) continue;
          this.sentCalls.add(block.id);
          out.push({
            type: "TOOL_CALL_START",
            toolCallId: block.id,
            toolCallName: block.name,
            parentMessageId: streamId,
          });
          out.push({
            type: "TOOL_CALL_ARGS",
            toolCallId: block.id,
            delta: JSON.stringify(block.arguments ?? {}),
          });
          out.push({ type: "TOOL_CALL_END", toolCallId: block.id });
        }
        return;
      }
      case "toolResult": {
        this.transcript?.push(message);
        if (this.held(message.id)) return;
        const content = plainText(message.content);
        out.push({
          type: "TOOL_CALL_RESULT",
          messageId: message.id ?? `${message.toolCallId}:result`,
          toolCallId: message.toolCallId,
          content,
          role: "tool",
          metadata: { isError: message.isError, toolName: message.toolName },
        });
        return;
      }
      case "user": {
        this.transcript?.push(message);
        // The client sent its prompt itself; what the agent took mid-run (a steer, a follow-up,
        // a notice of its own) it learns here.
        if (message.source === "prompt" || message.source === undefined || this.held(message.id)) return;
        const text = plainText(message.content);
        const messageId = message.id ?? `user-${Date.now()}`;
        out.push({
          type: "TEXT_MESSAGE_START",
          messageId,
          role: "user",
          metadata: { source: message.source },
        });
        if (text !== "") out.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: text });
        out.push({ type: "TEXT_MESSAGE_END", messageId });
        return;
      }
      case "custom": {
        this.transcript?.push(message);
        if (this.held(message.id)) return;
        // In the stream, so the client holds it where the transcript does (a snapshot appends
        // what the client lacks at the end): a developer message, or an activity when UI-only.
        const messageId = message.id ?? `custom-${Date.now()}`;
        const text = plainText(message.content);
        const metadata = {
          customType: message.customType,
          ...(message.source && { source: message.source }),
        };
        if (message.display === "ui-only") {
          out.push({
            type: "ACTIVITY_SNAPSHOT",
            messageId,
            activityType: `${CUSTOM_PREFIX}${message.customType}`,
            content: { text },
            metadata,
          });
          return;
        }
        out.push({ type: "TEXT_MESSAGE_START", messageId, role: "developer", metadata });
        if (text !== "") out.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: text });
        out.push({ type: "TEXT_MESSAGE_END", messageId });
        return;
      }
    }
  }

  /** The client holds this message already (it reconnected after receiving it). */
  private held(id: string | undefined): boolean {
    return id !== undefined && this.options.heldMessageIds?.has(id) === true;
  }

  /**
   * Takes a failed attempt back from the client (AG-UI has no retraction): a snapshot of the
   * transcript without it drops its text, and empties its reasoning (a snapshot can drop a
   * reasoning message only when it holds one, so it holds that one, empty); the retry then
   * streams under the same ids. Without a known transcript (after a compaction) the attempt stays
   * and the retry streams under ids of its own.
   */
  private withdraw(out: AgUiEvent[], streamId: string): void {
    if (!this.transcript) {
      this.kept++;
      return;
    }
    const messages: AgUiMessage[] = toAgUiMessages(this.transcript);
    if (this.reasoned) messages.push({ id: reasoningId(streamId), role: "reasoning", content: "" });
    out.push({ type: "MESSAGES_SNAPSHOT", messages });
  }

  private startSubagent(out: AgUiEvent[], toolCallId: string, name: string, childAgentId: string): void {
    if (this.subagents.has(toolCallId)) return;
    this.subagents.set(toolCallId, childAgentId);
    out.push({ type: "SUBAGENT_STARTED", subagentRunId: childAgentId, name, parentToolCallId: toolCallId });
  }

  private finishSubagent(out: AgUiEvent[], toolCallId: string, error: string | undefined): void {
    const subagentRunId = this.subagents.get(toolCallId);
    if (subagentRunId === undefined) return;
    this.subagents.delete(toolCallId);
    out.push(
      error === undefined
        ? { type: "SUBAGENT_FINISHED", subagentRunId, outcome: { type: "success" } }
        : { type: "SUBAGENT_ERROR", subagentRunId, message: error || "The sub-agent failed" },
    );
  }
}

/**
 * Snapshots that give the client `messages` in their order. A snapshot keeps the client's messages
 * it names where they are and appends the others, so a rewritten transcript (a compaction summary
 * ahead of kept messages) would come out of order: a first snapshot clears the client. It names
 * one placeholder reasoning message when the transcript has reasoning, since only a snapshot that
 * holds reasoning may drop the client's (the second then drops the placeholder).
 */
function resynchronised(messages: AgUiMessage[]): AgUiEvent[] {
  const reasons = messages.some((m) => m.role === "reasoning");
  const clear: AgUiMessage[] = reasons
    ? [{ id: `${CUSTOM_PREFIX}resync`, role: "reasoning", content: "" }]
    : [];
  return [
    { type: "MESSAGES_SNAPSHOT", messages: clear },
    { type: "MESSAGES_SNAPSHOT", messages },
  ];
}

function custom(name: string, value: unknown): AgUiEvent {
  return { type: "CUSTOM", name: CUSTOM_PREFIX + name, value };
}

/**
 * The interrupt of a waiting call, answered by its id. A call waiting in a sub-agent is bound to
 * the top agent's call it runs in (the only tool call the client holds); its id is the nested
 * call's path id, and its metadata names the nested call and where it waits.
 */
function interruptOf(call: WaitingCall): AgUiInterrupt {
  const nested = call.path !== undefined && call.path.length > 1;
  return {
    id: call.toolCallId,
    reason: "tool_call",
    toolCallId: nested ? call.path![0] : call.toolCallId,
    message: `Approve ${call.toolName}?`,
    responseSchema: JSON_SCHEMA_OF_DECISION,
    metadata: {
      toolName: call.toolName,
      args: call.args,
      ...(nested && { path: call.path, agents: call.agents ?? [] }),
    },
  };
}

function isNestedCall(call: WaitingCall): call is WaitingCall & { path: string[] } {
  return call.path !== undefined && call.path.length > 1;
}

/** The answer a sub-agent's client-run call's interrupt takes (`resume[].payload`). */
const JSON_SCHEMA_OF_CLIENT_RESULT = {
  type: "object",
  properties: {
    result: { description: "The tool's result: text, or { content: [...] }" },
    error: { type: "string", description: "Why the client could not run it (the model reads it)" },
  },
};

/**
 * The interrupt of a sub-agent's client-run call (reason `"client_tool"`): bound, like a nested
 * approval, to the top agent's call it runs in; its id the call's path id; its metadata the tool
 * and its arguments, for the page to run. `resume` answers it with `{ result }` or `{ error }`.
 */
function clientCallInterruptOf(call: WaitingCall & { path: string[] }): AgUiInterrupt {
  return {
    id: call.toolCallId,
    reason: CLIENT_TOOL_REASON,
    toolCallId: call.path[0]!,
    message: `Run ${call.toolName}`,
    responseSchema: JSON_SCHEMA_OF_CLIENT_RESULT,
    metadata: { toolName: call.toolName, args: call.args, path: call.path, agents: call.agents ?? [] },
  };
}

function childAgentOf(result: { details?: unknown; childAgentId?: string }): string | undefined {
  if (result.childAgentId !== undefined) return result.childAgentId;
  const details = result.details as { childAgentId?: unknown } | undefined;
  return typeof details?.childAgentId === "string" ? details.childAgentId : undefined;
}

/** AG-UI counts cache reads and writes inside `inputTokens`. */
function tokenUsageOf(usage: Usage) {
  return {
    inputTokens: usage.input + usage.cacheRead + usage.cacheWrite,
    outputTokens: usage.output,
    totalTokens: usage.totalTokens,
    cachedInputTokens: usage.cacheRead,
    cacheWriteInputTokens: usage.cacheWrite,
  };
}
