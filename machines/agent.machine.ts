import { and, assign, emit, enqueueActions, raise, sendTo, setup, stopChild } from "xstate";
import { compactionActor } from "../actors/compaction.actor.js";
import { type ModelStreamEvent, modelStreamActor } from "../actors/model-stream.actor.js";
import { runDeadlineActor } from "../actors/run-deadline.actor.js";
import type { CompactionResult } from "../context/compact.js";
import { isOverBudget } from "../context/compact.js";
import type { ContextConfig, TokenCalibration } from "../context/config.js";
import { contextOverflowText, learnContextWindow, withLearnedWindow } from "../context/context-window.js";
import { calibrationFromUsage, estimateTokens } from "../context/tokens.js";
import type { InboxKind } from "../core/effect-journal.js";
import type { AgentEvent } from "../core/events.js";
import {
  type AgentMessage,
  addUsage,
  type AssistantMessage,
  type ToolResultMessage,
} from "../core/messages.js";
import type { AgentLimits, LoopDetectionOptions, QueueMode, ToolExecutionStrategy } from "../core/options.js";
import { nowFor } from "../core/runtime.js";
import {
  callsOf,
  hasCalls,
  durationLimitText,
  emptyAssistant,
  ensureUniqueToolCallIds,
  newRun,
  noItems,
  openedRun,
  type RunState,
  runMessages,
  stopNotice,
  takeFromQueue,
} from "./agent.logic.js";
import {
  isLoopNotice,
  loopMayStop,
  loopNotice,
  loopStopText,
  recordToolResults,
  resolveLoopDetection,
} from "./loop-detection.logic.js";
import {
  answeredAtLimit,
  type LimitVerdict,
  limitNotice,
  limitVerdict,
  nextCallTokens,
  notRunAtLimitText,
} from "./limit-answer.logic.js";
import { type ToolCallOutput, toolCallMachine } from "../actors/tool-call.machine.js";
import {
  abortedText,
  doneActorId,
  type PlannedCall,
  planCalls,
  unranResult,
} from "./tool-execution.logic.js";
import { type GroupDoneEvent, toolExecutionMachine } from "./tool-execution.machine.js";
import { appendToTranscript, readTranscript } from "./transcript.js";

export interface AgentMachineInput {
  messages?: AgentMessage[];
  /** The data of the compaction budget (functions such as a summariser stay in the runtime). */
  contextBudget?: ContextConfig;
  /** Names of the tools that may run side by side (strategy `"auto"`). */
  concurrencySafeTools?: string[];
  strategy?: ToolExecutionStrategy;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  limits?: AgentLimits;
  /** Loop detection thresholds, or `false` for none; absent = the defaults. */
  loopDetection?: LoopDetectionOptions | false;
  /**
   * The context of this agent's previous actor, released while idle (see the agent's resting in
   * `agent/create-agent.ts`): the new actor starts idle with it, as if it had never stopped.
   */
  resume?: AgentContext;
}

export interface AgentContext {
  /** The transcript (a read-only view that costs no copy per message: see `transcript.ts`). */
  messages: AgentMessage[];
  /** Messages the next turn appends before it calls the model. */
  pending: AgentMessage[];
  steeringQueue: AgentMessage[];
  followUpQueue: AgentMessage[];
  strategy: ToolExecutionStrategy;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  limits: AgentLimits;
  contextBudget?: ContextConfig;
  concurrencySafeTools: string[];
  run: RunState;
  calibration?: TokenCalibration;
  /**
   * The context window learned from the provider's overflow errors, when lower than the configured
   * one (absent until the first overflow): kept for the rest of the session, and in snapshots.
   */
  learnedMaxContextTokens?: number;
  /** Absent = the default thresholds (see `LOOP_DETECTION_DEFAULTS`). */
  loopDetection?: LoopDetectionOptions | false;
}

export type AgentMachineEvent =
  | { type: "PROMPT"; messages: AgentMessage[] }
  | { type: "CONTINUE" }
  | { type: "PROMPT_REJECTED"; reason: string }
  | { type: "STEER"; message: AgentMessage }
  | { type: "FOLLOW_UP"; message: AgentMessage }
  | { type: "ABORT" }
  | { type: "DEADLINE" }
  | { type: "CHECK" }
  | ModelStreamEvent
  | GroupDoneEvent
  /** The tool execution machine finished: its output is the results it had not reported yet. */
  | { type: "xstate.done.actor.toolExecution"; output?: ToolResultMessage[] }
  | { type: "xstate.error.actor.toolExecution"; error: unknown }
  /** The call actor of a turn with one call finished (its id is the tool call id). */
  | { type: `xstate.done.actor.${string}`; output?: ToolCallOutput | ToolResultMessage[] }
  | { type: `xstate.error.actor.${string}`; error: unknown };

