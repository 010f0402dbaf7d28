import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentMessage,
  createAgent,
  createPermissions,
  defineTool,
  fallback,
  scripted,
  type ScriptedStep,
  subAgentTool,
} from "../index.js";
import { AM, ATTR, OPERATION } from "../telemetry/attributes.js";
import { createTestTracing, everyValue, idOf, parentOf, spanTree } from "./fixtures/otel.js";

const lookup = defineTool({
  name: "lookup",
  description: "Looks a key up",
  parameters: z.object({ key: z.string(), fail: z.boolean().optional() }),
  readOnly: true,
  execute: ({ key, fail }) => {
    if (fail) throw new Error(`no entry for ${key}`);
    return `value of ${key}`;
  },
});

/** A tool that runs until it is aborted. */
const hang = defineTool({
  name: "hang",
  description: "Waits until aborted",
  parameters: z.object({}),
  execute: (_args, { signal }) =>
    new Promise<string>((_resolve, reject) =>
      signal.addEventListener("abort", () => reject(new Error("stopped"))),
    ),
});

const usage = { input: 100, output: 20, cacheRead: 50, cacheWrite: 10 };
const fastRetry = { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 };

/** `name` plus what distinguishes the span in a tree: the tool call id, the outcome. */
function label(span: ReadableSpan): string {
  const parts = [span.name];
  const callId = span.attributes[ATTR.toolCallId];
  if (callId !== undefined && span.name.startsWith("execute_tool")) parts.push(String(callId));
  const finish = span.attributes[ATTR.finishReasons] as string[] | undefined;
  if (finish) parts.push(`[${finish.join(",")}]`);
  if (span.status.code === SpanStatusCode.ERROR) parts.push(`ERROR ${span.attributes[ATTR.errorType]}`);
  return parts.join(" ");
}

const byName = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);

let tracing = createTestTracing();
afterEach(() => {
  tracing = createTestTracing();
  trace.disable();
});

