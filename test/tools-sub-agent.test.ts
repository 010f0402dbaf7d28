import type { AnyActorRef } from "xstate";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  createAgent,
  defineTool,
  scripted,
  subAgentTool,
  type ToolResultMessage,
} from "../index.js";

const lookup = defineTool({
  name: "lookup",
  description: "Looks a key up",
  parameters: z.object({ key: z.string() }),
  readOnly: true,
  execute: ({ key }) => `${key} = 42`,
});

function parentScript(task: string) {
  return scripted((request, call) => {
    if (call === 0) return { toolCalls: [{ id: "call_sub", name: "researcher", arguments: { task } }] };
    const result = request.messages.find((m) => m.role === "toolResult") as ToolResultMessage;
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    return { text: `Parent got: ${text}` };
  });
}

function recordEvents(agent: ReturnType<typeof createAgent>) {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((event) => events.push(event));
  return events;
}

const textOf = (result: { content: { type: string; text?: string }[] }) =>
  result.content.map((c) => c.text ?? "").join("");

describe("subAgentTool", () => {
  it("streams the child's text and progress into the parent and reports its id", async () => {
    const childProvider = scripted([
      { text: "Let me look.", toolCalls: [{ name: "lookup", arguments: { key: "answer" } }] },
      { text: "The answer is 42.", chunkSize: 4, delayMs: 1 },
    ]);
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      systemPrompt: "You research.",
      tools: [lookup],
      provider: childProvider,
      updateIntervalMs: 0,
    });
    expect(researcher.readOnly).toBe(true);
    const parent = createAgent({ provider: parentScript("what is the answer?"), tools: [researcher] });
    const events = recordEvents(parent);
    await parent.prompt("ask the researcher");

    // The child saw the task and its system prompt.
    expect(childProvider.requests[0]!.systemPrompt).toBe("You research.");
    expect(childProvider.requests[0]!.messages[0]).toMatchObject({
      role: "user",
      content: "what is the answer?",
    });

    const progress = events.filter((e) => e.type === "tool_progress");
    expect(progress.map((e) => e.text)).toEqual(['lookup {"key":"answer"}']);
    const updates = events.filter((e) => e.type === "tool_execution_update");
    expect(updates.length).toBeGreaterThan(1);
    expect(textOf(updates.at(-1)!.partialResult)).toBe("Let me look.\n\nThe answer is 42.");
    expect(updates.every((e) => e.toolCallId === "call_sub")).toBe(true);

    const end = events.find((e) => e.type === "tool_execution_end")!;
    expect(end).toMatchObject({
      toolCallId: "call_sub",
      childAgentId: "researcher-call_sub",
      isError: false,
    });
    expect(textOf(end.result)).toBe("The answer is 42.");
    expect(end.result.details).toMatchObject({
      childAgentId: "researcher-call_sub",
      reason: "stop",
      turns: 2,
    });
    // Every update precedes the end.
    expect(events.indexOf(updates.at(-1)!)).toBeLessThan(events.indexOf(end));
    expect(textOf(parent.messages.at(-1) as never)).toBe("Parent got: The answer is 42.");
  });

  it("runs a child agent without warnings on the console (the child is not built inside the parent's action)", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const researcher = subAgentTool({
        name: "researcher",
        description: "Researches",
        tools: [lookup],
        provider: scripted([{ toolCalls: [{ name: "lookup", arguments: { key: "k" } }] }, { text: "done" }]),
      });
      const parent = createAgent({ provider: parentScript("look k up"), tools: [researcher] });
      await parent.prompt("ask the researcher");
      expect(textOf(parent.messages.at(-1) as never)).toBe("Parent got: done");
      expect(warn.mock.calls).toEqual([]);
      expect(error.mock.calls).toEqual([]);
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it("returns a child's partial work with the [Agent stopped: …] notice when it hits its turn limit", async () => {
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [lookup],
      provider: scripted([
        { text: "First I check the key.", toolCalls: [{ name: "lookup", arguments: { key: "a" } }] },
        { text: "Now the second key.", toolCalls: [{ name: "lookup", arguments: { key: "b" } }] },
        { text: "never reached" },
      ]),
      limits: { maxTurns: 2, onLimit: "stop" },
    });
    const parent = createAgent({ provider: parentScript("check both"), tools: [researcher] });
    const events = recordEvents(parent);
    await parent.prompt("go");
    const end = events.find((e) => e.type === "tool_execution_end")!;
    expect(end.isError).toBe(false);
    expect(textOf(end.result)).toBe(
      "First I check the key.\n\nNow the second key.\n\n[Agent stopped: Max turns reached (2/2)]",
    );
    expect(end.result.details).toMatchObject({ reason: "limit", turns: 2 });
  });

  it("aborts the child, and its running tool, when the parent is aborted mid-tool", async () => {
    let childToolAborted!: () => void;
    const aborted = new Promise<void>((resolve) => {
      childToolAborted = resolve;
    });
    let childToolStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      childToolStarted = resolve;
    });
    const slow = defineTool({
      name: "slow_scan",
      description: "Scans for a long time",
      parameters: z.object({}),
      readOnly: true,
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) => {
          childToolStarted();
          ctx.signal.addEventListener("abort", () => {
            childToolAborted();
            reject(new Error("scan stopped"));
          });
        }),
    });
    const childProvider = scripted([
      { toolCalls: [{ name: "slow_scan" }] },
      { text: "should never be asked" },
    ]);
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [slow],
      provider: childProvider,
    });
    const parent = createAgent({ provider: parentScript("scan"), tools: [researcher] });
    const events = recordEvents(parent);
    const run = parent.prompt("go");
    await started;
    parent.abort();
    await run;
    await aborted;

    const agentEnd = events.find((e) => e.type === "agent_end")!;
    expect(agentEnd).toMatchObject({ reason: "aborted" });
    const end = events.find((e) => e.type === "tool_execution_end")!;
    expect(end).toMatchObject({ toolCallId: "call_sub", isError: true });
    expect(textOf(end.result)).toBe("Tool researcher aborted");
    // The child made no further model call after its tool was stopped.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(childProvider.calls).toBe(1);
  });

  it("reports the child to the parent's inspector as an actor of its own", async () => {
    const inspected = new Set<string>();
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      provider: scripted([{ text: "done" }]),
    });
    const parent = createAgent({
      id: "parent",
      provider: parentScript("hi"),
      tools: [researcher],
      inspect: (event: { type: string; actorRef?: { id: string } }) => {
        if (event.type === "@xstate.actor" && event.actorRef) inspected.add(event.actorRef.id);
      },
    });
    await parent.prompt("go");
    expect(inspected.has("parent")).toBe(true);
    expect(inspected.has("researcher-call_sub")).toBe(true);
  });

  it("marks a child that fails as an error result with the child's error", async () => {
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      provider: scripted([{ error: { kind: "auth", message: "bad key" } }]),
    });
    const parent = createAgent({ provider: parentScript("hi"), tools: [researcher] });
    const events = recordEvents(parent);
    await parent.prompt("go");
    const end = events.find((e) => e.type === "tool_execution_end")!;
    expect(end.isError).toBe(true);
    expect(textOf(end.result)).toMatch(/\[Sub-agent failed: .*bad key/);
    expect(end.childAgentId).toBe("researcher-call_sub");
  });
});

