import * as restate from "@restatedev/restate-sdk";
import {
  type InvocationId,
  type ObjectContext,
  type ObjectSharedContext,
  TerminalError,
} from "@restatedev/restate-sdk";
import { checkEditedArgs } from "../actors/prepare-tool-call.actor.js";
import type { AgentMessage } from "../core/messages.js";
import { clientResultOf } from "../tools/client-result.js";
import { toolOnPath } from "../agent/tools-within.js";
import { errorResult } from "../tools/define-tool.js";
import type { InboxObject } from "./inbox-object.js";
import {
  badRequest,
  parseClientAnswer,
  parseDecision,
  parseEventsRequest,
  parseFrom,
  parseUpdatesRequest,
} from "./session-input.js";
import type { SessionOptions } from "./session-options.js";
import type { SessionRun } from "./session-run.js";
import {
  type ApprovalBook,
  readEvents,
  readStatus,
  readTranscript,
  readUpdates,
  requireRun,
  type SessionStatus,
  type SessionUpdates,
  type TranscriptSlice,
} from "./session-state.js";
import type { RunResult } from "./session-types.js";

/** What {@link createSessionObject} needs from the service that assembles it. */
export interface SessionObjectOptions {
  name: string;
  /** Restate's options for the object (retries, timeouts). */
  serviceOptions: restate.ObjectOptions;
  /** The inbox object of the same service, which takes every decision exclusively. */
  inbox: InboxObject;
  /** The session's agent options (its tools check edited arguments). */
  options: SessionOptions;
  /** The body of `prompt`: one run (durable/session-run.ts). */
  run: SessionRun;
}

/**
 * The `AgentSession` virtual object (key = session id): `prompt` (one exclusive invocation per run),
 * the shared reads (transcript, messages, updates, events, status), and the shared decisions on a
 * waiting call (approve, deny, resolveToolCall, rejectToolCall) and abort, which run beside the
 * run they act on.
 *
 * @example
 * ```ts
 * const session = createSessionObject({ name: "AgentSession", serviceOptions: {}, inbox, options, run });
 * restate.endpoint().bind(session).bind(inbox);
 * ```
 */
export function createSessionObject({ name, serviceOptions, inbox, options, run }: SessionObjectOptions) {
  return restate.object({
    name,
    options: serviceOptions,
    handlers: {
      /** Starts a run and answers when it ends. One invocation per run; a second waits for the first. */
      prompt: async (ctx: ObjectContext, input: unknown): Promise<RunResult> => run(ctx, input),
      /** Runs what a wake left in the inbox, once no run is active (durable/wake-session.ts). */
      wake: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: ObjectContext) => {
        return run.wake(ctx);
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
          await decideOnce(ctx, inbox, toolCallId, pending.awakeableId, { approved: true });
          return { toolCallId, decision: "approved" as const };
        }
        // Edited arguments are checked by the tool's schema here, before anything is decided.
        // A sub-agent's call is its tool's, found down the sub-agent tools on its path.
        const tool = toolOnPath(options.of(ctx.key).tools ?? [], pending.tools ?? [], pending.toolName);
        const checked = tool ? checkEditedArgs(tool, args) : { ok: false as const, error: "unknown tool" };
        if (!checked.ok) {
          throw new TerminalError(
            `The edited arguments of tool call "${toolCallId}" fail the schema of tool ${pending.toolName}: ` +
              `${checked.error}. The call still waits for approval.`,
            { errorCode: 400 },
          );
        }
        if (dryRun) return { toolCallId, decision: "checked" as const };
        await decideOnce(ctx, inbox, toolCallId, pending.awakeableId, { approved: true, args: checked.args });
        return { toolCallId, decision: "approved" as const };
      }),
      /** Refuses a call waiting for approval; the model sees the reason. */
      deny: restate.handlers.object.shared(async (ctx: ObjectSharedContext, input: unknown) => {
        const { toolCallId, reason } = parseDecision(input, "deny");
        const pending = await pendingCall(ctx, "approvals", toolCallId);
        await decideOnce(ctx, inbox, toolCallId, pending.awakeableId, {
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
        await decideOnce(ctx, inbox, toolCallId, pending.awakeableId, { result: checked }, "result");
        return { toolCallId, answered: "resolved" as const };
      }),
      /** Answers a call of a client-run tool with an error the model reads (`reason`). */
      rejectToolCall: restate.handlers.object.shared(async (ctx: ObjectSharedContext, input: unknown) => {
        const { toolCallId, reason } = parseClientAnswer(input, "rejectToolCall");
        const pending = await pendingCall(ctx, "clientCalls", toolCallId);
        await decideOnce(
          ctx,
          inbox,
          toolCallId,
          pending.awakeableId,
          { result: errorResult(reason!) },
          "result",
        );
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
}

/** The session object's definition. */
export type SessionObject = ReturnType<typeof createSessionObject>;

/**
 * Hands a decision to the inbox's exclusive `decide`: shared handlers run side by side, so the
 * pending entry alone (removed only when the run takes the decision) cannot tell the first of two
 * concurrent decisions from the second.
 */
async function decideOnce(
  ctx: ObjectSharedContext,
  inbox: InboxObject,
  toolCallId: string,
  awakeableId: string,
  decision: unknown,
  kind: "approval" | "result" = "approval",
): Promise<void> {
  await ctx.objectClient(inbox, ctx.key).decide({ toolCallId, awakeableId, decision, kind });
}

/** The pending entry of a call (waiting for approval, or for a client's result), or a 404. */
async function pendingCall(ctx: ObjectSharedContext, book: "approvals" | "clientCalls", toolCallId: string) {
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
