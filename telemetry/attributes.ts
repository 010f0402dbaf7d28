/**
 * The OpenTelemetry GenAI semantic-convention names we emit. They are copied here rather than
 * imported from `@opentelemetry/semantic-conventions/incubating`, as that package asks of libraries
 * for its incubating (not yet stable) names; a test checks each against the package.
 */
export const ATTR = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  timeToFirstChunk: "gen_ai.response.time_to_first_chunk",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheCreationTokens: "gen_ai.usage.cache_creation.input_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolDescription: "gen_ai.tool.description",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  systemInstructions: "gen_ai.system_instructions",
  errorType: "error.type",
} as const;

/** `gen_ai.operation.name` values. */
export const OPERATION = {
  invokeAgent: "invoke_agent",
  chat: "chat",
  executeTool: "execute_tool",
} as const;

/**
 * Our own attributes and span events (no convention covers them yet), under `agent_machine.`.
 * Run outcome, compaction, retries, approvals, loop detection, sub-agents, what woke a run, the
 * prompt cache.
 */
export const AM = {
  endReason: "agent_machine.end_reason",
  turns: "agent_machine.turns",
  childAgentId: "agent_machine.child_agent.id",
  compactionLevel: "agent_machine.compaction.level",
  tokensBefore: "agent_machine.compaction.tokens_before",
  tokensAfter: "agent_machine.compaction.tokens_after",
  retryAttempt: "agent_machine.retry.attempt",
  retryDelayMs: "agent_machine.retry.delay_ms",
  approved: "agent_machine.approval.approved",
  loopKind: "agent_machine.loop.kind",
  loopCount: "agent_machine.loop.count",
  loopAction: "agent_machine.loop.action",
  reason: "agent_machine.reason",
  wakeSource: "agent_machine.wake.source",
  wakeId: "agent_machine.wake.id",
  cacheWriteLongTokens: "agent_machine.cache.write_long.input_tokens",
  cacheCalls: "agent_machine.cache.calls",
  cacheHits: "agent_machine.cache.hits",
  cacheHitRatio: "agent_machine.cache.hit_ratio",
} as const;

/**
 * `gen_ai.provider.name` for one of our provider ids (`openai-responses` is OpenAI's; the others
 * are what they say).
 *
 * @example
 * ```ts
 * providerName("openai-responses"); // "openai"
 * ```
 */
export function providerName(providerId: string): string {
  return providerId === "openai-responses" ? "openai" : providerId;
}
