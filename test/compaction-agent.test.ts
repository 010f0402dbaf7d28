// Compaction inside the agent machine: the `compacting` state, the `compaction` event, calibration
// by reported usage, and recovery from a provider's context_overflow.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentEvent, ContextConfig, ProviderRequest, ScriptedStep } from "../index.js";
import {
  createAgent,
  defineTool,
  isCompactionMessage,
  isCompactionSummary,
  scripted,
  summarizerFromProvider,
} from "../index.js";
import { expectEventInvariants, expectValidTranscript, record } from "./helpers.js";

const SYSTEM_PROMPT = `You are a careful engineer. ${"Follow the house rules. ".repeat(200)}`;

/** A tool whose output is `lines` lines long, like reading a file. */
const readTool = defineTool({
  name: "read",
  description: "Reads a file",
  parameters: z.object({ path: z.string(), lines: z.number() }),
  execute: async ({ path, lines }) =>
    Array.from({ length: lines }, (_, i) => `${path}:${i + 1} const value${i} = compute(${i});`).join("\n"),
});

/**
 * The model's own count of a request: every character of the system prompt, the tool schemas and
 * the messages at `charsPerToken`, plus a few tokens of framing per message.
 */
function modelTokens(request: ProviderRequest, charsPerToken: number): number {
  let chars = (request.systemPrompt?.length ?? 0) + JSON.stringify(request.tools).length;
  for (const m of request.messages) {
    if (typeof m.content === "string") chars += m.content.length;
    else
      for (const b of m.content) {
        if (b.type === "text") chars += b.text.length;
        else if (b.type === "toolCall")
          chars += b.id.length + b.name.length + JSON.stringify(b.arguments).length;
      }
    if (m.role === "toolResult") chars += m.toolName.length + m.toolCallId.length;
  }
  return Math.ceil(chars / charsPerToken) + 4 * request.messages.length;
}

/**
 * A model with a `limit`-token window: it answers `context_overflow` to a longer request, and
 * otherwise reads one more file per call (`turns` calls), then stops. Usage is reported the way
 * real providers do: the whole prompt as input.
 */
function modelWithWindow(limit: number, turns: number, charsPerToken = 4) {
  const seen: { tokens: number; overflow: boolean }[] = [];
  let answered = 0;
  const provider = scripted((request): ScriptedStep => {
    const tokens = modelTokens(request, charsPerToken);
    const overflow = tokens > limit;
    seen.push({ tokens, overflow });
    if (overflow) {
      return {
        error: {
          kind: "context_overflow",
          message: `prompt is too long: ${tokens} tokens > ${limit} maximum`,
        },
      };
    }
    answered++;
    const usage = { input: tokens, output: 20 };
    if (answered > turns) return { text: "All files read.", usage };
    return {
      text: `Reading file ${answered}.`,
      toolCalls: [{ name: "read", arguments: { path: `src/f${answered}.ts`, lines: 120 } }],
      usage,
    };
  });
  return { provider, seen };
}

function compactionsOf(events: readonly AgentEvent[]) {
  return events.filter((e): e is Extract<AgentEvent, { type: "compaction" }> => e.type === "compaction");
}

