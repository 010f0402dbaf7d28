import * as restate from "@restatedev/restate-sdk";
import { checkEditedArgs } from "../actors/prepare-tool-call.actor.js";
import { clientResultOf } from "../tools/client-result.js";
import { errorResult } from "../tools/define-tool.js";
import {
  type InvocationId,
  type ObjectContext,
  type ObjectSharedContext,
  RestatePromise,
  TerminalError,
} from "@restatedev/restate-sdk";
import { Observable, Subject } from "rxjs";
import { type Agent, createJournaledAgent } from "../agent/create-agent.js";
import type { EffectJournal, InboxKind } from "../core/effect-journal.js";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import type { AgentOptions, QueueMode } from "../core/options.js";
import { screenInput, takeFromQueue } from "../rules/agent.logic.js";
import { createInboxBell, type DrainAnswer, type DrainRequest, type Ring } from "./inbox-bell.js";
import { ensurePromiseWithResolvers } from "./polyfill.js";
import { createRestateJournal } from "./restate-journal.js";
import { createRestatePump } from "./restate-pump.js";
import { createLiveRuns, type LiveRuns } from "./live-runs.js";
import { createRunEventRecorder } from "./run-events.js";
import { createSessionWakes, type DurableScheduleLimits } from "./session-wakes.js";
import { wakeInboxHandlers, wakeInput } from "./wake-session.js";
import type { RunResult, SessionServiceNames } from "./session-types.js";
import {
  badRequest,
  parseClientAnswer,
  parseDecision,
  parseBell,
  parseDrain,
  parseEventsRequest,
  parseFrom,
  parsePromptInput,
  parseQueuedInput,
  parseRequeue,
  parseUpdatesRequest,
} from "./session-input.js";
import {
  type ApprovalBook,
  createApprovalBook,
  createRunRecorder,
  createTranscriptWriter,
  type LastRun,
  readEvents,
  readStatus,
  readStored,
  readTranscript,
  readUpdates,
  requireRun,
  type RunRecord,
  type SessionStatus,
  type SessionUpdates,
  type TranscriptSlice,
} from "./session-state.js";

export type { RunResult, SessionServiceNames } from "./session-types.js";

/** An event of a session's run, as the serving process publishes it. */
export interface SessionEvent {
  sessionId: string;
  /** The invocation id of the run (`prompt`) that published it. */
  runId: string;
  event: AgentEvent;
}

/** Restate's retry policy for the sessions' invocations (how soon a crashed run resumes). */
export type SessionRetryPolicy = restate.RetryPolicy;

/** Options of {@link createAgentServices}. */
export interface AgentServicesOptions {
  /**
   * The agent each session runs: the options `createAgent` takes, or a function of the session id
   * that returns them. `messages` seeds a new session's transcript; `snapshot` and `parentActor` do
   * not apply (a session's state lives in Restate); `eagerToolExecution` is off (a journaled model
   * call is one step, its tool calls start after it).
   */
  agent: AgentOptions | ((sessionId: string) => AgentOptions);
  names?: SessionServiceNames;
  /** Restate's retries of a failed invocation attempt (a crashed service, a lost connection). */
  retryPolicy?: SessionRetryPolicy;
  /** Ms without journal activity before Restate asks a run to suspend (server default: 1 min). */
  inactivityTimeout?: number;
  /**
   * Ms after that request before Restate aborts the attempt and retries it (server default:
   * 10 min). A tool call or model call longer than both is cut off and run again: raise it for
   * long tools. Default here: 1 hour.
   */
  abortTimeout?: number;
  /** When a durable schedule's slot counts as missed, and the default missed-run policy. */
  schedules?: DurableScheduleLimits;
}

