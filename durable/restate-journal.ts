import { type ObjectContext, type Serde, serde, TerminalError } from "@restatedev/restate-sdk";
import { errorText } from "../core/error-text.js";
import { unstorableReason } from "../core/storable.js";
import type { ApprovalDecision, EffectJournal, InboxKind } from "../core/effect-journal.js";
import type { AgentMessage } from "../core/messages.js";
import type { ToolResult } from "../core/tool.js";
import type { RestatePump } from "./restate-pump.js";
import { PATH_SEPARATOR } from "../agent/nested-calls.js";
import type { createApprovalBook, PendingApprovalRecord } from "./session-state.js";

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
export interface Recorded<T> {
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
 * - time → the finishing time each step records (after `ctx.date.now()` at the run's start);
 * - a sub-agent → its own steps, under its call's path (`<call>/model:1`, `<call>/tool:<id>`), and
 *   its waiting calls in the same books under their path ids (`<call>/<child call>`), at any depth.
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
      .track(ctx.run(stepName(name), () => recordStep(name, run), { serde: recordedSerde }))
      .then((recorded) => {
        clock = Math.max(clock, recorded.at);
        return recorded.value;
      });

  /** Waits on an awakeable kept in `book` under the call's path id until someone decides it. */
  const waitFor = <T>(
    book: RestateJournalOptions["approvals"],
    record: Omit<PendingApprovalRecord, "awakeableId">,
    onRegistered: (awakeableId: string) => void,
    settle: (payload: unknown) => T,
  ): Promise<T> => {
    const { id, promise } = ctx.awakeable<unknown>();
    book.add({ ...record, awakeableId: id });
    onRegistered(id);
    return pump.track(promise).then(
      (payload) => {
        book.remove(record.toolCallId);
        return settle(payload);
      },
      (error: unknown) => {
        book.remove(record.toolCallId);
        throw error;
      },
    );
  };

  /**
   * The journal of the agent at `scope`: the run's own (no path), or a sub-agent's, whose steps
   * and waiting calls are named under the path of calls leading to it.
   */
  const scoped = (scope: Scope): EffectJournal => {
    const prefix = scope.path.length ? `${scope.path.join(PATH_SEPARATOR)}${PATH_SEPARATOR}` : "";
    // A waiting call's record: its path id and, for a sub-agent's, the path and the tools on it.
    const recordOf = (toolCallId: string, toolName: string, args: unknown) => ({
      toolCallId: `${prefix}${toolCallId}`,
      toolName,
      args,
      ...(scope.path.length > 0 && { path: [...scope.path, toolCallId], tools: scope.tools }),
    });
    return {
      idPrefix: scope.idPrefix,
      now: () => clock,
      modelCall: (turn, run) => step(`${prefix}model:${turn}`, run),
      toolCall: (toolCallId, run) => step(`${prefix}tool:${toolCallId}`, run),
      permission: (toolCallId, run) => step(`${prefix}permission:${toolCallId}`, run),
      compaction: (turn, run) => step(`${prefix}compaction:${turn}`, run),
      approval: (request) =>
        waitFor(
          options.approvals,
          recordOf(request.toolCallId, request.toolName, request.args),
          () => {},
          toDecision,
        ),
      clientResult(request) {
        const record = recordOf(request.toolCallId, request.toolName, request.args);
        return waitFor(
          options.clientCalls,
          record,
          (awakeableId) => {
            if (request.timeout)
              options.expireClientCall(
                record.toolCallId,
                awakeableId,
                request.timeout.ms,
                request.timeout.result,
              );
          },
          (payload) => (payload as { result: ToolResult }).result,
        );
      },
      // Only the run's own agent takes messages from the session's inbox: nothing reaches a sub-agent's.
      drain: (kind) =>
        scope.path.length ? Promise.resolve([]) : options.drainInbox(kind).then((messages) => messages ?? []),
      timer: (ms) => pump.track(ctx.sleep(ms, `${prefix}deadline`)),
      child: (callId, toolName) =>
        scoped({
          path: [...scope.path, callId],
          tools: [...scope.tools, toolName],
          idPrefix: `${scope.idPrefix}${callId}-`,
        }),
      ...(scope.path.length > 0 && {
        context: (run: () => Promise<AgentMessage[]>) => step(`${prefix}context`, run),
      }),
    };
  };

  // The invocation's id: the same on every replay of this run, and no other run's.
  return scoped({ path: [], tools: [], idPrefix: `${ctx.request().id as string}-` });
}

/**
 * One step's value and finishing time, or a terminal error Restate records: the step's own error
 * (a permission checker, a summarizer or `convertToLlm` that throws), or a value JSON cannot hold.
 * Either would otherwise fail the step's journal entry on every retry, for ever (a step that
 * throws is retried by Restate; one whose value cannot be serialised aborts the attempt). Recorded
 * as terminal, it rejects the step now and on every replay, and the agent answers as in process:
 * the call's error result, the model call's "Model stream failed: …". Only a crash runs a step again.
 *
 * @example
 * ```ts
 * ctx.run("permission:call_1", () => recordStep("permission:call_1", check));
 * ```
 */
export async function recordStep<T>(name: string, run: () => Promise<T>): Promise<Recorded<T>> {
  let value: T;
  try {
    value = await run();
  } catch (error) {
    throw error instanceof TerminalError ? error : new TerminalError(errorText(error));
  }
  const recorded = { value, at: Date.now() };
  let json: string;
  try {
    json = JSON.stringify(recorded);
  } catch {
    throw new TerminalError(
      `The result of step ${name} cannot be stored as JSON: ${unstorableReason(recorded)}`,
    );
  }
  // The step's serde writes this JSON rather than making it a second time.
  checkedJson.set(recorded, json);
  return recorded;
}

/** The JSON {@link recordStep} made of each value it returned, until the step's serde takes it. */
const checkedJson = new WeakMap<object, string>();
const encoder = new TextEncoder();

/**
 * The serde of every step: Restate's JSON serde (the same bytes, so journals read alike whichever
 * wrote them), writing the JSON {@link recordStep} made when it checked the value.
 */
const recordedSerde: Serde<Recorded<any>> = {
  contentType: "application/json",
  serialize(value) {
    const made = checkedJson.get(value);
    if (made === undefined) return serde.json.serialize(value);
    checkedJson.delete(value);
    return encoder.encode(made);
  },
  deserialize: (data) => serde.json.deserialize(data) as Recorded<any>,
};

/** Where an agent of the run is: the calls (and their tools) leading to it; its message ids' prefix. */
interface Scope {
  path: string[];
  tools: string[];
  idPrefix: string;
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
