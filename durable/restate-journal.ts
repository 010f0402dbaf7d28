import type { ObjectContext } from "@restatedev/restate-sdk";
import type { ApprovalDecision, EffectJournal, InboxKind } from "../core/effect-journal.js";
import type { AgentMessage } from "../core/messages.js";
import type { ToolResult } from "../core/tool.js";
import type { RestatePump } from "./restate-pump.js";
import type { createApprovalBook } from "./session-state.js";

export interface RestateJournalOptions {
  /** The run's start, from `ctx.date.now()`: the clock until the first step answers. */
  startedAt: number;
  /** The messages of one check, from the session's inbox (already tracked by the pump). */
  drainInbox(kind: InboxKind): Promise<AgentMessage[]>;
  approvals: ReturnType<typeof createApprovalBook>;
  /** The calls of client-run tools waiting for the client's result. */
  clientCalls: ReturnType<typeof createApprovalBook>;
  /**
   * Answers the client-run call waiting on `awakeableId` with `result` after `ms`, unless the
   * client's answer is decided first (a delayed call to `SessionInbox.decide`, which takes one
   * decision per awakeable).
   */
  expireClientCall(toolCallId: string, awakeableId: string, ms: number, result: ToolResult): void;
}

/** What a journaled step records: its value and when it finished (the run's clock moves on with it). */
interface Recorded<T> {
  value: T;
  at: number;
}

/**
 * The {@link EffectJournal} of one `AgentSession.prompt` invocation: every effect of the run is a
 * Restate step (`ctx.run`, an awakeable, a sleep, a call to the inbox), and every wait goes through
 * the invocation's single {@link RestatePump}.
 *
 * - model call → `ctx.run("model:<turn>")` recording the final assistant message;
 * - tool call → `ctx.run("tool:<toolCallId>")` recording the result (the tool got the id as its
 *   idempotency key); permission decision → `ctx.run("permission:<toolCallId>")`;
 * - approval → an awakeable whose id is kept in the session's state until the decision arrives;
 * - client-run call → the same, in "clientCalls"; its timeout is a delayed decision sent to the
 *   inbox, so of the client's answer and the timeout exactly one takes effect;
 * - steering / follow-up check → a call to `SessionInbox.drain` when a message may be waiting
 *   (durable/inbox-bell.ts);
 * - deadline → `ctx.sleep`; compaction → `ctx.run("compaction:<turn>")`;
 * - time → the finishing time each step records (after `ctx.date.now()` at the run's start).
 *
 * @example
 * ```ts
 * const journal = createRestateJournal(ctx, pump, { startedAt, drainInbox, approvals });
 * const agent = createJournaledAgent(options, journal);
 * ```
 */
export function createRestateJournal(
  ctx: ObjectContext,
  pump: RestatePump,
  options: RestateJournalOptions,
): EffectJournal {
  let clock = options.startedAt;
  const names = new Map<string, number>();

  /** A unique step name: the second model call of one turn (an overflow retry) is `model:3#2`. */
  const stepName = (name: string) => {
    const seen = (names.get(name) ?? 0) + 1;
    names.set(name, seen);
    return seen === 1 ? name : `${name}#${seen}`;
  };

  const step = <T>(name: string, run: () => Promise<T>): Promise<T> =>
    pump
      .track(
        ctx.run(stepName(name), async (): Promise<Recorded<T>> => ({ value: await run(), at: Date.now() })),
      )
      .then((recorded) => {
        clock = Math.max(clock, recorded.at);
        return recorded.value;
      });

  return {
    // The invocation's id: the same on every replay of this run, and no other run's.
    idPrefix: `${ctx.request().id as string}-`,
    now: () => clock,
    modelCall: (turn, run) => step(`model:${turn}`, run),
    toolCall: (toolCallId, run) => step(`tool:${toolCallId}`, run),
    permission: (toolCallId, run) => step(`permission:${toolCallId}`, run),
    compaction: (turn, run) => step(`compaction:${turn}`, run),
    approval(request) {
      const { id, promise } = ctx.awakeable<unknown>();
      options.approvals.add({ ...request, awakeableId: id });
      const settle = () => options.approvals.remove(request.toolCallId);
      return pump.track(promise).then(
        (payload) => {
          settle();
          return toDecision(payload);
        },
        (error: unknown) => {
          settle();
          throw error;
        },
      );
    },
    clientResult(request) {
      const { id, promise } = ctx.awakeable<unknown>();
      const { toolCallId, toolName, args } = request;
      options.clientCalls.add({ toolCallId, toolName, args, awakeableId: id });
      if (request.timeout)
        options.expireClientCall(toolCallId, id, request.timeout.ms, request.timeout.result);
      const settle = () => options.clientCalls.remove(toolCallId);
      return pump.track(promise).then(
        (payload) => {
          settle();
          return (payload as { result: ToolResult }).result;
        },
        (error: unknown) => {
          settle();
          throw error;
        },
      );
    },
    drain: (kind) => options.drainInbox(kind).then((messages) => messages ?? []),
    timer: (ms) => pump.track(ctx.sleep(ms, "deadline")),
  };
}

/** What an awakeable was resolved with, as a decision: only an explicit `approved: true` approves. */
export function toDecision(payload: unknown): ApprovalDecision {
  const value = (payload ?? {}) as { approved?: unknown; reason?: unknown; args?: unknown };
  // Edited arguments are checked by the tool's schema again where the call takes them
  // (journaledDecision): an awakeable can be resolved by anyone holding its id, with anything.
  if (value.approved === true)
    return { approved: true, ...(value.args !== undefined && { args: value.args }) };
  return { approved: false, ...(typeof value.reason === "string" && { reason: value.reason }) };
}
