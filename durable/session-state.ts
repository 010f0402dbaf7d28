import {
  type ObjectContext,
  type ObjectSharedContext,
  RestatePromise,
  TerminalError,
} from "@restatedev/restate-sdk";
import type { AgentEndReason } from "../core/events.js";
import type { AgentMessage, Usage } from "../core/messages.js";

// The K/V state of one AgentSession (key = session id):
//   "run"        RunRecord        the active run, or the last one (state idle)
//   "lastRun"    LastRun          how the last finished run ended
//   "approvals"  ApprovalBook     calls waiting for a decision, with the awakeable that takes it
//   "clientCalls" ApprovalBook    calls of client-run tools waiting for the client's result, likewise
//   "count"      number           messages in the transcript
//   "generation" number           bumped when a compaction rewrote earlier messages
//   "m/<i>"      AgentMessage     message i of the transcript
// One key per message keeps what a turn writes to the journal proportional to what it added.

/** The active run (`state: "running"`), or the last one. */
export interface RunRecord {
  state: "idle" | "running";
  /** The invocation id of the run's `prompt`. */
  runId: string;
  turn: number;
  startedAt: number;
  /**
   * Where the run's own messages start in the transcript (its message seq 0), and the transcript's
   * generation then: the seq of a message is its index minus `firstIndex` while the generation is
   * the same. Absent in records of earlier versions.
   */
  firstIndex?: number;
  generation?: number;
}

/** How the last finished run ended. */
export interface LastRun {
  runId: string;
  reason: AgentEndReason;
  errorMessage?: string;
  /** The run's typed result, with an output schema (journaled with the final message). */
  output?: unknown;
  usage: Usage;
  startedAt: number;
  endedAt: number;
}

/** A call waiting for approval (or, in "clientCalls", for a client's result). */
export interface PendingApprovalRecord {
  toolCallId: string;
  toolName: string;
  args: unknown;
  /** The awakeable the run waits on (kept out of `status`: whoever holds it can decide). */
  awakeableId: string;
}

export type ApprovalBook = Record<string, PendingApprovalRecord>;

/** What `AgentSession.status` answers. */
export interface SessionStatus {
  sessionId: string;
  state: "idle" | "running";
  /** The invocation id of the active run, or of the last one. */
  runId: string;
  /** Turns the active run has started (the last run's, when idle). */
  turn: number;
  messageCount: number;
  /** Bumped when a compaction rewrote earlier messages: a follower reads the transcript again. */
  generation: number;
  pendingApprovals: { toolCallId: string; toolName: string; args: unknown }[];
  /** Calls of client-run tools waiting for the client's result (`resolveToolCall` / `rejectToolCall`). */
  pendingToolCalls: { toolCallId: string; toolName: string; args: unknown }[];
  lastRun?: LastRun;
}

/** A slice of the transcript, as `AgentSession.messages` answers it. */
export interface TranscriptSlice {
  generation: number;
  count: number;
  /** Messages `from` … `count - 1`. */
  from: number;
  messages: AgentMessage[];
}

type AnyObjectContext = ObjectContext | ObjectSharedContext;

const messageKey = (index: number) => `m/${index}`;

/** A 404 for a session that never ran. */
export function unknownSession(sessionId: string): TerminalError {
  return new TerminalError(`Unknown session "${sessionId}": no run was ever started for it`, {
    errorCode: 404,
  });
}

/** The run record, or a 404 for a session that never ran. */
export async function requireRun(ctx: AnyObjectContext): Promise<RunRecord> {
  const run = await ctx.get<RunRecord>("run");
  if (!run) throw unknownSession(ctx.key);
  return run;
}

/** The session's status as one object (404 for a session that never ran). */
export async function readStatus(ctx: AnyObjectContext): Promise<SessionStatus> {
  const run = await requireRun(ctx);
  const [count, generation, approvals, clientCalls, lastRun] = (await RestatePromise.all([
    ctx.get<number>("count") as RestatePromise<number | null>,
    ctx.get<number>("generation") as RestatePromise<number | null>,
    ctx.get<ApprovalBook>("approvals") as RestatePromise<ApprovalBook | null>,
    ctx.get<ApprovalBook>("clientCalls") as RestatePromise<ApprovalBook | null>,
    ctx.get<LastRun>("lastRun") as RestatePromise<LastRun | null>,
  ])) as [number | null, number | null, ApprovalBook | null, ApprovalBook | null, LastRun | null];
  return {
    sessionId: ctx.key,
    state: run.state,
    runId: run.runId,
    turn: run.turn,
    messageCount: count ?? 0,
    generation: generation ?? 0,
    pendingApprovals: publicEntries(approvals),
    pendingToolCalls: publicEntries(clientCalls),
    ...(lastRun && { lastRun }),
  };
}

/** A book's calls without their awakeable ids (capabilities: whoever holds one can decide). */
function publicEntries(book: ApprovalBook | null) {
  return Object.values(book ?? {}).map(({ toolCallId, toolName, args }) => ({ toolCallId, toolName, args }));
}

