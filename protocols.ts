// agent-machine/protocols: the chat protocols' wire formats, for a page as much as for a server.
// What a page needs besides its chat client: the host's transcript as the client holds it
// (`toUIMessages` for the AI SDK's useChat, `toAgUiMessages` for AG-UI), the encoders that turn an
// agent's events into those streams, and the types of the host's JSON. Browser-safe: no `node:`
// module, no Restate, no session host (that is `agent-machine/http`, which re-exports all of this).
// See docs/frontends.md.

export type {
  ContinuedThread,
  EncoderFactory,
  ResponseContext,
  ResponseEnding,
  StreamEncoder,
} from "./http/encoder.js";
export { SSE_HEADERS, sseFrame } from "./http/encoder.js";
export type {
  ApprovalAnswer,
  FinishedCall,
  HostedThread,
  ThreadStatus,
  ToolCallAnswer,
} from "./http/protocol.js";
export { HostError } from "./http/protocol.js";
// The one error type of every side of an agent (HostError is its deprecated name here).
export type { AgentCallErrorCode } from "./core/agent-handle.js";
export { AgentCallError } from "./core/agent-handle.js";
// A thread on the session host as an AgentHandle, over HTTP.
export { type RemoteHandleOptions, remoteAgentHandle } from "./react/remote-agent-handle.js";
export type { AiSdkStreamOptions, UIMessageChunk } from "./http/ai-sdk-stream.js";
export { aiSdkStream, encodeUIMessageChunks, UI_MESSAGE_STREAM_HEADERS } from "./http/ai-sdk-stream.js";
export type {
  AiSdkTarget,
  NestedApprovalDescriptor,
  ToUIMessagesOptions,
  UIMessage,
  UIPart,
  UIThreadSource,
} from "./http/ui-messages.js";
export { toUIMessages } from "./http/ui-messages.js";
export {
  AG_UI_CUSTOM_PREFIX,
  type AgUiEncoderOptions,
  type AgUiEvent,
  type AgUiInterrupt,
  type AgUiMessage,
  type AgUiRequest,
  type AgUiResumeEntry,
  type AgUiTool,
  type AgUiToolCall,
  agUiEncoder,
  readRunAgentInput,
  type RunAgentInput,
  toAgUiMessages,
} from "./http/ag-ui.js";
