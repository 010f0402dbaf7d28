import * as restate from "@restatedev/restate-sdk";
import { type ObjectContext, TerminalError } from "@restatedev/restate-sdk";
import type { Subject } from "rxjs";
import { type Agent, createJournaledAgent } from "../agent/create-agent.js";
import type { EffectJournal, InboxKind } from "../core/effect-journal.js";
import { emptyUsage } from "../core/messages.js";
import { unstorableReason } from "../core/storable.js";
import type { QueueMode } from "../core/options.js";
import type { InboxObject } from "./inbox-object.js";
import { createInboxBell } from "./inbox-bell.js";
import type { LiveRuns } from "./live-runs.js";
import { createRestateJournal } from "./restate-journal.js";
import { createRestatePump } from "./restate-pump.js";
import { eventBatchStarts } from "./run-events.js";
import { createRunPublisher, type SessionEvent } from "./run-publisher.js";
import { createRunSlotWriter, type RunSlotWriter, slotIndexes } from "./run-slots.js";
import { parsePromptInput } from "./session-input.js";
import { errorText, type SessionOptions } from "./session-options.js";
import {
  createApprovalBook,
  createRunRecorder,
  createTranscriptWriter,
  type LastRun,
  readStored,
  type RunRecord,
} from "./session-state.js";
import type { RunResult } from "./session-types.js";
import { createRunCauses } from "./wake-causes.js";
import { createRunWakeTools, type WakeScope } from "./wake-tools.js";

/** What {@link createSessionRun} needs from the service that assembles it. */
export interface SessionRunOptions {
  /** The inbox object of the same service: the run drains it, and hands back what it did not take. */
  inbox: InboxObject;
  options: SessionOptions;
  /** Every event of every run this process serves. */
  events: Subject<SessionEvent>;
  /** The runs this process serves, for the live channel. */
  live: LiveRuns;
  /** The `SessionWakes` object's name: the run's wake tools keep their handles and schedules there. */
  wakes: string;
}

/**
 * The body of `AgentSession.prompt`: one run, from its input to its result; `wake` is the body of
 * `AgentSession.wake`: a run whose opening drain takes what it starts with (null when a run took it
 * first: the session is left as it was).
 */
export type SessionRun = ((ctx: ObjectContext, input: unknown) => Promise<RunResult>) & {
  wake(ctx: ObjectContext): Promise<RunResult | null>;
};

/**
 * A session's run: builds the agent on a Restate journal (durable/restate-journal.ts) from the
 * stored transcript, runs the prompt, keeps the run record, transcript and events written before
 * each wait, and ends the run in state (the last run, the queues' untaken messages handed back).
 *
 * @example
 * ```ts
 * const run = createSessionRun({ inbox, options, events, live });
 * const session = restate.object({ name: "AgentSession", handlers: { prompt: run } });
 * ```
 */
