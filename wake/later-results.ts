import type { Agent } from "../agent/agent.js";
import { errorText } from "../core/error-text.js";
import type { ToolResult } from "../core/tool.js";
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from "../tools/result-budget.js";
import { deliverWake, hasMessage, type WakeDelivery } from "./deliver-wake.js";
import type { LaterResultRecord } from "../rules/later-record.js";
import { cancelledText, resultContent, timedOutText } from "../rules/later-texts.js";
import { ScheduleError } from "../rules/schedule-spec.js";
import { createMemoryScheduleStore, type ScheduleStore } from "./schedule-store.js";
import type { AgentDirectory } from "./scheduler.js";
import { createSlotQueue } from "./slot-queue.js";
import { laterToolResult, type LaterWork } from "../rules/wake-tools.js";

/** A pending handle as `laterResults.list()` shows it. */
export type LaterHandle = Readonly<LaterResultRecord>;

/**
 * What answering a handle did: `delivered` (the agent got the result), `duplicate` (the handle was
 * answered already, or the agent had its message), `cancelled` and `timedOut` (too late: a no-op),
 * `unknown` (no such handle in this process: never started, or settled before a restart).
 *
 * @example
 * ```ts
 * const outcome: LaterOutcome = await later.complete(request.body.handle, request.body.result);
 * response.status(outcome === "delivered" ? 202 : 200).end(); // a webhook's retry is a no-op
 * ```
 */
export type LaterOutcome = "delivered" | "duplicate" | "cancelled" | "timedOut" | "unknown";

export type { LaterWork, LaterWorkContext } from "../rules/wake-tools.js";

/** What `begin` needs of the call that starts the work. */
export interface LaterCall {
  agentId: string;
  toolName: string;
  toolCallId: string;
  args: unknown;
  /** Overrides the manager's `timeoutMs`; `Infinity`: no timeout. */
  timeoutMs?: number;
  traceparent?: string;
}

/** One handle settled: what the agent was told. */
export interface LaterReport {
  handle: LaterHandle;
  outcome: "result" | "error" | "timedOut" | "cancelled";
  delivery: WakeDelivery;
}

/** Options of {@link createLaterResults}. */
export interface LaterResultsOptions {
  /** Where the manager finds the agent a result wakes. */
  agents: AgentDirectory;
  /** Where pending handles outlive the process: the scheduler's store. Default: in memory. */
  store?: ScheduleStore;
  /** How long a handle waits for its result before the agent is told it timed out. Default one hour. */
  timeoutMs?: number;
  /** Characters of each text part of a result the agent's message keeps (head and tail). Default 50,000. */
  maxResultChars?: number;
  /** A result that could not be delivered (its agent is gone), a store that failed, a run that could not start. */
  onError?: (error: Error, handle: LaterHandle) => void;
  /** Every handle settled, after the agent was told. */
  onSettle?: (report: LaterReport) => void;
}

/**
 * The process's tools that answer later: one timer for every handle's timeout, the pending handles
 * in the store, the running work. Build the tools with {@link defineLaterTool}.
 */
export interface LaterResults {
  /**
   * Loads the pending handles (timing out those past their deadline, running again work that was
   * running), arms the timer. Again after `stop()`: arms the timer and runs the stopped work again.
   */
  start(): Promise<void>;
  /** Used by the tools: makes the handle for a call (the same call again keeps its handle) and starts its work. */
  begin(call: LaterCall): Promise<LaterHandle>;
  /**
   * Used by the tools: the work of `agentId`'s tool `toolName`. Pending handles of that tool whose
   * work is not running here (after a restart) run it again, unless `rerun` is false.
   */
  register(agentId: string, toolName: string, work: LaterWork, options?: { rerun?: boolean }): void;
  /** Answers a handle from outside: the agent wakes with the result. A no-op for a handle no longer pending (see {@link LaterOutcome}). */
  complete(handle: string, result: string | ToolResult): Promise<LaterOutcome>;
  /** Answers a handle with a failure the model reads. */
  fail(handle: string, error: unknown): Promise<LaterOutcome>;
  /**
   * Cancels a pending handle: its work's signal fires, a result that comes after is a no-op, and a
   * notice waits in the agent's steering queue for its next turn (no run starts for it). `false`
   * when the handle was not pending.
   */
  cancel(handle: string, reason?: string): Promise<boolean>;
  /** The pending handles, or one agent's. */
  list(agentId?: string): LaterHandle[];
  /** Clears the timer and stops the running work; pending handles stay in the store for the next `start`. */
  stop(): void;
}

