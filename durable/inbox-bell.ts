import type { ObjectContext, RestatePromise } from "@restatedev/restate-sdk";
import type { InboxKind } from "../core/effect-journal.js";
import type { AgentMessage } from "../core/messages.js";
import type { RestatePump } from "./restate-pump.js";
import type { WakeTakeRequest } from "./wake-session.js";

/** What `SessionInbox.drain` answers: the messages taken, and how many still wait in each queue. */
export interface DrainAnswer {
  messages: AgentMessage[];
  waiting: Record<InboxKind, number>;
  /** What a woken run starts with (asked for by `wake`), taken before `messages`. */
  input?: AgentMessage[];
  /**
   * The inbox's clock as it answered (ms since the epoch): journaled with the answer, so the run's
   * start time costs no step of its own. Absent from answers of earlier versions.
   */
  at?: number;
}

/** What a run asks `SessionInbox.drain` for. */
export interface DrainRequest {
  kind: InboxKind;
  /** The run's doorbell (an awakeable id) and the run (its invocation id): the inbox keeps them. */
  bell?: { id: string; runId: string };
  /** Take nothing: only say how many wait (and keep `bell`). Sent by runs of earlier versions. */
  peek?: boolean;
  /**
   * A woken run's opening check: first take what it starts with (the steering its mode takes, else
   * the follow-ups), then the steering for its first turn, in the same round trip.
   */
  wake?: WakeTakeRequest;
  /**
   * The opening drain of the session's first run, which has written the session's run record: the
   * inbox knows from it that the session exists (an event for it need not ask).
   */
  first?: true;
}

/** What a steer or follow-up resolves the doorbell with: the awakeable the run resolves once it has the ring. */
export interface Ring {
  ack: string;
}

export interface InboxBellOptions {
  /** The run's invocation id (a steer that rings waits for it to end, at most). */
  runId: string;
  /** A durable call to `SessionInbox.drain` (a journal entry, and a round trip). */
  drain(request: DrainRequest): RestatePromise<DrainAnswer | AgentMessage[]>;
  /**
   * A one-way message to `SessionInbox.closeBell` (a journal entry, no round trip, and an
   * invocation of the inbox): sent only by a run that did not take place (see `close`).
   */
  closeBell(bell: string, ran: boolean): void;
}

/** The run's side of the inbox: its checks, and what it leaves behind. See {@link createInboxBell}. */
export interface InboxBell {
  /**
   * Hands the inbox a doorbell as the run starts, taking the steering that waits (by the queue's
   * mode): the run gives it to the agent with its prompt, as an agent in process takes steering
   * queued while idle into the run's first turn. The later checks ask the inbox only if the answer
   * counted more, or a message rang.
   */
  open(): Promise<AgentMessage[]>;
  /**
   * {@link open} for a woken run: the same round trip also takes what the run starts with (`input`,
   * empty when a run took it first), before the steering for its first turn (`early`).
   */
  openWake(take: WakeTakeRequest): Promise<{ input: AgentMessage[]; early: AgentMessage[] }>;
  /**
   * The inbox's clock in its answer to the opening drain ({@link DrainAnswer.at}), once that has
   * answered: the run's start time, the same on a replay (the answer is journaled).
   */
  readonly openedAt: number | undefined;
  /** The messages one check takes: asks the inbox only when a message of `kind` may be waiting. */
  drain(kind: InboxKind): Promise<AgentMessage[]>;
  /**
   * The run is ending: tells the inbox to forget the doorbell (one way, no round trip), and, with
   * `ran`, that the session has run (an event for it need not ask the session whether it exists).
   */
  close(ran?: boolean): void;
}

