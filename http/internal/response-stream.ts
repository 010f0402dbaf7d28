// One streaming HTTP response: an encoder's text written to a ReadableStream. The client going away
// (the stream cancelled) only detaches the response: the agent's run goes on.
import type { AgentEvent } from "../../core/events.js";
import type { ResponseContext, ResponseEnding, StreamEncoder } from "../encoder.js";

/** Where the host sends what one response must write. */
export interface ResponseSink {
  event(event: AgentEvent, seq: number): void;
  close(ending: ResponseEnding): void;
  readonly closed: boolean;
}

/**
 * A response body fed by `encoder`, and the sink to feed it. `onDetach` runs once, when the
 * response is closed or the client cancels it.
 */
export function openResponseStream(
  encoder: StreamEncoder,
  context: ResponseContext,
  onDetach: () => void,
): { body: ReadableStream<Uint8Array>; sink: ResponseSink } {
  const bytes = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const detach = (): void => {
    if (closed) return;
    closed = true;
    onDetach();
  };
  const write = (text: string): void => {
    if (text !== "" && !closed) controller.enqueue(bytes.encode(text));
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      detach();
    },
  });
  write(encoder.open(context));
  const sink: ResponseSink = {
    event(event, seq) {
      if (closed) return;
      try {
        write(encoder.event(event, seq));
      } catch (error) {
        // An encoder bug must not take the agent down: end this response with what was written.
        console.error("agent-machine/http: the encoder failed on", event.type, error);
        sink.close({ kind: "gone", messages: [] });
      }
    },
    close(ending) {
      if (closed) return;
      try {
        write(encoder.close(ending));
      } catch (error) {
        console.error("agent-machine/http: the encoder failed closing the response", error);
      }
      detach();
      controller.close();
    },
    get closed() {
      return closed;
    },
  };
  return { body, sink };
}
