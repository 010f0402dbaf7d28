// Tools that answer later, inside durable sessions: the handles a session's later tools answered
// with live in its `SessionWakes` object (durable/session-wakes.ts), beside its schedules. A handle
// is a record in the object's state, a delayed call to `laterTimeout` (so the timeout survives the
// loss of every process), and its work, an invocation of its own (`laterWork`) that Restate runs
// again after a crash. Whichever of the work's result, a result from outside, the timeout or a
// cancel comes first takes the handle, exclusively: the session gets exactly one message for it.
import * as restate from "@restatedev/restate-sdk";
import {
  type InvocationId,
  type ObjectContext,
  type ObjectSharedContext,
  TerminalError,
} from "@restatedev/restate-sdk";
import type { ToolResult } from "../core/tool.js";
import { toolOnPath } from "../agent/tools-within.js";
import type { LaterResultRecord } from "../rules/later-record.js";
import { cancelledText, resultContent, timedOutText } from "../rules/later-texts.js";
import { laterToolResult, wakeToolOf } from "../rules/wake-tools.js";
import { wakeMessageOf } from "../rules/wake-message.js";
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from "../tools/result-budget.js";
import type { SessionOptions } from "./session-options.js";
import { parseLaterResult, type WakeDeliveryInput } from "./wake-session.js";

/** A pending handle of a durable session, as `laterHandles` answers it. */
export interface DurableLaterHandle extends LaterResultRecord {
  /** The invocation that runs the work (cancelled with the handle). */
  workId?: string;
  /** The delayed call that times the handle out. */
  timeoutId?: string;
  /** For a sub-agent's call: the names of the sub-agent tools leading to its tool, outermost first. */
  via?: string[];
}

/** How a handle that is no longer pending ended: what a late answer for it is told. */
export type LaterFate = "duplicate" | "cancelled" | "timedOut";

/** What `SessionWakes.laterResult` takes: a result from outside for a handle. */
export interface DurableLaterOutcomeInput {
  handle: string;
  text: string;
  /** The work failed: the agent reads `… failed:` and the text. */
  isError?: boolean;
}

/** Handles settled are remembered, so a late or repeated answer says why it is a no-op. */
const FATES_KEPT = 1_000;

type Pending = Record<string, DurableLaterHandle>;
type Fates = [handle: string, fate: LaterFate][];

/** What {@link laterHandlers} needs of the object that registers them. */
export interface LaterHandlersOptions {
  /** The `SessionWakes` object's own name (its delayed calls go to itself). */
  name: string;
  /** The session's inbox: a result joins it as a follow-up that wakes the session. */
  inbox: string;
  /** The sessions' agent options: the work is the session's tool's. */
  options: SessionOptions;
}

/**
 * The `SessionWakes` handlers of tools that answer later: `laterBegin` (a run's call was answered
 * with a handle), `laterWork`, `laterSettle` and `laterTimeout` (private), and for the app
 * `laterResult` (a result from outside), `laterCancel` and `laterHandles`.
 *
 * @example
 * ```ts
 * restate.object({ name: "SessionWakes", handlers: { ...laterHandlers({ name: "SessionWakes", inbox: "SessionInbox", options }) } });
 * ```
 */
