import { describe, expect, it } from "vitest";
import {
  type AgentEvent,
  anthropic,
  createAgent,
  openai,
  openaiCompatible,
  type Provider,
  type ProviderEvent,
  scripted,
} from "../index.js";

// Option *values* are checked where they are taken, as option names are: a wrong value is a
// TypeError from createAgent (or the provider factory) naming the option and what it accepts,
// never a crash inside an actor or a run that never ends.

const provider = scripted([{ text: "hi" }]);

describe("createAgent refuses option values it cannot use", () => {
  it("a missing provider, a provider named by a string, an object without stream()", () => {
    expect(() => createAgent({ tools: [] } as never)).toThrow(
      /^createAgent: provider is required: a Provider \(an object with id, model and stream\(\), e\.g\. openai\(/,
    );
    expect(() => createAgent({ provider: undefined } as never)).toThrow(/createAgent: provider is required/);
    expect(() => createAgent({ provider: "openai" } as never)).toThrow(
      /createAgent: provider must be a Provider .* got the string "openai": a provider is made by its factory/,
    );
    expect(() => createAgent({ provider: { id: "x", model: "y" } } as never)).toThrow(
      /createAgent: provider must be a Provider/,
    );
    expect(() => createAgent({ provider: null } as never)).toThrow(
      /createAgent: provider must be a Provider/,
    );
    expect(() => createAgent({ provider: { stream() {} } } as never)).toThrow(
      /createAgent: provider must be .*its id and model are strings/,
    );
  });

  it("toolExecution: a misspelt strategy, a batch size that is not a whole number ≥ 1", () => {
    const accepts = /createAgent: toolExecution must be "parallel", "sequential", "auto" or \{ batched: n \}/;
    expect(() => createAgent({ provider, toolExecution: "paralel" } as never)).toThrow(accepts);
    expect(() => createAgent({ provider, toolExecution: "paralel" } as never)).toThrow(
      /got the string "paralel"/,
    );
    expect(() => createAgent({ provider, toolExecution: { batched: 0 } })).toThrow(accepts);
    expect(() => createAgent({ provider, toolExecution: { batched: 2.5 } })).toThrow(
      /got \{"batched":2\.5\}/,
    );
    expect(() => createAgent({ provider, toolExecution: { batch: 2 } } as never)).toThrow(
      /createAgent toolExecution: unknown option "batch" \(did you mean "batched"\?\)/,
    );
    for (const toolExecution of ["parallel", "sequential", "auto", { batched: 3 }] as const) {
      expect(() => createAgent({ provider, toolExecution })).not.toThrow();
    }
  });

  it("limits: a number given as a string, a negative or fractional count, Infinity for a timer", () => {
    expect(() => createAgent({ provider, limits: { maxTurns: "5" } } as never)).toThrow(
      'createAgent: limits.maxTurns must be a whole number ≥ 1, got the string "5"',
    );
    expect(() => createAgent({ provider, limits: { maxTurns: -1 } })).toThrow(
      "createAgent: limits.maxTurns must be a whole number ≥ 1, got -1",
    );
    expect(() => createAgent({ provider, limits: { maxTokens: 10.5 } })).toThrow(/limits\.maxTokens/);
    expect(() => createAgent({ provider, limits: { maxDurationMs: Infinity } })).toThrow(
      /limits\.maxDurationMs must be a number > 0, got Infinity/,
    );
    expect(() =>
      createAgent({ provider, limits: { maxTurns: 3, maxTokens: 1000, maxDurationMs: 500 } }),
    ).not.toThrow();
  });

  it("the other numeric and enumerated options", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ toolTimeoutMs: 0 }, /toolTimeoutMs must be a number > 0 \(or Infinity\), got 0/],
      [{ toolTimeoutMs: "30s" }, /toolTimeoutMs must be a number/],
      [{ retry: { maxRetries: -1 } }, /retry\.maxRetries must be a whole number ≥ 0, got -1/],
      [{ retry: { jitter: 2 } }, /retry\.jitter must be a number ≥ 0 and ≤ 1, got 2/],
      [{ retry: { baseDelayMs: NaN } }, /retry\.baseDelayMs must be a number ≥ 0, got NaN/],
      [{ stallTimeout: { idleMs: "1m" } }, /stallTimeout\.idleMs must be a number ≥ 0 \(or Infinity\)/],
      [{ steeringMode: "one" }, /steeringMode must be one of "one-at-a-time", "all", got the string "one"/],
      [{ followUpMode: "every" }, /followUpMode must be one of "one-at-a-time", "all"/],
      [{ hibernate: "always" }, /hibernate must be one of "whenIdle", "manual"/],
      [{ systemPrompt: 42 }, /systemPrompt must be a string, got 42/],
      [{ tools: {} }, /tools must be an array of tools/],
      [{ tools: [{ name: "x" }] }, /tools\[0\] must be a tool made with defineTool/],
      [{ messages: "hello" }, /messages must be an array of messages/],
      [{ hooks: { beforeToolCall: "no" } }, /hooks\.beforeToolCall must be a function/],
      [{ inputFilters: [() => ({ pass: true }), 1] }, /inputFilters\[1\] must be a function, got 1/],
      [{ permissions: { mode: "ask" } }, /permissions must be a permission checker/],
      [{ eagerToolExecution: "yes" }, /eagerToolExecution must be a boolean/],
      [{ stallTimeout: true }, /stallTimeout must be false or an object, got true/],
    ];
    for (const [options, message] of cases) {
      expect(() => createAgent({ provider, ...options } as never), JSON.stringify(options)).toThrow(message);
    }
    expect(() =>
      createAgent({ provider, stallTimeout: { idleMs: Infinity, firstEventMs: 0 } }),
    ).not.toThrow();
    expect(() => createAgent({ provider, retry: { maxRetries: 0, jitter: 0 } })).not.toThrow();
  });
});

