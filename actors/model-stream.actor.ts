import { fromCallback } from "xstate";
import type { ModelCallOutcome } from "../core/effect-journal.js";
import type { AssistantMessage, Message, ToolCall } from "../core/messages.js";
import { errorText } from "../core/error-text.js";
import { describeValue } from "../core/option-values.js";
import { type AgentRuntime, runtimeOf } from "../core/runtime.js";
import type {
  ModelPlan,
  Provider,
  ProviderErrorKind,
  ProviderEvent,
  ProviderFailure,
  ProviderRequest,
} from "../providers/provider.js";
import { isRetryableKind } from "../providers/provider.js";
import { withoutOtherVendorsState } from "../providers/vendor-state.js";
import type { OutputSpec } from "../core/output.js";
import { parsePartialJson } from "../core/partial-json.js";
import { type AnswerCheck, answerText, checkAnswer, outputRequestOf } from "../rules/output.logic.js";
import { type AbortHub, createAbortHub } from "./abort-hub.js";
import { abortReason } from "./abort-reason.js";
import { AssistantBuilder } from "./assistant-builder.js";
import { asksTooLongAWait, retryDelay, shouldRetry, tooLongAWaitText } from "./backoff.js";
import { type Stall, StallWatchdog, stallWatchdogOf } from "./stall-watchdog.js";

/** What the model-stream actor tells the agent machine. */
export type ModelStreamEvent =
  | { type: "TOOL_CALL_READY"; toolCall: ToolCall }
  | {
      type: "STREAM_DONE";
      message: AssistantMessage;
      /** `message_start` was already published for this message. */
      started: boolean;
      errorKind?: ProviderErrorKind;
      /** A final answer of a run with an output schema or output filters: what their checks found. */
      answer?: AnswerCheck;
    };

export interface ModelStreamInput {
  turn: number;
  /** `"none"`: the call must answer without calling tools (the answer at a limit). */
  toolChoice?: "none";
  /** The run's output schema: the provider is asked for it, and the final answer is checked against it. */
  output?: OutputSpec;
}

/**
 * One model call: streams the provider's answer, publishing `message_start` and every
 * `message_update` straight to the event bus (deltas are not machine events), retries transient
 * failures with backoff, and reports the finished message with `STREAM_DONE`. On `ABORT` it
 * answers at once with what arrived so far, marked `aborted`. A stream silent for longer than the
 * agent's `stallTimeout` is abandoned and retried as a network failure; a call that stalls on
 * every attempt ends with an error naming the stall and none of its partial output. With a journal
 * (a durable agent) the whole call is one journaled step whose final message is recorded; an abort
 * then ends the step, and the actor answers with what the journal recorded.
 */
export const modelStreamActor = fromCallback<{ type: "ABORT" }, ModelStreamInput, ModelStreamEvent>(
  ({ input, self, sendBack, receive }) => {
    const call = new ModelCall(runtimeOf(self), sendBack, input.toolChoice, input.output);
    const { runtime, aborts } = call;
    const { journal } = runtime;

    receive((event) => {
      if (event.type !== "ABORT" || call.finished) return;
      // A journaled call ends with what its journal recorded, so a replay keeps the same partial answer.
      if (!journal)
        call.finish({
          type: "STREAM_DONE",
          message: call.fail("aborted", ABORTED_TEXT),
          started: call.started,
        });
      aborts.abort();
    });

    const outcome = journal
      ? journal.modelCall(input.turn, () =>
          untilAborted(streamWithRetries(call), aborts, () => call.fail("aborted", ABORTED_TEXT)),
        )
      : streamWithRetries(call);
    outcome.then(
      ({ message, errorKind }) => {
        const answer = call.check(message);
        call.finish({
          type: "STREAM_DONE",
          message,
          started: call.started,
          ...(errorKind && { errorKind }),
          ...(answer && { answer }),
        });
      },
      (error: unknown) =>
        call.finish({
          type: "STREAM_DONE",
          message: call.fail("error", `Model stream failed: ${errorText(error)}`),
          started: call.started,
        }),
    );

    return () => {
      // Only a stream still running is aborted: aborting a finished one would keep it alive.
      if (!call.finished) {
        call.finished = true;
        aborts.abort();
      }
    };
  },
);

