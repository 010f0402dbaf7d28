import type { Context, Span, SpanKind, Tracer } from "@opentelemetry/api";
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import type { AgentMessage, AssistantMessage, Usage } from "../core/messages.js";
import { promptCacheReport } from "../core/cache-report.js";
import type { AgentRuntime } from "../core/runtime.js";
import { AM, ATTR, OPERATION, providerName } from "./attributes.js";
import { assistantMessage, finishReason, resultText, toGenAiMessages } from "./genai-messages.js";
import { activeContext, setSpan, SPAN_KIND, STATUS_ERROR } from "./otel-global.js";
import { spanContextOf, type WakeCause } from "./wake-cause.js";

/** What {@link createAgentTracing} needs to know about the agent and where its spans go. */
export interface AgentTracingSettings {
  tracer: Tracer;
  recordContent: boolean;
  agentId: string;
  agentName: string;
  conversationId?: string;
  /** The runtime of the traced agent (provider, tools, system prompt, transcript). */
  runtime: AgentRuntime;
  /** The parent of each run's span; default: the active context when the run starts. */
  parentContext?: () => Context;
}

/** Turns one agent's events into spans. */
export interface AgentTracing {
  readonly tracer: Tracer;
  readonly recordContent: boolean;
  /** Feed it every event of the agent, in order. */
  handle(event: AgentEvent): void;
  /**
   * The `execute_tool` span of a running call (a sub-agent's run goes below it). The runtime may
   * run a tool before it publishes the call's `tool_execution_start`, so the span is opened here
   * when it does not exist yet.
   */
  toolSpan(call: { toolCallId: string; toolName: string; args: unknown }): Span;
  /**
   * The message `messageId` woke the agent for `cause`: the run that takes it links to the cause
   * (and, when the run starts with it, carries `agent_machine.wake.source` and `.id`).
   */
  wokenBy(messageId: string, cause: WakeCause): void;
  /** Ends every open span (the agent was stopped mid-run). */
  close(): void;
}

/** Causes noted for messages not yet taken: a bound, so wakes an agent never takes cannot pile up. */
const MAX_PENDING_CAUSES = 1_000;

/**
 * Epoch milliseconds with sub-millisecond precision. Every span's start, end and events are stamped
 * from this one clock: the SDK's own default is `Date.now()` (whole milliseconds, and not the same
 * clock), so mixing the two could order a span before the one that really came first.
 */
const now = () => performance.timeOrigin + performance.now();

/** The `error.type` of a failed tool call, from the text our runtime gives each kind of failure. */
export function toolErrorType(text: string, toolName: string): string {
  if (text.startsWith(`Tool ${toolName} timed out`)) return "timeout";
  if (text.startsWith(`Tool ${toolName} aborted`)) return "aborted";
  if (text.startsWith(`Tool ${toolName} not found`)) return "tool_not_found";
  if (text.startsWith("Validation failed for tool")) return "invalid_arguments";
  if (text.startsWith("The user denied this tool call")) return "denied";
  if (text.startsWith("Permission denied")) return "denied";
  if (text.startsWith("Skipped due to queued user message")) return "skipped";
  return "tool_error";
}

/** The run's prompt cache use (calls, hits, hit ratio), when any call reported one. */
function cacheAttributes(messages: readonly AgentMessage[]): Record<string, number> {
  const cache = promptCacheReport(messages);
  if (!cache) return {};
  return {
    [AM.cacheCalls]: cache.calls,
    [AM.cacheHits]: cache.hits,
    [AM.cacheHitRatio]: cache.hitRatio,
  };
}

/** `gen_ai.usage.*` for a usage: input tokens include the cached ones, as the conventions ask. */
function usageAttributes(usage: Usage): Record<string, number> {
  return {
    [ATTR.inputTokens]: usage.input + usage.cacheRead + usage.cacheWrite,
    [ATTR.outputTokens]: usage.output,
    [ATTR.cacheReadTokens]: usage.cacheRead,
    [ATTR.cacheCreationTokens]: usage.cacheWrite,
    ...(usage.cacheWriteLong ? { [AM.cacheWriteLongTokens]: usage.cacheWriteLong } : {}),
  };
}

