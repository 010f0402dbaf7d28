import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { anthropic, codingTools, createAgent, createPermissions, defineTool } from "../index.js";
import {
  anthropicMessage,
  assertEndedWith,
  assertEventInvariants,
  assertEventOrder,
  assertNoSecrets,
  assertToolCalled,
  assertValidTranscript,
  createTestClock,
  createTestWorkspace,
  runAgent,
  runTool,
  scriptedModel,
  startProviderServer,
  type TestClock,
  TestKitError,
} from "../testing.js";

// The test kit (agent-machine/testing), tested as a user would use it: imported from its entry.

const add = defineTool({
  name: "add",
  description: "Adds two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => String(a + b),
});

const slow = defineTool({
  name: "slow",
  description: "Waits ten minutes, reporting its progress",
  parameters: z.object({}),
  execute: (_, { signal, onUpdate, onProgress }) =>
    new Promise<string>((resolve, reject) => {
      onProgress("started");
      onUpdate("a quarter");
      const timer = setTimeout(() => resolve("done"), 600_000);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new Error("stopped"));
      });
    }),
});

let clock: TestClock | undefined;
afterEach(() => {
  clock?.uninstall();
  clock = undefined;
});

describe("scriptedModel and runAgent", () => {
  it("plays a step list, records every request, and returns the outcome, events, transcript and tool calls", async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
      { text: "2 + 3 = 5" },
    ]);
    const run = await runAgent({ provider: model, tools: [add], systemPrompt: "Be terse." }, "Add 2 and 3");

    expect(run.outcome).toMatchObject({ reason: "stop" });
    expect(run.outcome.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(run.toolCalls).toEqual([
      {
        id: "call_0_0",
        name: "add",
        args: { a: 2, b: 3 },
        result: { content: [{ type: "text", text: "5" }], details: undefined, isError: false },
        isError: false,
        executed: true,
      },
    ]);
    expect(run.events[0]).toEqual({ type: "agent_start" });
    expect(run.events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(run.transcript).toEqual(run.agent.messages);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]!.systemPrompt).toBe("Be terse.");
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "toolResult", toolCallId: "call_0_0" });
    expect(model.remaining).toBe(0);
  });

  it("answers by a function of the request", async () => {
    const model = scriptedModel((request, call) =>
      call === 0
        ? { toolCalls: [{ name: "add", arguments: { a: 40, b: 2 } }] }
        : { text: `The tool said ${JSON.stringify(request.messages.at(-1)?.content)}` },
    );
    const run = await runAgent({ provider: model, tools: [add] }, "?");
    expect(run.outcome.messages.at(-1)).toMatchObject({
      content: [{ type: "text", text: 'The tool said [{"type":"text","text":"42"}]' }],
    });
  });

  it("fails the test when a step is never reached, unless told not to", async () => {
    const script = [{ text: "one" }, { text: "never asked for" }];
    await expect(runAgent({ provider: scriptedModel(script) }, "hi")).rejects.toThrow(
      /the script has 2 steps but the model was called 1 times: step 2 was never reached/,
    );
    const lenient = await runAgent({ provider: scriptedModel(script, { requireAllSteps: false }) }, "hi");
    assertEndedWith(lenient, "stop");
  });

  it("fails the test when the script runs out; whenExhausted 'error' makes that an ordinary model error", async () => {
    const script = [{ toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] }];
    const past = runAgent({ provider: scriptedModel(script), tools: [add] }, "hi");
    await expect(past).rejects.toThrow(TestKitError);
    // The model is named once, not once per layer of the message.
    await expect(past).rejects.toThrow(/^scriptedModel: no step for model call 2 \(the script has 1\)/);
    await expect(past).rejects.not.toThrow(/scriptedModel: scriptedModel/);
    const model = scriptedModel(script, { whenExhausted: "error" });
    const run = await runAgent({ provider: model, tools: [add], retry: { maxRetries: 0 } }, "hi");
    assertEndedWith(run, "error", /no step for model call 2/);
    assertValidTranscript(run);
  });

  it("fails the test when a step's expectRequest check throws", async () => {
    const model = scriptedModel([
      {
        text: "hi",
        expectRequest: (r) => {
          if (r.tools?.length !== 1) throw new Error(`expected one tool, got ${r.tools?.length ?? 0}`);
        },
      },
    ]);
    await expect(runAgent({ provider: model }, "hi")).rejects.toThrow(
      /model call 1: expected one tool, got 0/,
    );
  });

  it("errors on demand: a rate limit is retried, then the next step answers", async () => {
    const model = scriptedModel([{ error: { kind: "rate_limit", message: "slow down" } }, { text: "ok" }]);
    const run = await runAgent({ provider: model, retry: { baseDelayMs: 1, jitter: 0 } }, "hi");
    assertEventOrder(run, [{ type: "retry", attempt: 1 }, "agent_end"]);
    assertEndedWith(run, "stop");
  });

  it("reuses an agent across runs: each run has its own events", async () => {
    const agent = createAgent({ provider: scriptedModel([{ text: "one" }, { text: "two" }]) });
    const first = await runAgent(agent, "1");
    const second = await runAgent(agent, "2");
    expect(first.events.filter((e) => e.type === "agent_start")).toHaveLength(1);
    expect(second.outcome.messages.at(-1)).toMatchObject({ content: [{ type: "text", text: "two" }] });
    expect(second.transcript).toHaveLength(4);
    expect(second.toolCalls).toEqual([]);
  });
});