/**
 * The state of one model call and what it tells the machine. A class rather than closures made per
 * call: its methods are shared by every call, so a turn allocates one object here, not five functions.
 */
class ModelCall {
  finished = false;
  builder: AssistantBuilder | undefined = undefined;
  started = false;
  /** A call of this message started eagerly; a retry would ask for it again, so none is made. */
  announcedCalls = false;
  /**
   * The message's id, drawn once per call outside any journaled step: every attempt (and the failure
   * or abort that ends the call) is the same message to a UI.
   */
  readonly messageId: string;
  readonly aborts: AbortHub = createAbortHub();
  /** The model of the current attempt: the agent's provider, or the one its plan hands the call to. */
  provider: Provider;
  /** The models a composite provider (`fallback`, `route`) lets this call try; absent for a plain one. */
  plan: ModelPlan | undefined = undefined;

  constructor(
    readonly runtime: AgentRuntime,
    private readonly sendBack: (event: ModelStreamEvent) => void,
    /** `"none"`: the call must answer without calling tools (the answer at a limit). */
    readonly toolChoice: "none" | undefined,
    readonly output: OutputSpec | undefined,
  ) {
    this.messageId = runtime.messageIds.next();
    this.provider = runtime.provider;
  }

  /** The last `output_delta` published, as JSON: a delta that changes nothing in the object publishes nothing. */
  lastPartial: string | undefined = undefined;

  /** What the output checks find in the message, when it is a final answer they apply to. */
  check(message: AssistantMessage): AnswerCheck | undefined {
    const { options } = this.runtime;
    // The usual turn, with neither: nothing to check, nothing made.
    if (!this.output && !options.outputFilters?.length) return undefined;
    try {
      return checkAnswer(message, this.output, options.outputFilters ?? [], options.outputFilterRetries);
    } catch (error) {
      // A schema that cannot validate (e.g. a restored JSON Schema zod cannot read) ends the run clearly.
      return { raw: "", problem: { kind: "invalid", error: errorText(error) }, verdicts: [], maxRetries: 0 };
    }
  }

  /** Reports the outcome to the machine, once. */
  finish(event: ModelStreamEvent): void {
    if (this.finished) return;
    this.finished = true;
    this.sendBack(event);
  }

  /** The message so far (or an empty one), ended with `stopReason` and `text`. */
  fail(stopReason: "aborted" | "error", text: string): AssistantMessage {
    return (this.builder ?? newBuilder(this)).fail(stopReason, text);
  }

  /** A tool call of the message is complete: it may start before the message ends (eager execution). */
  notifyReady(toolCall: ToolCall): void {
    // A call made against `toolChoice: "none"` never runs, so it never starts early either.
    if (this.finished || this.toolChoice === "none") return;
    this.announcedCalls = true;
    this.sendBack({ type: "TOOL_CALL_READY", toolCall });
  }
}

const ABORTED_TEXT = "Request was aborted";

function newBuilder({ runtime, messageId, provider }: ModelCall): AssistantBuilder {
  return new AssistantBuilder(provider.id, provider.model, runtime.now(), messageId);
}

/** Resolves with `aborted()` as soon as the call is aborted, even when `work` never settles (a provider that ignores it). */
function untilAborted<T extends ModelCallOutcome>(
  work: Promise<T>,
  aborts: AbortHub,
  aborted: () => AssistantMessage,
): Promise<ModelCallOutcome> {
  if (aborts.aborted) return Promise.resolve({ message: aborted() });
  return new Promise((resolve, reject) => {
    const forget = aborts.onAbort(() => resolve({ message: aborted() }));
    work.then(
      (value) => {
        forget();
        resolve(value);
      },
      (error: unknown) => {
        forget();
        reject(error);
      },
    );
  });
}