/**
 * Thrown for a result that cannot be taken: its agent is gone (the error holds the result), a bad
 * result, a manager not started.
 *
 * @example
 * ```ts
 * try {
 *   await later.complete(handle, "intro.mp4");
 * } catch (error) {
 *   if (error instanceof LaterResultError) keepForLater(handle, error.result); // the agent is gone
 * }
 * ```
 */
export class LaterResultError extends ScheduleError {
  override name = "LaterResultError";
  constructor(
    message: string,
    /** The result that was not delivered, when there was one. */
    readonly result?: ToolResult,
  ) {
    super(message);
  }
}

/** Settled handles remembered, so a late or repeated answer says why it is a no-op. */
const MAX_FATES = 10_000;
/** Node's timers take at most 2^31 − 1 ms; a later deadline is reached in steps. */
const MAX_TIMER_MS = 2_147_483_647;

type Settlement = { kind: "result"; result: ToolResult; fromWork: boolean } | { kind: "timedOut" };

/**
 * Creates the process's manager of tools that answer later. A call is answered at once with a
 * handle; its work runs on (the agent's run may end, the agent may hibernate); its result comes as
 * a follow-up message with `source: "laterResult"` and the handle as its id, which wakes the agent.
 * The store forgets a handle only after its message reached the agent, and a second message with
 * that id is a no-op, so a result re-sent after a crash is not taken twice. The timer is unref'd.
 *
 * @example
 * ```ts
 * const later = createLaterResults({ agents, store }); // the scheduler's store
 * await later.start();
 * const render = defineLaterTool({ later, agentId: "ada", name: "render", description: "Renders a video",
 *   parameters: z.object({ scene: z.string() }), run: async ({ scene }, { signal }) => renderVideo(scene, signal) });
 * ```
 */