type StreamDone = Extract<ModelStreamEvent, { type: "STREAM_DONE" }>;

/** How a turn opens: `turn_start`, the queued messages announced, then both in the context. */
const START_TURN = ["announceTurnStart", "announceQueued", "openTurn"] as const;

/** The limits of an agent that sets none: one frozen object for all of them. */
const NO_LIMITS: AgentLimits = Object.freeze({});

/**
 * The agent loop as a statechart. The README's "The loop" draws it:
 * idle → running (turnGate → compacting → streaming → executing → turnEnd → steeringCheck →
 * followUpCheck → ending) → idle. The transient `turnGate` and `turnEnd` decide the unusual turns
 * (limits, compaction, errors, aborts, loops); the usual one goes executing → steeringCheck →
 * streaming without them (each state passed costs XState a snapshot), with the same actions and events.
 */
export const agentMachine = setup({
  types: {
    input: {} as AgentMachineInput,
    context: {} as AgentContext,
    events: {} as AgentMachineEvent,
    emitted: {} as AgentEvent,
  },
  actors: {
    modelStream: modelStreamActor,
    toolExecution: toolExecutionMachine,
    toolCall: toolCallMachine,
    compaction: compactionActor,
    runDeadline: runDeadlineActor,
  },
  guards: {
    limitWantsAnswer: ({ context }) => !context.run.answeringLimit && verdictOf(context)?.action === "answer",
    limitReached: ({ context }) => verdictOf(context) !== undefined,
    /** The turn about to start is over the context budget (with the limit's notice when one is asked for). */
    turnNeedsCompaction: ({ context }) => turnOverBudget(context),
    answerNeedsCompaction: ({ context }) => turnOverBudget(context, verdictOf(context)),
    /** After an overflow, a compaction that found nothing to remove: the same request would be refused. */
    compactionCannotHelp: ({ context }, output: CompactionResult | undefined) =>
      context.run.forceCompaction && output === undefined,
    overflowRetryable: ({ context }, done: StreamDone) =>
      done.errorKind === "context_overflow" &&
      (context.run.overflowRetries ?? 0) < MAX_OVERFLOW_RETRIES &&
      !context.run.executionSpawned,
    hasToolCalls: (_, done: StreamDone) => hasCalls(done.message),
    // Calls that must not run: those of a failed or aborted message, or of the answer a limit asked
    // for. Unless one already started eagerly (then the execution machine stops them), they are
    // answered at once and never spawned: a spawned call starts running before an ABORT can reach it.
    callsNotToRun: ({ context }, done: StreamDone) =>
      hasCalls(done.message) &&
      !context.run.executionSpawned &&
      (context.run.answeringLimit ||
        context.run.endReason !== undefined ||
        done.message.stopReason === "error" ||
        done.message.stopReason === "aborted"),
    runMustEnd: ({ context }) => context.run.endReason !== undefined,
    /**
     * Whether the run may end with the turn whose tool results are coming in (checked before they
     * are recorded): it is ending already, or loop detection could stop it. When not, the turn
     * goes straight to `steeringCheck`, as `turnEnd` would send it, without a step through `turnEnd`.
     */
    runMayEndWithTurn: ({ context }) =>
      context.run.endReason !== undefined ||
      (resolveLoopDetection(context.loopDetection) !== undefined && loopMayStop(context.run.loop)),
    hasSteering: ({ context }) => context.steeringQueue.length > 0,
    turnHadToolCalls: ({ context }) => hasCalls(context.run.turnMessage),
    /**
     * The turn had tool calls, nothing is queued for the next one (a loop notice), and it meets no
     * limit and fits the budget: it opens and streams at once, as `turnGate` would send it, without
     * a step through `turnGate`.
     */
    nextTurnStreams: ({ context }) =>
      context.pending.length === 0 &&
      hasCalls(context.run.turnMessage) &&
      verdictOf(context) === undefined &&
      !turnOverBudget(context),
    hasFollowUp: ({ context }) => context.followUpQueue.length > 0,
    executionSpawned: ({ context }) => context.run.executionSpawned,
  },
  actions: {
    beginRun: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ run: newRun(context.messages.length) });
      enqueue.emit({ type: "agent_start" });
      // Only a run with a duration limit has a deadline actor: a child the run does not need
      // would be copied by XState with the agent's children on every spawn and stop of a turn.
      const ms = context.limits.maxDurationMs;
      if (ms !== undefined) enqueue.spawnChild("runDeadline", { id: "runDeadline", input: { ms } });
    }),
    queueMessages: assign({
      pending: ({ context }, messages: AgentMessage[]) => [...context.pending, ...messages],
    }),
    queueContinuation: enqueueActions(({ context, enqueue }) => {
      // Continuing after an assistant message needs something new for the model: a queued message.
      if (context.messages.at(-1)?.role !== "assistant") return;
      const fromSteering = context.steeringQueue.length > 0;
      const source = fromSteering ? context.steeringQueue : context.followUpQueue;
      const { taken, rest } = takeFromQueue(
        source,
        fromSteering ? context.steeringMode : context.followUpMode,
      );
      enqueue.assign(fromSteering ? { steeringQueue: rest } : { followUpQueue: rest });
      enqueue.assign({ pending: ({ context }) => [...context.pending, ...taken] });
    }),
    rejectInput: enqueueActions(({ context, enqueue }, reason: string) => {
      enqueue.emit({ type: "agent_start" });
      enqueue.emit({ type: "input_rejected", reason });
      enqueue.emit({ type: "agent_end", messages: [], reason: "rejected", usage: newRun().usage });
      enqueue.assign({ run: { ...context.run, endReason: "rejected" } });
    }),
    enqueueSteering: assign({
      steeringQueue: ({ context }, message: AgentMessage) => [...context.steeringQueue, message],
    }),
    enqueueFollowUp: assign({
      followUpQueue: ({ context }, message: AgentMessage) => [...context.followUpQueue, message],
    }),
    tellExecutionAboutSteering: enqueueActions(({ context, enqueue }) => {
      if (context.run.executionSpawned) enqueue.sendTo("toolExecution", { type: "STEERING_QUEUED" });
    }),
    takeSteering: assign(({ context }) => {
      const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
      return { steeringQueue: rest, pending: [...context.pending, ...taken] };
    }),
    takeFollowUp: assign(({ context }) => {
      const { taken, rest } = takeFromQueue(context.followUpQueue, context.followUpMode);
      return { followUpQueue: rest, pending: [...context.pending, ...taken] };
    }),

    noteLimit: enqueueActions(({ context, enqueue }) => {
      const verdict = verdictOf(context)!;
      enqueue.emit({ type: "limit_reached", limit: verdict.limit, action: "stop", text: verdict.text });
      enqueue.assign({ run: { ...context.run, endReason: "limit", limitText: verdict.text } });
    }),
    askForAnswer: enqueueActions(({ context, enqueue, self }) => {
      const verdict = verdictOf(context)!;
      enqueue.emit({ type: "limit_reached", limit: verdict.limit, action: "answer", text: verdict.text });
      // The run ends after this turn whatever the model does; the notice joins the turn's messages.
      enqueue.assign({
        pending: [...context.pending, limitNotice(verdict, nowFor(self))],
        run: { ...context.run, endReason: "limit", limitText: verdict.text, answeringLimit: true },
      });
    }),
    noteDeadline: enqueueActions(({ context, enqueue }) => {
      if (context.run.endReason) return;
      const text = durationLimitText(context.limits.maxDurationMs ?? 0);
      enqueue.emit({ type: "limit_reached", limit: "maxDurationMs", action: "stop", text });
      enqueue.assign({ run: { ...context.run, endReason: "limit", limitText: text } });
    }),
    noteAbort: assign({
      run: ({ context }) => (context.run.endReason ? context.run : { ...context.run, endReason: "aborted" }),
    }),

    // A turn opens with three actions (see START_TURN): turn_start, the queued messages announced,
    // then both enter the context. Not one enqueueActions: the usual turn has nothing queued and
    // skips the middle one, and enqueueActions costs XState a list of closures each time.
    announceTurnStart: emit(({ context }) => ({ type: "turn_start" as const, turn: context.run.turn + 1 })),
    announceQueued: enqueueActions(({ context, enqueue }) => {
      for (const message of context.pending) {
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
      }
    }),
    openTurn: assign(({ context }) => ({
      messages: appendToTranscript(context.messages, context.pending),
      pending: noItems<AgentMessage>(),
      // The turn gate measured it: compacting is entered only when it was over budget.
      run: openedRun(context.run),
    })),
    applyCompaction: enqueueActions(({ context, enqueue }, result: CompactionResult | undefined) => {
      enqueue.assign({ run: { ...context.run, needsCompaction: false, forceCompaction: false } });
      if (!result) return;
      const { level, tokensBefore, tokensAfter } = result;
      enqueue.emit({ type: "compaction", level, tokensBefore, tokensAfter });
      // The run's messages so far are kept as they were, for agent_end; new ones follow the compacted transcript.
      const rewritten = runMessages(context.messages, context.run);
      enqueue.assign({
        messages: result.messages,
        run: {
          ...context.run,
          needsCompaction: false,
          forceCompaction: false,
          firstMessage: result.messages.length,
          rewritten,
        },
      });
    }),
    learnContextWindow: enqueueActions(({ context, enqueue }, done: StreamDone) => {
      if (done.errorKind !== "context_overflow") return;
      const config = withLearnedWindow(context.contextBudget, context.learnedMaxContextTokens);
      const learned = learnContextWindow({
        config: config ?? { maxContextTokens: Number.MAX_SAFE_INTEGER },
        current: config?.maxContextTokens ?? Number.MAX_SAFE_INTEGER,
        messages: readTranscript(context.messages),
        calibration: context.calibration,
        errorMessage: done.message.errorMessage,
      });
      if (learned.maxContextTokens >= learned.previous) return;
      const { maxContextTokens, previous, refusedTokens, providerMaximum } = learned;
      enqueue.emit({
        type: "context_window_learned",
        maxContextTokens,
        // An agent without a budget had no window to speak of: the refused request was its bound.
        previous: config ? previous : refusedTokens,
        refusedTokens,
        ...(providerMaximum !== undefined && { providerMaximum }),
      });
      enqueue.assign({ learnedMaxContextTokens: maxContextTokens });
    }),
    prepareOverflowRetry: enqueueActions(({ context, enqueue }, done: StreamDone) => {
      // The failed attempt's message was announced: close it before the retry opens another.
      if (done.started) enqueue.emit({ type: "message_end", message: done.message, discarded: true });
      enqueue.assign({
        run: {
          ...context.run,
          overflowRetried: true,
          overflowRetries: (context.run.overflowRetries ?? 0) + 1,
          overflowError: done.message.errorMessage,
          needsCompaction: true,
          forceCompaction: true,
        },
      });
    }),
    recordAssistant: enqueueActions(({ context, enqueue }, done: StreamDone) => {
      const message = explainOverflow(context, ensureUniqueToolCallIds(done.message), done);
      if (!done.started) enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      const usage = message.usage;
      const endReason =
        context.run.endReason ??
        (message.stopReason === "error" ? "error" : message.stopReason === "aborted" ? "aborted" : undefined);
      enqueue.assign({
        // What the provider counted beyond our estimate of the messages sent (system prompt, tools).
        // Only agents with a budget need it: measuring walks the transcript.
        calibration:
          (context.contextBudget !== undefined || context.learnedMaxContextTokens !== undefined) &&
          usage.input + usage.cacheRead + usage.cacheWrite > 0
            ? calibrationFromUsage(readTranscript(context.messages), usage)
            : context.calibration,
        messages: appendToTranscript(context.messages, [message]),
        run: {
          ...context.run,
          usage: addUsage(context.run.usage, usage),
          turnMessage: message,
          endReason,
          errorMessage: message.stopReason === "error" ? message.errorMessage : context.run.errorMessage,
          ...(message.stopReason === "error" && done.errorKind && { errorKind: done.errorKind }),
        },
      });
    }),
    recordOverflowFailure: enqueueActions(({ context, enqueue, self }) => {
      const transcript = readTranscript(context.messages);
      const error = contextOverflowText({
        providerMessage: context.run.overflowError ?? "context overflow",
        messages: transcript.length,
        tokens: estimateTokens(transcript),
        maxContextTokens: context.learnedMaxContextTokens ?? context.contextBudget?.maxContextTokens ?? 0,
      });
      const message = emptyAssistant("error", error, nowFor(self));
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.assign({
        messages: appendToTranscript(context.messages, [message]),
        run: {
          ...context.run,
          needsCompaction: false,
          forceCompaction: false,
          turnMessage: message,
          endReason: context.run.endReason ?? "error",
          errorMessage: error,
          errorKind: "context_overflow",
        },
      });
    }),
    recordEmptyTurn: enqueueActions(
      ({ context, enqueue, self }, failure: { stopReason: "aborted" | "error"; error: string }) => {
        const message = emptyAssistant(failure.stopReason, failure.error, nowFor(self));
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        enqueue.assign({
          messages: appendToTranscript(context.messages, [message]),
          run: {
            ...context.run,
            turnMessage: message,
            endReason: context.run.endReason ?? failure.stopReason,
            errorMessage: failure.stopReason === "error" ? failure.error : context.run.errorMessage,
          },
        });
      },
    ),

    startEagerCall: enqueueActions(({ context, enqueue }, toolCall: StreamReady["toolCall"]) => {
      const [call] = planCalls([toolCall], (name) => context.concurrencySafeTools.includes(name));
      if (!context.run.executionSpawned) {
        enqueue.spawnChild("toolExecution", {
          id: "toolExecution",
          input: { strategy: context.strategy, steeringQueued: context.steeringQueue.length > 0 },
        });
        enqueue.assign({ run: { ...context.run, executionSpawned: true } });
      }
      enqueue.sendTo("toolExecution", { type: "CALL_READY", call: call! });
    }),
    planExecution: enqueueActions(({ context, enqueue }) => {
      const calls = planCalls(callsOf(context.run.turnMessage), (name) =>
        context.concurrencySafeTools.includes(name),
      );
      if (context.run.executionSpawned) {
        // A failed or aborted message's calls that started eagerly are answered, no more run. One
        // event: the plan alone may finish the execution, and an ABORT after it would find it stopped.
        enqueue.sendTo("toolExecution", { type: "PLAN", calls, abort: context.run.endReason !== undefined });
      } else if (calls.length === 1) {
        // One call needs no strategy: its actor is the agent's own child.
        const [call] = calls as [PlannedCall];
        enqueue.spawnChild("toolCall", {
          id: call.id,
          input: { toolCallId: call.id, toolName: call.name, args: call.args },
        });
      } else {
        enqueue.spawnChild("toolExecution", {
          id: "toolExecution",
          input: { strategy: context.strategy, steeringQueued: context.steeringQueue.length > 0, calls },
        });
        enqueue.assign({ run: { ...context.run, executionSpawned: true } });
      }
    }),
    appendToolResults: enqueueActions(({ context, enqueue, self }, results: ToolResultMessage[]) =>
      appendResults(context, enqueue, results, () => nowFor(self)),
    ),
    answerMissingResults: enqueueActions(({ context, enqueue, self }, error: unknown) => {
      const answered = new Set(context.run.turnResults.map((r) => r.toolCallId));
      const text = `Tool execution failed: ${error instanceof Error ? error.message : String(error)}`;
      const now = nowFor(self);
      const missing = callsOf(context.run.turnMessage)
        .filter((c) => !answered.has(c.id))
        .map((c) => unranResult(c, text, now));
      for (const message of missing) {
        const { toolCallId, toolName, content } = message;
        enqueue.emit({
          type: "tool_execution_end",
          toolCallId,
          toolName,
          result: { content, isError: true },
          isError: true,
        });
      }
      appendResults(context, enqueue, missing, () => nowFor(self));
    }),
    stopCall: stopChild(({ event }) => doneActorId(event)),
    abortCall: enqueueActions(({ context, enqueue, self }) => {
      // The one call of the turn runs as the agent's child: stopped, and answered as aborted.
      const [call] = callsOf(context.run.turnMessage);
      if (!call) return;
      enqueue(stopChild(call.id));
      const message = unranResult(call, abortedText(call.name), nowFor(self));
      const { content } = message;
      enqueue.emit({
        type: "tool_execution_end",
        toolCallId: call.id,
        toolName: call.name,
        result: { content, isError: true },
        isError: true,
      });
      appendResults(context, enqueue, [message], () => nowFor(self));
    }),
    answerUnranCalls: enqueueActions(({ context, enqueue, self }, done: StreamDone) => {
      const now = nowFor(self);
      const textFor = context.run.answeringLimit ? notRunAtLimitText : abortedText;
      const calls = callsOf(ensureUniqueToolCallIds(done.message));
      const results = calls.map((call) => unranResult(call, textFor(call.name), now));
      for (const [index, { toolCallId, toolName, content }] of results.entries()) {
        enqueue.emit({ type: "tool_execution_start", toolCallId, toolName, args: calls[index]!.arguments });
        enqueue.emit({
          type: "tool_execution_end",
          toolCallId,
          toolName,
          result: { content, isError: true },
          isError: true,
        });
      }
      appendResults(context, enqueue, results, () => now);
    }),
    // Stopped where executing ends with it, not on exit: a stop clones the snapshot even when
    // nothing runs (a turn with one call), and most turns have one.
    stopExecution: stopChild("toolExecution"),
    stopRunDeadline: stopChild("runDeadline"),
    stopFailedChild: stopChild(({ event }) => event.type.slice("xstate.error.actor.".length)),
    forwardAbortToStream: sendTo("modelStream", { type: "ABORT" }),
    forwardAbortToExecution: sendTo("toolExecution", { type: "ABORT" }),
    raiseAbort: raise({ type: "ABORT" }),

    publishTurnEnd: emit(({ context, self }) => ({
      type: "turn_end" as const,
      turn: context.run.turn,
      message:
        context.run.turnMessage ??
        emptyAssistant("aborted", "The turn ended before the model answered", nowFor(self)),
      toolResults: context.run.turnResults,
    })),
    // Agents with a journal drain the queue of this check (`params`) first: see journaled-agent.machine.ts.
    scheduleCheck: sendTo(({ self }) => self, { type: "CHECK" }),
    finishRun: enqueueActions(({ context, enqueue, self }) => {
      const { run } = context;
      let { messages } = context;
      const answered = run.answeringLimit && answeredAtLimit(run.turnMessage);
      if ((run.endReason === "limit" || run.endReason === "loop") && run.limitText && !answered) {
        const notice = stopNotice(run.limitText, nowFor(self));
        enqueue.emit({ type: "message_start", message: notice });
        enqueue.emit({ type: "message_end", message: notice });
        messages = appendToTranscript(messages, [notice]);
      }
      enqueue.emit({
        type: "agent_end",
        messages: runMessages(messages, run),
        reason: run.endReason ?? "stop",
        usage: run.usage,
        ...(run.errorMessage !== undefined &&
          run.endReason === "error" && { errorMessage: run.errorMessage }),
        ...(run.errorKind !== undefined && run.endReason === "error" && { errorKind: run.errorKind }),
      });
      enqueue.assign({
        messages,
        run: { ...run, endReason: run.endReason ?? "stop" },
        // A loop notice belongs to the run that looped, not to the next one.
        pending: context.pending.some(isLoopNotice)
          ? context.pending.filter((message) => !isLoopNotice(message))
          : context.pending,
      });
    }),
  },
}).createMachine({
  id: "agent",
  context: ({ input }) =>
    input.resume ?? {
      messages: input.messages ?? [],
      pending: noItems(),
      steeringQueue: noItems(),
      followUpQueue: noItems(),
      strategy: input.strategy ?? "parallel",
      steeringMode: input.steeringMode ?? "one-at-a-time",
      followUpMode: input.followUpMode ?? "one-at-a-time",
      limits: input.limits ?? NO_LIMITS,
      contextBudget: input.contextBudget,
      concurrencySafeTools: input.concurrencySafeTools?.length ? input.concurrencySafeTools : noItems(),
      run: newRun(),
      // Only when set: the context's shape (and so the snapshot version) stays that of older releases.
      ...(input.loopDetection !== undefined && { loopDetection: input.loopDetection }),
    },
  initial: "idle",
  on: {
    STEER: { actions: { type: "enqueueSteering", params: ({ event }) => event.message } },
    FOLLOW_UP: { actions: { type: "enqueueFollowUp", params: ({ event }) => event.message } },
  },
  states: {
    idle: {
      on: {
        PROMPT: {
          target: "running",
          actions: ["beginRun", { type: "queueMessages", params: ({ event }) => event.messages }],
        },
        CONTINUE: { target: "running", actions: ["beginRun", "queueContinuation"] },
        PROMPT_REJECTED: { actions: { type: "rejectInput", params: ({ event }) => event.reason } },
      },
    },
    running: {
      // The deadline actor, if the run has one (see beginRun).
      exit: "stopRunDeadline",
      on: {
        DEADLINE: { actions: ["noteDeadline", "raiseAbort"] },
      },
      initial: "turnGate",
      states: {
        turnGate: {
          always: [
            {
              guard: and(["limitWantsAnswer", "answerNeedsCompaction"]),
              target: "compacting",
              actions: ["askForAnswer", ...START_TURN],
            },
            { guard: "limitWantsAnswer", target: "streaming", actions: ["askForAnswer", ...START_TURN] },
            { guard: "limitReached", target: "ending", actions: "noteLimit" },
            { guard: "turnNeedsCompaction", target: "compacting", actions: START_TURN },
            { target: "streaming", actions: START_TURN },
          ],
        },
        // Entered only when the context is over budget (or a request was refused as too long).
        compacting: {
          initial: "reducing",
          on: {
            ABORT: {
              target: "turnEnd",
              actions: [
                "noteAbort",
                { type: "recordEmptyTurn", params: { stopReason: "aborted", error: "Aborted" } },
              ],
            },
          },
          states: {
            reducing: {
              invoke: {
                id: "compaction",
                src: "compaction",
                input: ({ context }) => ({
                  turn: context.run.turn,
                  force: context.run.forceCompaction,
                  calibration: context.calibration,
                  ...(context.learnedMaxContextTokens !== undefined && {
                    maxContextTokens: context.learnedMaxContextTokens,
                  }),
                }),
                onDone: [
                  {
                    guard: { type: "compactionCannotHelp", params: ({ event }) => event.output },
                    target: "#agent.running.turnEnd",
                    actions: "recordOverflowFailure",
                  },
                  {
                    target: "#agent.running.streaming",
                    actions: { type: "applyCompaction", params: ({ event }) => event.output },
                  },
                ],
                onError: {
                  target: "#agent.running.turnEnd",
                  actions: {
                    type: "recordEmptyTurn",
                    params: ({ event }) => ({
                      stopReason: "error",
                      error: `Compaction failed: ${errorText(event.error)}`,
                    }),
                  },
                },
              },
            },
          },
        },
        streaming: {
          invoke: {
            id: "modelStream",
            src: "modelStream",
            input: ({ context }) => ({
              turn: context.run.turn,
              ...(context.run.answeringLimit && { toolChoice: "none" as const }),
            }),
            onError: {
              target: "turnEnd",
              actions: {
                type: "recordEmptyTurn",
                params: ({ event }) => ({
                  stopReason: "error",
                  error: `Model stream failed: ${errorText(event.error)}`,
                }),
              },
            },
          },
          on: {
            TOOL_CALL_READY: { actions: { type: "startEagerCall", params: ({ event }) => event.toolCall } },
            STREAM_DONE: [
              {
                guard: { type: "overflowRetryable", params: ({ event }) => event },
                target: "compacting",
                actions: [
                  { type: "learnContextWindow", params: ({ event }) => event },
                  { type: "prepareOverflowRetry", params: ({ event }) => event },
                ],
              },
              {
                guard: { type: "callsNotToRun", params: ({ event }) => event },
                target: "turnEnd",
                actions: [
                  { type: "recordAssistant", params: ({ event }) => event },
                  { type: "answerUnranCalls", params: ({ event }) => event },
                ],
              },
              {
                guard: { type: "hasToolCalls", params: ({ event }) => event },
                target: "executing",
                actions: { type: "recordAssistant", params: ({ event }) => event },
              },
              {
                target: "turnEnd",
                actions: [
                  { type: "learnContextWindow", params: ({ event }) => event },
                  { type: "recordAssistant", params: ({ event }) => event },
                ],
              },
            ],
            ABORT: { actions: ["noteAbort", "forwardAbortToStream"] },
          },
        },
        executing: {
          entry: "planExecution",
          on: {
            GROUP_DONE: { actions: { type: "appendToolResults", params: ({ event }) => event.results } },
            // Where the run cannot end with this turn, straight to steeringCheck (turnEnd's other way).
            "xstate.done.actor.toolExecution": [
              {
                guard: "runMayEndWithTurn",
                target: "turnEnd",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => executionOutput(event) },
                  "stopExecution",
                ],
              },
              {
                target: "steeringCheck",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => executionOutput(event) },
                  "stopExecution",
                  "publishTurnEnd",
                ],
              },
            ],
            // The one call of a turn that has only one, run as the agent's own child.
            "xstate.done.actor.*": [
              {
                guard: "runMayEndWithTurn",
                target: "turnEnd",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => callOutput(event) },
                  "stopCall",
                ],
              },
              {
                target: "steeringCheck",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => callOutput(event) },
                  "stopCall",
                  "publishTurnEnd",
                ],
              },
            ],
            "xstate.error.actor.*": {
              target: "turnEnd",
              actions: [
                {
                  type: "answerMissingResults",
                  params: ({ event }: { event: AgentMachineEvent }) =>
                    "error" in event ? event.error : undefined,
                },
                "stopFailedChild",
              ],
            },
            ABORT: [
              { guard: "executionSpawned", actions: ["noteAbort", "forwardAbortToExecution"] },
              { target: "turnEnd", actions: ["noteAbort", "abortCall"] },
            ],
            STEER: {
              actions: [
                { type: "enqueueSteering", params: ({ event }) => event.message },
                "tellExecutionAboutSteering",
              ],
            },
          },
        },
        turnEnd: {
          always: [
            { guard: "runMustEnd", target: "ending", actions: "publishTurnEnd" },
            { target: "steeringCheck", actions: "publishTurnEnd" },
          ],
        },
        steeringCheck: {
          entry: { type: "scheduleCheck", params: "steering" satisfies InboxKind },
          on: {
            CHECK: [
              { guard: "hasSteering", target: "turnGate", actions: "takeSteering" },
              // The usual next turn, without a step through turnGate (which decides the others).
              { guard: "nextTurnStreams", target: "streaming", actions: ["announceTurnStart", "openTurn"] },
              { guard: "turnHadToolCalls", target: "turnGate" },
              { target: "followUpCheck" },
            ],
            ABORT: { target: "ending", actions: "noteAbort" },
          },
        },
        followUpCheck: {
          entry: { type: "scheduleCheck", params: "followUp" satisfies InboxKind },
          on: {
            CHECK: [
              { guard: "hasFollowUp", target: "turnGate", actions: "takeFollowUp" },
              { target: "ending" },
            ],
            ABORT: { target: "ending", actions: "noteAbort" },
          },
        },
        ending: {
          entry: "finishRun",
          always: "#agent.idle",
        },
      },
    },
  },
});