/** Streams the call to its outcome, retrying transient failures; an aborted call ends `aborted`. */
async function streamWithRetries(call: ModelCall): Promise<ModelCallOutcome> {
  const { runtime, aborts } = call;
  const plan = runtime.provider.plan ? runtime.provider.plan(requestFor(call)) : undefined;
  if (plan) {
    call.plan = plan;
    call.provider = plan.models[0]!;
  }
  let unreachable = 0;
  let index = 0;
  let handedOver = 0;
  for (let attempt = 0; ; attempt++) {
    const builder = newBuilder(call);
    call.builder = builder;
    call.started = false;
    const failure = await streamWatched(call, builder);
    // Finished from outside (abort, stop): the actor has answered already; nothing more to stream.
    if (call.finished) return { message: builder.message };
    plan?.settled?.(call.provider, failure);
    if (!failure) return { message: builder.message };
    if (failure.unreachable) unreachable++;
    // A wait longer than the cap: this model will not answer in time, so the next one may at once.
    const waitTooLong = isRetryableKind(failure.kind) && asksTooLongAWait(failure, runtime.retry);
    if (plan && fallsOver(plan, call, failure, index, waitTooLong ? Number.MAX_SAFE_INTEGER : attempt)) {
      // The next model answers at once, as a fresh call: its own retries, no backoff first.
      const next = plan.models[++index]!;
      handedOver++;
      runtime.publish({
        type: "retry",
        attempt: attempt + handedOver,
        delayMs: 0,
        error: failure.message,
        provider: next.id,
        model: next.model,
      });
      closeDiscardedAttempt(runtime, call, builder, failure.message);
      call.provider = next;
      unreachable = 0;
      attempt = -1;
      continue;
    }
    if (shouldRetry(failure, attempt, unreachable, runtime.retry) && !call.announcedCalls) {
      const delayMs = retryDelay(attempt, runtime.retry, failure.retryAfterMs);
      runtime.publish({ type: "retry", attempt: attempt + 1, delayMs, error: failure.message });
      closeDiscardedAttempt(runtime, call, builder, failure.message);
      if (!(await sleep(delayMs, aborts)) || call.finished) {
        return {
          message: call.finished ? builder.message : newBuilder(call).fail("aborted", ABORTED_TEXT),
        };
      }
      continue;
    }
    const stopReason = failure.kind === "aborted" ? "aborted" : "error";
    const failed = failure.stalled
      ? withoutPartialOutput(
          builder.fail(stopReason, gaveUpText(failure.message, attempt)),
          call.announcedCalls,
        )
      : builder.fail(
          stopReason,
          waitTooLong
            ? tooLongAWaitText(failure.message, failure.retryAfterMs!, runtime.retry.maxDelayMs)
            : failure.message,
        );
    return { message: failed, errorKind: failure.kind };
  }
}

/** Whether the failure hands the call to the plan's next model (never once a call started eagerly). */
function fallsOver(
  plan: ModelPlan,
  call: ModelCall,
  failure: Failure,
  index: number,
  retries: number,
): boolean {
  return index + 1 < plan.models.length && !call.announcedCalls && plan.fallsOver(failure, index, retries);
}

/**
 * A failed attempt that is retried never enters the transcript, but its `message_start` was
 * published: close it with a `message_end` marked `discarded`, carrying what the attempt said,
 * `stopReason: "error"` and the failure. The next attempt (or an abort during the backoff) opens a
 * message of its own.
 */
function closeDiscardedAttempt(
  runtime: AgentRuntime,
  call: ModelCall,
  builder: AssistantBuilder,
  error: string,
): void {
  if (call.started) {
    runtime.publish({ type: "message_end", message: builder.fail("error", error), discarded: true });
  }
  call.started = false;
  call.builder = undefined;
}

/** A failed attempt; `stalled` when the watchdog gave it up. */
type Failure = ProviderFailure;

/** What one attempt's stream loop needs to know besides the call: whether it was given up. */
interface Attempt {
  abandoned: boolean;
  /** Touched on every provider event. */
  watchdog?: StallWatchdog;
}