describe("OpenTelemetry traces", () => {
  it("a fallback chain: the failed model's span ends in error, the span of the model that answered names it", async () => {
    const agent = createAgent({
      provider: fallback(
        [
          scripted([{ text: "half an ans", error: { kind: "overloaded", message: "529 overloaded" } }], {
            id: "anthropic",
            model: "first-model",
          }),
          scripted([{ text: "the answer", usage }], { id: "openai-responses", model: "second-model" }),
        ],
        { breaker: false },
      ),
      telemetry: { tracerProvider: tracing.provider, agentName: "helper" },
    });
    await agent.prompt("question");
    const spans = tracing.spans();
    expect(spanTree(spans, label)).toEqual([
      "invoke_agent helper",
      "  chat first-model ERROR retryable_error",
      "  chat second-model [stop]",
    ]);
    const [answered] = byName(spans, "chat second-model");
    expect(answered!.attributes).toMatchObject({
      [ATTR.providerName]: "openai",
      [ATTR.requestModel]: "second-model",
      [ATTR.responseModel]: "second-model",
    });
    const [failed] = byName(spans, "chat first-model");
    expect(failed!.attributes[ATTR.providerName]).toBe("anthropic");
    expect(failed!.events[0]!.attributes).toMatchObject({ "gen_ai.request.model": "second-model" });
  });

  it("the run span counts the prompt cache: calls, hits and the share of the prompt read from it", async () => {
    const agent = createAgent({
      provider: scripted([
        {
          toolCalls: [{ id: "c1", name: "lookup", arguments: { key: "a" } }],
          usage: { input: 100, output: 5, cacheRead: 0, cacheWrite: 900 },
        },
        { text: "done", usage: { input: 100, output: 5, cacheRead: 900, cacheWrite: 0 } },
      ]),
      tools: [lookup],
      telemetry: { tracerProvider: tracing.provider, agentName: "helper" },
    });
    await agent.prompt("question");
    const [run] = byName(tracing.spans(), "invoke_agent helper");
    expect(run!.attributes).toMatchObject({
      [AM.cacheCalls]: 2,
      [AM.cacheHits]: 1,
      [AM.cacheHitRatio]: 900 / 2000,
      [ATTR.cacheReadTokens]: 900,
      [ATTR.cacheCreationTokens]: 900,
    });
  });

  it("draws a run with a retry, parallel calls, a failing call and a sub-agent as one tree", async () => {
    const researcher = subAgentTool({
      name: "researcher",
      description: "Finds things out",
      provider: scripted(
        [{ toolCalls: [{ id: "child_1", name: "lookup", arguments: { key: "c" } }] }, { text: "c is 3" }],
        { id: "anthropic", model: "child-model" },
      ),
      tools: [lookup],
    });
    const steps: ScriptedStep[] = [
      { error: { kind: "rate_limit", message: "429 slow down", retryAfterMs: 1 } },
      {
        toolCalls: [
          { id: "call_a", name: "lookup", arguments: { key: "a" } },
          { id: "call_b", name: "lookup", arguments: { key: "b", fail: true } },
          { id: "call_r", name: "researcher", arguments: { task: "find c" } },
        ],
        usage,
      },
      { text: "a, c known; b missing", usage },
    ];
    const agent = createAgent({
      provider: scripted(steps, { id: "openai-responses", model: "parent-model" }),
      tools: [lookup, researcher],
      retry: fastRetry,
      telemetry: { tracerProvider: tracing.provider, agentName: "helper", conversationId: "conv-1" },
    });
    await agent.prompt("what are a, b, c?");

    const spans = tracing.spans();
    expect(spanTree(spans, label)).toEqual([
      "invoke_agent helper",
      "  chat parent-model ERROR retryable_error",
      "  chat parent-model [tool_call]",
      "  execute_tool lookup call_a",
      "  execute_tool lookup call_b ERROR tool_error",
      "  execute_tool researcher call_r",
      "    invoke_agent researcher",
      "      chat child-model [tool_call]",
      "      execute_tool lookup child_1",
      "      chat child-model [stop]",
      "  chat parent-model [stop]",
    ]);
    expect(tracing.counter.started).toBe(tracing.counter.ended);
    // One trace: the sub-agent's run is in the parent's.
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);

    const [run] = byName(spans, "invoke_agent helper");
    expect(run!.kind).toBe(SpanKind.INTERNAL);
    expect(run!.attributes).toMatchObject({
      [ATTR.operationName]: "invoke_agent",
      [ATTR.agentName]: "helper",
      [ATTR.agentId]: agent.id,
      [ATTR.conversationId]: "conv-1",
      [ATTR.providerName]: "openai",
      [ATTR.requestModel]: "parent-model",
      [ATTR.inputTokens]: 320,
      [ATTR.outputTokens]: 40,
      "agent_machine.end_reason": "stop",
      "agent_machine.turns": 2, // the retried call is one turn
    });

    const chats = byName(spans, "chat parent-model");
    const answered = chats.find((s) => (s.attributes[ATTR.finishReasons] as string[])?.[0] === "tool_call")!;
    expect(answered.kind).toBe(SpanKind.CLIENT);
    expect(answered.attributes).toMatchObject({
      [ATTR.operationName]: "chat",
      [ATTR.providerName]: "openai",
      [ATTR.requestModel]: "parent-model",
      [ATTR.responseModel]: "parent-model",
      [ATTR.inputTokens]: 160,
      [ATTR.outputTokens]: 20,
      [ATTR.cacheReadTokens]: 50,
      [ATTR.cacheCreationTokens]: 10,
    });
    // The failed attempt ends with the error and a retry event; the next attempt starts after the backoff.
    const failed = chats.find((s) => s.status.code === SpanStatusCode.ERROR)!;
    expect(failed.status.message).toBe("429 slow down");
    expect(failed.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        "retry",
        {
          "agent_machine.retry.attempt": 1,
          "agent_machine.retry.delay_ms": 1,
          "exception.message": "429 slow down",
        },
      ],
    ]);

    const [callB] = spans.filter((s) => s.attributes[ATTR.toolCallId] === "call_b");
    expect(callB!.attributes).toMatchObject({
      [ATTR.operationName]: "execute_tool",
      [ATTR.toolName]: "lookup",
      [ATTR.toolType]: "function",
      [ATTR.toolDescription]: "Looks a key up",
      [ATTR.errorType]: "tool_error",
    });
    expect(callB!.status.message).toBe("no entry for b");
    const [callR] = spans.filter((s) => s.attributes[ATTR.toolCallId] === "call_r");
    expect(callR!.attributes["agent_machine.child_agent.id"]).toBe("researcher-call_r");
    expect(byName(spans, "invoke_agent researcher")[0]!.attributes).toMatchObject({
      [ATTR.agentId]: "researcher-call_r",
      [ATTR.providerName]: "anthropic",
      [ATTR.requestModel]: "child-model",
    });

    // Parallel: every call of the message started before the first one ended.
    const calls = spans.filter((s) => parentOf(s) === idOf(run!) && s.name.startsWith("execute_tool"));
    const firstEnd = Math.min(...calls.map((s) => s.endTime[0] * 1e9 + s.endTime[1]));
    for (const call of calls)
      expect(call.startTime[0] * 1e9 + call.startTime[1]).toBeLessThanOrEqual(firstEnd);
  });

  it("ends every span of an aborted run: the run says aborted, the calls say so too", async () => {
    const agent = createAgent({
      provider: scripted([
        {
          toolCalls: [
            { id: "h1", name: "hang", arguments: {} },
            { id: "h2", name: "hang", arguments: {} },
          ],
        },
      ]),
      tools: [hang],
      telemetry: { tracerProvider: tracing.provider },
    });
    let started = 0;
    agent.events$.subscribe((e) => {
      if (e.type === "tool_execution_start" && ++started === 2) agent.abort();
    });
    await agent.prompt("wait");
    expect(spanTree(tracing.spans(), label)).toEqual([
      "invoke_agent agent",
      "  chat scripted-model [tool_call]",
      "  execute_tool hang h1 ERROR aborted",
      "  execute_tool hang h2 ERROR aborted",
    ]);
    const [run] = byName(tracing.spans(), "invoke_agent agent");
    expect(run!.attributes["agent_machine.end_reason"]).toBe("aborted");
    expect(run!.status.code).toBe(SpanStatusCode.UNSET);
    expect(tracing.counter.started).toBe(tracing.counter.ended);
  });

  it("marks a failed model call and its run as errors", async () => {
    const agent = createAgent({
      provider: scripted([{ error: { kind: "auth", message: "invalid key" } }]),
      telemetry: { tracerProvider: tracing.provider },
    });
    await agent.prompt("hi");
    expect(spanTree(tracing.spans(), label)).toEqual([
      "invoke_agent agent ERROR agent_error",
      "  chat scripted-model [error] ERROR model_error",
    ]);
    const [run] = byName(tracing.spans(), "invoke_agent agent");
    expect(run!.status.message).toBe("invalid key");
  });

  it("times the wait for an approval as a span below the call, with the decision", async () => {
    const write = defineTool({
      name: "write",
      description: "Writes",
      parameters: z.object({}),
      execute: () => "written",
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "w1", name: "write", arguments: {} }] }, { text: "ok" }]),
      tools: [write],
      permissions: createPermissions({ mode: "default" }),
      telemetry: { tracerProvider: tracing.provider },
    });
    agent.events$.subscribe((e) => {
      if (e.type === "approval_requested") setTimeout(() => agent.approve(e.toolCallId), 5);
    });
    await agent.prompt("write it");
    expect(spanTree(tracing.spans(), label)).toEqual([
      "invoke_agent agent",
      "  chat scripted-model [tool_call]",
      "  execute_tool write w1",
      "    await_approval write",
      "  chat scripted-model [stop]",
    ]);
    const [wait] = byName(tracing.spans(), "await_approval write");
    expect(wait!.attributes).toMatchObject({
      [ATTR.toolCallId]: "w1",
      "agent_machine.approval.approved": true,
    });
  });

  it("shows a compaction as a span before the model call it made room for", async () => {
    const long = Array.from({ length: 400 }, (_, i) => `log line ${i}`).join("\n");
    const messages: AgentMessage[] = [
      { role: "user", content: "run it", timestamp: 1 },
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "old", name: "lookup", arguments: { key: "x" } }],
        stopReason: "toolUse",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        timestamp: 2,
      },
      {
        role: "toolResult",
        toolCallId: "old",
        toolName: "lookup",
        content: [{ type: "text", text: long }],
        isError: false,
        timestamp: 3,
      },
      {
        role: "assistant",
        content: [{ type: "text", text: "done" }],
        stopReason: "stop",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        timestamp: 4,
      },
    ];
    const agent = createAgent({
      provider: scripted([{ text: "fine" }]),
      tools: [lookup],
      messages,
      context: { maxContextTokens: 800, keepRecent: 2, toolOutputMaxLines: 10 },
      telemetry: { tracerProvider: tracing.provider },
    });
    await agent.prompt("and now?");
    expect(spanTree(tracing.spans(), (s) => s.name)).toEqual([
      "invoke_agent agent",
      "  compaction",
      "  chat scripted-model",
    ]);
    const [compaction] = byName(tracing.spans(), "compaction");
    expect(compaction!.attributes["agent_machine.compaction.level"]).toBe(1);
    expect(compaction!.attributes["agent_machine.compaction.tokens_before"] as number).toBeGreaterThan(
      compaction!.attributes["agent_machine.compaction.tokens_after"] as number,
    );
  });

  it("records no message content unless asked; with recordContent, in the conventions' JSON form", async () => {
    const run = async (recordContent?: boolean) => {
      tracing.reset();
      const agent = createAgent({
        provider: scripted([
          { toolCalls: [{ id: "c1", name: "lookup", arguments: { key: "secret-plan" } }] },
          { text: "The plan is ready." },
        ]),
        systemPrompt: "You keep plans.",
        tools: [lookup],
        telemetry: {
          tracerProvider: tracing.provider,
          ...(recordContent !== undefined && { recordContent }),
        },
      });
      await agent.prompt("What is the plan?");
      return tracing.spans();
    };
    const quiet = await run();
    expect(everyValue(quiet)).not.toMatch(/secret-plan|The plan is ready|What is the plan|You keep plans/);
    for (const span of quiet) {
      for (const key of [
        ATTR.inputMessages,
        ATTR.outputMessages,
        ATTR.systemInstructions,
        ATTR.toolCallArguments,
        ATTR.toolCallResult,
      ]) {
        expect(span.attributes[key], `${span.name} ${key}`).toBeUndefined();
      }
    }

    const loud = await run(true);
    const chats = byName(loud, "chat scripted-model");
    expect(JSON.parse(chats[1]!.attributes[ATTR.inputMessages] as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "What is the plan?" }] },
      {
        role: "assistant",
        parts: [{ type: "tool_call", id: "c1", name: "lookup", arguments: { key: "secret-plan" } }],
        finish_reason: "tool_call",
      },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "value of secret-plan" }] },
    ]);
    expect(JSON.parse(chats[1]!.attributes[ATTR.outputMessages] as string)).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "The plan is ready." }], finish_reason: "stop" },
    ]);
    expect(JSON.parse(chats[0]!.attributes[ATTR.systemInstructions] as string)).toEqual([
      { type: "text", content: "You keep plans." },
    ]);
    const [tool] = byName(loud, "execute_tool lookup");
    expect(tool!.attributes[ATTR.toolCallArguments]).toBe('{"key":"secret-plan"}');
    expect(tool!.attributes[ATTR.toolCallResult]).toBe("value of secret-plan");
  });

  it("traces by itself when a global tracer provider is registered; telemetry: false and no provider trace nothing", async () => {
    const unregistered = createAgent({ provider: scripted([{ text: "a" }]) });
    trace.setGlobalTracerProvider(tracing.provider);
    const registered = createAgent({ provider: scripted([{ text: "b" }]) });
    const off = createAgent({ provider: scripted([{ text: "c" }]), telemetry: false });
    await unregistered.prompt("1");
    await off.prompt("2");
    expect(tracing.spans()).toEqual([]);
    await registered.prompt("3");
    expect(spanTree(tracing.spans())).toEqual(["invoke_agent agent", "  chat scripted-model"]);
  });

  it("nests a run under the span active when it starts", async () => {
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    trace.setGlobalTracerProvider(tracing.provider);
    const agent = createAgent({ provider: scripted([{ text: "hi" }]) });
    const tracer = tracing.provider.getTracer("app");
    const outer = tracer.startSpan("handle request");
    await context.with(trace.setSpan(context.active(), outer), () => agent.prompt("hello"));
    outer.end();
    context.disable();
    expect(spanTree(tracing.spans())).toEqual([
      "handle request",
      "  invoke_agent agent",
      "    chat scripted-model",
    ]);
  });

  it("refuses unknown telemetry options", () => {
    expect(() =>
      createAgent({ provider: scripted([]), telemetry: { recordContents: true } as never }),
    ).toThrow(/createAgent telemetry: unknown option "recordContents" \(did you mean "recordContent"\?\)/);
  });

  it("uses the names of the current GenAI semantic conventions", () => {
    const names = semconv as Record<string, unknown>;
    expect(ATTR).toEqual({
      operationName: names.ATTR_GEN_AI_OPERATION_NAME,
      providerName: names.ATTR_GEN_AI_PROVIDER_NAME,
      agentName: names.ATTR_GEN_AI_AGENT_NAME,
      agentId: names.ATTR_GEN_AI_AGENT_ID,
      conversationId: names.ATTR_GEN_AI_CONVERSATION_ID,
      requestModel: names.ATTR_GEN_AI_REQUEST_MODEL,
      responseModel: names.ATTR_GEN_AI_RESPONSE_MODEL,
      finishReasons: names.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
      timeToFirstChunk: names.ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
      inputTokens: names.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      outputTokens: names.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      cacheReadTokens: names.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
      cacheCreationTokens: names.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
      toolName: names.ATTR_GEN_AI_TOOL_NAME,
      toolCallId: names.ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: names.ATTR_GEN_AI_TOOL_TYPE,
      toolDescription: names.ATTR_GEN_AI_TOOL_DESCRIPTION,
      toolCallArguments: names.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
      toolCallResult: names.ATTR_GEN_AI_TOOL_CALL_RESULT,
      inputMessages: names.ATTR_GEN_AI_INPUT_MESSAGES,
      outputMessages: names.ATTR_GEN_AI_OUTPUT_MESSAGES,
      systemInstructions: names.ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
      errorType: names.ATTR_ERROR_TYPE,
    });
    expect(OPERATION).toEqual({
      invokeAgent: names.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      chat: names.GEN_AI_OPERATION_NAME_VALUE_CHAT,
      executeTool: names.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    });
  });
});