export function createSessionRun({ inbox, options, events, live, wakes }: SessionRunOptions): SessionRun {
  const run = (ctx: ObjectContext, given: unknown) => runSession(ctx, given, false) as Promise<RunResult>;
  return Object.assign(run, { wake: (ctx: ObjectContext) => runSession(ctx, undefined, true) });

  /**
   * One run. A woken run (`woken`) has no input yet: its opening drain takes it from the inbox,
   * as a prompt's opening drain takes early steering (and either answers the run's start time).
   */
  async function runSession(ctx: ObjectContext, given: unknown, woken: boolean): Promise<RunResult | null> {
    // A wake's messages come with their causes: the agent's trace links to them.
    const causes = createRunCauses();
    let raw = woken ? undefined : causes.take(given);
    // Checked before anything is journaled; stamped with the run's start below.
    if (!woken) parsePromptInput(raw, 0);
    const sessionId = ctx.key;
    const runId = ctx.request().id as string;
    const previous = await ctx.get<RunRecord>("run");
    // The keys are listed once, for the transcript's batches and the last run's events alike.
    // A run that never ended (its slots not counted) is found by the keys too.
    const unended = previous?.slotted === true && previous.state === "running";
    const stored = await readStored(ctx, 0, {
      run: previous ?? null,
      listKeys: previous?.eventsInKeys === true || unended,
    });
    const { snapshot: _s, parentActor: _p, id: _id, messages: seed, ...base } = options.of(sessionId);
    const transcript = previous || stored.count > 0 ? stored.messages : (seed ?? []);

    // Only a run (finishRun) writes an idle record, after clearing both books: a session that never
    // ran, or whose last run ended, has no call waiting in either.
    const storedEmpty = !previous || previous.state === "idle";
    // How the last run ended goes in the record; earlier versions kept it under its own key.
    const legacyLast = previous !== undefined && previous !== null && !previous.slotted;
    const last = legacyLast ? await ctx.get<LastRun>("lastRun") : previous?.last;
    const approvals = createApprovalBook(ctx, "approvals", { storedEmpty });
    const clientCalls = createApprovalBook(ctx, "clientCalls", { storedEmpty });
    const writer = createTranscriptWriter(ctx, stored);
    // The run's progress goes into its slots, over those of the run before (cleared as it ends).
    const slots = createRunSlotWriter(
      ctx,
      runId,
      previous?.slotCount ?? (unended ? (slotIndexes(stored.keys ?? []).at(-1) ?? -1) + 1 : 0),
    );
    const modes: Record<InboxKind, QueueMode> = {
      steering: base.steeringMode ?? "one-at-a-time",
      followUp: base.followUpMode ?? "one-at-a-time",
    };
    const inboxClient = ctx.objectClient(inbox, sessionId);
    const inboxSend = ctx.objectSendClient(inbox, sessionId);
    const inFlightDrains = new Set<Promise<unknown>>();
    // The pump reports a cancellation to the agent, which is built on the journal the pump serves;
    // one that comes before the agent exists aborts it as soon as it does.
    const running: { agent?: Agent; cancelled?: boolean } = {};
    const pump = createRestatePump({
      onCancel: () => (running.agent ? running.agent.abort() : (running.cancelled = true)),
      // What the run published since it last waited is written before it waits again.
      beforeWait: () => flushRecord(),
    });
    // Set below, before the run's first step: what the run has changed is written before it waits.
    let flushRecord = () => {};
    // The session's first run says so with its opening drain (the inbox then knows it exists).
    let announce = !previous;
    const bell = createInboxBell(ctx, pump, {
      drain: (request) => {
        flushRecord();
        const first = announce && request.bell !== undefined;
        if (first) announce = false;
        return inboxClient.drain({ ...request, mode: modes[request.kind], ...(first && { first }) });
      },
      runId,
      // A first run that did not take place leaves no session: the inbox forgets it again.
      closeBell: (id) => inboxSend.closeBell({ bell: id, ...(!previous && { ran: false }) }),
    });
    // The run record goes out with the run's first entries, before any round trip: a status read
    // right after `send()` finds the run going rather than "Unknown session". Its start time follows
    // with the next write.
    const record = createRunRecorder(ctx, {
      state: "running",
      runId,
      turn: 0,
      startedAt: previous?.startedAt ?? 0,
      firstIndex: transcript.length,
      generation: stored.generation,
      slotted: true,
      ...(base.eventReplay !== false && { eventsInSlots: true }),
      ...(last && { last }),
    });
    // With the transcript moved into the current layout, when an earlier version stored it otherwise.
    const startRecord = () => record.write(writer.start());
    // A woken run writes it once it knows it runs (a wake whose message a run took leaves no trace).
    if (!woken) startRecord();
    const liveRun = live.open(sessionId, runId);
    // The first drain: the steering it takes goes into the run's first turn with the prompt, as in
    // process, and its answer carries the run's start time (journaled with it: no step of its own).
    const opening = woken
      ? bell
          .openWake({ steeringMode: modes.steering, followUpMode: modes.followUp })
          .then(({ input, early }) => ({ input: causes.take(input), early: causes.take(early) }))
      : bell.open().then((early) => ({ input: undefined, early: causes.take(early) }));
    const opened = await Promise.race([opening, pump.failed]);
    // An inbox that answers no time (none of this version's does) leaves the run a step for it.
    const startedAt =
      bell.openedAt ?? (await Promise.race([pump.track(ctx.run("start", () => Date.now())), pump.failed]));
    if (woken) {
      raw = opened.input;
      if (!Array.isArray(raw) || raw.length === 0) {
        // A run took the wake's message first: nothing runs.
        liveRun.close();
        bell.close();
        return null;
      }
      startRecord();
    }
    const input = parsePromptInput(raw, startedAt);
    const journal = createRestateJournal(ctx, pump, {
      startedAt,
      approvals,
      clientCalls,
      expireClientCall: (toolCallId, awakeableId, ms, result) =>
        inboxSend.decide(
          { toolCallId, awakeableId, decision: { result }, kind: "result", expiry: true },
          restate.rpc.sendOpts({ delay: ms }),
        ),
      drainInbox: (kind) => bell.drain(kind).then(causes.take),
    });
    const beforeStep =
      <A extends unknown[], R>(call: (...args: A) => R) =>
      (...args: A): R => {
        flushRecord();
        return call(...args);
      };
    /**
     * A journal (the run's, or a sub-agent's) whose steps first write what the run has changed,
     * and whose tools that answer later and schedule tool act on the session's SessionWakes object.
     */
    const track = (scope: EffectJournal, where: WakeScope): EffectJournal => {
      const wakeTools = createRunWakeTools(ctx, pump, { wakes, scope: where });
      const toolCall = beforeStep(scope.toolCall);
      return {
        ...scope,
        tools: wakeTools.tools,
        modelCall: beforeStep(scope.modelCall),
        toolCall: (toolCallId, run) =>
          wakeTools.toolCall(toolCallId, run, (step) => toolCall(toolCallId, step)),
        permission: beforeStep(scope.permission),
        compaction: beforeStep(scope.compaction),
        approval: beforeStep(scope.approval),
        ...(scope.clientResult && { clientResult: beforeStep(scope.clientResult) }),
        ...(scope.context && { context: beforeStep(scope.context) }),
        timer: beforeStep(scope.timer),
        ...(scope.child && {
          child: (callId: string, toolName: string) =>
            track(scope.child!(callId, toolName), {
              calls: [...where.calls, callId],
              tools: [...where.tools, toolName],
            }),
        }),
      };
    };
    const tracked: EffectJournal = {
      ...track(journal, { calls: [], tools: [] }),
      drain(kind: InboxKind) {
        const drained = journal.drain(kind);
        inFlightDrains.add(drained);
        void drained.finally(() => inFlightDrains.delete(drained)).catch(() => {});
        return drained;
      },
    };
    let agent: Agent;
    try {
      // Seed messages JSON cannot hold would fail the run's first transcript write on every retry.
      const problem = transcript === seed ? unstorableReason(seed) : undefined;
      if (problem !== undefined) throw new Error(`its messages cannot be stored as JSON: ${problem}`);
      agent = createJournaledAgent(
        {
          ...base,
          id: sessionId,
          messages: [...transcript],
        },
        tracked,
      );
    } catch (error) {
      // The steering the run took goes back first, as nothing took it.
      if (opened.early.length) inboxSend.requeue({ kind: "steering", messages: opened.early });
      liveRun.close();
      bell.close();
      // No run took place: the session reads as it did before (its transcript maybe moved to the snapshot).
      if (previous) ctx.set("run", stored.whole ? previous : movedRecord(previous, stored.count));
      else ctx.clear("run");
      throw new TerminalError(
        `The agent of session "${sessionId}" could not be created: ${errorText(error)}`,
        { errorCode: 500 },
      );
    }
    running.agent = agent;
    causes.attach(agent);
    // The last run's events go now (not before: an agent that could not be created leaves them);
    // this run's are written with the run record, before each wait.
    const publisher = createRunPublisher(ctx, {
      sessionId,
      runId,
      previous: lastRunBatches(previous, stored.keys),
      eventReplay: base.eventReplay,
      events,
      liveRun,
    });
    // One slot a wait, when anything changed since the last: the turn, messages, events.
    let flushedTurn = record.record.turn;
    flushRecord = () => {
      const events = publisher.take();
      const transcript = writer.take();
      const { turn } = record.record;
      if (!events && transcript.base === undefined && !transcript.messages && turn === flushedTurn) return;
      flushedTurn = turn;
      slots.write({ turn, count: writer.count, ...transcript, ...events });
    };
    /**
     * As the run ends: the snapshot, and the run's last events for the record that says it ended
     * (no slot of their own). A compaction since the last wait is a slot first: readers of the
     * record still running would take the rewritten snapshot by its old count.
     */
    const endWrites = () => {
      if (writer.rewriting) {
        flushRecord();
        return undefined;
      }
      writer.take();
      return publisher.take();
    };
    // Whether the agent began and ended its run: a run that fails says so with the ends it did not.
    const told = { start: false, end: false };
    const subscription = agent.events$.subscribe((given) => {
      const event = given.type === "agent_end" ? storableEnd(given) : given;
      if (event.type === "agent_start") told.start = true;
      else if (event.type === "agent_end") told.end = true;
      publisher.publish(event);
      if (event.type === "turn_start") {
        record.update({ turn: event.turn });
      } else if (event.type === "turn_end") {
        // After the step that ended the turn has updated the transcript; counted at the next step.
        queueMicrotask(() => writer.write(agent.messages));
      }
    });

    /**
     * The run failed (a terminal error, or a bug the run cannot recover from): what it stored
     * stays, its events end with an `agent_end` of reason "error", its waiting calls are dropped,
     * the messages it did not take go back to the inbox, and the record reads idle with the error as
     * the last run's.
     */
    const endFailedRun = (errorMessage: string) => {
      writer.write(agent.messages);
      writer.fold();
      if (!told.start) publisher.publish({ type: "agent_start" });
      if (!told.end) {
        publisher.publish({
          type: "agent_end",
          reason: "error",
          messages: [...agent.messages],
          usage: emptyUsage(),
          errorMessage,
        });
      }
      const lastEvents = endWrites();
      returnUntaken(ctx, inbox, agent);
      approvals.clear();
      clientCalls.clear();
      const result: RunResult = { runId, reason: "error", messages: [], usage: emptyUsage(), errorMessage };
      finishRun(ctx, record, slots, writer, lastEvents, result, journal.now(), legacyLast);
    };

    try {
      // Steering queued before the run, screened when it was queued: the prompt takes it (by the
      // queue's mode) into the first turn, as an agent in process takes steering queued while idle.
      for (const message of opened.early) agent.actor.send({ type: "STEER", message });
      // The start time goes with the record's write as the run ends: nothing reads it before.
      record.update({ startedAt });
      const prompted = agent.prompt(input);
      if (running.cancelled) agent.abort();
      const outcome = await Promise.race([prompted, pump.failed]);
      // A check the run left mid-way may still answer: wait for it, then hand back what nobody took.
      while (inFlightDrains.size) await Promise.race([Promise.allSettled([...inFlightDrains]), pump.failed]);
      // The run leaves its doorbell with the inbox (no invocation of the inbox a run to release it):
      // the next steer's ring ends its wait at once, the run having ended (`attach`), or the next
      // run's first drain replaces it.
      returnUntaken(ctx, inbox, agent);
      writer.write(agent.messages);
      // The next run reads the transcript as one key, however many runs came before.
      writer.fold();
      const result: RunResult = { runId, ...storableEnd(outcome) };
      const lastEvents = endWrites();
      approvals.clear();
      clientCalls.clear();
      finishRun(ctx, record, slots, writer, lastEvents, result, journal.now(), legacyLast);
      return result;
    } catch (error) {
      const failure =
        error instanceof TerminalError
          ? error
          : new TerminalError(`The run of session "${sessionId}" failed: ${errorText(error)}`, {
              errorCode: 500,
            });
      try {
        // Restate keeps the state a handler wrote before its terminal error: the run ends there as
        // one that ended in an error, rather than reading "running" until the next run.
        endFailedRun(failure.message);
      } catch {
        // What the run stored stays readable (counted).
        flushRecord();
      }
      throw failure;
    } finally {
      subscription.unsubscribe();
      liveRun.close();
      agent.stop();
    }
  }
}

