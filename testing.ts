// agent-machine/testing (Node only): the kit for testing your own agent — a scripted model that
// fails the test when its script is not used as written, runAgent / runTool, a clock the test
// moves, assertions for any test runner, and the fake provider HTTP server our own tests use.
// See docs/testing.md. Vitest matchers: `agent-machine/testing/vitest`.

export type {
  ModelScript,
  ModelStep,
  ScriptedModel,
  ScriptedModelOptions,
} from "./testing/scripted-model.js";
export { scriptedModel } from "./testing/scripted-model.js";
export type {
  AgentRun,
  ApprovalPolicy,
  RunAgentOptions,
  RunOutcome,
  RunToolCall,
} from "./testing/run-agent.js";
export { runAgent } from "./testing/run-agent.js";
export type { RunToolOptions, ToolRun } from "./testing/run-tool.js";
export { runTool } from "./testing/run-tool.js";
export type { TestWorkspace } from "./testing/test-workspace.js";
export { createTestWorkspace } from "./testing/test-workspace.js";
export type { RunUntilOptions, TestClock, TestClockOptions } from "./testing/test-clock.js";
export { createTestClock } from "./testing/test-clock.js";
export type { ExpectedEvent, NoSecretsOptions } from "./testing/assertions.js";
export {
  assertEndedWith,
  assertEventInvariants,
  assertEventOrder,
  assertNoSecrets,
  assertToolCalled,
  assertValidTranscript,
} from "./testing/assertions.js";
export { TestKitError } from "./testing/test-kit-error.js";

// The fake model API: Anthropic's and OpenAI's streaming wire formats on 127.0.0.1, for tests
// through a real provider adapter and its official SDK.
export type {
  AnthropicCacheUsage,
  FixtureReply,
  ProviderFixtureServer,
  RecordedRequest,
  ReplySource,
  SSEFrame,
} from "./testing/provider-server.js";
export { startProviderServer } from "./testing/provider-server.js";
export type {
  AnthropicBlock,
  AnthropicMessageOptions,
  ChatStreamOptions,
  ChatToolCallScript,
  ResponsesStreamOptions,
} from "./testing/provider-wire.js";
export {
  anthropicErrorFrame,
  anthropicHttpError,
  anthropicMessage,
  chatStream,
  openaiHttpError,
  responsesErrorFrame,
  responsesStream,
} from "./testing/provider-wire.js";

// Stepping your configured agent machine event by event, without running anything (pure
// transitions: no actor, no model, no clock). XState's functions are re-exported so you need no
// `xstate` dependency of your own.
export { initialTransition, transition } from "xstate";
export { getShortestPaths, getSimplePaths } from "xstate/graph";
export type { AgentContext, AgentMachineEvent, AgentMachineInput } from "./machines/agent.machine.js";
export { agentMachine } from "./machines/agent.machine.js";
export type { MachineOptions, MachineStep } from "./testing/machine-steps.js";
export {
  agentMachineInput,
  modelAnswer,
  startAgentMachine,
  stepAgentMachine,
} from "./testing/machine-steps.js";

// Proofs over your configuration: explore its paths with adversarial scripted models and check
// properties on every one; the shortest failing path is reported, replayable.
export type { Exploration, ExploreOptions, PropertyFailure } from "./testing/explore.js";
export type {
  ExplorationPath,
  ExplorationSetup,
  ObservedCall,
  PathOutcome,
} from "./testing/exploration-path.js";
export { describeCall } from "./testing/exploration-path.js";
export { exploreAgent, replayPath } from "./testing/explore.js";
export type { AdversarialCallOptions, ExplorationPlace, ExploredCall } from "./testing/adversarial-calls.js";
export { adversarialCalls } from "./testing/adversarial-calls.js";
export type { PathProperty } from "./testing/properties.js";
export {
  approvalRequired,
  callsAnsweredOnce,
  defaultProperties,
  noWriteOutsideWorkspace,
  runEnds,
} from "./testing/properties.js";