describe("provider factories refuse missing and malformed values", () => {
  it("openaiCompatible needs a baseURL and a model", () => {
    expect(() => openaiCompatible({ baseURL: "http://127.0.0.1:11434/v1" } as never)).toThrow(
      /^openaiCompatible: model is required: the model name the server knows, e\.g\. "llama3\.1:8b".*got undefined$/,
    );
    expect(() => openaiCompatible({ model: "llama3.1:8b" } as never)).toThrow(
      /^openaiCompatible: baseURL is required: the server's OpenAI-style base URL/,
    );
    expect(() => openaiCompatible({ baseURL: "localhost:11434/v1", model: "m" })).toThrow(
      'openaiCompatible: baseURL must be an absolute http(s) URL, e.g. "http://localhost:11434/v1", got the string "localhost:11434/v1"',
    );
    expect(() => openaiCompatible({ baseURL: "not a url", model: "m" })).toThrow(
      /baseURL must be an absolute/,
    );
    expect(() => openaiCompatible({ baseURL: "http://localhost:11434/v1", model: "m" })).not.toThrow();
    expect(() => openaiCompatible({ baseURL: "http://127.0.0.1:1/v1", model: "m", maxTokens: 0 })).toThrow(
      /openaiCompatible: maxTokens must be a whole number ≥ 1, got 0/,
    );
    expect(() => openaiCompatible(undefined as never)).toThrow(/openaiCompatible: options must be an object/);
  });

  it("openai and anthropic need a model; their enumerations are checked", () => {
    expect(() => openai({} as never)).toThrow(/^openai: model is required: a model id, e\.g\. "gpt-4\.1"/);
    expect(() => openai({ model: "gpt-4.1", api: "response" } as never)).toThrow(
      /openai: api must be one of "chat", "responses", got the string "response"/,
    );
    expect(() => openai({ model: "o4-mini", reasoningEffort: "max" } as never)).toThrow(
      /openai: reasoningEffort must be one of "minimal", "low", "medium", "high"/,
    );
    expect(() => anthropic({} as never)).toThrow(/^anthropic: model is required/);
    expect(() => anthropic({ model: "claude-sonnet-4-6", thinking: { budgetTokens: 0 } })).toThrow(
      /anthropic: thinking must be "adaptive" or \{ budgetTokens: n \}/,
    );
    expect(() => anthropic({ model: "claude-sonnet-4-6", maxTokens: -5 })).toThrow(/anthropic: maxTokens/);
  });
});

/** A run against `provider`, with no retries: its outcome from `agent_end`. */
async function runWith(stream: Provider["stream"]) {
  const agent = createAgent({
    provider: { id: "custom", model: "m1", stream },
    retry: { maxRetries: 0 },
  });
  const ends: AgentEvent[] = [];
  agent.events$.subscribe((event) => event.type === "agent_end" && ends.push(event));
  await agent.prompt("hi");
  expect(ends).toHaveLength(1);
  return ends[0] as Extract<AgentEvent, { type: "agent_end" }>;
}

describe("whatever a provider's stream() does, the run ends with reason error and says why", () => {
  it("stream() throws synchronously: not retried, the message names the provider", async () => {
    let calls = 0;
    const agent = createAgent({
      provider: {
        id: "custom",
        model: "m1",
        stream() {
          calls++;
          throw new TypeError("client not configured");
        },
      },
    });
    const retries: AgentEvent[] = [];
    agent.events$.subscribe((event) => event.type === "retry" && retries.push(event));
    await agent.prompt("hi");
    // A bug in the provider is no transient failure: one call, no backoff.
    expect(calls).toBe(1);
    expect(retries).toEqual([]);
    const last = agent.messages.at(-1);
    expect(last).toMatchObject({
      role: "assistant",
      stopReason: "error",
      errorMessage: 'Provider "custom" stream() threw: client not configured',
    });
  });

  it("stream() returns something that is not iterable", async () => {
    const end = await runWith((() => Promise.resolve([])) as never);
    expect(end.reason).toBe("error");
    expect(end.errorMessage).toMatch(
      /Provider "custom" stream\(\) returned .*not an async iterable of events/,
    );
  });

  it("stream() throws a non-Error value: it is rendered, not [object Object]", async () => {
    const end = await runWith(async function* (): AsyncGenerator<ProviderEvent> {
      yield { type: "start" };
      throw { code: 42 };
    });
    expect(end.reason).toBe("error");
    expect(end.errorMessage).toContain('{"code":42}');
    expect(end.errorMessage).not.toContain("[object Object]");
  });

  it("stream() yields something that is not an event", async () => {
    const end = await runWith(async function* () {
      yield null as never;
    });
    expect(end.reason).toBe("error");
    expect(end.errorMessage).toBe('Provider "custom" stream() yielded null, not an event object');
  });
});