/** The two Restate virtual objects that serve agent sessions, and the events of their runs. */
export interface AgentServices {
  /** `AgentSession` (key = session id): prompt, transcript, messages, status, approve, deny, abort. */
  readonly session: restate.VirtualObjectDefinition<string, unknown>;
  /** `SessionInbox` (same key): steer, followUp, pending (and the run's drain / requeue). */
  readonly inbox: restate.VirtualObjectDefinition<string, unknown>;
  /** `SessionWakes` (same key): the session's schedules and events from outside (docs/wake.md). */
  readonly wakes: restate.VirtualObjectDefinition<string, unknown>;
  /** All three, for `createEndpointHandler({ services })` or `serveAgents`. */
  readonly services: restate.VirtualObjectDefinition<string, unknown>[];
  readonly names: Required<SessionServiceNames>;
  /** Every event of every run this process serves (a resumed run publishes its replayed part again). */
  readonly events$: Observable<SessionEvent>;
  /** The runs this process serves, as they happen: what `serveAgents`' live channel streams. */
  readonly live: LiveRuns;
}

const DEFAULT_ABORT_TIMEOUT_MS = 60 * 60 * 1000;
/**
 * How long a steer that rang a run's doorbell waits for the run to acknowledge it (or end). A live
 * run does within milliseconds; this bounds the wait while the run's process is down.
 */
const RING_TIMEOUT_MS = 10_000;

/**
 * Serves agents as Restate services, from the same options `createAgent` takes. Each session is a
 * virtual object keyed by its id: `prompt` is one invocation per run, whose model calls, tool calls,
 * approvals, checks and time are journaled, so the run survives the process that serves it.
 * Register the services with a Restate server (see `serveAgents`), then talk to them with
 * `createSessionClient`. docs/durable.md has the whole story.
 *
 * @example
 * ```ts
 * const services = createAgentServices({ agent: { provider, tools, systemPrompt } });
 * const server = await serveAgents({ services, port: 9080 });
 * services.events$.subscribe(({ sessionId, event }) => console.log(sessionId, event.type));
 * ```
 */