/**
 * The span tree of an agent, built from its events: one `invoke_agent` span per run; below it a
 * `chat` span per model call (each attempt of a retried call is its own span, ended with an error
 * and a `retry` event), a `compaction` span when the context was compacted, an `execute_tool` span
 * per call (with an `await_approval` span below it while the call waits for the user). Every span
 * ends: the runtime answers every call and closes every turn, and {@link AgentTracing.close} ends
 * what a stopped agent left open.
 *
 * @example
 * ```ts
 * const tracing = createAgentTracing({ tracer, recordContent: false, agentId: agent.id, agentName: "helper", runtime });
 * agent.events$.subscribe((event) => tracing.handle(event));
 * ```
 */
export function createAgentTracing(settings: AgentTracingSettings): AgentTracing {
  const { tracer, recordContent, runtime } = settings;
  const provider = providerName(runtime.provider.id);
  const model = runtime.provider.model;
  const base = {
    [ATTR.providerName]: provider,
    [ATTR.agentName]: settings.agentName,
    [ATTR.agentId]: settings.agentId,
    ...(settings.conversationId !== undefined && { [ATTR.conversationId]: settings.conversationId }),
  };

  /** The run's span; `tookInput` once a user message of the run came (the first is what started it). */
  let run: { span: Span; context: Context; turns: number; tookInput: boolean } | undefined;
  let chat: { span: Span; start: number } | undefined;
  /** When the next model call (or compaction) began: the turn's start, or the end of what came before. */
  let mark = now();
  let inTurn = false;
  const tools = new Map<string, { span: Span; toolName: string }>();
  const approvals = new Map<string, Span>();
  /** What woke the agent, by the id of the message that will come in. */
  let causes: Map<string, WakeCause> | undefined;

  const child = (name: string, kind: SpanKind, attributes: Record<string, unknown>, startTime?: number) =>
    tracer.startSpan(
      name,
      {
        kind,
        attributes: attributes as Record<string, string>,
        startTime: startTime ?? now(),
      },
      run?.context,
    );

  function startRun() {
    const parent = settings.parentContext?.() ?? undefined;
    const span = tracer.startSpan(
      `${OPERATION.invokeAgent} ${settings.agentName}`,
      {
        kind: SPAN_KIND.INTERNAL,
        attributes: { [ATTR.operationName]: OPERATION.invokeAgent, ...base, [ATTR.requestModel]: model },
        startTime: now(),
      },
      parent,
    );
    if (recordContent && runtime.systemPrompt) {
      span.setAttribute(
        ATTR.systemInstructions,
        JSON.stringify([{ type: "text", content: runtime.systemPrompt }]),
      );
    }
    run = { span, context: setSpan(parent ?? activeContext(), span), turns: 0, tookInput: false };
    mark = now();
  }

  /** Opens the span of a model call; `attempt` names the model a fallback chain asked. */
  function openChat(attempt?: AssistantMessage) {
    if (chat) return;
    const firstChunk = now();
    const asked = attempt?.model ?? model;
    const span = child(
      `${OPERATION.chat} ${asked}`,
      SPAN_KIND.CLIENT,
      {
        [ATTR.operationName]: OPERATION.chat,
        [ATTR.providerName]: attempt?.provider !== undefined ? providerName(attempt.provider) : provider,
        [ATTR.requestModel]: asked,
        [ATTR.timeToFirstChunk]: (firstChunk - mark) / 1000,
      },
      mark,
    );
    if (recordContent) {
      const request = runtime.convertToLlm(runtime.transcript());
      span.setAttribute(ATTR.inputMessages, JSON.stringify(toGenAiMessages(request)));
      if (runtime.systemPrompt) {
        span.setAttribute(
          ATTR.systemInstructions,
          JSON.stringify([{ type: "text", content: runtime.systemPrompt }]),
        );
      }
    }
    chat = { span, start: mark };
  }

  function endChat(message: AssistantMessage) {
    openChat();
    const { span } = chat!;
    chat = undefined;
    span.setAttributes({
      ...usageAttributes(message.usage),
      [ATTR.finishReasons]: [finishReason(message.stopReason)],
      ...(message.model !== undefined && { [ATTR.responseModel]: message.model }),
    });
    if (recordContent) span.setAttribute(ATTR.outputMessages, JSON.stringify([assistantMessage(message)]));
    if (message.stopReason === "error") {
      span.setAttribute(ATTR.errorType, "model_error");
      span.setStatus({ code: STATUS_ERROR, message: message.errorMessage });
    }
    span.end(now());
    mark = now();
  }

  function failAttempt(event: AgentEventOf<"retry">) {
    openChat();
    const { span } = chat!;
    chat = undefined;
    span.addEvent(
      "retry",
      {
        [AM.retryAttempt]: event.attempt,
        [AM.retryDelayMs]: event.delayMs,
        "exception.message": event.error,
        // A fallback chain handed the call to this model.
        ...(event.model !== undefined && { "gen_ai.request.model": event.model }),
      },
      now(),
    );
    span.setAttribute(ATTR.errorType, "retryable_error");
    span.setStatus({ code: STATUS_ERROR, message: event.error });
    span.end(now());
    // The next attempt starts once the backoff has passed.
    mark = now() + event.delayMs;
  }

  function compacted(event: AgentEventOf<"compaction">) {
    const span = child(
      "compaction",
      SPAN_KIND.INTERNAL,
      {
        [AM.compactionLevel]: event.level,
        [AM.tokensBefore]: event.tokensBefore,
        [AM.tokensAfter]: event.tokensAfter,
      },
      mark,
    );
    span.end(now());
    mark = now();
  }

  function startTool(call: { toolCallId: string; toolName: string; args: unknown }): Span {
    const open = tools.get(call.toolCallId);
    if (open) return open.span;
    const tool = runtime.tools.get(call.toolName);
    const span = child(`${OPERATION.executeTool} ${call.toolName}`, SPAN_KIND.INTERNAL, {
      [ATTR.operationName]: OPERATION.executeTool,
      [ATTR.toolName]: call.toolName,
      [ATTR.toolCallId]: call.toolCallId,
      [ATTR.toolType]: "function",
      ...(tool && { [ATTR.toolDescription]: tool.description }),
      ...(recordContent && { [ATTR.toolCallArguments]: JSON.stringify(call.args ?? {}) }),
    });
    tools.set(call.toolCallId, { span, toolName: call.toolName });
    return span;
  }

  function endApproval(toolCallId: string, approved: boolean | undefined) {
    const span = approvals.get(toolCallId);
    if (!span) return;
    approvals.delete(toolCallId);
    if (approved !== undefined) span.setAttribute(AM.approved, approved);
    span.end(now());
  }

  function endTool(event: AgentEventOf<"tool_execution_end">) {
    endApproval(event.toolCallId, undefined);
    const entry = tools.get(event.toolCallId);
    if (!entry) return;
    tools.delete(event.toolCallId);
    const { span } = entry;
    const text = resultText(event.result.content);
    if (event.childAgentId !== undefined) span.setAttribute(AM.childAgentId, event.childAgentId);
    if (recordContent) span.setAttribute(ATTR.toolCallResult, text);
    if (event.isError) {
      span.setAttribute(ATTR.errorType, toolErrorType(text, event.toolName));
      span.setStatus({ code: STATUS_ERROR, message: text.slice(0, 500) });
    }
    span.end(now());
  }

  function endRun(event: AgentEventOf<"agent_end">) {
    if (!run) return;
    closeChildren();
    const { span } = run;
    span.setAttributes({
      // The agent's own calls: its sub-agents' spans carry theirs (a tree's sum would count them twice).
      ...usageAttributes(event.ownUsage ?? event.usage),
      ...cacheAttributes(event.messages),
      [AM.endReason]: event.reason,
      [AM.turns]: run.turns,
    });
    if (recordContent) {
      const users = event.messages.filter((m) => m.role === "user");
      const last = event.messages.findLast((m): m is AssistantMessage => m.role === "assistant");
      span.setAttribute(ATTR.inputMessages, JSON.stringify(toGenAiMessages(users)));
      if (last) span.setAttribute(ATTR.outputMessages, JSON.stringify([assistantMessage(last)]));
    }
    if (event.reason === "error") {
      span.setAttribute(ATTR.errorType, "agent_error");
      span.setStatus({ code: STATUS_ERROR, message: event.errorMessage });
    }
    span.end(now());
    run = undefined;
  }

  /** Ends what is still open below the run (only after an abnormal stop). */
  function closeChildren() {
    for (const id of [...approvals.keys()]) endApproval(id, undefined);
    for (const { span } of tools.values()) {
      span.setStatus({ code: STATUS_ERROR, message: "The agent stopped before the call ended" });
      span.end(now());
    }
    tools.clear();
    if (chat) {
      chat.span.setStatus({
        code: STATUS_ERROR,
        message: "The agent stopped before the model answered",
      });
      chat.span.end(now());
      chat = undefined;
    }
  }

  /** A message the run takes that a wake brought: the run links to the wake's cause. */
  function tookInput(messageId: string | undefined) {
    if (!run) return;
    const first = !run.tookInput;
    run.tookInput = true;
    const cause = messageId === undefined ? undefined : causes?.get(messageId);
    if (!cause) return;
    causes!.delete(messageId!);
    const attributes = { [AM.wakeSource]: cause.source, [AM.wakeId]: cause.id };
    // The run started with this message: it is what woke the agent. A wake taken mid-run (steered
    // into it) only links.
    if (first) run.span.setAttributes(attributes);
    const context = spanContextOf(cause.traceparent);
    if (context) run.span.addLink({ context, attributes });
  }

  function handle(event: AgentEvent) {
    switch (event.type) {
      case "agent_start":
        startRun();
        return;
      case "turn_start":
        inTurn = true;
        if (run) run.turns = event.turn;
        mark = now();
        return;
      case "message_start":
        if (inTurn && event.message.role === "assistant") openChat(event.message);
        else if (event.message.role === "user") tookInput(event.message.id);
        return;
      case "message_end":
        // A retried attempt's message is closed after its `retry`, which already ended its span.
        if (event.discarded && !chat) return;
        if (inTurn && event.message.role === "assistant") endChat(event.message);
        return;
      case "turn_end":
        inTurn = false;
        return;
      case "retry":
        failAttempt(event);
        return;
      case "compaction":
        compacted(event);
        return;
      case "tool_execution_start":
        startTool(event);
        return;
      case "tool_execution_end":
        endTool(event);
        return;
      case "approval_requested": {
        const tool = tools.get(event.toolCallId);
        if (!tool || approvals.has(event.toolCallId)) return;
        const span = tracer.startSpan(
          `await_approval ${event.toolName}`,
          {
            kind: SPAN_KIND.INTERNAL,
            attributes: { [ATTR.toolName]: event.toolName, [ATTR.toolCallId]: event.toolCallId },
            startTime: now(),
          },
          setSpan(run?.context ?? activeContext(), tool.span),
        );
        approvals.set(event.toolCallId, span);
        return;
      }
      case "approval_decided":
        endApproval(event.toolCallId, event.approved);
        return;
      case "loop_detected":
        run?.span.addEvent(
          "loop_detected",
          {
            [AM.loopAction]: event.action,
            [AM.loopKind]: event.kind,
            [AM.loopCount]: event.count,
            [ATTR.toolName]: event.toolName,
            [ATTR.toolCallId]: event.toolCallId,
          },
          now(),
        );
        return;
      case "input_rejected":
        run?.span.addEvent("input_rejected", { [AM.reason]: event.reason }, now());
        return;
      case "agent_end":
        endRun(event);
        return;
      default:
        return;
    }
  }

  return {
    tracer,
    recordContent,
    handle(event) {
      try {
        handle(event);
      } catch {
        // Tracing must never break the agent: a failing exporter or processor loses spans, not runs.
      }
    },
    toolSpan: (call) => startTool(call),
    wokenBy(messageId, cause) {
      causes ??= new Map();
      if (causes.size >= MAX_PENDING_CAUSES) causes.delete(causes.keys().next().value!);
      causes.set(messageId, cause);
    },
    close() {
      if (!run) return;
      closeChildren();
      run.span.setAttribute(AM.endReason, "stopped");
      run.span.end(now());
      run = undefined;
    },
  };
}
