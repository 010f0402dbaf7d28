// What a protocol encoder plugs into the session host with. The host owns the threads, the agent
// runs, quiescence, reconnects and the side routes; an encoder only turns one HTTP response's agent
// events into the bytes of its wire format (the AI SDK UI message stream in ai-sdk-stream.ts; AG-UI
// next to it). One encoder object is made per response, so it may keep per-response state (which
// text part is open, which step, ...).
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import type { PendingApproval } from "../agent/agent.js";
import type { FinishedCall } from "./protocol.js";
import { errorText } from "../core/error-text.js";
import { encodableCopy } from "./internal/encodable-copy.js";

/**
 * What the host tells an encoder about the response it writes, before the first event.
 *
 * - `kind: "run"`: a request that starts a new agent run (a new user message).
 * - `kind: "continuation"`: a request that answered approvals / client-run calls of a run that had
 *   gone quiescent; the events that follow belong to that same run.
 * - `kind: "replay"`: a reconnect; the host replays the events of the response in progress from its
 *   first one (`startSeq`), then follows it live.
 */
export interface ResponseContext {
  kind: "run" | "continuation" | "replay";
  /** The thread (AI SDK chat id, AG-UI thread id). */
  threadId: string;
  /**
   * The agent run the events belong to (`agent.runId`). Unknown (`undefined`) for `kind: "run"`
   * when the encoder opens: the host opens the response before the run starts, so that nothing
   * is missed (prompt and approve publish synchronously).
   */
  runId: string | undefined;
  /** The server's transcript when the response opens (the truth; never the client's copy). */
  messages: readonly AgentMessage[];
  /** The user message this response answers (its id is the client's, when it sent one). */
  userMessageId?: string;
  /**
   * The agent's transcript at the moment it is called, for an encoder that must resynchronise its
   * client mid-response (AG-UI: after a compaction rewrote the transcript, or to withdraw a failed
   * attempt).
   */
  transcript?: () => readonly AgentMessage[];
  /**
   * The id of the run the events belong to at the moment it is called: for `kind: "run"`, known
   * from its `agent_start` on (an encoder that tells its client the run's id reads it then).
   */
  currentRunId?: () => string | undefined;
  /**
   * The agent's pending approvals at the moment it is called (every depth): an encoder whose
   * client shows one approval per tool part shows the next call waiting under the same part when
   * one is decided.
   */
  pendingApprovals?: () => readonly PendingApproval[];
  /** The agent's pending client-run calls at the moment it is called (every depth), likewise. */
  pendingToolCalls?: () => readonly PendingApproval[];
  /**
   * For a continuation: the client-run calls whose results (or errors) the request carries. A
   * sub-agent's call ends inside the sub-agent with no event at the top: an encoder that showed it
   * on its top call's part takes it off from here.
   */
  resolvedCalls?: readonly string[];
  /**
   * For a replay (`kind: "replay"`) of a response that continued an earlier response's assistant
   * message (after answers, or a decision on a side route): the thread as that response found it.
   * A client that reconnects may hold nothing of that message (a reloaded page), so an encoder
   * whose protocol treats a resumed stream as the whole message rebuilds it from this first.
   */
  continues?: ContinuedThread;
}

/** The thread when a response that continues an assistant message opened. */
export interface ContinuedThread {
  messages: readonly AgentMessage[];
  pendingApprovals: readonly PendingApproval[];
  /** The client-run calls that waited then (a sub-agent's show on their top call's part). */
  pendingToolCalls?: readonly PendingApproval[];
  finishedCalls: readonly FinishedCall[];
}

/**
 * Why a response ends.
 *
 * - `end`: the run ended (`agent_end` was the last event given to `event`).
 * - `quiescent`: the run waits for the client: every unfinished call awaits an approval
 *   (`approvals`) or a client-run tool's result (`toolCalls`). The next request resumes it.
 * - `gone`: a reconnect found no run to follow (it ended, or its events left the buffer):
 *   `messages` is the transcript to resynchronise from.
 */
export type ResponseEnding =
  | { kind: "end"; event: AgentEventOf<"agent_end">; messages: readonly AgentMessage[] }
  | {
      kind: "quiescent";
      approvals: PendingApproval[];
      toolCalls: PendingApproval[];
      messages: readonly AgentMessage[];
    }
  | { kind: "gone"; messages: readonly AgentMessage[] };

/**
 * A protocol encoder for one HTTP response: the host calls `open` once, `event` for every agent
 * event of the response in order (each with its sequence number in the run), then `close` once.
 * Each returns the text to write (SSE frames, typically `data: {...}\n\n`; `""` for nothing).
 * Encoders must not throw for an event they do not know: they skip it.
 *
 * @example
 * ```ts
 * const jsonLines: EncoderFactory = () => ({
 *   headers: { "content-type": "application/x-ndjson" },
 *   open: (context) => JSON.stringify({ open: context.kind }) + "\n",
 *   event: (event) => JSON.stringify(event) + "\n",
 *   close: (ending) => JSON.stringify({ close: ending.kind }) + "\n",
 * });
 * ```
 */
export interface StreamEncoder {
  /** The response's headers (content type, caching). */
  readonly headers: Record<string, string>;
  open(context: ResponseContext): string;
  event(event: AgentEvent, seq: number): string;
  close(ending: ResponseEnding): string;
}

/** Makes the encoder of one response (the host calls it once per response). */
export type EncoderFactory = () => StreamEncoder;

/**
 * One server-sent-events frame holding `value` as JSON (`data: {...}\n\n`), the framing both the
 * AI SDK and AG-UI clients read. It never throws: a value JSON cannot hold (a tool's partial
 * result with a BigInt or a cycle, which nothing checks before it is streamed) is sent with those
 * parts as text saying what they were (`"12n"`, `"[cycle]"`, `"[cannot encode: why]"`), so the
 * frame keeps its place and the response goes on; the first such frame is reported on the console.
 *
 * @example
 * ```ts
 * sseFrame({ type: "text-delta", id: "t1", delta: "Hi" }); // 'data: {"type":"text-delta",...}\n\n'
 * sseFrame({ type: "data-count", data: 2n }); // 'data: {"type":"data-count","data":"2n"}\n\n'
 * ```
 */
export function sseFrame(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    reportUnencodable(value, error);
    json = JSON.stringify(encodableCopy(value));
  }
  return `data: ${json}\n\n`;
}

let reported = false;

/** Once per process: a tool that streams such values usually streams many. */
function reportUnencodable(value: unknown, error: unknown): void {
  if (reported) return;
  reported = true;
  const type = (encodableCopy(value) as { type?: unknown } | null)?.type;
  console.warn(
    `agent-machine/http: a ${typeof type === "string" ? `"${type}" ` : ""}frame held a value JSON cannot hold ` +
      `(${errorText(error).replace(/\s*\n\s*/g, " ")}); it was sent with that value as text. ` +
      "Later such frames are sent the same way without this warning.",
  );
}

/** The headers of a server-sent-events response nothing between should buffer. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};
