import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import {
  type AgentMessage,
  agentMachine,
  createAgent,
  emptyUsage,
  estimateTokens,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  scripted,
} from "../index.js";
import { appendToTranscript, readTranscript, transcriptTokens } from "../rules/transcript.js";
import { sleepTool } from "./helpers.js";

// The transcript grows without a copy per message; what users and tests read must still behave
// like the immutable arrays it used to be.

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 1 });
const reply = (text: string) => ({
  role: "assistant" as const,
  content: [{ type: "text" as const, text }],
  stopReason: "stop" as const,
  usage: emptyUsage(),
  timestamp: 2,
});

describe("the transcript in snapshots", () => {
  it("a snapshot keeps the transcript of its moment while the agent goes on", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    await agent.prompt("first");
    const before = agent.actor.getSnapshot();
    const saved = JSON.stringify(before.context.messages);
    await agent.prompt("second");
    expect(before.context.messages).toHaveLength(2);
    expect(JSON.stringify(before.context.messages)).toBe(saved);
    expect(agent.actor.getSnapshot().context.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("pure transitions from one snapshot branch without seeing each other", () => {
    const [start] = initialTransition(agentMachine, {});
    const [streaming] = transition(agentMachine, start, { type: "PROMPT", messages: [user("hi")] });
    const [a] = transition(agentMachine, streaming, {
      type: "STREAM_DONE",
      message: reply("branch a"),
      started: false,
    });
    const [b] = transition(agentMachine, streaming, {
      type: "STREAM_DONE",
      message: reply("branch b"),
      started: false,
    });
    expect(streaming.context.messages).toMatchObject([user("hi")]);
    expect(a.context.messages).toMatchObject([user("hi"), reply("branch a")]);
    expect(b.context.messages).toMatchObject([user("hi"), reply("branch b")]);
    // Each branch's reply got its own id as it entered its transcript.
    expect(a.context.messages[1]!.id).not.toBe(b.context.messages[1]!.id);
  });

  it("the messages a caller passes in are never changed", async () => {
    const history: AgentMessage[] = [user("earlier"), reply("noted")];
    const agent = createAgent({ provider: scripted([{ text: "more" }]), messages: history });
    await agent.prompt("again");
    expect(history).toHaveLength(2);
    expect(agent.messages).toHaveLength(4);
  });

  it("an agent restored from another's live snapshot has a transcript of its own", async () => {
    const original = createAgent({ provider: scripted([{ text: "a" }, { text: "b" }]) });
    await original.prompt("one");
    const copy = createAgent({
      provider: scripted([{ text: "c" }]),
      snapshot: original.actor.getPersistedSnapshot(),
    });
    await copy.prompt("two (copy)");
    await original.prompt("two (original)");
    expect(copy.messages.map((m) => ("content" in m ? JSON.stringify(m.content) : ""))).toEqual([
      '"one"',
      '[{"type":"text","text":"a"}]',
      '"two (copy)"',
      '[{"type":"text","text":"c"}]',
    ]);
    expect(original.messages.at(-2)).toMatchObject({ content: "two (original)" });
    expect(original.messages).toHaveLength(4);
  });
});

describe("what the model is sent", () => {
  it("a provider that keeps its requests keeps what each turn sent, not later messages", async () => {
    const requests: ProviderRequest[] = [];
    let call = 0;
    const provider: Provider = {
      id: "keeper",
      model: "keeper",
      async *stream(request): AsyncIterable<ProviderEvent> {
        requests.push(request);
        yield { type: "start" };
        if (call++ === 0) {
          yield { type: "toolcall_start", id: "c1", name: "wait" };
          yield { type: "toolcall_end", id: "c1", name: "wait", arguments: { ms: 1, label: "x" } };
          yield { type: "done", stopReason: "toolUse" };
        } else {
          yield { type: "text_delta", delta: "done" };
          yield { type: "done", stopReason: "stop" };
        }
      },
    };
    const agent = createAgent({ provider, tools: [sleepTool()] });
    await agent.prompt("go");
    await agent.prompt("and again");
    expect(requests.map((r) => r.messages.map((m) => m.role))).toEqual([
      ["user"],
      ["user", "assistant", "toolResult"],
      ["user", "assistant", "toolResult", "assistant", "user"],
    ]);
  });

  it("custom messages reach the model through convertToLlm, each turn's own", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const note: AgentMessage = { role: "custom", customType: "note", content: "remember", timestamp: 1 };
    const hidden: AgentMessage = {
      role: "custom",
      customType: "ui",
      content: "x",
      display: "ui-only",
      timestamp: 1,
    };
    const agent = createAgent({ provider, messages: [note, hidden] });
    await agent.prompt("hi");
    await agent.prompt("again");
    expect(provider.requests[0]!.messages).toMatchObject([
      { role: "user", content: "remember", timestamp: 1 },
      { role: "user", content: "hi", timestamp: expect.any(Number) },
    ]);
    expect(provider.requests[0]!.messages).toHaveLength(2);
    expect(provider.requests[1]!.messages).toHaveLength(4);
  });
});

describe("the transcript's running token estimate (what the budget checks read every turn)", () => {
  const tokensOf = (view: readonly AgentMessage[]) => estimateTokens(readTranscript(view));

  it("equals estimateTokens of every view: the newest, an older one, a branch from it, a plain array", () => {
    const first = appendToTranscript([], [user("a".repeat(40))]);
    expect(transcriptTokens(first)).toBe(tokensOf(first));
    const newest = appendToTranscript(first, [reply("b".repeat(400)), user("c")]);
    expect(transcriptTokens(newest)).toBe(tokensOf(newest));
    // An older, shorter view of the same messages, asked after the newer one.
    expect(transcriptTokens(first)).toBe(tokensOf(first));
    // Appending to the older view branches (a copy): neither estimate takes the other's messages.
    const branch = appendToTranscript(first, [reply("d".repeat(4_000))]);
    expect(transcriptTokens(branch)).toBe(tokensOf(branch));
    expect(transcriptTokens(newest)).toBe(tokensOf(newest));
    expect(transcriptTokens(branch)).not.toBe(transcriptTokens(newest));
    const plain = [user("x".repeat(10)), reply("y")];
    expect(transcriptTokens(plain)).toBe(estimateTokens(plain));
  });

  it("keeps counting as a long transcript grows a turn at a time", () => {
    let view: AgentMessage[] = [];
    for (let turn = 0; turn < 300; turn++) {
      view = appendToTranscript(view, [user(`q${turn}`.repeat(turn % 7)), reply("r".repeat(turn))]);
      if (turn % 50 === 0) expect(transcriptTokens(view)).toBe(tokensOf(view));
    }
    expect(transcriptTokens(view)).toBe(tokensOf(view));
  });
});
