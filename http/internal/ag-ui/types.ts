// The AG-UI 1.0 wire shapes this encoder writes and reads, as plain JSON types of our own (no
// runtime dependency on @ag-ui/*; the names and fields are those of @ag-ui/core 1.0.0, whose
// generated types they mirror for the subset used here).

/** A message of an AG-UI conversation (`MESSAGES_SNAPSHOT`, `RunAgentInput.messages`). */
export type AgUiMessage =
  | { id: string; role: "user"; content: string | AgUiContentPart[] }
  | { id: string; role: "assistant"; content?: string; toolCalls?: AgUiToolCall[] }
  | { id: string; role: "tool"; toolCallId: string; content: string; error?: string }
  | { id: string; role: "developer" | "system"; content: string }
  | { id: string; role: "reasoning"; content: string; encryptedValue?: string }
  | { id: string; role: "activity"; activityType: string; content: Record<string, unknown> };

/** A content part of a user message (text, or an image given inline or by URL). */
export type AgUiContentPart =
  | { type: "text"; text: string }
  | {
      type: "image";
      source: { type: "data"; value: string; mimeType: string } | { type: "url"; value: string };
    }
  | { type: string; [key: string]: unknown };

/** A tool call of an assistant message; `arguments` is JSON text. */
export interface AgUiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** An interrupt a run ends with (`RUN_FINISHED.outcome.interrupts`), answered by `resume[]`. */
export interface AgUiInterrupt {
  id: string;
  reason: string;
  message?: string;
  toolCallId?: string;
  responseSchema?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** One AG-UI event as sent on the wire (`type` plus its fields). */
export interface AgUiEvent {
  type: string;
  [field: string]: unknown;
}

/** A tool the client brings (`RunAgentInput.tools`): it runs in the client. */
export interface AgUiTool {
  name: string;
  description: string;
  parameters?: Record<string, unknown>;
}

/** The answer to one interrupt (`RunAgentInput.resume[]`). */
export interface AgUiResumeEntry {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
}

/** What an AG-UI client posts to start a run (`HttpAgent` sends it as the JSON body). */
export interface RunAgentInput {
  threadId: string;
  runId: string;
  protocolVersion?: string;
  parentRunId?: string;
  state?: unknown;
  messages: AgUiMessage[];
  tools: AgUiTool[];
  context: { description: string; value: string }[];
  forwardedProps?: unknown;
  resume?: AgUiResumeEntry[];
}