type StreamReady = Extract<ModelStreamEvent, { type: "TOOL_CALL_READY" }>;

/**
 * Whether the turn about to start goes over the context budget: the transcript, the messages the
 * turn will append, and the limit's notice when the turn is the answer a limit asks for.
 */
function turnOverBudget(context: AgentContext, answering?: LimitVerdict): boolean {
  const config = withLearnedWindow(context.contextBudget, context.learnedMaxContextTokens);
  if (config === undefined) return false;
  const next = [...readTranscript(context.messages), ...context.pending];
  if (answering) next.push(limitNotice(answering, 0));
  return isOverBudget(next, config, context.calibration);
}

/** What the limits say at the turn gate (see `limitVerdict`). */
function verdictOf(context: AgentContext) {
  return limitVerdict(context.limits, context.run, () => nextCallTokens(context.messages, context.pending));
}

/**
 * Tool results enter the transcript, the run and the turn, each announced with message_start/end;
 * then loop detection counts them (a warning queues a notice for the next turn; a repeat after
 * a warning marks the run to end with reason "loop" before another turn starts).
 */
function appendResults(
  context: AgentContext,
  enqueue: {
    emit(event: AgentEvent): void;
    assign(values: Partial<AgentContext>): void;
  },
  results: ToolResultMessage[],
  now: () => number,
): void {
  for (const message of results) {
    enqueue.emit({ type: "message_start", message });
    enqueue.emit({ type: "message_end", message });
  }
  let run: RunState = {
    ...context.run,
    turnResults: [...context.run.turnResults, ...results],
  };
  let pending = context.pending;
  const thresholds = resolveLoopDetection(context.loopDetection);
  if (thresholds && results.length > 0) {
    const verdict = recordToolResults(run.loop, thresholds, callsOf(run.turnMessage), results, run.turn);
    run = { ...run, loop: verdict.state };
    for (const hit of verdict.warnings) {
      enqueue.emit({ type: "loop_detected", action: "warned", ...hit });
      pending = [...pending, loopNotice(hit, now())];
    }
    if (verdict.stop && !run.endReason) {
      enqueue.emit({ type: "loop_detected", action: "stopped", ...verdict.stop });
      run = { ...run, endReason: "loop", limitText: loopStopText(verdict.stop) };
    }
  }
  enqueue.assign({ messages: appendToTranscript(context.messages, results), run, pending });
}

