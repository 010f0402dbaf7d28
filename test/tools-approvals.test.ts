import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type AgentOptions,
  createAgent,
  createPermissions,
  defineTool,
  type ScriptedStep,
  scripted,
  type ToolResultMessage,
} from "../index.js";

/** A mutating tool (asks in default mode) that counts its executions. */
function noteTool() {
  const written: string[] = [];
  const tool = defineTool({
    name: "write_note",
    description: "Writes a note",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      written.push(text);
      return `noted: ${text}`;
    },
  });
  return { tool, written };
}

const lookup = defineTool({
  name: "lookup",
  description: "Looks something up",
  parameters: z.object({ key: z.string() }),
  readOnly: true,
  execute: async ({ key }) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return `value of ${key}`;
  },
});

function collect(agent: ReturnType<typeof createAgent>) {
  const events: AgentEvent[] = [];
  const waiters: { predicate: (e: AgentEvent) => boolean; resolve: (e: AgentEvent) => void }[] = [];
  agent.events$.subscribe((event) => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  });
  const next = (predicate: (e: AgentEvent) => boolean) => {
    const seen = events.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise<AgentEvent>((resolve) => waiters.push({ predicate, resolve }));
  };
  return { events, next };
}

const toolResults = (messages: readonly unknown[]) =>
  (messages as { role: string }[]).filter((m) => m.role === "toolResult") as ToolResultMessage[];
const textOf = (message: ToolResultMessage) =>
  message.content.map((c) => (c.type === "text" ? c.text : "")).join("");

function twoCallScript(): ScriptedStep[] {
  return [
    {
      toolCalls: [
        { id: "call_write", name: "write_note", arguments: { text: "hello" } },
        { id: "call_lookup", name: "lookup", arguments: { key: "k" } },
      ],
    },
    { text: "done" },
  ];
}