describe("subAgentTool permissions", () => {
  it("a child's call that would ask for approval waits for the parent's answer; a deny reaches the child's model", async () => {
    const { createPermissions } = await import("../index.js");
    let ran = false;
    const mutate = defineTool({
      name: "mutate",
      description: "Changes something",
      parameters: z.object({}),
      execute: () => {
        ran = true;
        return "changed";
      },
    });
    const childProvider = scripted([{ toolCalls: [{ name: "mutate" }] }, { text: "could not change it" }]);
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [mutate],
      provider: childProvider,
      agentOptions: { permissions: createPermissions({ mode: "default" }) },
    });
    expect(researcher.readOnly).toBe(false);
    const parent = createAgent({ provider: parentScript("change it"), tools: [researcher] });
    const events = recordEvents(parent);
    parent.events$.subscribe((e) => {
      if (e.type === "approval_requested") parent.deny(e.toolCallId, "not today");
    });
    await parent.prompt("go");
    expect(ran).toBe(false);
    expect(events.find((e) => e.type === "approval_requested")).toMatchObject({
      toolName: "mutate",
      path: ["call_sub", expect.any(String)],
      agents: ["researcher-call_sub"],
    });
    const childSaw = childProvider.requests[1]!.messages.find(
      (m) => m.role === "toolResult",
    ) as ToolResultMessage;
    expect(textOf(childSaw)).toMatch(/^The user denied this tool call: not today/);
    const end = events.find((e) => e.type === "tool_execution_end")!;
    expect(textOf(end.result)).toBe("could not change it");
  });
});

