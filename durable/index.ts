// agent-machine/restate: durable agent sessions on Restate. Serve agents as Restate services from
// the options createAgent takes, talk to them from any process, run a local server. See docs/durable.md.
import "./polyfill.js";

export type {
  AgentServices,
  AgentServicesOptions,
  LastRun,
  RunResult,
  SessionEvent,
  SessionRetryPolicy,
  SessionServiceNames,
  SessionStatus,
  TranscriptSlice,
} from "./agent-services.js";
export { createAgentServices } from "./agent-services.js";
export type { AgentServer, RegisterDeploymentOptions, ServeAgentsOptions } from "./serve.js";
export { registerDeployment, serveAgents } from "./serve.js";
export type {
  FollowOptions,
  RunHandle,
  SessionClient,
  SessionClientOptions,
  SessionUpdate,
} from "./session-client.js";
export { createSessionClient, SessionCallError } from "./session-client.js";
export type { RestateServer, StartRestateServerOptions } from "./restate-server.js";
export { findRestateServerBinary, startRestateServer } from "./restate-server.js";
