import { describe, expect, it } from "vitest";
import { createAgent, scripted } from "../index.js";
import { expectEventInvariants, expectValidTranscript, record, sleepTool, trace } from "./helpers.js";

const wait = (id: string, ms: number, label = id) => ({ id, name: "wait", arguments: { ms, label } });

describe("event order", () => {
  it("text-only run: agent_start, one turn, agent_end last", async () => {
    const agent = createAgent({ provider: scripted([{ text: "Hello there" }]) });
    const events = record(agent);
    const { messages: newMessages } = await agent.prompt("hi");

    expect(trace(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    const updates = events.filter((e) => e.type === "message_update");
    expect(updates.map((e) => (e.type === "message_update" ? e.delta : "")).join("")).toBe("Hello there");
    expect(newMessages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("stop");
    expectEventInvariants(events);
  });

  it("one tool turn: tool events sit between the assistant message and its result", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [wait("a", 1)] }, { text: "done" }]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    await agent.prompt("go");

    expect(trace(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "message_start:assistant",
      "message_end:assistant",
      "tool_execution_start:a",
      "tool_execution_end:a",
      "message_start:toolResult",
      "message_end:toolResult",
      "turn_end",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    const turnEnd = events.find((e) => e.type === "turn_end");
    expect(turnEnd?.type === "turn_end" && turnEnd.toolResults.map((r) => r.toolCallId)).toEqual(["a"]);
    expectValidTranscript(agent.messages);
  });

  it("three parallel tools: all start, ends in finish order, results in call order", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [wait("a", 60), wait("b", 10), wait("c", 35)] }, { text: "ok" }]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    await agent.prompt("go");

    const tools = trace(events).filter((t) => t.startsWith("tool_") || t === "message_start:toolResult");
    expect(tools).toEqual([
      "tool_execution_start:a",
      "tool_execution_start:b",
      "tool_execution_start:c",
      "tool_execution_end:b",
      "tool_execution_end:c",
      "tool_execution_end:a",
      "message_start:toolResult",
      "message_start:toolResult",
      "message_start:toolResult",
    ]);
    const results = agent.messages.filter((m) => m.role === "toolResult");
    expect(results.map((m) => m.role === "toolResult" && m.toolCallId)).toEqual(["a", "b", "c"]);
    expectEventInvariants(events);
  });

  it("sequential: each call starts after the previous ended and its result is appended at once", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [wait("a", 5), wait("b", 5), wait("c", 5)] }, { text: "ok" }]),
      tools: [sleepTool()],
      toolExecution: "sequential",
    });
    const events = record(agent);
    await agent.prompt("go");
    const tools = trace(events).filter((t) => t.startsWith("tool_") || t === "message_end:toolResult");
    expect(tools).toEqual([
      "tool_execution_start:a",
      "tool_execution_end:a",
      "message_end:toolResult",
      "tool_execution_start:b",
      "tool_execution_end:b",
      "message_end:toolResult",
      "tool_execution_start:c",
      "tool_execution_end:c",
      "message_end:toolResult",
    ]);
    expectEventInvariants(events);
  });

  it("batched: calls run n at a time, each batch's results appended when it completes", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [wait("a", 150), wait("b", 5), wait("c", 5), wait("d", 150)] },
        { text: "ok" },
      ]),
      tools: [sleepTool()],
      toolExecution: { batched: 2 },
    });
    const events = record(agent);
    await agent.prompt("go");
    const tools = trace(events).filter((t) => t.startsWith("tool_") || t === "message_end:toolResult");
    expect(tools).toEqual([
      "tool_execution_start:a",
      "tool_execution_start:b",
      "tool_execution_end:b",
      "tool_execution_end:a",
      "message_end:toolResult",
      "message_end:toolResult",
      "tool_execution_start:c",
      "tool_execution_start:d",
      "tool_execution_end:c",
      "tool_execution_end:d",
      "message_end:toolResult",
      "message_end:toolResult",
    ]);
    expectEventInvariants(events);
  });

  it("auto: runs of concurrency-safe calls run together, any other call alone, in order", async () => {
    const read = sleepTool({ name: "read", readOnly: true });
    const write = sleepTool({ name: "write" });
    const call = (id: string, name: string, ms: number) => ({ id, name, arguments: { ms, label: id } });
    const agent = createAgent({
      provider: scripted([
        {
          toolCalls: [
            call("r1", "read", 150), // a wide margin: r2 (5 ms) must end first even on a loaded machine
            call("r2", "read", 5),
            call("w1", "write", 5),
            call("r3", "read", 5),
          ],
        },
        { text: "ok" },
      ]),
      tools: [read, write],
      toolExecution: "auto",
    });
    const events = record(agent);
    await agent.prompt("go");
    const tools = trace(events).filter((t) => t.startsWith("tool_"));
    expect(tools).toEqual([
      "tool_execution_start:r1",
      "tool_execution_start:r2",
      "tool_execution_end:r2",
      "tool_execution_end:r1",
      "tool_execution_start:w1",
      "tool_execution_end:w1",
      "tool_execution_start:r3",
      "tool_execution_end:r3",
    ]);
    expect(
      agent.messages
        .filter((m) => m.role === "toolResult")
        .map((m) => m.role === "toolResult" && m.toolCallId),
    ).toEqual(["r1", "r2", "w1", "r3"]);
    expectEventInvariants(events);
  });

  it("message_update carries the delta, the kind and the growing message", async () => {
    const agent = createAgent({
      provider: scripted([
        { thinking: "hmm", text: "abcdef", chunkSize: 2, toolCalls: [wait("a", 1)] },
        { text: "x" },
      ]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    await agent.prompt("go");
    const first = events.find((e) => e.type === "message_start" && e.message.role === "assistant");
    const updates = events.flatMap((e) =>
      e.type === "message_update" && first?.type === "message_start" && e.message === first.message
        ? [e]
        : [],
    );
    expect(updates.filter((u) => u.kind === "text_delta").map((u) => u.delta)).toEqual(["ab", "cd", "ef"]);
    const lastText = updates.filter((u) => u.kind === "text_delta").at(-1)!;
    expect(lastText.message.content.find((c) => c.type === "text")).toEqual({ type: "text", text: "abcdef" });
    expect(updates.filter((u) => u.kind === "thinking_delta").map((u) => u.delta)).toEqual(["hm", "m"]);
    expect(updates.some((u) => u.kind === "toolcall_delta")).toBe(true);
    expect(updates.some((u) => u.kind === "toolcall_end")).toBe(true);
  });
});