export function laterHandlers(options: LaterHandlersOptions) {
  const send = (
    ctx: ObjectContext | ObjectSharedContext,
    method: string,
    parameter: unknown,
    delay?: number,
  ) =>
    ctx.genericSend({
      service: options.name,
      method,
      key: ctx.key,
      parameter,
      inputSerde: restate.serde.json,
      ...(delay !== undefined && { delay }),
    });
  const inboxCall = (ctx: ObjectContext, method: string, parameter: unknown) =>
    ctx.genericCall<unknown, unknown>({
      service: options.inbox,
      method,
      key: ctx.key,
      parameter,
      inputSerde: restate.serde.json,
      outputSerde: restate.serde.json,
    });
  const pendingOf = async (ctx: ObjectContext | ObjectSharedContext) =>
    (await ctx.get<Pending>("later")) ?? {};

  /** Takes `handle` out of the pending ones (once: whoever takes it settles it), and stops its work. */
  async function take(ctx: ObjectContext, handle: string, fate: LaterFate, { timingOut = false } = {}) {
    const pending = await pendingOf(ctx);
    const record = pending[handle];
    if (!record) return undefined;
    delete pending[handle];
    ctx.set("later", pending);
    const fates = ((await ctx.get<Fates>("laterFates")) ?? []).filter(([id]) => id !== handle);
    ctx.set("laterFates", [...fates, [handle, fate]].slice(-FATES_KEPT));
    // The work has nothing left to do, and the timeout nothing to time out (a no-op if they ended).
    if (record.workId && fate !== "duplicate") ctx.cancel(record.workId as InvocationId);
    // (Not from the timeout itself: an invocation that cancels itself stops before it delivers.)
    if (record.timeoutId && !timingOut) ctx.cancel(record.timeoutId as InvocationId);
    return record;
  }
  const fateOf = async (ctx: ObjectContext, handle: string) =>
    ((await ctx.get<Fates>("laterFates")) ?? []).find(([id]) => id === handle)?.[1];

  /** Wakes the session with the handle's one message (a follow-up; its id is the handle). */
  async function deliver(ctx: ObjectContext, record: DurableLaterHandle, text: ToolResult | string) {
    const content =
      typeof text === "string" ? text : resultContent(record, text, DEFAULT_TOOL_RESULT_MAX_CHARS);
    const message = wakeMessageOf(
      { id: record.id, text: content, source: "laterResult" },
      await ctx.date.now(),
    );
    try {
      // The run it wakes links to the call that started the work.
      const cause = { source: "laterResult" as const, id: record.id, traceparent: record.traceparent };
      await inboxCall(ctx, "deliver", { kind: "followUp", message, cause } satisfies WakeDeliveryInput);
    } catch (error) {
      // The session refused it (an input filter): the handle is settled all the same.
      if (!(error instanceof TerminalError)) throw error;
      ctx.console.warn(`late result ${record.id} of session ${ctx.key}: refused: ${error.message}`);
    }
  }

  /** The work's result, or one from outside: the first answer for a pending handle wakes the session. */
  async function settle(
    ctx: ObjectContext,
    input: { handle: string; result: ToolResult; fromWork?: boolean },
  ): Promise<"delivered" | LaterFate | "unknown"> {
    const record = await take(ctx, input.handle, "duplicate");
    if (!record) return (await fateOf(ctx, input.handle)) ?? "unknown";
    // Answered from outside: the work still running has nothing left to do.
    if (!input.fromWork && record.workId) ctx.cancel(record.workId as InvocationId);
    await deliver(ctx, record, input.result);
    return "delivered";
  }

  return {
    /** A run's call was answered with `record.id`: keep it, arm its timeout, start its work. */
    laterBegin: restate.handlers.object.exclusive(
      { ingressPrivate: true },
      async (ctx: ObjectContext, record: DurableLaterHandle): Promise<void> => {
        const pending = await pendingOf(ctx);
        if (pending[record.id] || (await fateOf(ctx, record.id))) return;
        const now = await ctx.date.now();
        if (record.deadline !== undefined) {
          const timeout = send(
            ctx,
            "laterTimeout",
            { handle: record.id },
            Math.max(0, record.deadline - now),
          );
          record.timeoutId = await timeout.invocationId;
        }
        record.workId = await send(ctx, "laterWork", record).invocationId;
        pending[record.id] = record;
        ctx.set("later", pending);
      },
    ),
    /**
     * Runs the work of a handle, as long as it takes (a shared handler: the object stays free).
     * A crash runs it again, with the same handle as its idempotency key; a cancel stops it
     * (its signal fires as the attempt ends).
     */
    laterWork: restate.handlers.object.shared(
      { ingressPrivate: true },
      async (ctx: ObjectSharedContext, record: DurableLaterHandle): Promise<void> => {
        // A sub-agent's tool is found along the sub-agent tools its call came through.
        const tool = toolOnPath(options.options.of(ctx.key).tools ?? [], record.via ?? [], record.toolName);
        const spec = tool && wakeToolOf(tool);
        const signal = ctx.request().attemptCompletedSignal;
        const outcome = await ctx.run("work", async (): Promise<{ result?: ToolResult }> => {
          if (spec?.kind !== "later") {
            return { result: failure(`the session has no tool ${record.toolName} that answers later`) };
          }
          try {
            const value = await spec.work(record.args, {
              handle: record.id,
              signal,
              idempotencyKey: record.id,
            });
            // Nothing: the job went elsewhere, and its result comes through `laterResult`.
            return value === undefined ? {} : { result: laterToolResult(value) };
          } catch (error) {
            if (signal.aborted) throw error;
            return { result: failure(error instanceof Error ? error.message : String(error)) };
          }
        });
        if (outcome.result)
          send(ctx, "laterSettle", { handle: record.id, result: outcome.result, fromWork: true });
      },
    ),
    laterSettle: restate.handlers.object.exclusive({ ingressPrivate: true }, settle),
    /** The handle's deadline: the session is told the work timed out, and the work is stopped. */
    laterTimeout: restate.handlers.object.exclusive(
      { ingressPrivate: true },
      async (ctx: ObjectContext, input: { handle: string }): Promise<void> => {
        const record = await take(ctx, input.handle, "timedOut", { timingOut: true });
        if (record) await deliver(ctx, record, timedOutText(record));
      },
    ),
    /**
     * A result from outside for a handle (the job system's webhook): `"delivered"` wakes the
     * session; a handle answered, cancelled or timed out already is a no-op that says so. A handle
     * this session never made (a tool that hands out handles of its own) is delivered once per
     * handle, as `SessionInbox.laterResult` does.
     */
    laterResult: restate.handlers.object.exclusive(
      async (ctx: ObjectContext, input: DurableLaterOutcomeInput) => {
        const { handle, text } = parseLaterResult(input);
        const isError = (input as { isError?: unknown }).isError === true;
        const result: ToolResult = { content: [{ type: "text", text }], ...(isError && { isError }) };
        const outcome = await settle(ctx, { handle, result });
        if (outcome !== "unknown") return outcome;
        return (await inboxCall(ctx, "laterResult", { handle, text })) as "delivered" | "duplicate";
      },
    ),
    /**
     * Cancels a pending handle: its work is stopped, a result that comes after is a no-op
     * (`"cancelled"`), and a notice waits in the session's steering queue for its next turn (no
     * run starts for it). `false` when the handle was not pending.
     */
    laterCancel: restate.handlers.object.exclusive(
      async (ctx: ObjectContext, input: { handle?: unknown; reason?: unknown }): Promise<boolean> => {
        const handle = typeof input === "string" ? input : input?.handle;
        if (typeof handle !== "string" || handle === "") {
          throw new TerminalError('Invalid request: expected the handle ({ handle: "later_…" })', {
            errorCode: 400,
          });
        }
        const reason =
          typeof input === "object" && typeof input?.reason === "string" ? input.reason : undefined;
        const record = await take(ctx, handle, "cancelled");
        if (!record) return false;
        const message = wakeMessageOf(
          { id: handle, text: cancelledText(record, reason), source: "laterResult" },
          await ctx.date.now(),
        );
        try {
          await inboxCall(ctx, "steer", message);
        } catch (error) {
          if (!(error instanceof TerminalError)) throw error;
          ctx.console.warn(`cancel notice ${handle} of session ${ctx.key}: refused: ${error.message}`);
        }
        return true;
      },
    ),
    /** The session's pending handles (tool, arguments, start, deadline). */
    laterHandles: restate.handlers.object.shared(
      async (ctx: ObjectSharedContext): Promise<LaterResultRecord[]> =>
        Object.values(await pendingOf(ctx)).map(
          ({ workId: _w, timeoutId: _t, via: _v, ...record }) => record,
        ),
    ),
  };
}

function failure(text: string): ToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