/**
 * The run's end as it can be stored: one whose output JSON cannot hold (a schema that transforms
 * into a BigInt, a cycle) ends with reason "error" and says why, rather than failing every write
 * of the run's end for ever. The model's answer stays in the transcript.
 */
function storableEnd<T extends { reason: string; output?: unknown; errorMessage?: string }>(end: T): T {
  if (end.output === undefined) return end;
  const problem = unstorableReason(end.output);
  if (problem === undefined) return end;
  const { output: _output, ...rest } = end;
  return {
    ...rest,
    reason: "error",
    errorMessage: `The run's output cannot be stored as JSON: ${problem}`,
  } as T;
}

/**
 * The first seqs of the last run's event batches, which this run clears: where its record said
 * (earlier versions), or its "e/<seq>" keys.
 */
function lastRunBatches(previous: RunRecord | null | undefined, keys: string[] | undefined): number[] {
  if (previous?.events) return previous.events.batches.map(([start]) => start);
  return previous?.eventsInKeys ? eventBatchStarts(keys ?? []) : [];
}

/**
 * The record of the last run as it was, its transcript now in the snapshot alone (the run that could
 * not start moved it there): its slots, or batches of earlier layouts, no longer hold messages.
 */
function movedRecord(previous: RunRecord, count: number): RunRecord {
  const { tail: _t, tailKeys: _k, folded: _f, slotted: _s, ...rest } = previous;
  return { ...rest, count, base: count };
}