export function createAgentServices(options: AgentServicesOptions): AgentServices {
  ensurePromiseWithResolvers();
  const names = {
    session: options.names?.session ?? "AgentSession",
    inbox: options.names?.inbox ?? "SessionInbox",
    wakes: options.names?.wakes ?? "SessionWakes",
  };
  if (new Set(Object.values(names)).size !== 3)
    throw new Error("The session, inbox and wakes services need three different names");
  const events = new Subject<SessionEvent>();
  const live = createLiveRuns();
  const agentOptions = (sessionId: string): AgentOptions => {
    const resolved = typeof options.agent === "function" ? options.agent(sessionId) : options.agent;
    if (resolved.snapshot !== undefined) {
      throw new Error(
        "A durable session keeps its state in Restate: the agent options must not carry a snapshot",
      );
    }
    if (resolved.parentActor !== undefined) {
      throw new Error("A durable session is a root agent: the agent options must not carry a parentActor");
    }
    return resolved;
  };
  // Checked once here, so a bad configuration fails at start, not in the first run.
  if (typeof options.agent !== "function") agentOptions("");
  /** The session's options inside a handler: a configuration error fails the call, it is not retried. */
  const sessionOptions = (sessionId: string): AgentOptions => {
    try {
      return agentOptions(sessionId);
    } catch (error) {
      throw new TerminalError(
        `The agent options of session "${sessionId}" are invalid: ${errorText(error)}`,
        {
          errorCode: 500,
        },
      );
    }
  };

  const serviceOptions = {
    ...(options.retryPolicy && { retryPolicy: options.retryPolicy }),
    ...(options.inactivityTimeout !== undefined && { inactivityTimeout: options.inactivityTimeout }),
    abortTimeout: options.abortTimeout ?? DEFAULT_ABORT_TIMEOUT_MS,
  };

  const inbox = restate.object({
    name: names.inbox,
    options: serviceOptions,
    handlers: {
      // A schedule's slot (`deliver`) and an event from outside (`event`): durable/wake-session.ts.
      ...wakeInboxHandlers({
        session: names.session,
        enqueue: (ctx, kind, message) => enqueue(ctx, kind, message),
      }),
      /** Queues a message the run takes at its next steering check. */
      steer: async (ctx: ObjectContext, input: unknown) => enqueue(ctx, "steering", input),
      /** Queues a message the run takes when it would otherwise stop (or the next run's first check). */
      followUp: async (ctx: ObjectContext, input: unknown) => enqueue(ctx, "followUp", input),
      /**
       * Takes one decision, exclusively: an approval's, or a client-run call's result (the client's,
       * or its timeout's). The first for a call resolves its awakeable; any later one (a concurrent
       * approve and deny, a second tab, a result after the timeout) is refused with 404, so only
       * the decision that takes effect is answered with success. Keyed by the awakeable (unique
       * per wait); the last 256 are remembered.
       */
      decide: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: ObjectContext, input: DecideRequest): Promise<{ decided: boolean }> => {
          const { toolCallId, awakeableId, decision, kind, expiry } = input;
          const decided = (await ctx.get<string[]>("decided")) ?? [];
          if (decided.includes(awakeableId)) {
            if (expiry) return { decided: false };
            throw new TerminalError(
              kind === "result"
                ? `No tool call "${toolCallId}" waits for a client result in session "${ctx.key}": it is already answered`
                : `No pending approval for tool call "${toolCallId}" in session "${ctx.key}": it is already decided`,
              { errorCode: 404 },
            );
          }
          ctx.set("decided", [...decided, awakeableId].slice(-256));
          ctx.resolveAwakeable(awakeableId, decision);
          return { decided: true };
        },
      ),
      /** Messages waiting, by queue. */
      pending: restate.handlers.object.shared(async (ctx: ObjectSharedContext) => ({
        steering: ((await ctx.get<AgentMessage[]>("steering")) ?? []).length,
        followUp: ((await ctx.get<AgentMessage[]>("followUp")) ?? []).length,
      })),
      /**
       * The run's check: takes what the mode says from one queue (nothing for a peek), keeps the
       * run's doorbell when it hands one over, and counts what waits in both queues
       * (durable/inbox-bell.ts).
       */
      drain: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: ObjectContext, input: DrainRequest & { mode: QueueMode }): Promise<DrainAnswer> => {
          // Checked all the same: a handler's input is whatever its caller sent.
          const { kind, mode, bell, peek } = parseDrain(input);
          const queues = {
            steering: (await ctx.get<AgentMessage[]>("steering")) ?? [],
            followUp: (await ctx.get<AgentMessage[]>("followUp")) ?? [],
          };
          let taken: AgentMessage[] = [];
          if (!peek && queues[kind].length) {
            const took = takeFromQueue(queues[kind], mode);
            taken = took.taken;
            queues[kind] = took.rest;
            if (took.rest.length) ctx.set(kind, took.rest);
            else ctx.clear(kind);
          }
          if (bell !== undefined) ctx.set("bell", bell satisfies StoredBell);
          return {
            messages: taken,
            waiting: { steering: queues.steering.length, followUp: queues.followUp.length },
          };
        },
      ),
      /** The run has ended: its doorbell is forgotten (unless a newer run handed over another). */
      closeBell: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: ObjectContext, input: { bell: string }): Promise<void> => {
          const { bell } = parseBell(input);
          if (storedBell(await ctx.get<StoredBell | string>("bell"))?.id === bell) ctx.clear("bell");
        },
      ),
      /** Puts back messages a run took but ended before using (they go first again). */
      requeue: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: ObjectContext, input: { kind: InboxKind; messages: AgentMessage[] }): Promise<void> => {
          const { kind, messages } = parseRequeue(input);
          if (messages.length === 0) return;
          const queue = (await ctx.get<AgentMessage[]>(kind)) ?? [];
          ctx.set(kind, [...messages, ...queue]);
        },
      ),
    },
  });

  async function enqueue(ctx: ObjectContext, kind: InboxKind, input: unknown): Promise<{ queued: number }> {
    const now = await ctx.date.now();
    const message = parseQueuedInput(input, kind === "steering" ? "steer" : "followUp", now);
    const screening = screenInput(sessionOptions(ctx.key).inputFilters ?? [], [message]);
    if (!screening.ok) throw badRequest("Input rejected", screening.reason);
    const queue = (await ctx.get<AgentMessage[]>(kind)) ?? [];
    const next = [...queue, ...screening.messages];
    ctx.set(kind, next);
    await ringBell(ctx);
    return { queued: next.length };
  }

  /**
   * Rings the doorbell of the run listening (if one is), and returns once the run has the ring (or
   * has ended): so a message that returned is taken at the run's next check (durable/inbox-bell.ts
   * has the argument).
   */
  async function ringBell(ctx: ObjectContext): Promise<void> {
    const bell = storedBell(await ctx.get<StoredBell | string>("bell"));
    if (!bell) return;
    ctx.clear("bell");
    const ack = ctx.awakeable();
    ctx.resolveAwakeable(bell.id, { ack: ack.id } satisfies Ring);
    const waits: RestatePromise<unknown>[] = [ack.promise, ctx.sleep(RING_TIMEOUT_MS, "ring timeout")];
    // A run that ended (its doorbell not forgotten yet) never acknowledges: its end answers instead.
    if (bell.runId) waits.push(ctx.attach(bell.runId as InvocationId).map(() => undefined));
    await RestatePromise.race(waits);
  }

  const session = restate.object({
    name: names.session,
    options: serviceOptions,
    handlers: {
      /** Starts a run and answers when it ends. One invocation per run; a second waits for the first. */
      prompt: async (ctx: ObjectContext, input: unknown): Promise<RunResult> => runPrompt(ctx, input),
      /** Runs what a wake left in the inbox, once no run is active (durable/wake-session.ts). */
      wake: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: ObjectContext) => {
        const input = await wakeInput(ctx, names.inbox, sessionOptions(ctx.key));
        return input.length > 0 ? runPrompt(ctx, input) : null;
      }),
      /** The stored transcript (404 for a session that never ran). */
      transcript: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext): Promise<AgentMessage[]> => {
          await requireRun(ctx);
          return (await readTranscript(ctx)).messages;
        },
      ),
      /** Messages from index `from` on, with the count and generation a follower needs. */
      messages: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext, input: unknown): Promise<TranscriptSlice> => {
          const from = parseFrom(input);
          await requireRun(ctx);
          return readTranscript(ctx, from);
        },
      ),
      /**
       * What a follower polls: the status and the messages from `from`, in one read; with `runId`
       * and `since`, that run's messages from its seq `since` (410 when they are not kept).
       */
      updates: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext, input: unknown): Promise<SessionUpdates> => {
          const request = parseUpdatesRequest(input);
          await requireRun(ctx);
          return readUpdates(ctx, request);
        },
      ),
      /**
       * The committed events run `runId` recorded, from seq `since` (default 0): 410 when the run is
       * not the current or last one, recorded none (an earlier version ran it), or dropped them.
       */
      events: restate.handlers.object.shared(async (ctx: ObjectSharedContext, input: unknown) => {
        const { runId, since } = parseEventsRequest(input);
        return readEvents(ctx, await requireRun(ctx), runId, since);
      }),
      /** Whether a run is active, its turn, the calls waiting for approval, how the last run ended. */
      status: restate.handlers.object.shared(async (ctx: ObjectSharedContext): Promise<SessionStatus> =>
        readStatus(ctx),
      ),
      /**
       * Lets a call waiting for approval run. With `dryRun`, only checks that it waits and that the
       * edited arguments pass the tool's schema, deciding nothing (`decision: "checked"`).
       */
      approve: restate.handlers.object.shared(async (ctx: ObjectSharedContext, input: unknown) => {
        const { toolCallId, args, dryRun } = parseDecision(input, "approve");
        const pending = await pendingCall(ctx, "approvals", toolCallId);
        if (args === undefined) {
          if (dryRun) return { toolCallId, decision: "checked" as const };
          await decideOnce(ctx, toolCallId, pending.awakeableId, { approved: true });
          return { toolCallId, decision: "approved" as const };
        }
        // Edited arguments are checked by the tool's schema here, before anything is decided.
        const tool = sessionOptions(ctx.key).tools?.find((t) => t.name === pending.toolName);
        const checked = tool ? checkEditedArgs(tool, args) : { ok: false as const, error: "unknown tool" };
        if (!checked.ok) {
          throw new TerminalError(
            `The edited arguments of tool call "${toolCallId}" fail the schema of tool ${pending.toolName}: ` +
              `${checked.error}. The call still waits for approval.`,
            { errorCode: 400 },
          );
        }
        if (dryRun) return { toolCallId, decision: "checked" as const };
        await decideOnce(ctx, toolCallId, pending.awakeableId, { approved: true, args: checked.args });
        return { toolCallId, decision: "approved" as const };
      }),
      /** Refuses a call waiting for approval; the model sees the reason. */
      deny: restate.handlers.object.shared(async (ctx: ObjectSharedContext, input: unknown) => {
        const { toolCallId, reason } = parseDecision(input, "deny");
        const pending = await pendingCall(ctx, "approvals", toolCallId);
        await decideOnce(ctx, toolCallId, pending.awakeableId, {
          approved: false,
          ...(reason !== undefined && { reason }),
        });
        return { toolCallId, decision: "denied" as const };
      }),
      /** Answers a call of a client-run tool with the client's result (text or a ToolResult). */
      resolveToolCall: restate.handlers.object.shared(async (ctx: ObjectSharedContext, input: unknown) => {
        const { toolCallId, result } = parseClientAnswer(input, "resolveToolCall");
        const checked = clientResultOf(result);
        if (typeof checked === "string") {
          throw badRequest(
            `Invalid resolveToolCall request`,
            `${checked}. The call "${toolCallId}" still waits for its result`,
          );
        }
        const pending = await pendingCall(ctx, "clientCalls", toolCallId);
        await decideOnce(ctx, toolCallId, pending.awakeableId, { result: checked }, "result");
        return { toolCallId, answered: "resolved" as const };
      }),
      /** Answers a call of a client-run tool with an error the model reads (`reason`). */
      rejectToolCall: restate.handlers.object.shared(async (ctx: ObjectSharedContext, input: unknown) => {
        const { toolCallId, reason } = parseClientAnswer(input, "rejectToolCall");
        const pending = await pendingCall(ctx, "clientCalls", toolCallId);
        await decideOnce(ctx, toolCallId, pending.awakeableId, { result: errorResult(reason!) }, "result");
        return { toolCallId, answered: "rejected" as const };
      }),
      /** Aborts the active run (Restate cancels its invocation; every open call is answered). */
      abort: restate.handlers.object.shared(async (ctx: ObjectSharedContext) => {
        const run = await requireRun(ctx);
        if (run.state !== "running") return { aborted: false, runId: run.runId };
        ctx.cancel(run.runId as InvocationId);
        return { aborted: true, runId: run.runId };
      }),
    },
  });

  /**
   * Hands a decision to the inbox's exclusive `decide`: shared handlers run side by side, so the
   * pending entry alone (removed only when the run takes the decision) cannot tell the first of two
   * concurrent decisions from the second.
   */
  async function decideOnce(
    ctx: ObjectSharedContext,
    toolCallId: string,
    awakeableId: string,
    decision: unknown,
    kind: "approval" | "result" = "approval",
  ): Promise<void> {
    await ctx.objectClient(inbox, ctx.key).decide({ toolCallId, awakeableId, decision, kind });
  }

  /** The pending entry of a call (waiting for approval, or for a client's result), or a 404. */
  async function pendingCall(
    ctx: ObjectSharedContext,
    book: "approvals" | "clientCalls",
    toolCallId: string,
  ) {
    await requireRun(ctx);
    const pending = ((await ctx.get<ApprovalBook>(book)) ?? {})[toolCallId];
    if (!pending) {
      throw new TerminalError(
        book === "approvals"
          ? `No pending approval for tool call "${toolCallId}" in session "${ctx.key}": it is unknown or already decided`
          : `No tool call "${toolCallId}" waits for a client result in session "${ctx.key}": it is unknown or already answered`,
        { errorCode: 404 },
      );
    }
    return pending;
  }

  async function runPrompt(ctx: ObjectContext, raw: unknown): Promise<RunResult> {
    // Checked before anything is journaled; stamped with the run's start below.
    parsePromptInput(raw, 0);
    const sessionId = ctx.key;
    const runId = ctx.request().id as string;
    const previous = await ctx.get<RunRecord>("run");
    const stored = await readStored(ctx);
    const { snapshot: _s, parentActor: _p, id: _id, messages: seed, ...base } = sessionOptions(sessionId);
    const transcript = previous || stored.count > 0 ? stored.messages : (seed ?? []);

    const approvals = createApprovalBook(ctx);
    const clientCalls = createApprovalBook(ctx, "clientCalls");
    const writer = createTranscriptWriter(ctx, stored);
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
    const bell = createInboxBell(ctx, pump, {
      drain: (request) => {
        flushRecord();
        return inboxClient.drain({ ...request, mode: modes[request.kind] });
      },
      runId,
      closeBell: (id) => inboxSend.closeBell({ bell: id }),
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
      count: stored.count,
    });
    record.write();
    flushRecord = record.flush;
    const liveRun = live.open(sessionId, runId);
    // The peek goes out first, so its answer is back by the run's first check (which waits for it)
    // instead of adding a round trip to the first turn.
    bell.open();
    const startedAt = await Promise.race([pump.track(ctx.run("start", () => Date.now())), pump.failed]);
    record.update({ startedAt });
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
      drainInbox: (kind) => bell.drain(kind),
    });
    /** Records and publishes one event of the run (set once the agent exists). */
    let publishEvent: (event: AgentEvent) => void = () => {};
    const beforeStep =
      <A extends unknown[], R>(call: (...args: A) => R) =>
      (...args: A): R => {
        flushRecord();
        return call(...args);
      };
    const tracked: EffectJournal = {
      ...journal,
      modelCall: beforeStep(journal.modelCall),
      toolCall: beforeStep(journal.toolCall),
      permission: beforeStep(journal.permission),
      compaction: beforeStep(journal.compaction),
      // A decision taken from Restate (not through agent.approve, which publishes it in process) is
      // published here, before the call acts on it, as an agent in process publishes it.
      approval: beforeStep((request) =>
        journal.approval(request).then((decision) => {
          publishEvent({
            type: "approval_decided",
            toolCallId: request.toolCallId,
            toolName: request.toolName,
            approved: decision.approved,
            ...(decision.approved && decision.args !== undefined && { editedArgs: decision.args }),
          });
          return decision;
        }),
      ),
      ...(journal.clientResult && { clientResult: beforeStep(journal.clientResult) }),
      timer: beforeStep(journal.timer),
      drain(kind: InboxKind) {
        const drained = journal.drain(kind);
        inFlightDrains.add(drained);
        void drained.finally(() => inFlightDrains.delete(drained)).catch(() => {});
        return drained;
      },
    };
    let agent: Agent;
    try {
      agent = createJournaledAgent({ ...base, id: sessionId, messages: [...transcript] }, tracked);
    } catch (error) {
      liveRun.close();
      bell.close();
      // No run took place: the session reads as it did before.
      if (previous) ctx.set("run", previous);
      else ctx.clear("run");
      throw new TerminalError(
        `The agent of session "${sessionId}" could not be created: ${errorText(error)}`,
        {
          errorCode: 500,
        },
      );
    }
    running.agent = agent;
    // The last run's events go now; this run's are written with the run record, before each wait.
    const recorder =
      base.eventReplay === false
        ? undefined
        : createRunEventRecorder(ctx, previous?.events, base.eventReplay);
    if (!recorder && previous?.events) createRunEventRecorder(ctx, previous.events, undefined);
    flushRecord = () => {
      if (recorder?.flush()) record.update({ events: recorder.where });
      record.flush();
    };

    publishEvent = (event) => {
      const recorded = recorder?.record(event) ?? [];
      events.next({ sessionId, runId, event });
      if (recorded.length === 0) liveRun.publish(event, undefined);
      for (const committed of recorded) liveRun.publish(committed.event, committed.seq);
    };
    const subscription = agent.events$.subscribe((event) => {
      publishEvent(event);
      if (event.type === "turn_start") {
        record.update({ turn: event.turn });
      } else if (event.type === "turn_end") {
        // After the step that ended the turn has updated the transcript; counted at the next step.
        queueMicrotask(() => {
          if (writer.write(agent.messages)) record.update({ count: writer.count });
        });
      }
    });

    try {
      const prompted = agent.prompt(input);
      if (running.cancelled) agent.abort();
      const outcome = await Promise.race([prompted, pump.failed]);
      // A check the run left mid-way may still answer: wait for it, then hand back what nobody took.
      while (inFlightDrains.size) await Promise.race([Promise.allSettled([...inFlightDrains]), pump.failed]);
      bell.close();
      returnUntaken(ctx, agent);
      writer.write(agent.messages);
      const result: RunResult = { runId, ...outcome };
      if (recorder?.flush()) record.update({ events: recorder.where });
      finishRun(ctx, record, writer.count, result, journal.now());
      return result;
    } catch (error) {
      // What the run stored stays readable (counted).
      flushRecord();
      if (error instanceof TerminalError) throw error;
      throw new TerminalError(`The run of session "${sessionId}" failed: ${errorText(error)}`, {
        errorCode: 500,
      });
    } finally {
      subscription.unsubscribe();
      liveRun.close();
      agent.stop();
    }
  }

  function returnUntaken(ctx: ObjectContext, agent: Agent): void {
    const { steeringQueue, followUpQueue } = agent.actor.getSnapshot().context;
    const send = ctx.objectSendClient(inbox, ctx.key);
    if (steeringQueue.length) send.requeue({ kind: "steering", messages: steeringQueue });
    if (followUpQueue.length) send.requeue({ kind: "followUp", messages: followUpQueue });
  }

  function finishRun(
    ctx: ObjectContext,
    record: ReturnType<typeof createRunRecorder>,
    count: number,
    result: RunResult,
    endedAt: number,
  ): void {
    createApprovalBook(ctx).clear();
    createApprovalBook(ctx, "clientCalls").clear();
    record.write({ state: "idle", count });
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
    ctx.set("lastRun", lastRun);
  }

  const wakes = createSessionWakes({
    ...names,
    name: names.wakes,
    limits: options.schedules,
    serviceOptions,
  });
  return {
    session: session as unknown as restate.VirtualObjectDefinition<string, unknown>,
    inbox: inbox as unknown as restate.VirtualObjectDefinition<string, unknown>,
    wakes: wakes as unknown as restate.VirtualObjectDefinition<string, unknown>,
    services: [
      session as unknown as restate.VirtualObjectDefinition<string, unknown>,
      inbox as unknown as restate.VirtualObjectDefinition<string, unknown>,
      wakes as unknown as restate.VirtualObjectDefinition<string, unknown>,
    ],
    names,
    events$: events.asObservable(),
    live,
  };
}

export type { LastRun, SessionStatus, SessionUpdates, TranscriptSlice };

/** What `SessionInbox.decide` takes: one decision on the call waiting on `awakeableId`. */
interface DecideRequest {
  toolCallId: string;
  awakeableId: string;
  decision: unknown;
  kind?: "approval" | "result";
  expiry?: boolean;
}

/** The doorbell the inbox keeps: the run's awakeable, and the run. */
type StoredBell = { id: string; runId?: string };

/** The stored doorbell (a bare awakeable id was stored by earlier versions). */
function storedBell(value: StoredBell | string | null): StoredBell | undefined {
  if (!value) return undefined;
  return typeof value === "string" ? { id: value } : value;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