export function createLaterResults(options: LaterResultsOptions): LaterResults {
  checkLaterResultsOptions(options);
  const store = options.store ?? createMemoryScheduleStore();
  const defaultTimeoutMs = options.timeoutMs ?? 3_600_000;
  const maxChars = options.maxResultChars ?? DEFAULT_TOOL_RESULT_MAX_CHARS;
  const records = new Map<string, LaterResultRecord>();
  /** The handle of each call, so a call that runs again keeps its handle. */
  const byCall = new Map<string, string>();
  const works = new Map<string, { work: LaterWork; rerun: boolean }>();
  const running = new Map<string, AbortController>();
  const fates = new Map<string, Exclude<LaterOutcome, "delivered">>();
  const deadlines = createSlotQueue();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt: number | undefined;
  let started = false;
  let stopped = false;
  /** The store's first load (shared by concurrent `start` calls). */
  let loading: Promise<void> | undefined;

  const callKey = (agentId: string, id: string) => `${agentId}\u0000${id}`;
  // The app's callbacks run on timers and in work that settles on its own, where a throw would be an
  // unhandled rejection: one that throws is not the manager's end.
  const report = (error: unknown, record: LaterResultRecord) => {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)), { ...record });
    } catch {
      // The app's own error handler failed: nothing is left to tell.
    }
  };
  const tellSettled = (settled: LaterReport) => {
    try {
      options.onSettle?.(settled);
    } catch (error) {
      report(error, settled.handle);
    }
  };
  const remember = (id: string, fate: Exclude<LaterOutcome, "delivered">) => {
    fates.delete(id);
    fates.set(id, fate);
    if (fates.size > MAX_FATES) fates.delete(fates.keys().next().value!);
  };
  /** Takes a handle out of the pending ones (once: whoever takes it settles it). */
  const take = (id: string, fate: Exclude<LaterOutcome, "delivered">) => {
    const record = records.get(id);
    if (!record) return undefined;
    records.delete(id);
    byCall.delete(callKey(record.agentId, record.toolCallId));
    remember(id, fate);
    return record;
  };
  const stopWork = (id: string, reason: Error) => {
    const controller = running.get(id);
    running.delete(id);
    controller?.abort(reason);
  };

  function arm(): void {
    if (stopped || !started) return;
    while (deadlines.size > 0 && !records.has(deadlines.peek()!.id)) deadlines.pop();
    const next = deadlines.peek();
    if (next?.at === timerAt && timer !== undefined) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = timerAt = undefined;
    if (!next) return;
    timerAt = next.at;
    timer = setTimeout(
      () => {
        timer = timerAt = undefined;
        void timeOutDue();
      },
      Math.min(Math.max(0, next.at - Date.now()), MAX_TIMER_MS),
    );
    timer.unref?.();
  }

  async function timeOutDue(): Promise<void> {
    for (let next = deadlines.peek(); next && next.at <= Date.now(); next = deadlines.peek()) {
      deadlines.pop();
      const record = records.get(next.id);
      if (record?.deadline !== next.at) continue;
      await settleQuietly(record.id, { kind: "timedOut" });
    }
    arm();
  }

  /**
   * Tells the agent how its handle ended and forgets the handle. Throws a {@link LaterResultError}
   * when the agent is gone (the handle is dropped: nothing could ever deliver it).
   */
  async function settle(id: string, settlement: Settlement): Promise<LaterOutcome> {
    const record = take(id, settlement.kind === "timedOut" ? "timedOut" : "duplicate");
    if (!record) return fates.get(id) ?? "unknown";
    if (settlement.kind === "timedOut") {
      stopWork(id, timeoutError(record));
    } else if (!settlement.fromWork) {
      // Answered from outside: the work still running here has nothing left to do.
      stopWork(id, abortError(`${id} was answered from outside`));
    }
    running.delete(id);
    const agent = await agentOf(record);
    if (!agent) {
      remember(id, "unknown");
      await forget(record);
      throw new LaterResultError(
        `no agent "${record.agentId}": ${settlement.kind === "timedOut" ? "the timeout" : "the result"} of ` +
          `${record.toolName} (${id}) was not delivered, and the handle is dropped`,
        settlement.kind === "result" ? settlement.result : undefined,
      );
    }
    const text =
      settlement.kind === "timedOut"
        ? timedOutText(record)
        : resultContent(record, settlement.result, maxChars);
    let delivery: WakeDelivery;
    try {
      delivery = deliverWake(
        agent,
        {
          id,
          text,
          source: "laterResult",
          queue: "followUp",
          cause: { id, traceparent: record.traceparent },
        },
        (error) => report(error, record),
      );
    } catch (error) {
      // A stopped agent, or its input filters, refuse: the handle counts as answered (it is not
      // retried for ever).
      report(error, record);
      delivery = "delivered";
    }
    await forget(record);
    const outcome =
      settlement.kind === "timedOut" ? "timedOut" : settlement.result.isError ? "error" : "result";
    tellSettled({ handle: { ...record }, outcome, delivery });
    return delivery;
  }

  async function settleQuietly(id: string, settlement: Settlement): Promise<void> {
    const record = records.get(id);
    try {
      await settle(id, settlement);
    } catch (error) {
      if (record) report(error, record);
    }
  }

  async function agentOf(record: LaterResultRecord): Promise<Agent | undefined> {
    try {
      return await options.agents.get(record.agentId);
    } catch (error) {
      report(error, record);
      return undefined;
    }
  }

  /** Deletes a settled handle from the store; a store that fails is reported (a re-run after a restart is a no-op for the agent). */
  async function forget(record: LaterResultRecord): Promise<void> {
    try {
      await store.delete(record.id);
    } catch (error) {
      report(error, record);
    }
  }

  function runWork(record: LaterResultRecord): void {
    const entry = works.get(callKey(record.agentId, record.toolName));
    if (!entry || running.has(record.id) || stopped) return;
    const controller = new AbortController();
    running.set(record.id, controller);
    const { signal } = controller;
    void (async () => {
      let value: string | ToolResult | void;
      try {
        value = await entry.work(record.args, { handle: record.id, signal, idempotencyKey: record.id });
      } catch (error) {
        // Cancelled, timed out, answered or stopped: what the agent is told was decided then.
        if (signal.aborted) return;
        running.delete(record.id);
        await settleQuietly(record.id, {
          kind: "result",
          result: { content: [{ type: "text", text: errorText(error) }], isError: true },
          fromWork: true,
        });
        return;
      }
      if (signal.aborted) return; // a result after a cancel or a timeout: a no-op
      running.delete(record.id);
      if (value === undefined) {
        // The job went elsewhere: its result comes through complete(); a restart does not run it again.
        const current = records.get(record.id);
        if (current?.phase !== "running") return;
        current.phase = "awaiting";
        try {
          await store.put(current);
        } catch (error) {
          report(error, current);
        }
        return;
      }
      let result: ToolResult;
      try {
        result = toolResultOf(value);
      } catch (error) {
        result = { content: [{ type: "text", text: errorText(error) }], isError: true };
      }
      await settleQuietly(record.id, { kind: "result", result, fromWork: true });
    })();
  }

  /** Work registered for pending handles it does not run yet: run it again (after a restart). */
  function rerunPending(agentId?: string, toolName?: string): void {
    for (const record of records.values()) {
      if (record.phase !== "running") continue;
      if (agentId !== undefined && (record.agentId !== agentId || record.toolName !== toolName)) continue;
      if (works.get(callKey(record.agentId, record.toolName))?.rerun === false) continue;
      runWork(record);
    }
  }

  return {
    async start() {
      if (started && !stopped) return;
      // After stop(): the pending handles are held here, up to date; the timer and the work stopped.
      stopped = false;
      loading ??= (async () => {
        for (const record of await store.load()) {
          if ((record as { kind?: unknown }).kind !== "laterResult") continue; // a schedule: the scheduler's
          const pending = record as LaterResultRecord;
          records.set(pending.id, pending);
          byCall.set(callKey(pending.agentId, pending.toolCallId), pending.id);
          if (pending.deadline !== undefined) deadlines.push({ at: pending.deadline, id: pending.id });
        }
      })();
      try {
        await loading;
      } catch (error) {
        loading = undefined; // a store that failed to load: the next start tries again
        throw error;
      }
      started = true;
      await timeOutDue();
      rerunPending();
    },

    async begin(call) {
      if (!started || stopped) {
        throw new LaterResultError("call laterResults.start() before a tool that answers later runs");
      }
      const again = byCall.get(callKey(call.agentId, call.toolCallId));
      if (again !== undefined && records.has(again)) return { ...records.get(again)! };
      const timeoutMs = call.timeoutMs ?? defaultTimeoutMs;
      if (!(timeoutMs > 0))
        throw new LaterResultError(`timeoutMs must be a positive number, got ${timeoutMs}`);
      if (!(await options.agents.get(call.agentId))) {
        throw new LaterResultError(`no agent "${call.agentId}": ${call.toolName} was not started`);
      }
      const now = Date.now();
      const record: LaterResultRecord = {
        kind: "laterResult",
        id: `later_${crypto.randomUUID()}`,
        agentId: call.agentId,
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        args: call.args,
        startedAt: now,
        ...(Number.isFinite(timeoutMs) && { deadline: now + timeoutMs }),
        phase: "running",
        ...(call.traceparent !== undefined && { traceparent: call.traceparent }),
      };
      await store.put(record);
      records.set(record.id, record);
      byCall.set(callKey(call.agentId, call.toolCallId), record.id);
      if (record.deadline !== undefined) deadlines.push({ at: record.deadline, id: record.id });
      arm();
      runWork(record);
      return { ...record };
    },

    register(agentId, toolName, work, registerOptions) {
      works.set(callKey(agentId, toolName), { work, rerun: registerOptions?.rerun !== false });
      if (started && !stopped) rerunPending(agentId, toolName);
    },

    async complete(handle, result) {
      const checked = toolResultOf(result);
      return settle(handle, { kind: "result", result: checked, fromWork: false });
    },

    async fail(handle, error) {
      const text = errorText(error);
      return settle(handle, {
        kind: "result",
        result: { content: [{ type: "text", text }], isError: true },
        fromWork: false,
      });
    },

    async cancel(handle, reason) {
      const record = take(handle, "cancelled");
      if (!record) return false;
      stopWork(handle, abortError(`${handle} was cancelled${reason ? `: ${reason}` : ""}`));
      arm();
      await forget(record);
      const agent = await agentOf(record);
      if (agent && !hasMessage(agent, handle)) {
        try {
          agent.steer({
            role: "user",
            content: cancelledText(record, reason),
            id: handle,
            source: "laterResult",
            timestamp: Date.now(),
          });
        } catch (error) {
          report(error, record);
        }
      }
      tellSettled({ handle: { ...record }, outcome: "cancelled", delivery: "delivered" });
      return true;
    },

    list(agentId) {
      const all = [...records.values()];
      return (agentId === undefined ? all : all.filter((record) => record.agentId === agentId)).map(
        (record) => ({ ...record }),
      );
    },

    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = timerAt = undefined;
      for (const id of [...running.keys()]) stopWork(id, abortError("the late results manager stopped"));
    },
  };
}

