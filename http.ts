// agent-machine/http: agents behind the chat protocols existing frontends speak. A session host
// keeps one agent per thread and serves it over HTTP (a web-standard `Request => Response` handler,
// or Node's http server); protocol encoders (the AI SDK UI message stream, AG-UI) plug into it.
// See docs/frontends.md.

// Everything a page may also need (the message conversions, the encoders, the wire types) is
// browser-safe and has its own entry, agent-machine/protocols; this entry adds the host.
export * from "./protocols.js";
export type { HostApi, HostProtocol, HostRoute, ThreadAgent, ThreadInput } from "./http/protocol.js";
export type {
  DurableHostOptions,
  SessionHost,
  SessionHostOptions,
  ThreadStore,
} from "./http/session-host.js";
export { createSessionHost } from "./http/session-host.js";
export type { AiSdkProtocolOptions } from "./http/ai-sdk-protocol.js";
export { aiSdkProtocol } from "./http/ai-sdk-protocol.js";
export type { FetchHandler, NodeServer, ServeNodeOptions } from "./http/node.js";
export { serveNode, toNodeListener } from "./http/node.js";
export { type AgUiProtocolOptions, agUiProtocol } from "./http/ag-ui-protocol.js";
export { agentMachineEncoder, agentMachineProtocol } from "./http/agent-machine-protocol.js";