/** Hands the messages the agent queued but did not take back to the inbox (they go first again). */
function returnUntaken(ctx: ObjectContext, inbox: InboxObject, agent: Agent): void {
  const { steering, followUp } = agent.queued;
  const send = ctx.objectSendClient(inbox, ctx.key);
  if (steering.length) send.requeue({ kind: "steering", messages: steering });
  if (followUp.length) send.requeue({ kind: "followUp", messages: followUp });
}

/** Ends the run in state (its books cleared): the record reads idle, the last run is kept. */
function finishRun(
  ctx: ObjectContext,
  record: ReturnType<typeof createRunRecorder>,
  slots: RunSlotWriter,
  { count, generation }: { count: number; generation: number },
  lastEvents: RunRecord["lastEvents"],
  result: RunResult,
  endedAt: number,
  legacyLast: boolean,
): void {
  const run = record.record;
  const lastRun: LastRun = {
    runId: run.runId,
    reason: result.reason,
    usage: result.usage,
    startedAt: run.startedAt,
    endedAt,
    ...(result.errorMessage !== undefined && { errorMessage: result.errorMessage }),
    ...(result.output !== undefined && { output: result.output }),
  };
  // The run's end folded the transcript into the snapshot: it holds every message.
  record.write({
    state: "idle",
    count,
    base: count,
    endGeneration: generation,
    slotCount: slots.count,
    last: lastRun,
    ...(lastEvents && { lastEvents }),
  });
  slots.clearStale();
  if (legacyLast) ctx.clear("lastRun");
}