describe("approvals in runAgent", () => {
  const write = (cwd: string) => codingTools({ cwd }).filter((t) => t.name === "write_file");

  it("denies by default: the call asks, is denied, never runs, and the model is told", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "kit-"));
    try {
      const model = scriptedModel([
        { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "x" } }] },
        { text: "ok" },
      ]);
      const run = await runAgent(
        { provider: model, tools: write(cwd), permissions: createPermissions({ cwd }) },
        "go",
      );
      expect(run.toolCalls[0]).toMatchObject({ approval: "denied", executed: false, isError: true });
      assertEventOrder(run, [
        "approval_requested",
        { type: "approval_decided", approved: false },
        "agent_end",
      ]);
      expect(existsSync(join(cwd, "a.txt"))).toBe(false);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("approves with 'approve' or by a function", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "kit-"));
    try {
      const script = () => [
        { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "x" } }] },
        { text: "ok" },
      ];
      const options = () => ({ tools: write(cwd), permissions: createPermissions({ cwd }) });
      const approved = await runAgent({ ...options(), provider: scriptedModel(script()) }, "go", {
        approve: "approve",
      });
      expect(approved.toolCalls[0]).toMatchObject({ approval: "approved", executed: true, isError: false });
      expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("x");

      const seen: string[] = [];
      const refused = await runAgent({ ...options(), provider: scriptedModel(script()) }, "go", {
        approve: (request) => {
          seen.push(request.toolName);
          return "not in tests";
        },
      });
      expect(seen).toEqual(["write_file"]);
      expect(refused.toolCalls[0]!.result?.content).toEqual([
        { type: "text", text: "The user denied this tool call: not in tests" },
      ]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe("the test clock", () => {
  it("a stalled stream is abandoned after the watchdog's three minutes, without waiting them", async () => {
    clock = createTestClock({ now: 1_000_000 }).install();
    const started = performance.now();
    const model = scriptedModel([{ stall: true }, { text: "back" }]);
    const run = await runAgent({ provider: model, retry: { jitter: 0 } }, "hi", { clock });
    expect(performance.now() - started).toBeLessThan(5_000);
    assertEventOrder(run, [
      {
        type: "retry",
        error: "The model stream stalled: no first event within 180 s (stallTimeout.firstEventMs)",
      },
      { type: "agent_end", reason: "stop" },
    ]);
    expect(clock.now() - 1_000_000).toBeGreaterThanOrEqual(180_000);
    expect(Date.now()).toBe(clock.now());
  });

  it("a stall after the text, under the idle limit", async () => {
    clock = createTestClock().install();
    const model = scriptedModel([{ text: "partial", stall: "afterText" }, { text: "whole" }]);
    const run = await runAgent(
      { provider: model, retry: { jitter: 0 }, stallTimeout: { idleMs: 30_000 } },
      "hi",
      { clock },
    );
    assertEventOrder(run, [
      { type: "retry", error: expect.stringContaining("no event for 30 s") },
      { type: "message_end", discarded: true },
      "agent_end",
    ]);
    expect(run.outcome.messages.at(-1)).toMatchObject({ content: [{ type: "text", text: "whole" }] });
  });

  it("maxDurationMs ends a run mid-tool in clock time", async () => {
    clock = createTestClock().install();
    const model = scriptedModel([{ toolCalls: [{ name: "slow" }] }], { requireAllSteps: true });
    const run = await runAgent({ provider: model, tools: [slow], limits: { maxDurationMs: 60_000 } }, "go", {
      clock,
    });
    assertEndedWith(run, "limit");
    assertEventOrder(run, [{ type: "limit_reached", limit: "maxDurationMs" }, "agent_end"]);
    expect(run.toolCalls[0]).toMatchObject({ name: "slow", isError: true, executed: true });
    assertValidTranscript(run);
  });

  it("a tool timeout and the retry backoff pass in clock time", async () => {
    clock = createTestClock({ now: 0 }).install();
    const model = scriptedModel([
      { error: { kind: "overloaded", message: "busy" } },
      { toolCalls: [{ name: "slow" }] },
      { text: "gave up waiting" },
    ]);
    const run = await runAgent({ provider: model, tools: [slow], toolTimeoutMs: 120_000 }, "go", { clock });
    expect(run.toolCalls[0]?.result?.content).toEqual([
      { type: "text", text: "Tool slow timed out after 120000 ms" },
    ]);
    const retry = run.events.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ attempt: 1 });
    // The default policy's first delay (1 s ± 20 %), then the two minutes of the tool's timeout.
    expect(clock.now()).toBeGreaterThanOrEqual(120_000 + 800);
    expect(clock.now()).toBeLessThan(120_000 + 1_300);
    assertEndedWith(run, "stop");
  });

  it("a run that never ends makes runAgent throw instead of hanging", async () => {
    clock = createTestClock().install();
    const model = scriptedModel([{ stall: true }]);
    await expect(
      runAgent({ provider: model, stallTimeout: false }, "hi", { clock, realTimeoutMs: 200 }),
    ).rejects.toThrow(/the run did not end: .*nothing happened for 200 ms and no timer is pending/);
  });
});