/**
 * One attempt, with its own signal for the provider (aborted with the call), under the stall
 * watchdog when it is on. The watchdog does not rely on the provider honouring its signal: a
 * stalled attempt is abandoned at once (its loop publishes nothing more, whatever arrives later)
 * and its signal is aborted so a well-behaved provider closes the connection.
 */
async function streamWatched(call: ModelCall, builder: AssistantBuilder): Promise<Failure | undefined> {
  const { runtime, aborts } = call;
  const controller = new AbortController();
  const forwardAbort = aborts.onAbort(() => controller.abort(abortReason));
  if (!runtime.stallTimeout) {
    try {
      return await streamOnce(call, builder, controller.signal, { abandoned: false });
    } finally {
      forwardAbort();
    }
  }
  // The agent's watchdog (one timer for all its turns); a second stream at once gets its own.
  const shared = stallWatchdogOf(runtime, runtime.stallTimeout);
  const watchdog = shared.watching ? new StallWatchdog(runtime.stallTimeout) : shared;
  const attempt: Attempt = { abandoned: false, watchdog };
  try {
    const outcome = await new Promise<Failure | Stall | undefined>((resolve, reject) => {
      watchdog.watch(resolve);
      streamOnce(call, builder, controller.signal, attempt).then(resolve, reject);
    });
    if (!isStall(outcome)) return outcome;
    attempt.abandoned = true;
    controller.abort(abortReason);
    return { type: "error", kind: "network", message: outcome.message, stalled: true };
  } finally {
    if (watchdog === shared) watchdog.stop();
    else watchdog.release();
    forwardAbort();
  }
}

function isStall(outcome: Failure | Stall | undefined): outcome is Stall {
  return outcome !== undefined && "phase" in outcome;
}

async function streamOnce(
  call: ModelCall,
  builder: AssistantBuilder,
  signal: AbortSignal,
  attempt: Attempt,
): Promise<Failure | undefined> {
  const { runtime } = call;
  const request = requestFor(call);
  const events = openStream(call, request, signal);
  if ("failure" in events) return events.failure;
  // The last finished call waits for the next event before it may start eagerly: an answer cut
  // off at the output limit ends right after a call the model never finished, and none of its
  // calls may run.
  let held: ToolCall | undefined;
  try {
    for await (const event of events.stream) {
      if (call.finished || attempt.abandoned) return undefined;
      attempt.watchdog?.touch();
      if (event === null || typeof event !== "object") return notAnEvent(call.provider, event);
      if (held && !endsTruncated(event)) call.notifyReady(held);
      held = undefined;
      if (event.type === "error") return event;
      if (!call.started) {
        call.started = true;
        runtime.publish({ type: "message_start", message: builder.message });
      }
      const finishedCall = builder.apply(event);
      switch (event.type) {
        case "text_delta":
        case "thinking_delta":
          runtime.publish({
            type: "message_update",
            message: builder.message,
            delta: event.delta,
            kind: event.type,
          });
          if (call.output && event.type === "text_delta") publishPartialOutput(call, builder.message);
          break;
        case "toolcall_delta":
          runtime.publish({
            type: "message_update",
            message: builder.message,
            delta: event.delta,
            kind: event.type,
            toolCallId: event.id,
          });
          break;
        case "toolcall_start":
          runtime.publish({
            type: "message_update",
            message: builder.message,
            delta: "",
            kind: event.type,
            toolCallId: event.id,
          });
          break;
        case "toolcall_end":
          runtime.publish({
            type: "message_update",
            message: builder.message,
            delta: "",
            kind: event.type,
            toolCallId: event.id,
          });
          if (finishedCall && runtime.eagerToolExecution) held = finishedCall;
          break;
        case "done":
          return undefined;
      }
    }
  } catch (error) {
    if (signal.aborted) return { type: "error", kind: "aborted", message: "Request was aborted" };
    return { type: "error", kind: "network", message: errorText(error) };
  }
  if (signal.aborted) return { type: "error", kind: "aborted", message: "Request was aborted" };
  return { type: "error", kind: "network", message: "The stream ended before the model finished its answer" };
}

