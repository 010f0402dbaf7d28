// agent-machine/http: agents behind the chat protocols existing frontends speak. A session host
// keeps one agent per thread and serves it over HTTP (a web-standard `Request => Response` handler,
// or Node's http server); protocol encoders (the AI SDK UI message stream, AG-UI) plug into it.
// See docs/frontends.md.

export type { EncoderFactory, ResponseContext, ResponseEnding, StreamEncoder } from "./http/encoder.js";
export { SSE_HEADERS, sseFrame } from "./http/encoder.js";
export type {
  ApprovalAnswer,
  HostApi,
  HostedThread,
  HostProtocol,
  HostRoute,
  ThreadInput,
  ThreadStatus,
  ToolCallAnswer,
} from "./http/protocol.js";
export { HostError } from "./http/protocol.js";
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