/**
 * The steering and follow-up checks of one run, paying the inbox's round trip only when a message
 * may be waiting.
 *
 * The run hands the inbox a doorbell (an awakeable) with its first drain as it starts, and a new one with each
 * drain after a ring. A `steer` or `followUp` that finds the doorbell queues its message, rings it
 * (resolves it with an acknowledgement awakeable), forgets it, and returns once the run has resolved
 * the acknowledgement (or the run has ended). A check asks the inbox when the doorbell rang since the
 * last drain, or when the last drain's answer said messages of its kind wait; otherwise it
 * takes nothing, with no journal entry. Every answer counts both queues.
 *
 * Why a message that returned is taken at the next check, never one later: the run acknowledges a
 * ring as soon as Restate delivers it, and Restate delivers an invocation's completions in journal
 * order, live and on replay. A check is decided in the reactions to the completion before it (the
 * last step of its turn). A message that returned was acknowledged, so its ring was delivered: either
 * before that completion (the check sees it) or after it, in which case the check was decided before
 * the message returned. A message that found no doorbell came before the first drain or another (whose
 * answer counts it), or after another message rang, whose acknowledgement it waited for (the inbox
 * takes one message at a time) and which made the next check ask. A message whose steer returned
 * because the run ended came after the run's last check. Decisions depend only on the journal's
 * order, so a replay decides the same.
 *
 * @example
 * ```ts
 * const bell = createInboxBell(ctx, pump, { runId, drain: (r) => inbox.drain(r), closeBell: (b) => send.closeBell({ bell: b }) });
 * const early = await bell.open(); // the steering queued before the run
 * const messages = await bell.drain("steering"); // [] without a round trip when nothing rang
 * ```
 */
export function createInboxBell(ctx: ObjectContext, pump: RestatePump, options: InboxBellOptions): InboxBell {
  /** Messages of each kind may be waiting (true until an answer tells otherwise). */
  const mayWait: Record<InboxKind, boolean> = { steering: true, followUp: true };
  /** The doorbell not rung yet, and whether the inbox was handed it. */
  let bell: { id: string; offered: boolean } | undefined;
  let opening: Promise<unknown> | undefined;
  let openedAt: number | undefined;

  const currentBell = () => {
    if (bell) return bell;
    const { id, promise } = ctx.awakeable<Ring>();
    const created = { id, offered: false };
    bell = created;
    void pump.track(promise).then(
      (ring) => {
        if (bell === created) bell = undefined;
        mayWait.steering = true;
        mayWait.followUp = true;
        if (ring?.ack) ctx.resolveAwakeable(ring.ack);
      },
      () => {},
    );
    return created;
  };

  /** A drain, handing over the doorbell when the inbox does not hold it yet. */
  const ask = async (
    kind: InboxKind,
    wake?: WakeTakeRequest,
  ): Promise<{ messages: AgentMessage[]; input: AgentMessage[] }> => {
    const offer = currentBell();
    const handOver = !offer.offered;
    offer.offered = true;
    // What the answer counts replaces what the flags say; a ring after this point sets them again.
    mayWait.steering = false;
    mayWait.followUp = false;
    const answer = await pump.track(
      options.drain({
        kind,
        ...(handOver && { bell: { id: offer.id, runId: options.runId } }),
        ...(wake && { wake }),
      }),
    );
    if (!Array.isArray(answer) && openedAt === undefined && typeof answer.at === "number")
      openedAt = answer.at;
    if (Array.isArray(answer)) {
      mayWait.steering = true;
      mayWait.followUp = true;
      return { messages: answer, input: [] };
    }
    if (answer.waiting.steering > 0) mayWait.steering = true;
    if (answer.waiting.followUp > 0) mayWait.followUp = true;
    return { messages: answer.messages, input: answer.input ?? [] };
  };

  return {
    get openedAt() {
      return openedAt;
    },
    open() {
      const opened = ask("steering").then((answer) => answer.messages);
      opening = opened;
      return opened;
    },
    openWake(take) {
      const opened = ask("steering", take).then(({ input, messages }) => ({ input, early: messages }));
      opening = opened;
      return opened;
    },
    async drain(kind) {
      if (opening) {
        await opening;
        opening = undefined;
      }
      return mayWait[kind] ? (await ask(kind)).messages : [];
    },
    close(ran = false) {
      if (bell?.offered) options.closeBell(bell.id, ran);
      bell = undefined;
    },
  };
}