function executionOutput(event: AgentMachineEvent): ToolResultMessage[] {
  return "output" in event && Array.isArray(event.output) ? event.output : [];
}

function callOutput(event: AgentMachineEvent): ToolResultMessage[] {
  const output = "output" in event ? event.output : undefined;
  return output && !Array.isArray(output) ? [output.message] : [];
}

/**
 * Times one turn is retried after a context overflow, each after learning a smaller window and
 * compacting to it (a window the error states is learned at once; one it does not is approached in
 * steps of 10 %).
 */
const MAX_OVERFLOW_RETRIES = 3;

/**
 * A model call refused as too long after every retry: its message says so plainly (what was kept,
 * what to do), with the provider's words last.
 */
function explainOverflow(
  context: AgentContext,
  message: AssistantMessage,
  done: StreamDone,
): AssistantMessage {
  if (done.errorKind !== "context_overflow" || message.stopReason !== "error") return message;
  const transcript = readTranscript(context.messages);
  const errorMessage = contextOverflowText({
    providerMessage: message.errorMessage ?? "context overflow",
    messages: transcript.length,
    tokens: estimateTokens(transcript),
    maxContextTokens: context.learnedMaxContextTokens ?? context.contextBudget?.maxContextTokens ?? 0,
  });
  return { ...message, errorMessage };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