describe("approvals with createPermissions", () => {
  it("asks for the mutating call while its parallel sibling runs to the end, then runs it once approved", async () => {
    const { tool, written } = noteTool();
    const provider = scripted(twoCallScript());
    const agent = createAgent({
      provider,
      tools: [tool, lookup],
      permissions: createPermissions({ mode: "default" }),
    });
    const { events, next } = collect(agent);
    const run = agent.prompt("go");

    const request = await next((e) => e.type === "approval_requested");
    expect(request).toMatchObject({
      toolCallId: "call_write",
      toolName: "write_note",
      args: { text: "hello" },
    });
    // The read-only sibling was not held back by the pending approval.
    await next((e) => e.type === "tool_execution_end" && e.toolCallId === "call_lookup");
    expect(agent.pendingApprovals()).toEqual([
      { toolCallId: "call_write", toolName: "write_note", args: { text: "hello" } },
    ]);
    expect(written).toEqual([]);

    agent.approve("call_write");
    await run;
    expect(written).toEqual(["hello"]);
    const results = toolResults(agent.messages);
    expect(results.map((m) => [m.toolCallId, textOf(m), m.isError])).toEqual([
      ["call_write", "noted: hello", false],
      ["call_lookup", "value of k", false],
    ]);
    const order = events
      .filter((e) => e.type === "approval_requested" || e.type === "tool_execution_end")
      .map((e) => `${e.type}:${(e as { toolCallId: string }).toolCallId}`);
    expect(order).toEqual([
      "approval_requested:call_write",
      "tool_execution_end:call_lookup",
      "tool_execution_end:call_write",
    ]);
  });

  it("never executes a denied call, and the model sees the reason", async () => {
    const { tool, written } = noteTool();
    const provider = scripted(twoCallScript());
    const agent = createAgent({ provider, tools: [tool, lookup], permissions: createPermissions() });
    const { next } = collect(agent);
    const run = agent.prompt("go");
    await next((e) => e.type === "approval_requested");
    agent.deny("call_write", "not in this folder");
    await run;

    expect(written).toEqual([]);
    const denied = toolResults(agent.messages).find((m) => m.toolCallId === "call_write")!;
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toBe("The user denied this tool call: not in this folder");
    // What the provider received on the next turn carries the refusal.
    const secondRequest = provider.requests[1]!;
    const seen = toolResults(secondRequest.messages).find((m) => m.toolCallId === "call_write")!;
    expect(textOf(seen)).toBe("The user denied this tool call: not in this folder");
  });

  it("rejects a decision for an unknown id and for an already-decided one, leaving the real one pending", async () => {
    const { tool, written } = noteTool();
    const agent = createAgent({
      provider: scripted(twoCallScript()),
      tools: [tool, lookup],
      permissions: createPermissions(),
    });
    const { next } = collect(agent);
    expect(() => agent.approve("call_write")).toThrow(/No pending approval for tool call "call_write"/);
    const run = agent.prompt("go");
    await next((e) => e.type === "approval_requested");

    expect(() => agent.approve("call_nope")).toThrow(
      /No pending approval for tool call "call_nope": it is unknown/,
    );
    expect(() => agent.deny("call_nope", "x")).toThrow(/call_nope/);
    // Answering the other call (which never asked) is refused too.
    await next((e) => e.type === "tool_execution_end" && e.toolCallId === "call_lookup");
    expect(() => agent.approve("call_lookup")).toThrow(/call_lookup/);
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["call_write"]);

    agent.approve("call_write");
    expect(() => agent.approve("call_write")).toThrow(/call_write/);
    expect(() => agent.deny("call_write")).toThrow(/call_write/);
    await run;
    expect(written).toEqual(["hello"]);
  });

  it("accepts an answer given synchronously inside the approval_requested listener", async () => {
    const { tool, written } = noteTool();
    const agent = createAgent({
      provider: scripted(twoCallScript()),
      tools: [tool, lookup],
      permissions: createPermissions(),
    });
    agent.events$.subscribe((event) => {
      if (event.type === "approval_requested") agent.approve(event.toolCallId);
    });
    await agent.prompt("go");
    expect(written).toEqual(["hello"]);
  });

  it("denies without asking in plan mode, telling the model it is in plan mode", async () => {
    const { tool, written } = noteTool();
    const provider = scripted(twoCallScript());
    const agent = createAgent({
      provider,
      tools: [tool, lookup],
      permissions: createPermissions({ mode: "plan" }),
    });
    const { events } = collect(agent);
    await agent.prompt("go");
    expect(events.some((e) => e.type === "approval_requested")).toBe(false);
    expect(written).toEqual([]);
    const results = toolResults(agent.messages);
    expect(textOf(results[0]!)).toMatch(/^You are in plan mode: write_note changes things/);
    expect(textOf(results[1]!)).toBe("value of k");
  });

  it("keeps a pending approval across persist → restore and asks only the undecided call again", async () => {
    const { tool, written } = noteTool();
    const script: ScriptedStep[] = [
      {
        toolCalls: [
          { id: "call_a", name: "write_note", arguments: { text: "a" } },
          { id: "call_b", name: "write_note", arguments: { text: "b" } },
        ],
      },
      { text: "both handled" },
    ];
    const options: AgentOptions = {
      provider: scripted(script),
      tools: [tool],
      permissions: createPermissions(),
    };
    const first = createAgent(options);
    const firstEvents = collect(first);
    void first.prompt("go");
    await firstEvents.next((e) => e.type === "approval_requested" && e.toolCallId === "call_b");
    await firstEvents.next((e) => e.type === "approval_requested" && e.toolCallId === "call_a");
    first.approve("call_a");
    await firstEvents.next((e) => e.type === "tool_execution_end" && e.toolCallId === "call_a");
    expect(written).toEqual(["a"]);
    const snapshot = first.getPersistedSnapshot();
    first.stop();

    // The restored agent continues from the snapshot with a provider that plays the rest of the script.
    const restored = createAgent({
      ...options,
      provider: scripted((_request, call) => script[call + 1]!),
      snapshot,
    });
    const { events, next } = collect(restored);
    await next((e) => e.type === "approval_requested");
    expect(
      events
        .filter((e) => e.type === "approval_requested")
        .map((e) => (e as { toolCallId: string }).toolCallId),
    ).toEqual(["call_b"]);
    expect(restored.pendingApprovals().map((p) => p.toolCallId)).toEqual(["call_b"]);
    expect(() => restored.approve("call_a")).toThrow(/call_a/);

    const end = next((e) => e.type === "agent_end");
    restored.approve("call_b");
    await end;
    expect(written).toEqual(["a", "b"]);
    expect(toolResults(restored.messages).map((m) => [m.toolCallId, textOf(m)])).toEqual([
      ["call_a", "noted: a"],
      ["call_b", "noted: b"],
    ]);
  });
});
