import type { ObjectContext, RestatePromise } from "@restatedev/restate-sdk";
import type { InboxKind } from "../core/effect-journal.js";
import type { AgentMessage } from "../core/messages.js";
import type { RestatePump } from "./restate-pump.js";

/** What `SessionInbox.drain` answers: the messages taken, and how many still wait in that queue. */
export interface DrainAnswer {
  messages: AgentMessage[];
  waiting: number;
}

/** What a run asks `SessionInbox.drain` for. */
export interface DrainRequest {
  kind: InboxKind;
  /** The run's doorbell (an awakeable id): the inbox keeps it when this drain leaves the queue empty. */
  bell?: string;
  /** The doorbell to forget: the run will not skip a check until it hands a new one. */
  close?: string;
  /** Take nothing: only say how many wait (and keep `bell` when none does). */
  peek?: boolean;
}

/** What a steer resolves the doorbell with: the awakeable the run resolves once it has the ring. */
export interface Ring {
  ack: string;
}

export interface InboxBellOptions {
  /** A durable call to `SessionInbox.drain` (a journal entry, and a round trip). */
  drain(request: DrainRequest): RestatePromise<DrainAnswer | AgentMessage[]>;
  /** A durable call to `SessionInbox.closeBell`. */
  closeBell(bell: string): RestatePromise<unknown>;
}

/** The run's side of the inbox: its checks, and what it leaves behind. See {@link createInboxBell}. */
export interface InboxBell {
  /**
   * Hands the inbox a doorbell as the run starts, without waiting: the first check then asks the
   * inbox only if a steer came before it.
   */
  open(): void;
  /** The messages one check takes: asks the inbox only when a steering message may be waiting. */
  drain(kind: InboxKind): Promise<AgentMessage[]>;
  /** Takes the doorbell back from the inbox (the run is ending), answering the rings before it. */
  close(): Promise<void>;
}

/**
 * The steering checks of one run, paying the inbox's round trip only when a message may be waiting.
 *
 * The run hands the inbox a doorbell (an awakeable) with each steering drain that leaves the queue
 * empty (and as it starts, with a peek that takes nothing). A `steer` that finds the doorbell queues its message, rings it (resolves it with an
 * acknowledgement awakeable), forgets it, and returns only once the run has resolved the
 * acknowledgement. A check asks the inbox when the doorbell rang since the last drain, when that
 * drain left messages, or when no drain registered one yet (the run's first check); otherwise it
 * takes nothing without a journal entry. Follow-up checks always ask (they happen once per run's end,
 * and the last one takes the doorbell back).
 *
 * Why a steer that returned is taken at the next check, never one later: the run acknowledges a ring
 * as soon as Restate delivers it, and Restate delivers an invocation's completions in journal order,
 * live and on replay. A check is decided in the reactions to the completion before it (the last step
 * of the turn). A steer that returned was acknowledged, so its ring was delivered, so either before
 * that completion (the check sees it) or after it, in which case the check was decided before the
 * steer returned. A steer that found no doorbell came after a drain that left messages or before the
 * first drain (the check asks anyway), or after another steer rang it (whose acknowledgement it
 * waited for, the inbox being exclusive). The decision depends only on the journal's order, so a
 * replay decides the same.
 *
 * @example
 * ```ts
 * const bell = createInboxBell(ctx, pump, { drain: (r) => inbox.drain(r), closeBell: (b) => inbox.closeBell({ bell: b }) });
 * const messages = await bell.drain("steering"); // [] without a round trip when nothing rang
 * ```
 */
export function createInboxBell(ctx: ObjectContext, pump: RestatePump, options: InboxBellOptions): InboxBell {
  /** A steering message may be waiting (true until the first drain tells otherwise). */
  let mayWait = true;
  /** The doorbell not rung yet, and whether the inbox holds it. */
  let bell: { id: string; registered: boolean } | undefined;

  const newBell = () => {
    const { id, promise } = ctx.awakeable<Ring>();
    const current = { id, registered: false };
    bell = current;
    void pump.track(promise).then(
      (ring) => {
        if (bell === current) bell = undefined;
        mayWait = true;
        if (ring?.ack) ctx.resolveAwakeable(ring.ack);
      },
      () => {},
    );
    return current;
  };

  const ask = async (request: DrainRequest): Promise<DrainAnswer> => {
    const answer = await pump.track(options.drain(request));
    return Array.isArray(answer) ? { messages: answer, waiting: 0 } : answer;
  };

  /** Offers the doorbell with a drain (or a peek); the answer says whether the inbox kept it. */
  const offer = async (request: DrainRequest): Promise<AgentMessage[]> => {
    const offered = bell ?? newBell();
    mayWait = false;
    const answer = await ask({ ...request, bell: offered.id });
    if (answer.waiting > 0) mayWait = true;
    else if (bell === offered) offered.registered = true;
    return answer.messages;
  };
  let opening: Promise<unknown> | undefined;

  return {
    open() {
      opening = offer({ kind: "steering", peek: true });
    },
    async drain(kind) {
      if (kind === "followUp") {
        const closing = bell?.registered ? bell : undefined;
        const answer = await ask({ kind, ...(closing && { close: closing.id }) });
        if (closing) {
          closing.registered = false;
          mayWait = true;
        }
        return answer.messages;
      }
      if (opening) {
        await opening;
        opening = undefined;
      }
      return mayWait ? offer({ kind }) : [];
    },
    async close() {
      if (opening) await opening;
      const closing = bell?.registered ? bell : undefined;
      if (!closing) return;
      closing.registered = false;
      await pump.track(options.closeBell(closing.id));
    },
  };
}
