import * as restate from "@restatedev/restate-sdk";
import {
  type InvocationId,
  type ObjectContext,
  type ObjectSharedContext,
  RestatePromise,
  TerminalError,
} from "@restatedev/restate-sdk";
import type { InboxKind } from "../core/effect-journal.js";
import type { AgentMessage } from "../core/messages.js";
import type { QueueMode } from "../core/options.js";
import { screenInput, takeFromQueue } from "../rules/agent.logic.js";
import type { DrainAnswer, DrainRequest, Ring } from "./inbox-bell.js";
import { badRequest, parseBell, parseDrain, parseQueuedInput, parseRequeue } from "./session-input.js";
import type { SessionOptions } from "./session-options.js";
import type { WakeCause } from "../telemetry/wake-cause.js";
import { withWakeCause } from "./wake-causes.js";
import { takeWakeInput, wakeInboxHandlers } from "./wake-session.js";

/**
 * How long a steer that rang a run's doorbell waits for the run to acknowledge it (or end). A live
 * run does within milliseconds; this bounds the wait while the run's process is down.
 */
const RING_TIMEOUT_MS = 10_000;

/** What `SessionInbox.decide` takes: one decision on the call waiting on `awakeableId`. */
export interface DecideRequest {
  toolCallId: string;
  awakeableId: string;
  decision: unknown;
  kind?: "approval" | "result";
  expiry?: boolean;
}

/** The doorbell the inbox keeps: the run's awakeable, and the run. */
type StoredBell = { id: string; runId?: string };

/** What {@link createInboxObject} needs from the service that assembles it. */
export interface InboxObjectOptions {
  name: string;
  /** The session object's name: a wake this inbox takes asks it to run (durable/wake-session.ts). */
  session: string;
  /** Restate's options for the object (retries, timeouts). */
  serviceOptions: restate.ObjectOptions;
  /** The session's agent options (its input filters screen what is queued). */
  options: SessionOptions;
}

/**
 * The `SessionInbox` virtual object (key = session id): the steering and follow-up queues a run
 * drains, the run's doorbell (durable/inbox-bell.ts), and the one place a decision on a waiting
 * call is taken exclusively. It is a separate object from the session so that a steer is taken
 * while the session's exclusive `prompt` runs.
 *
 * @example
 * ```ts
 * const inbox = createInboxObject({ name: "SessionInbox", session: "AgentSession", serviceOptions: {}, options });
 * // in a handler of another object, a typed client:
 * await ctx.objectClient(inbox, ctx.key).pending();
 * ```
 */
export function createInboxObject({ name, session, serviceOptions, options }: InboxObjectOptions) {
  async function enqueue(
    ctx: ObjectContext,
    kind: InboxKind,
    input: unknown,
    cause?: WakeCause,
    stamped?: number,
  ): Promise<{ queued: number }> {
    // A wake's message comes stamped: reading the clock again would cost a journaled step.
    const now = stamped ?? (await ctx.date.now());
    const message = parseQueuedInput(input, kind === "steering" ? "steer" : "followUp", now);
    const screening = screenInput(options.of(ctx.key).inputFilters ?? [], [message]);
    if (!screening.ok) throw badRequest("Input rejected", screening.reason);
    const queue = (await ctx.get<AgentMessage[]>(kind)) ?? [];
    // A wake's cause waits beside its message, for the trace of the run that takes it.
    const next = [...queue, ...screening.messages.map((message) => withWakeCause(message, cause))];
    ctx.set(kind, next);
    await ringBell(ctx);
    return { queued: next.length };
  }

  return restate.object({
    name,
    options: serviceOptions,
    handlers: {
      // A schedule's slot (`deliver`) and an event from outside (`event`): durable/wake-session.ts.
      ...wakeInboxHandlers({ session, enqueue }),
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
          const { kind, mode, bell, peek, wake, first } = parseDrain(input);
          // The session's first run has written its record: the session exists.
          if (first) ctx.set("sessionKnown", true);
          const queues = {
            steering: (await ctx.get<AgentMessage[]>("steering")) ?? [],
            followUp: (await ctx.get<AgentMessage[]>("followUp")) ?? [],
          };
          const changed = new Set<InboxKind>();
          // A woken run's input first (what the wake handler's own call took before): one round trip.
          const woken = wake ? takeWakeInput(queues, wake) : undefined;
          if (woken?.from) changed.add(woken.from);
          let taken: AgentMessage[] = [];
          if (!peek && queues[kind].length) {
            const took = takeFromQueue(queues[kind], mode);
            taken = took.taken;
            queues[kind] = took.rest;
            changed.add(kind);
          }
          for (const changedKind of changed) {
            if (queues[changedKind].length) ctx.set(changedKind, queues[changedKind]);
            else ctx.clear(changedKind);
          }
          if (bell !== undefined) ctx.set("bell", bell satisfies StoredBell);
          return {
            messages: taken,
            waiting: { steering: queues.steering.length, followUp: queues.followUp.length },
            ...(woken && { input: woken.taken }),
            // Not a journaled step here: the caller's journal keeps the answer, and the time with it.
            ...(bell !== undefined && { at: Date.now() }),
          };
        },
      ),
      /**
       * Forgets a run's doorbell (unless a newer run handed over another): sent by a run that did
       * not take place (`ran: false`: the session has no run, as the first run's drain had said it
       * had), and by runs of earlier versions as they ended (`ran: true`). Runs that end now leave
       * their doorbell: the next steer's ring ends its wait at once (the run has ended), or the next
       * run's first drain replaces it.
       */
      closeBell: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: ObjectContext, input: { bell: string; ran?: boolean }): Promise<void> => {
          const { bell, ran } = parseBell(input);
          // A run ended: the session exists, which an event asks before it is queued (wake-session.ts).
          if (ran && !(await ctx.get<boolean>("sessionKnown"))) ctx.set("sessionKnown", true);
          if (ran === false) ctx.clear("sessionKnown");
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
}

/** The inbox object's definition: what `ctx.objectClient(inbox, key)` types its calls by. */
export type InboxObject = ReturnType<typeof createInboxObject>;

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

/** The stored doorbell (a bare awakeable id was stored by earlier versions). */
function storedBell(value: StoredBell | string | null): StoredBell | undefined {
  if (!value) return undefined;
  return typeof value === "string" ? { id: value } : value;
}