describe("compaction in the agent", () => {
  it("compacts before the model call that would overflow, so the model never sees too much", async () => {
    const limit = 12_000;
    const { provider, seen } = modelWithWindow(limit, 60);
    const context: ContextConfig = { maxContextTokens: limit, keepRecent: 4 };
    const agent = createAgent({ provider, systemPrompt: SYSTEM_PROMPT, tools: [readTool], context });
    const events = record(agent);
    const states: string[] = [];
    agent.snapshot$.subscribe((s) => states.push(JSON.stringify(s.value)));

    await agent.prompt("Read every file in src/.");

    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("stop");
    // Calibration by reported usage sees the system prompt and tool schemas: no request overflowed.
    expect(seen.filter((s) => s.overflow)).toEqual([]);
    expect(Math.max(...seen.map((s) => s.tokens))).toBeLessThanOrEqual(limit);
    const compactions = compactionsOf(events);
    expect(compactions.length).toBeGreaterThan(2);
    // ...and it compacts only when needed: the measured overhead is the system prompt and tools,
    // not the whole previous prompt.
    const overhead = modelTokens(
      { systemPrompt: SYSTEM_PROMPT, messages: [], tools: provider.requests[0].tools },
      4,
    );
    for (const c of compactions) {
      expect(c.tokensBefore + overhead).toBeGreaterThan(limit);
      expect(c.tokensAfter).toBeLessThan(c.tokensBefore);
      expect([1, 2, 3]).toContain(c.level);
    }
    // The machine is visibly in `compacting` while it compacts.
    expect(states.some((s) => s.includes('"compacting":"reducing"'))).toBe(true);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
    expect(agent.messages[0]).toMatchObject({ role: "user", content: "Read every file in src/." });
    expect(agent.messages.filter(isCompactionMessage).length).toBeGreaterThanOrEqual(1);
  });

  it("emits each compaction between turn_start and the assistant's message of that turn", async () => {
    const { provider } = modelWithWindow(6_000, 20);
    const agent = createAgent({
      provider,
      systemPrompt: SYSTEM_PROMPT,
      tools: [readTool],
      context: { maxContextTokens: 6_000, keepRecent: 4 },
    });
    const events = record(agent);
    await agent.prompt("Read the files.");
    const types = events.map((e) => (e.type === "message_start" ? `start:${e.message.role}` : e.type));
    let checked = 0;
    types.forEach((type, i) => {
      if (type !== "compaction") return;
      const before = types.slice(0, i).lastIndexOf("turn_start");
      const next = types.indexOf("start:assistant", i);
      expect(before).toBeGreaterThanOrEqual(0);
      expect(
        types.slice(before + 1, i).every((t) => !t.startsWith("start:assistant") && t !== "turn_end"),
      ).toBe(true);
      expect(next).toBeGreaterThan(i);
      checked++;
    });
    expect(checked).toBeGreaterThan(0);
  });

  it("recovers from a context_overflow by compacting deeper and retrying the turn once", async () => {
    // The model counts 3 characters a token where we estimate 4: our budget is too generous.
    const limit = 10_000;
    const { provider, seen } = modelWithWindow(limit, 40, 3);
    const agent = createAgent({
      provider,
      systemPrompt: SYSTEM_PROMPT,
      tools: [readTool],
      context: { maxContextTokens: limit, keepRecent: 4 },
    });
    const events = record(agent);
    await agent.prompt("Read the files.");

    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("stop");
    const overflows = seen.flatMap((s, i) => (s.overflow ? [i] : []));
    expect(overflows.length).toBeGreaterThan(0);
    // Every overflowed request was followed by a retry that fitted.
    for (const i of overflows) {
      expect(seen[i + 1].overflow).toBe(false);
      expect(seen[i + 1].tokens).toBeLessThan(seen[i].tokens);
    }
    expect(compactionsOf(events).length).toBeGreaterThanOrEqual(overflows.length);
    // Each refused attempt's message is closed, marked discarded, and kept out of the transcript.
    const discarded = events.flatMap((e) => (e.type === "message_end" && e.discarded ? [e.message] : []));
    expect(discarded).toHaveLength(overflows.length);
    for (const message of discarded) {
      expect(message).toMatchObject({ role: "assistant", stopReason: "error" });
      expect(agent.messages).not.toContain(message);
    }
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("survives one tool output bigger than the whole window", async () => {
    const limit = 8_000;
    const seen: boolean[] = [];
    const provider = scripted((request, call): ScriptedStep => {
      const tokens = modelTokens(request, 4);
      seen.push(tokens > limit);
      if (tokens > limit) return { error: { kind: "context_overflow", message: "prompt is too long" } };
      if (call === 0) return { toolCalls: [{ name: "read", arguments: { path: "dump.log", lines: 3_000 } }] };
      return { text: "The log is long; its head and tail look fine.", usage: { input: tokens } };
    });
    const agent = createAgent({ provider, tools: [readTool], context: { maxContextTokens: limit } });
    const events = record(agent);
    await agent.prompt("Read dump.log.");
    expect(seen).toEqual([false, true, false]);
    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("stop");
    expect(JSON.stringify(agent.messages)).toContain("lines truncated ...]");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("ends the run with a clear error when the retried turn overflows again", async () => {
    const provider = scripted(() => ({ error: { kind: "context_overflow", message: "prompt is too long" } }));
    const agent = createAgent({
      provider,
      context: { maxContextTokens: 100_000, keepFirst: 1, keepRecent: 1 },
    });
    const events = record(agent);
    await agent.prompt([
      { role: "user", content: "first", timestamp: 1 },
      { role: "user", content: "x".repeat(4_000), timestamp: 2 },
      { role: "user", content: "last", timestamp: 3 },
    ]);
    // Each retry is smaller (a summary, then the bare marker); once nothing is left to remove, no
    // futile request is sent.
    expect(provider.calls).toBe(3);
    expect(compactionsOf(events).map((c) => c.level)).toEqual([2, 3]);
    const learned = events.filter((e) => e.type === "context_window_learned");
    expect(learned.map((e) => e.maxContextTokens)).toEqual([913, 59, 27]);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "agent_end", reason: "error", errorKind: "context_overflow" });
    expect(end.type === "agent_end" && end.errorMessage).toBe(
      "The conversation does not fit the model's context window: even compacted to the smallest the rules allow (the first message, a marker, the most recent turns), the model refused it. Kept: the compacted transcript, your last message included (3 messages, about 30 tokens by our estimate; the model's window is now taken to be about 27 tokens). What you can do: make the last message or tool output shorter, lower context.keepRecent, use a model with a larger context window, or start a new session. (Provider: prompt is too long)",
    );
    expectEventInvariants(events);
  });

  it("does nothing without a context config, or while the context fits", async () => {
    const { provider } = modelWithWindow(1_000_000, 3);
    const agent = createAgent({ provider, tools: [readTool], context: { maxContextTokens: 1_000_000 } });
    const events = record(agent);
    await agent.prompt("Read three files.");
    expect(compactionsOf(events)).toEqual([]);
    expect(agent.messages.filter(isCompactionMessage)).toEqual([]);
  });
});

describe("compaction with an LLM summariser in the agent", () => {
  /** The agent's model, which also writes summaries when asked without tools. */
  function modelThatSummarises(limit: number, turns: number, summaryDelayMs = 0) {
    const summaryRequests: number[] = [];
    let answered = 0;
    const provider = scripted((request): ScriptedStep => {
      const tokens = modelTokens(request, 4);
      if (tokens > limit) return { error: { kind: "context_overflow", message: "prompt is too long" } };
      if (request.tools.length === 0) {
        summaryRequests.push(tokens);
        return {
          text: `Summary ${summaryRequests.length}: read files 1..${answered}.`,
          delayMs: summaryDelayMs,
        };
      }
      answered++;
      const usage = { input: tokens };
      if (answered > turns) return { text: "All read.", usage };
      return { toolCalls: [{ name: "read", arguments: { path: `src/f${answered}.ts`, lines: 100 } }], usage };
    });
    return { provider, summaryRequests };
  }

  it("summarises old turns with the model itself, each summary request within the window", async () => {
    const limit = 9_000;
    const { provider, summaryRequests } = modelThatSummarises(limit, 40);
    const agent = createAgent({
      provider,
      tools: [readTool],
      context: { maxContextTokens: limit, keepRecent: 4, summarizer: summarizerFromProvider(provider) },
    });
    const events = record(agent);
    await agent.prompt("Read everything.");
    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("stop");
    expect(summaryRequests.length).toBeGreaterThan(0);
    expect(Math.max(...summaryRequests)).toBeLessThanOrEqual(limit);
    const summaries = agent.messages.filter(isCompactionSummary);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ details: { method: "summarizer" } });
    expect(compactionsOf(events).some((c) => c.level === 2)).toBe(true);
  });

  it("an abort while the summary is being written ends the run cleanly", async () => {
    const limit = 6_000;
    const { provider } = modelThatSummarises(limit, 40, 10_000);
    const agent = createAgent({
      provider,
      tools: [readTool],
      context: { maxContextTokens: limit, keepRecent: 4, summarizer: summarizerFromProvider(provider) },
    });
    const events = record(agent);
    agent.snapshot$.subscribe((s) => {
      if (JSON.stringify(s.value).includes('"compacting":"reducing"')) agent.abort();
    });
    await agent.prompt("Read everything.");
    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("aborted");
    expect(compactionsOf(events)).toEqual([]);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });
});

describe("context config validation", () => {
  it("rejects a bad budget when the agent is created, naming the field", () => {
    expect(() => createAgent({ provider: scripted([]), context: { maxContextTokens: -5 } })).toThrow(
      "ContextConfig.maxContextTokens must be a positive number, got -5",
    );
    expect(() =>
      createAgent({ provider: scripted([]), context: { maxContextTokens: 1_000, targetRatio: 2 } }),
    ).toThrow(/targetRatio/);
  });
});