/**
 * Refuses options that make every call fail (a timeout of 0) or fail at the first result (no
 * `agents`), with a TypeError when the manager is made rather than an error each call reports.
 *
 * @example
 * ```ts
 * checkLaterResultsOptions({ agents, timeoutMs: 0 }); // TypeError: timeoutMs must be above 0 …
 * ```
 */
export function checkLaterResultsOptions(options: LaterResultsOptions): void {
  if (typeof options?.agents?.get !== "function") {
    throw new TypeError(
      "createLaterResults needs agents: a directory with get(agentId), e.g. a Map of your agents",
    );
  }
  const store = options.store as Partial<ScheduleStore> | undefined;
  if (
    store !== undefined &&
    (typeof store?.load !== "function" ||
      typeof store.put !== "function" ||
      typeof store.delete !== "function")
  ) {
    throw new TypeError("store must have load(), put(record) and delete(id): give the scheduler's store");
  }
  checkLaterTimeout(options.timeoutMs, "createLaterResults");
  if (options.maxResultChars !== undefined && !(options.maxResultChars > 0)) {
    throw new TypeError(`maxResultChars must be above 0, got ${String(options.maxResultChars)}`);
  }
}

/**
 * A TypeError for a `timeoutMs` that is given and not above 0 (`Infinity` is none).
 *
 * @example
 * ```ts
 * checkLaterTimeout(-1, "defineLaterTool \"render\""); // TypeError: … timeoutMs must be above 0 …
 * ```
 */
export function checkLaterTimeout(timeoutMs: number | undefined, who: string): void {
  if (timeoutMs === undefined || timeoutMs > 0) return;
  throw new TypeError(
    `${who}: timeoutMs must be above 0 milliseconds (Infinity for no timeout), got ${String(timeoutMs)}`,
  );
}

/** A result as the work or `complete` gave it, checked: text, or a `ToolResult` with its content list. */
function toolResultOf(value: unknown): ToolResult {
  try {
    return laterToolResult(value);
  } catch (error) {
    throw new LaterResultError((error as Error).message);
  }
}

function abortError(message: string): Error {
  const error = new Error(message);
  error.name = "AbortError";
  return error;
}

function timeoutError(record: LaterResultRecord): Error {
  const error = new Error(`${record.toolName} (${record.id}) timed out`);
  error.name = "TimeoutError";
  return error;
}