/**
 * The request of one attempt. A model handed the call by a plan gets the conversation without
 * the other vendors' signatures (they would be refused, or worse, misread).
 */
function requestFor(call: ModelCall): ProviderRequest {
  const { runtime, plan, provider } = call;
  const read = runtime.llmMessages(runtime.transcript());
  let messages: Message[] | undefined;
  const long = runtime.cacheRetention(runtime.tools, call.toolChoice === "none") === "long";
  return {
    systemPrompt: runtime.systemPrompt,
    // Copied when the provider reads it: a request nobody reads costs no walk over the transcript.
    get messages() {
      return (messages ??= plan ? withoutOtherVendorsState(read(), provider.id) : read());
    },
    tools: runtime.toolSpecs,
    ...(call.toolChoice && { toolChoice: call.toolChoice }),
    ...(call.output && { output: outputRequestOf(call.output) }),
    ...(long && { cacheRetention: "long" as const }),
  };
}

/** Whether an event ends the answer at the output limit (`stopReason: "length"`). */
function endsTruncated(event: ProviderEvent): boolean {
  return event.type === "done" && event.stopReason === "length";
}

/** Publishes the object of the answer as far as it has streamed, when it changed (`output_delta`). */
function publishPartialOutput(call: ModelCall, message: AssistantMessage): void {
  const partial = parsePartialJson(answerText(message));
  if (partial === undefined) return;
  const json = JSON.stringify(partial);
  if (json === call.lastPartial) return;
  call.lastPartial = json;
  call.runtime.publish({ type: "output_delta", partial });
}

/**
 * Calls the provider's `stream()`. One that throws at once, or returns something that is not an
 * (async) iterable, has a bug no retry mends: the call fails at once (kind `"api"`), naming it.
 */
function openStream(
  call: ModelCall,
  request: ProviderRequest,
  signal: AbortSignal,
): { stream: AsyncIterable<ProviderEvent> | Iterable<ProviderEvent> } | { failure: Failure } {
  const { provider } = call;
  let stream: unknown;
  try {
    stream = provider.stream(request, signal);
  } catch (error) {
    if (signal.aborted) return { failure: { type: "error", kind: "aborted", message: ABORTED_TEXT } };
    return {
      failure: {
        type: "error",
        kind: "api",
        message: `Provider "${provider.id}" stream() threw: ${errorText(error)}`,
      },
    };
  }
  const iterable = stream as { [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown } | null;
  if (
    iterable === null ||
    typeof iterable !== "object" ||
    (typeof iterable[Symbol.asyncIterator] !== "function" && typeof iterable[Symbol.iterator] !== "function")
  ) {
    return {
      failure: {
        type: "error",
        kind: "api",
        message: `Provider "${provider.id}" stream() returned ${describeValue(stream)}, not an async iterable of events`,
      },
    };
  }
  return { stream: iterable as AsyncIterable<ProviderEvent> };
}

function notAnEvent(provider: Provider, event: unknown): Failure {
  return {
    type: "error",
    kind: "api",
    message: `Provider "${provider.id}" stream() yielded ${describeValue(event)}, not an event object`,
  };
}

/**
 * A stalled call's final message, without what the abandoned stream said. Calls that already started
 * (eager execution) stay, so their results still answer them; nothing else of the attempt does.
 */
function withoutPartialOutput(message: AssistantMessage, callsStarted: boolean): AssistantMessage {
  return {
    ...message,
    content: callsStarted ? message.content.filter((block) => block.type === "toolCall") : [],
  };
}

function gaveUpText(stall: string, retries: number): string {
  return retries === 0 ? stall : `${stall}; gave up after ${retries} ${retries === 1 ? "retry" : "retries"}`;
}

function sleep(ms: number, aborts: AbortHub): Promise<boolean> {
  if (aborts.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      forget();
      resolve(true);
    }, ms);
    const forget = aborts.onAbort(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