describe("a sub-agent never has more rights than its parent", () => {
  function writer() {
    const written: string[] = [];
    const tool = defineTool({
      name: "write_file",
      description: "Writes a file",
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => {
        written.push(path);
        return `wrote ${path}`;
      },
    });
    return { tool, written };
  }

  async function delegateWrite(
    parentPermissions: unknown,
    childPermissions?: unknown,
    answer?: (parent: ReturnType<typeof createAgent>, toolCallId: string) => void,
  ) {
    const { tool, written } = writer();
    const childProvider = scripted([
      { toolCalls: [{ name: "write_file", arguments: { path: "src/a.ts" } }] },
      { text: "done" },
    ]);
    // Declared read-only (a mistake, or a lie), so the parent's own check lets the delegation run:
    // only the child's calls show whether the parent's permissions hold inside it.
    const helper = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [tool],
      provider: childProvider,
      readOnly: true,
      ...(childPermissions !== undefined && { agentOptions: { permissions: childPermissions as never } }),
    });
    const parent = createAgent({
      provider: parentScript("write src/a.ts"),
      tools: [helper],
      permissions: parentPermissions as never,
    });
    parent.events$.subscribe((e) => {
      if (e.type === "approval_requested") answer?.(parent, e.toolCallId);
    });
    await parent.prompt("go");
    const childSaw = childProvider.requests[1]?.messages.find((m) => m.role === "toolResult") as
      ToolResultMessage | undefined;
    return { written, childSaw: childSaw && textOf(childSaw) };
  }

  it("a parent's deny rule holds in a child that has no permissions of its own", async () => {
    const { createPermissions } = await import("../index.js");
    const { written, childSaw } = await delegateWrite(
      createPermissions({ mode: "bypass", rules: { deny: ["write_file"] } }),
    );
    expect(written).toEqual([]);
    expect(childSaw).toBe(
      'Permission denied by rule "write_file" (a permission of the parent agent, which its sub-agents inherit)',
    );
  });

  it("the parent's mode holds too (plan mode: no changes below it either)", async () => {
    const { createPermissions } = await import("../index.js");
    const { written, childSaw } = await delegateWrite(createPermissions({ mode: "plan" }));
    expect(written).toEqual([]);
    expect(childSaw).toMatch(/^You are in plan mode: write_file changes things/);
  });

  it("a child's own permissions can narrow the parent's but never widen them", async () => {
    const { createPermissions } = await import("../index.js");
    const wider = await delegateWrite(
      createPermissions({ mode: "deny" }),
      createPermissions({ mode: "bypass" }),
    );
    expect(wider.written).toEqual([]);
    expect(wider.childSaw).toMatch(/needs approval and approvals are off .*inherit/);

    const narrower = await delegateWrite(
      createPermissions({ mode: "bypass" }),
      createPermissions({ mode: "bypass", rules: { deny: ["write_file(src/**)"] } }),
    );
    expect(narrower.written).toEqual([]);
    expect(narrower.childSaw).toBe('Permission denied by rule "write_file(src/**)"');

    const allowedByBoth = await delegateWrite(
      createPermissions({ mode: "acceptEdits" }),
      createPermissions({ mode: "bypass" }),
    );
    expect(allowedByBoth.written).toEqual(["src/a.ts"]);
  });

  it("a call the parent would ask about waits in the child for the parent's answer", async () => {
    const { createPermissions } = await import("../index.js");
    const denied = await delegateWrite(
      createPermissions({ mode: "default" }),
      createPermissions({ mode: "bypass" }),
      (parent, id) => parent.deny(id, "no writes"),
    );
    expect(denied.written).toEqual([]);
    expect(denied.childSaw).toMatch(/^The user denied this tool call: no writes/);
    const approved = await delegateWrite(
      createPermissions({ mode: "default" }),
      createPermissions({ mode: "bypass" }),
      (parent, id) => parent.approve(id),
    );
    expect(approved.written).toEqual(["src/a.ts"]);
  });

  it("the parent's rules are read live: an 'always' answer given later applies to the next delegation", async () => {
    const { createPermissions } = await import("../index.js");
    const permissions = createPermissions({ mode: "default" });
    expect((await delegateWrite(permissions, undefined, (parent, id) => parent.deny(id))).written).toEqual(
      [],
    );
    permissions.allowAlways("write_file");
    expect((await delegateWrite(permissions)).written).toEqual(["src/a.ts"]);
  });
});

describe("subAgentTool in the actor tree", () => {
  it("runs the child agent as an actor below the call that runs it, and stops it when the call ends", async () => {
    const actors: AnyActorRef[] = [];
    const researcher = subAgentTool({
      name: "researcher",
      description: "Looks keys up",
      provider: scripted([
        { toolCalls: [{ name: "lookup", arguments: { key: "answer" } }] },
        { text: "answer = 42" },
      ]),
      tools: [lookup],
    });
    const parent = createAgent({
      provider: parentScript("find the answer"),
      tools: [researcher],
      inspect: (event: { type: string; actorRef: AnyActorRef }) => {
        if (event.type === "@xstate.actor") actors.push(event.actorRef);
      },
    });
    await parent.prompt("delegate");

    const child = actors.find((a) => a.id === "researcher-call_sub")!;
    expect(child).toBeDefined();
    // Same tree: the child's parent is the parent's tool call "call_sub" (a tool runs in its call's actor).
    expect(child.system).toBe(parent.actor.system);
    const callActor = actors.find((a) => a.id === "call_sub")!;
    expect((child as unknown as { _parent: unknown })._parent).toBe(callActor);
    // Its own tool call ran below it, and everything is stopped once the call is answered.
    expect(actors.some((a) => a.id === "call_0_0")).toBe(true);
    expect(child.getSnapshot().status).toBe("stopped");
    expect(parent.messages.at(-1)).toMatchObject({
      content: [{ type: "text", text: "Parent got: answer = 42" }],
    });
  });
});
