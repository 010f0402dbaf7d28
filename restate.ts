// agent-machine/restate (Node only): durable agent sessions on Restate. Serve agents as Restate
// services from the options createAgent takes, talk to them from any process, run a local server
// for development and tests. See docs/durable.md.

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
} from "./durable/agent-services.js";
export { createAgentServices } from "./durable/agent-services.js";
export type { RecordedEvents } from "./durable/session-types.js";
export type { LiveEntry } from "./durable/live-runs.js";
export type { AgentServer, RegisterDeploymentOptions, ServeAgentsOptions } from "./durable/serve.js";
export { registerDeployment, serveAgents } from "./durable/serve.js";
export type {
  FollowOptions,
  RunHandle,
  SessionClient,
  SessionClientOptions,
  SessionUpdate,
} from "./durable/session-client.js";
export { createSessionClient, SessionCallError } from "./durable/session-client.js";
export type { RestateServer, StartRestateServerOptions } from "./durable/restate-server.js";
export { findRestateServerBinary, startRestateServer } from "./durable/restate-server.js";
export type {
  RestateCluster,
  RestateClusterNode,
  StartRestateClusterOptions,
} from "./durable/restate-cluster.js";
export { startRestateCluster } from "./durable/restate-cluster.js";
export type { WakeClient } from "./durable/wake-client.js";
export { createWakeClient } from "./durable/wake-client.js";
export type { DurableSchedule, DurableScheduleLimits } from "./durable/session-wakes.js";
export type { DurableEventInput, DurableLaterResultInput } from "./durable/wake-session.js";
export type { DurableHandleOptions } from "./durable/durable-handle.js";
export { durableHandle } from "./durable/durable-handle.js";
