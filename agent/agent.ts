import type { Observable } from "rxjs";
import type { Actor, SnapshotFrom } from "xstate";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage, Usage } from "../core/messages.js";
import type { PromptInput, RunOptions } from "../core/options.js";
import type { InferOutput, OutputOption } from "../core/output.js";
import type { RunOutcome } from "../core/run-outcome.js";
import type { ToolResult } from "../core/tool.js";
import type { agentMachine } from "../machines/agent.machine.js";
import type { SequencedEvent } from "./event-log.js";

export type AgentActor = Actor<typeof agentMachine>;
export type AgentSnapshot = SnapshotFrom<typeof agentMachine>;

/**
 * A tool call waiting for `approve` / `deny` (or, from `pendingToolCalls`, a client's result). A
 * call waiting in a sub-agent, at any depth, is listed too: its `path` holds the call ids from this
 * agent's down to it, `agents` the sub-agents' ids, and its `toolCallId` is the path joined by `/`.
 */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  args: unknown;
  path?: string[];
  agents?: string[];
}

/**
 * A running agent: an XState actor plus the observables and methods apps use. `TOutput` is the type
 * of `outcome.output`, from `createAgent({ output })`'s schema.
 */
export interface Agent<TOutput = unknown> {
  readonly id: string;
  /** Every event of every run (hot: subscribe before you prompt). */
  readonly events$: Observable<AgentEvent>;
  /** The current machine snapshot on subscribe, then every new one. */
  readonly snapshot$: Observable<AgentSnapshot>;
  /**
   * The XState actor itself (inspect it, `waitFor` it, send it events). Reading it wakes a
   * hibernated agent; a hibernating agent gets a new actor each time it wakes.
   */
  readonly actor: AgentActor;
  /** The transcript so far (the live array: copy it to keep a version). A hibernated agent reads it from its snapshot. */
  readonly messages: readonly AgentMessage[];
  /** The active state, e.g. `"idle"` or `"running.executing"`. */
  readonly state: string;
  /**
   * Starts a run; resolves with its outcome at `agent_end`, whatever it is (`reason`, the run's new
   * `messages`, `usage`, `errorMessage`): a failed run resolves with `reason: "error"`, it does not
   * reject. Rejects only when the run cannot start (the agent is running or stopped, or `options`
   * are refused). `options.tools` adds tools for this run only (client-run tools a frontend brings);
   * `options.output` sets this run's output schema (else the agent's): the outcome's `output` is the
   * validated object, typed from the schema.
   */
  prompt<O extends OutputOption | undefined = undefined>(
    input: PromptInput,
    options?: RunOptions<O>,
  ): Promise<RunOutcome<undefined extends O ? TOutput : InferOutput<O>>>;
  /**
   * Runs again from the current transcript (its last message must not be the assistant's, unless a
   * message is queued); resolves with the run's outcome, as `prompt` does.
   */
  continue<O extends OutputOption | undefined = undefined>(
    options?: RunOptions<O>,
  ): Promise<RunOutcome<undefined extends O ? TOutput : InferOutput<O>>>;
  /** Resolves when the agent is idle. */
  waitForIdle(): Promise<void>;
  /**
   * Queues a message the agent takes after the current turn (or tool group); a sequential run
   * skips its remaining calls. On an idle agent it waits for the next run (`prompt` or
   * `continue`), which takes it in its first turn, right after the prompt; it starts no run.
   */
  steer(input: string | AgentMessage): void;
  /**
   * Queues a message the agent takes when it would otherwise stop. On an idle agent it waits for
   * the next run, which takes it when it would otherwise stop; it starts no run (`continue()`
   * starts one with it).
   */
  followUp(input: string | AgentMessage): void;
  /** What `steer` and `followUp` queued that no turn has taken yet (copies). */
  readonly queued: { steering: AgentMessage[]; followUp: AgentMessage[] };
  /**
   * Stops the current run (the stream and every running tool are aborted and every open call is
   * answered) and drops every queued steering and follow-up message, but for those a wake brought
   * (a schedule's slot, an event, a late result: docs/wake.md), which wait for the next run. On an
   * idle agent it only drops what is queued.
   */
  abort(): void;
  /**
   * Compacts the transcript now, between runs (a `/compact` command): old turns are summarised
   * (level 2 of docs/compaction.md, with `context.summarizer` when there is one, `focus` telling it
   * what to keep above all), even when the context still fits. Publishes the same `compaction`
   * event as the loop's compaction; the summary gets its own id and lists the ids it replaced.
   * Resolves with the sizes, or `undefined` when nothing could be compacted. Rejects while a run
   * is going on, for an agent without `context`, and for durable agents.
   *
   * @example
   * ```ts
   * const done = await agent.compact({ focus: "the failing test in src/math.test.ts" });
   * if (done) console.log(`${done.tokensBefore} → ${done.tokensAfter} tokens`);
   * ```
   */
  compact(options?: CompactNowOptions): Promise<CompactNowResult | undefined>;
  /**
   * Stops the actor for good (aborting anything running) and completes `events$`. A run it cuts
   * short publishes no `agent_end`: its `prompt()`/`continue()` rejects with "Agent is stopped: the
   * run was stopped before it ended", and `waitForIdle()` resolves.
   */
  stop(): void;
  /**
   * A JSON-safe snapshot, stamped with the machine version that wrote it (`snapshotVersion`);
   * `createAgent({ ...options, snapshot })` resumes it, mid-run too, in this release or a later one.
   */
  getPersistedSnapshot(): unknown;
  /** Calls waiting for approval. */
  pendingApprovals(): PendingApproval[];
  /** Calls of client-run tools (`defineClientTool`) waiting for their result. */
  pendingToolCalls(): PendingApproval[];
  /**
   * Answers a call of a client-run tool with its result (text, or a `ToolResult`): the call ends
   * and the run goes on. Throws for an unknown, already-answered or not client-run call; only the
   * first answer takes effect.
   */
  resolveToolCall(toolCallId: string, result: string | ToolResult): void;
  /** Answers a call of a client-run tool with an error the model reads (the client could not run it). */
  rejectToolCall(toolCallId: string, reason: string): void;
  /**
   * Releases the actor tree and keeps only the persisted snapshot (the agent must be idle; throws
   * while it runs, and for sub-agents and durable agents). The next call that needs the actor
   * wakes it transparently: same id, same transcript and queues, and `events$` subscribers keep
   * receiving. `createAgent({ hibernate: "whenIdle" })` does this whenever the agent is idle.
   */
  hibernate(): void;
  /** The agent is hibernating: it holds no actor, only its persisted snapshot. */
  readonly hibernated: boolean;
  /**
   * The id of the run in progress, or of the last one (also while the agent rests or hibernates);
   * `undefined` before the first run. With `eventsSince` it resumes a consumer that lost its
   * connection.
   */
  readonly runId: string | undefined;
  /**
   * The events of run `runId` from sequence number `seq` (0 = its `agent_start`), then its live ones,
   * completing after its `agent_end`. Each comes with its `seq`, so a consumer that reconnects asks
   * for `lastSeq + 1`. Throws {@link EventsUnavailableError} (carrying the transcript to
   * resynchronise from) when the run is not the agent's current or last one, or its events from
   * `seq` left the bounded buffer (`createAgent({ eventReplay })`), or the agent went idle (rested,
   * hibernated) after a run whose events nobody had asked for (a run followed with `eventsSince`
   * keeps them until the next); a `RangeError` for a `seq` that is not a whole number or not yet
   * reached.
   */
  eventsSince(runId: string, seq?: number): Observable<SequencedEvent>;
  /**
   * Lets one pending call run; with `args`, with the arguments a human corrected (checked by the
   * tool's schema: arguments it refuses throw, and the call keeps waiting). Throws for an unknown or
   * already-decided id: only the decision that takes effect succeeds.
   */
  approve(toolCallId: string, options?: { args?: unknown }): void;
  /** Refuses one pending call; the model sees the reason. Throws for an unknown or already-decided id. */
  deny(toolCallId: string, reason?: string): void;
}

/**
 * Options of `agent.compact()`.
 *
 * @example
 * ```ts
 * const options: CompactNowOptions = { focus: "the API design decisions" };
 * ```
 */
export interface CompactNowOptions {
  /** What the summary should keep above all; handed to the summarizer as `SummaryRequest.focus`. */
  focus?: string;
  /** Aborts the summary request (the transcript is then left as it was). */
  signal?: AbortSignal;
}

/**
 * What `agent.compact()` did: the level used and the estimated tokens before and after.
 *
 * @example
 * ```ts
 * const result: CompactNowResult = { level: 2, tokensBefore: 9_000, tokensAfter: 2_500 };
 * ```
 */
export interface CompactNowResult {
  level: 1 | 2 | 3;
  tokensBefore: number;
  tokensAfter: number;
  /** What the summary call used, when the summariser reported it (also on the `compaction` event). */
  summaryUsage?: Usage;
}
