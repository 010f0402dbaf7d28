import type { AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import type { EventReplayOptions } from "../core/options.js";

/** One event of a run with its place in it: `seq` counts from 0 (`agent_start`) to `agent_end`. */
export interface SequencedEvent {
  runId: string;
  seq: number;
  event: AgentEvent;
}

export const DEFAULT_EVENT_REPLAY: Required<EventReplayOptions> = {
  maxEvents: 10_000,
  maxBytes: 8 * 1024 * 1024,
};

/**
 * Thrown by `agent.eventsSince(runId, seq)` when the agent no longer has what was asked for: the
 * run is not the agent's current or last one, or its events from `seq` were evicted from the
 * bounded buffer. The consumer must resynchronise from a snapshot of the messages (`messages`, the
 * transcript when the error was thrown), then follow the live events.
 *
 * @example
 * ```ts
 * try {
 *   agent.eventsSince(runId, lastSeq + 1).subscribe(send);
 * } catch (error) {
 *   if (!(error instanceof EventsUnavailableError)) throw error;
 *   sendSnapshot(error.messages); // then follow agent.events$
 * }
 * ```
 */
export class EventsUnavailableError extends Error {
  override name = "EventsUnavailableError";
  constructor(
    message: string,
    readonly runId: string,
    /** The sequence number asked for. */
    readonly seq: number,
    /** The oldest sequence number still kept for that run, when the run is known. */
    readonly oldestSeq: number | undefined,
    /** The transcript to resynchronise from. */
    readonly messages: readonly AgentMessage[],
  ) {
    super(message);
  }
}

/**
 * The events of one run, numbered, in a bounded buffer (a count and a byte budget: the oldest go
 * first). A plain array with a moving start, compacted when half of it is dead, so recording an
 * event is a push and a few additions.
 *
 * @example
 * ```ts
 * const log = new RunEventLog("run-1", DEFAULT_EVENT_REPLAY);
 * log.record({ type: "agent_start" }); // 0
 * log.since(0); // [{ type: "agent_start" }]
 * ```
 */
export class RunEventLog {
  private events: AgentEvent[] = [];
  private sizes: number[] = [];
  /** Index in `events` of the oldest kept event. */
  private head = 0;
  /** The sequence number of `events[head]`. */
  private oldest = 0;
  /** The sequence number the next event gets. */
  next = 0;
  bytes = 0;
  /** `agent_end` was recorded: no more events come. */
  ended = false;

  constructor(
    readonly runId: string,
    private readonly limits: Required<EventReplayOptions>,
  ) {}

  /** Keeps the event; returns its sequence number. */
  record(event: AgentEvent): number {
    const size = approxEventBytes(event);
    this.events.push(event);
    this.sizes.push(size);
    this.bytes += size;
    if (event.type === "agent_end") this.ended = true;
    while (
      this.events.length - this.head > 1 &&
      (this.events.length - this.head > this.limits.maxEvents || this.bytes > this.limits.maxBytes)
    ) {
      this.bytes -= this.sizes[this.head]!;
      this.head++;
      this.oldest++;
    }
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
    return this.next++;
  }

  /** The oldest sequence number still kept. */
  get oldestSeq(): number {
    return this.oldest;
  }

  /** The kept events from `seq` on, or `undefined` when some of them were evicted. */
  since(seq: number): AgentEvent[] | undefined {
    if (seq < this.oldest) return undefined;
    return this.events.slice(this.head + Math.min(seq, this.next) - this.oldest);
  }
}

/**
 * What keeping an event costs beyond the transcript: the event object, and the text it alone
 * carries. Messages are counted nowhere here: the transcript holds them anyway.
 */
export function approxEventBytes(event: AgentEvent): number {
  switch (event.type) {
    case "message_update":
      return 80 + 2 * event.delta.length;
    case "tool_progress":
      return 80 + 2 * event.text.length;
    case "tool_execution_update":
      return 96 + 2 * contentChars(event.partialResult.content);
    case "tool_execution_end":
      return 96 + 2 * contentChars(event.result.content);
    case "input_rejected":
      return 64 + 2 * event.reason.length;
    case "retry":
      return 64 + 2 * event.error.length;
    default:
      return 64;
  }
}

function contentChars(content: readonly { type: string; text?: string; data?: string }[]): number {
  let chars = 0;
  for (const block of content) chars += block.text?.length ?? block.data?.length ?? 0;
  return chars;
}
