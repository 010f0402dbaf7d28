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
  ThreadAgent,
  ThreadInput,
  FinishedCall,
  ThreadStatus,
  ToolCallAnswer,
} from "./http/protocol.js";
export { HostError } from "./http/protocol.js";
export type {
  DurableHostOptions,
  SessionHost,
  SessionHostOptions,
  ThreadStore,
} from "./http/session-host.js";
export { createSessionHost } from "./http/session-host.js";
export type { AiSdkProtocolOptions } from "./http/ai-sdk-protocol.js";
export { aiSdkProtocol } from "./http/ai-sdk-protocol.js";
export type { AiSdkStreamOptions, UIMessageChunk } from "./http/ai-sdk-stream.js";
export { aiSdkStream, encodeUIMessageChunks, UI_MESSAGE_STREAM_HEADERS } from "./http/ai-sdk-stream.js";
export type { AiSdkTarget, UIMessage, UIPart } from "./http/ui-messages.js";
export { toUIMessages } from "./http/ui-messages.js";
export type { FetchHandler, NodeServer, ServeNodeOptions } from "./http/node.js";
export { serveNode, toNodeListener } from "./http/node.js";
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
export { type AgUiProtocolOptions, agUiProtocol } from "./http/ag-ui-protocol.js";
export { agentMachineEncoder, agentMachineProtocol } from "./http/agent-machine-protocol.js";
