// One streaming HTTP response: an encoder's text written to a ReadableStream. The client going away
// (the stream cancelled) only detaches the response: the agent's run goes on. The response holds
// what its client has not read yet, up to a bound: a client that reads slower than the run writes
// (or never) is dropped past it, and reconnects to get the response replayed as fast as it reads.
import { approxEventBytes } from "../../agent/event-log.js";
import type { AgentEvent } from "../../core/events.js";
import type { ResponseContext, ResponseEnding, StreamEncoder } from "../encoder.js";

/** Where the host sends what one response must write. */
export interface ResponseSink {
  /** A live event: encoded now, unless the response still has a replay backlog to encode first. */
  event(event: AgentEvent, seq: number): void;
  /**
   * A replayed event the agent's replay buffer holds anyway: queued as it is, costing nothing
   * against the bound, and encoded only when the client reads (a reconnect's backlog).
   */
  backlog(event: AgentEvent, seq: number): void;
  close(ending: ResponseEnding): void;
  readonly closed: boolean;
}

/** The bound of {@link openResponseStream}. */
export interface ResponseStreamLimits {
  /**
   * The most bytes of live events the response holds for its client: one more event past it drops
   * the client (so it holds at most this plus one event; the open and closing frames, which carry
   * the transcript, and a replay's backlog do not count).
   */
  maxBufferedBytes: number;
}

/** What a response with this much unread is dropped with (the client's stream errors). */
export class SlowClientError extends Error {
  override name = "SlowClientError";
}

/** Bytes handed to the stream per read, at most (several small frames go out as one chunk). */
const CHUNK_BYTES = 64 * 1024;

type Pending =
  | { kind: "bytes"; bytes: Uint8Array; counted: number }
  | { kind: "event"; event: AgentEvent; seq: number; counted: number }
  /** The response's end: `ending` still to encode, or none when its closing frame is queued as bytes. */
  | { kind: "close"; ending: ResponseEnding | undefined };

/**
 * A response body fed by `encoder`, and the sink to feed it. `onDetach` runs once, when the
 * response is closed, dropped, or the client cancels it.
 */
export function openResponseStream(
  encoder: StreamEncoder,
  context: ResponseContext,
  onDetach: () => void,
  limits: ResponseStreamLimits = { maxBufferedBytes: 1024 * 1024 },
): { body: ReadableStream<Uint8Array>; sink: ResponseSink } {
  const bytes = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  /** The sink takes nothing more (closed, dropped or cancelled). */
  let closed = false;
  /** The stream itself is closed or errored: nothing more is handed to it. */
  let finished = false;
  /** What the client has not read yet, in order. */
  const pending: Pending[] = [];
  /** How many of `pending` are events still to encode (a backlog: later events queue behind it). */
  let unencoded = 0;
  /** Bytes of `pending` counted against the bound. */
  let buffered = 0;
  /** The client waits for bytes (a read found nothing): hand over the next at once. */
  let wanted = false;

  const detach = (): void => {
    if (closed) return;
    closed = true;
    onDetach();
  };
  const queueText = (text: string, counted: boolean): void => {
    if (text === "") return;
    const encoded = bytes.encode(text);
    const cost = counted ? encoded.byteLength : 0;
    pending.push({ kind: "bytes", bytes: encoded, counted: cost });
    buffered += cost;
  };
  /** An encoder failure ends this response with what was written: it must not take the agent down. */
  const encodeSafely = (what: string, encode: () => string): string | undefined => {
    try {
      return encode();
    } catch (error) {
      console.error(`agent-machine/http: the encoder failed on ${what}`, error);
      return undefined;
    }
  };

  /** Hands the client up to CHUNK_BYTES of what is pending, encoding backlog events on the way. */
  const flush = (): void => {
    const parts: Uint8Array[] = [];
    let size = 0;
    let end: ResponseEnding | undefined;
    let ended = false;
    while (pending.length > 0 && size < CHUNK_BYTES && !ended) {
      const item = pending.shift()!;
      buffered -= item.kind === "close" ? 0 : item.counted;
      if (item.kind === "bytes") {
        parts.push(item.bytes);
        size += item.bytes.byteLength;
      } else if (item.kind === "event") {
        unencoded -= 1;
        const text = encodeSafely(item.event.type, () => encoder.event(item.event, item.seq));
        if (text === undefined) {
          pending.length = 0;
          unencoded = 0;
          end = { kind: "gone", messages: [] };
          ended = true;
          detach();
        } else if (text !== "") {
          const encoded = bytes.encode(text);
          parts.push(encoded);
          size += encoded.byteLength;
        }
      } else {
        end = item.ending;
        ended = true;
      }
    }
    if (end) {
      const ending = end;
      const text = encodeSafely("the response's end", () => encoder.close(ending));
      if (text) parts.push(bytes.encode(text));
    }
    if (parts.length > 0) {
      wanted = false;
      controller.enqueue(parts.length === 1 ? parts[0]! : concat(parts));
    }
    if (ended) {
      finished = true;
      controller.close();
    }
  };

  const drop = (): void => {
    pending.length = 0;
    unencoded = 0;
    buffered = 0;
    finished = true;
    detach();
    controller.error(
      new SlowClientError(
        `the client read too slowly: more than ${limits.maxBufferedBytes} bytes waited for it; reconnect to resume`,
      ),
    );
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        if (finished) return;
        wanted = true;
        flush();
      },
      cancel() {
        finished = true;
        pending.length = 0;
        detach();
      },
    },
    // The stream keeps nothing of its own: what waits for the client is `pending`, which is bounded.
    { highWaterMark: 0 },
  );

  /**
   * Drops the client when it was already past the bound before this event came: one event larger
   * than the bound (a long message whole, at its end) does not cut off a client that keeps up.
   */
  const afterQueued = (before: number): void => {
    if (wanted) flush();
    if (!finished && before > limits.maxBufferedBytes && buffered > limits.maxBufferedBytes) drop();
  };

  queueText(encodeSafely("the response's start", () => encoder.open(context)) ?? "", false);
  const sink: ResponseSink = {
    event(event, seq) {
      if (closed) return;
      const before = buffered;
      if (unencoded > 0) {
        const cost = approxEventBytes(event);
        pending.push({ kind: "event", event, seq, counted: cost });
        unencoded += 1;
        buffered += cost;
        return afterQueued(before);
      }
      const text = encodeSafely(event.type, () => encoder.event(event, seq));
      if (text === undefined) return sink.close({ kind: "gone", messages: [] });
      queueText(text, true);
      afterQueued(before);
    },
    backlog(event, seq) {
      if (closed) return;
      pending.push({ kind: "event", event, seq, counted: 0 });
      unencoded += 1;
      if (wanted) flush();
    },
    close(ending) {
      if (closed) return;
      detach();
      if (finished) return;
      if (unencoded > 0) {
        pending.push({ kind: "close", ending });
        if (wanted) flush();
        return;
      }
      queueText(encodeSafely("the response's end", () => encoder.close(ending)) ?? "", false);
      pending.push({ kind: "close", ending: undefined });
      if (wanted) flush();
    },
    get closed() {
      return closed;
    },
  };
  return { body, sink };
}

/** The bytes of `parts`, one after another, in one array. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