/** What `AgentSession.updates` answers: the status and the new messages, in one read. */
export interface SessionUpdates {
  status: SessionStatus;
  /**
   * Where the messages of run `status.runId` start in the transcript (its message seq 0), while no
   * compaction has rewritten the transcript since the run started; absent otherwise.
   */
  runStart?: number;
  /** Messages `from` … `status.messageCount - 1`. */
  from: number;
  messages: AgentMessage[];
}

/** A 410: what a follower asked to resume from is not kept; it resynchronises from the transcript. */
export function resynchronise(detail: string): TerminalError {
  return new TerminalError(`${detail}: resynchronise from the transcript, then follow from there`, {
    errorCode: 410,
  });
}

/**
 * The session's status and its messages from `from` on, or, with `runId` and `since`, the messages
 * of that run from its message `since` on (a 410 when that run is not the current or last one, or
 * a compaction rewrote the transcript since it started; a 400 for a seq the run has not reached).
 */
export async function readUpdates(
  ctx: AnyObjectContext,
  request: { from: number; runId?: string; since?: number },
): Promise<SessionUpdates> {
  const status = await readStatus(ctx);
  const run = (await ctx.get<RunRecord>("run"))!;
  const runStart =
    run.firstIndex !== undefined && run.generation === status.generation ? run.firstIndex : undefined;
  let from = request.from;
  if (request.runId !== undefined) {
    const since = request.since ?? 0;
    if (run.runId !== request.runId) {
      throw resynchronise(
        `Run "${request.runId}" is not the current or last run of session "${ctx.key}" (that is "${run.runId}")`,
      );
    }
    if (runStart === undefined) {
      throw resynchronise(
        `The messages of run "${request.runId}" from seq ${since} are no longer where they were ` +
          "(a compaction rewrote the transcript since the run started)",
      );
    }
    const stored = status.messageCount - runStart;
    if (since > stored) {
      throw new TerminalError(
        `Run "${request.runId}" has stored ${stored} messages so far (seq 0 to ${stored - 1}); seq ${since} is not reached yet`,
        { errorCode: 400 },
      );
    }
    from = runStart + since;
  }
  const slice = await readTranscript(ctx, from);
  return {
    status,
    ...(runStart !== undefined && { runStart }),
    from: slice.from,
    messages: slice.messages,
  };
}

/** Messages `from` … end of the stored transcript. */
export async function readTranscript(ctx: AnyObjectContext, from = 0): Promise<TranscriptSlice> {
  const [count, generation] = (await RestatePromise.all([
    ctx.get<number>("count") as RestatePromise<number | null>,
    ctx.get<number>("generation") as RestatePromise<number | null>,
  ])) as [number | null, number | null];
  const total = count ?? 0;
  const start = Math.min(from, total);
  const reads: RestatePromise<AgentMessage | null>[] = [];
  for (let i = start; i < total; i++)
    reads.push(ctx.get<AgentMessage>(messageKey(i)) as RestatePromise<AgentMessage | null>);
  const messages = (await RestatePromise.all(reads)) as (AgentMessage | null)[];
  return {
    generation: generation ?? 0,
    count: total,
    from: start,
    messages: messages.filter((m) => m !== null),
  };
}

/**
 * Writes a run's transcript back to the session's state, message by message: messages already
 * stored (the same objects) are not written again; when a compaction replaced earlier messages the
 * rest is rewritten and `generation` goes up.
 */
export function createTranscriptWriter(
  ctx: ObjectContext,
  stored: readonly AgentMessage[],
  generation: number,
) {
  let written: readonly AgentMessage[] = stored;
  let currentGeneration = generation;
  return {
    /** Stores `messages` (the agent's current transcript). */
    write(messages: readonly AgentMessage[]): void {
      let same = 0;
      const limit = Math.min(written.length, messages.length);
      while (same < limit && written[same] === messages[same]) same++;
      if (same === written.length && same === messages.length) return;
      if (same < written.length) {
        currentGeneration++;
        ctx.set("generation", currentGeneration);
      }
      for (let i = same; i < messages.length; i++) ctx.set(messageKey(i), messages[i]);
      for (let i = messages.length; i < written.length; i++) ctx.clear(messageKey(i));
      ctx.set("count", messages.length);
      written = [...messages];
    },
  };
}

/**
 * The calls waiting for approval (state key "approvals"), or for a client's result ("clientCalls"),
 * kept in state so the shared handlers that decide them find them.
 */
export function createApprovalBook(ctx: ObjectContext, key: "approvals" | "clientCalls" = "approvals") {
  let book: ApprovalBook = {};
  return {
    add(record: PendingApprovalRecord): void {
      book = { ...book, [record.toolCallId]: record };
      ctx.set(key, book);
    },
    remove(toolCallId: string): void {
      if (!(toolCallId in book)) return;
      const { [toolCallId]: _removed, ...rest } = book;
      book = rest;
      ctx.set(key, book);
    },
    clear(): void {
      book = {};
      ctx.clear(key);
    },
  };
}
