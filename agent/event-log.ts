import type { AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import type { EventReplayOptions } from "../core/options.js";
import type { SequencedEvent } from "../core/agent-handle.js";

export type { SequencedEvent };

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
 * first). A ring: it grows to at most `maxEvents` slots and then reuses them, so recording an event
 * is a store and a few additions, and an evicted event is let go at once. An event's size is worked
 * out again when it leaves rather than kept beside it.
 *
 * @example
 * ```ts
 * const log = new RunEventLog("run-1", DEFAULT_EVENT_REPLAY);
 * log.record({ type: "agent_start" }); // 0
 * log.since(0); // [{ type: "agent_start" }]
 * ```
 */
export class RunEventLog {
  private ring: (AgentEvent | undefined)[] = [];
  /** Slot of the oldest kept event. */
  private head = 0;
  /** Events kept. */
  private count = 0;
  /** The sequence number of the oldest kept event. */
  private oldest = 0;
  /** The sequence number the next event gets. */
  next = 0;
  bytes = 0;
  /** `agent_end` was recorded: no more events come. */
  ended = false;
  /**
   * A consumer asked for these events (`eventsSince`): one that may come back for the rest, so the
   * agent keeps them when it rests or hibernates after the run.
   */
  followed = false;

  constructor(
    readonly runId: string,
    private readonly limits: Required<EventReplayOptions>,
  ) {}

  /** Keeps the event; returns its sequence number. */
  record(event: AgentEvent): number {
    const ring = this.ring;
    if (this.count === ring.length) {
      if (ring.length < this.limits.maxEvents) {
        // Full below its bound: lay the kept events out from slot 0 again (only after evictions
        // wrapped it), then grow by one.
        if (this.head !== 0) {
          this.ring = [...ring.slice(this.head), ...ring.slice(0, this.head)];
          this.head = 0;
        }
        this.ring.push(event);
      } else {
        this.evictOldest();
        ring[(this.head + this.count) % ring.length] = event;
      }
    } else {
      ring[(this.head + this.count) % ring.length] = event;
    }
    this.count++;
    this.bytes += approxEventBytes(event);
    if (event.type === "agent_end") this.ended = true;
    while (this.count > 1 && this.bytes > this.limits.maxBytes) this.evictOldest();
    return this.next++;
  }

  private evictOldest(): void {
    const ring = this.ring;
    this.bytes -= approxEventBytes(ring[this.head]!);
    ring[this.head] = undefined;
    this.head = (this.head + 1) % ring.length;
    this.count--;
    this.oldest++;
  }

  /** The oldest sequence number still kept. */
  get oldestSeq(): number {
    return this.oldest;
  }

  /** The kept events from `seq` on, or `undefined` when some of them were evicted. */
  since(seq: number): AgentEvent[] | undefined {
    if (seq < this.oldest) return undefined;
    const out: AgentEvent[] = [];
    const ring = this.ring;
    for (let i = Math.min(seq, this.next) - this.oldest; i < this.count; i++)
      out.push(ring[(this.head + i) % ring.length]!);
    return out;
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
