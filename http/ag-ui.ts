// AG-UI 1.0 over the session host: the encoder of one response (agent events -> AG-UI events as
// SSE frames), the reader of a RunAgentInput, and the transcript as AG-UI messages.
import {
  SSE_HEADERS,
  type ResponseContext,
  type ResponseEnding,
  sseFrame,
  type StreamEncoder,
} from "./encoder.js";
import { AgUiEventEncoder, type AgUiEventEncoderOptions } from "./internal/ag-ui/event-encoder.js";
import type { AgUiEvent } from "./internal/ag-ui/types.js";

export { CUSTOM_PREFIX as AG_UI_CUSTOM_PREFIX } from "./internal/ag-ui/event-encoder.js";
export { type AgUiRequest, readRunAgentInput } from "./internal/ag-ui/input.js";
export { toAgUiMessages } from "./internal/ag-ui/messages.js";
export type {
  AgUiEvent,
  AgUiInterrupt,
  AgUiMessage,
  AgUiResumeEntry,
  AgUiTool,
  AgUiToolCall,
  RunAgentInput,
} from "./internal/ag-ui/types.js";

/** Options of {@link agUiEncoder}. */
export interface AgUiEncoderOptions {
  /** The AG-UI run id the events carry (the client's `RunAgentInput.runId`); the thread's id comes from the host. */
  runId: string;
  /**
   * `"1.0"` (default), or `"legacy"` for a 0.0.x client (`@ag-ui/client` 0.0.59, what CopilotKit
   * ships): it fails a run on a `cancelled` outcome, so an abort ends with a plain `RUN_FINISHED`
   * (`result: { reason: "aborted" }`), and the success outcome names no `pendingToolCallIds`.
   */
  client?: "1.0" | "legacy";
  /**
   * Send the legacy `CUSTOM on_interrupt` event (what CopilotKit's `useLangGraphInterrupt` and
   * older clients read) before the interrupt outcome; default `true`.
   */
  legacyInterruptEvent?: boolean;
  /**
   * The ids of the messages the client holds (what a reconnecting client sends as
   * `RunAgentInput.messages`): the replay does not send their tool results and messages again,
   * which the clients would add a second time under the same id.
   */
  heldMessageIds?: ReadonlySet<string>;
}

/**
 * The AG-UI encoder of one session-host response: `RUN_STARTED`, then steps (one per turn), text,
 * reasoning, tool calls (sent whole when the model's message ends, so a retried attempt's calls
 * never reach the client), tool results (`metadata.isError`), sub-agents (`SUBAGENT_*`), `CUSTOM`
 * `agent-machine.*` events for what AG-UI has no event for; it ends with a `MESSAGES_SNAPSHOT` of
 * the server's transcript and `RUN_FINISHED` (an `interrupt` outcome for pending approvals,
 * `pendingToolCallIds` for client-run calls, `cancelled` for an abort) or `RUN_ERROR`.
 *
 * @example
 * ```ts
 * const response = await thread.respond(input, agUiEncoder({ runId: body.runId }));
 * ```
 */
export function agUiEncoder(options: AgUiEncoderOptions): StreamEncoder {
  let encoder: AgUiEventEncoder | undefined;
  const frames = (events: AgUiEvent[]) => {
    let out = "";
    for (const event of events) out += sseFrame(event);
    return out;
  };
  return {
    headers: SSE_HEADERS,
    open(context: ResponseContext) {
      const settings: AgUiEventEncoderOptions = { ...options, threadId: context.threadId };
      encoder = new AgUiEventEncoder(settings);
      // A replay starts from the response's first event: the transcript then is not known here.
      return frames(
        context.kind === "replay"
          ? encoder.openReplay(context.continues?.messages)
          : encoder.open(context.messages, context.transcript),
      );
    },
    event(event) {
      return encoder ? frames(encoder.event(event)) : "";
    },
    close(ending: ResponseEnding) {
      return encoder ? frames(encoder.close(ending)) : "";
    },
  };
}