describe("runTool", () => {
  it("runs a tool with its schema, a context and the result as the agent records it", async () => {
    expect(await runTool(add, { a: 2, b: 3 })).toMatchObject({ text: "5", isError: false, aborted: false });
    const invalid = await runTool(add, { a: "2" });
    expect(invalid.isError).toBe(true);
    expect(invalid.text).toMatch(/^Validation failed for tool "add"/);
  });

  it("collects updates and progress; a timeout aborts the tool's signal (clock time)", async () => {
    clock = createTestClock().install();
    const running = runTool(slow, {}, { timeoutMs: 1_000 });
    await clock.advance(1_000);
    const run = await running;
    expect(run).toMatchObject({
      text: "Tool slow timed out after 1000 ms",
      isError: true,
      aborted: true,
      progress: ["started"],
      updates: [{ content: [{ type: "text", text: "a quarter" }] }],
    });
  });

  it("a thrown error becomes an error result, and the test's own signal aborts the call", async () => {
    const boom = defineTool({
      name: "boom",
      description: "Throws",
      parameters: z.object({}),
      execute: (_, { idempotencyKey }) => {
        throw new Error(`failed ${idempotencyKey}`);
      },
    });
    const thrown = await runTool(boom, {}, { toolCallId: "c7" });
    expect(thrown).toMatchObject({ text: "failed c7", isError: true });
    expect(thrown.error).toBeInstanceOf(Error);

    const controller = new AbortController();
    const running = runTool(slow, {}, { signal: controller.signal });
    controller.abort();
    expect(await running).toMatchObject({ text: "Tool slow aborted", isError: true, aborted: true });
  });
});

