// A streaming response body fed by a source read at the source's pace, not the client's: what
// the client has not read yet waits here, up to a bound, and a client that falls further behind
// is dropped (its response errors; it reconnects and resumes). The source is read to its end
// whatever the client does, so what it keeps up to date (a task store) never waits for a reader.
import { concat } from "./response-stream.js";

/** What {@link pacedBody} drops a client with when more than its bound waited for it. */
class SlowReaderError extends Error {
  override name = "SlowReaderError";
}

/**
 * A response body carrying `source`'s chunks, read from `source` as fast as it gives them. At most
 * `maxBufferedBytes` wait for the client (one more chunk past it drops the client, so a single
 * chunk larger than the bound still reaches a client that keeps up); the client going away, or
 * being dropped, leaves `source` read to its end all the same.
 *
 * @example
 * ```ts
 * return new Response(pacedBody(sseFrames(stream), 1024 * 1024), { headers: { "content-type": "text/event-stream" } });
 * ```
 */
export function pacedBody(
  source: AsyncIterable<Uint8Array>,
  maxBufferedBytes: number,
): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const pending: Uint8Array[] = [];
  let buffered = 0;
  /** The client waits for bytes (its last read found none). */
  let wanted = false;
  /** Nothing more goes to the client: it left, was dropped, or got the end. */
  let detached = false;
  let ended = false;

  const handOver = (): void => {
    if (detached || !wanted) return;
    if (pending.length > 0) {
      wanted = false;
      const chunk = pending.length === 1 ? pending[0]! : concat(pending);
      pending.length = 0;
      buffered = 0;
      controller.enqueue(chunk);
    } else if (ended) {
      detached = true;
      controller.close();
    }
  };
  const push = (chunk: Uint8Array): void => {
    if (detached) return;
    const before = buffered;
    pending.push(chunk);
    buffered += chunk.byteLength;
    if (before > maxBufferedBytes && buffered > maxBufferedBytes) {
      detached = true;
      pending.length = 0;
      controller.error(
        new SlowReaderError(
          `the client read too slowly: more than ${maxBufferedBytes} bytes waited for it; reconnect to resume`,
        ),
      );
      return;
    }
    handOver();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        wanted = true;
        handOver();
      },
      cancel() {
        detached = true;
        pending.length = 0;
      },
    },
    // The stream keeps nothing of its own: what waits for the client is `pending`, which is bounded.
    { highWaterMark: 0 },
  );
  void (async () => {
    try {
      for await (const chunk of source) {
        push(chunk);
        // A source that gives chunk after chunk without waiting for I/O (a run's burst) would fill
        // the bound before a client that keeps up had a turn to read: one turn for it per chunk.
        if (pending.length > 0) await nextTurn();
      }
    } catch (error) {
      if (!detached) controller.error(error);
      detached = true;
    }
    ended = true;
    handOver();
  })();
  return body;
}

/** The event loop's next turn, after I/O (a socket's drain) had its say. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => (globalThis.setImmediate ?? setTimeout)(resolve));
}