describe("createTestWorkspace", () => {
  it("holds the given files, reads them back, lists every file and is gone after remove()", async () => {
    const ws = createTestWorkspace({ "a.txt": "hello", "src/b.ts": "export {}", ".git/HEAD": "ref" });
    const write = codingTools({ cwd: ws.cwd }).find((t) => t.name === "write_file")!;
    expect(await runTool(write, { path: "new/c.md", content: "# c" })).toMatchObject({ isError: false });
    expect((await runTool(write, { path: ".git/HEAD", content: "x" })).isError).toBe(true);
    expect(ws.read("new/c.md")).toBe("# c");
    expect(ws.read("missing.txt")).toBeUndefined();
    expect(ws.files()).toEqual([".git/HEAD", "a.txt", "new/c.md", "src/b.ts"]);
    expect(ws.workspace.root).toBe(ws.cwd);
    ws.remove();
    expect(existsSync(ws.cwd)).toBe(false);
  });
});

describe("assertions", () => {
  it("pass on a good run and fail with a message that says what is wrong", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "5" }]);
    const run = await runAgent({ provider: model, tools: [add] }, "Add");
    assertValidTranscript(run);
    assertEventInvariants(run);
    assertToolCalled(run, "add", { a: 2 });
    assertToolCalled(run, "add", { a: (n: number) => n > 1, b: 3 }, { times: 1 });
    assertEventOrder(run, ["tool_execution_start", "tool_execution_end", "turn_end", "agent_end"]);
    assertEndedWith(run, "stop");
    assertNoSecrets(run, { secrets: ["sk-ant-not-here-0000000000"] });

    expect(() => assertToolCalled(run, "add", { a: 9 })).toThrow(
      'Expected a call of add({"a":9}), found 0. Calls made: add({"a":2,"b":3})',
    );
    expect(() => assertEventOrder(run, ["agent_end", "agent_start"])).toThrow(/expected agent_start \(#2/);
    expect(() => assertEndedWith(run, "limit")).toThrow(
      'Expected the run to end with "limit", it ended with "stop"',
    );
    const broken = [...run.transcript];
    broken.splice(2, 1);
    expect(() => assertValidTranscript(broken)).toThrow(
      /message 2: a new assistant message while calls are unanswered: call_0_0/,
    );
    expect(() => assertValidTranscript(run.transcript.slice(0, 2))).toThrow(/calls never answered: call_0_0/);
    expect(() => assertEventInvariants(run.events.slice(0, -1))).toThrow(/does not end with agent_end/);
  });

  it("assertNoSecrets finds a key in an event and anything shaped like one", async () => {
    const leaky = defineTool({
      name: "env",
      description: "Prints a key (the bug)",
      parameters: z.object({}),
      execute: () => "key=sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    });
    const model = scriptedModel([{ toolCalls: [{ name: "env" }] }, { text: "done" }]);
    const run = await runAgent({ provider: model, tools: [leaky] }, "go");
    expect(() => assertNoSecrets(run)).toThrow(/something shaped like an API key: sk-pro/);
    expect(() => assertNoSecrets({ header: "Bearer my-own-token" }, { secrets: ["my-own-token"] })).toThrow(
      /the value contains the secret my-own/,
    );
  });
});

describe("the fake provider server", () => {
  it("serves a real provider adapter (Anthropic's SDK) and keeps the key out of events and snapshot", async () => {
    const server = await startProviderServer();
    try {
      server.reply({
        type: "sse",
        frames: anthropicMessage({ blocks: [{ type: "text", text: ["Hel", "lo"] }] }),
      });
      const apiKey = "sk-ant-test-0123456789abcdefghij";
      const provider = anthropic({ model: "claude-haiku-4-5", apiKey, baseURL: server.url });
      const run = await runAgent({ provider }, "Hi");
      expect(run.outcome.messages.at(-1)).toMatchObject({ content: [{ type: "text", text: "Hello" }] });
      expect(JSON.stringify(server.requests[0]!.headers)).toContain(apiKey);
      assertNoSecrets(run, { secrets: [apiKey] });
    } finally {
      await server.close();
    }
  });
});
