import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineClientTool,
  type Agent,
  type AgentEvent,
  type AgentMessage,
  createAgent,
  defineTool,
  scripted,
  subAgentTool,
  type ToolResultMessage,
} from "../index.js";
import { observeSubAgents, type SubAgentObserver } from "../agent/sub-agent-observer.js";
import { createSessionHost } from "../http.js";

// A parent delegates to a researcher, which delegates to a writer, whose refund needs approval:
// the refund waits two levels down and is answered from the top.

function tree() {
  const refunds: number[] = [];
  const refund = defineTool({
    name: "refund",
    description: "Refunds an amount",
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      refunds.push(amount);
      return `refunded ${amount}`;
    },
  });
  const writerModel = scripted((request, call) =>
    call === 0
      ? { toolCalls: [{ id: "w1", name: "refund", arguments: { amount: 20 } }] }
      : { text: `writer: ${JSON.stringify(request.messages.at(-1)!.content)}` },
  );
  const writer = subAgentTool({
    name: "writer",
    description: "Writes",
    tools: [refund],
    provider: writerModel,
  });
  const researcherModel = scripted((_request, call) =>
    call === 0
      ? { toolCalls: [{ id: "r1", name: "writer", arguments: { task: "refund 20" } }] }
      : { text: "researcher done" },
  );
  const researcher = subAgentTool({
    name: "researcher",
    description: "Researches",
    tools: [writer],
    provider: researcherModel,
  });
  const parentModel = scripted((_request, call) =>
    call === 0
      ? { toolCalls: [{ id: "p1", name: "researcher", arguments: { task: "handle it" } }] }
      : { text: "parent done" },
  );
  // Every child's transcript, as its run ended.
  const transcripts = new Map<string, AgentMessage[]>();
  const observer: SubAgentObserver = ({ tools }) => ({
    tools: [...tools],
    agent: (child: Agent) =>
      child.events$.subscribe((e) => {
        if (e.type === "agent_end") transcripts.set(child.id, [...child.messages]);
      }),
    observer,
  });
  const parent = createAgent(observeSubAgents({ provider: parentModel, tools: [researcher] }, observer));
  const tools = [researcher];
  const events: AgentEvent[] = [];
  parent.events$.subscribe((e) => events.push(e));
  const waiting = new Promise<AgentEvent & { type: "approval_requested" }>((resolve) =>
    parent.events$.subscribe((e) => e.type === "approval_requested" && resolve(e)),
  );
  return { parent, events, waiting, refunds, transcripts, writerModel, parentModel, tools };
}

function expectEveryCallAnsweredOnce(messages: readonly AgentMessage[]) {
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.filter((p) => p.type === "toolCall").map((p) => p.id) : [],
  );
  const results = messages
    .filter((m): m is ToolResultMessage => m.role === "toolResult")
    .map((m) => m.toolCallId);
  expect(calls.length).toBeGreaterThan(0);
  expect([...results].sort()).toEqual([...calls].sort());
}

describe("approvals at any depth", () => {
  it("a call waiting two levels down surfaces at the top with its path, and the top approves it", async () => {
    const { parent, events, waiting, refunds, transcripts } = tree();
    const run = parent.prompt("go");
    const asked = await waiting;

    expect(asked).toMatchObject({
      toolCallId: "p1/r1/w1",
      toolName: "refund",
      args: { amount: 20 },
      path: ["p1", "r1", "w1"],
      agents: ["researcher-p1", "writer-r1"],
    });
    expect(parent.pendingApprovals()).toEqual([
      {
        toolCallId: "p1/r1/w1",
        toolName: "refund",
        args: { amount: 20 },
        path: ["p1", "r1", "w1"],
        agents: ["researcher-p1", "writer-r1"],
      },
    ]);
    expect(refunds).toEqual([]);
    parent.approve("p1/r1/w1");
    const outcome = await run;

    expect(outcome.reason).toBe("stop");
    expect(refunds).toEqual([20]);
    expect(parent.pendingApprovals()).toEqual([]);
    // Order at the top: the parent's call starts, the nested call asks, is decided, the parent's call ends.
    const order = events
      .filter((e) =>
        ["tool_execution_start", "approval_requested", "approval_decided", "tool_execution_end"].includes(
          e.type,
        ),
      )
      .map((e) => `${e.type}:${(e as { toolCallId: string }).toolCallId}`);
    expect(order).toEqual([
      "tool_execution_start:p1",
      "approval_requested:p1/r1/w1",
      "approval_decided:p1/r1/w1",
      "tool_execution_end:p1",
    ]);
    expect(events.find((e) => e.type === "approval_decided")).toMatchObject({
      approved: true,
      path: ["p1", "r1", "w1"],
    });
    // Every transcript of the tree answers each of its calls exactly once.
    expectEveryCallAnsweredOnce(parent.messages);
    expectEveryCallAnsweredOnce(transcripts.get("researcher-p1")!);
    expectEveryCallAnsweredOnce(transcripts.get("writer-r1")!);
  });

  it("a deny from the top reaches the child's model with its reason", async () => {
    const { parent, waiting, refunds, writerModel } = tree();
    const run = parent.prompt("go");
    await waiting;
    parent.deny("p1/r1/w1", "refunds need a manager");
    expect((await run).reason).toBe("stop");
    expect(refunds).toEqual([]);
    expect(JSON.stringify(writerModel.requests[1]!.messages.at(-1)!.content)).toContain(
      "refunds need a manager",
    );
  });

  it("a nested call that no longer waits gets a clear error, and nothing changes", async () => {
    const { parent, waiting } = tree();
    const run = parent.prompt("go");
    await waiting;
    expect(() => parent.approve("p1/r1/nope")).toThrow(/No pending approval for tool call "nope"/);
    expect(() => parent.approve("p9/r1/w1")).toThrow(/No pending approval for tool call "p9\/r1\/w1"/);
    expect(parent.pendingApprovals()).toHaveLength(1);
    parent.approve("p1/r1/w1");
    expect(() => parent.approve("p1/r1/w1")).toThrow(/not waiting for approval|No pending approval/);
    expect((await run).reason).toBe("stop");
    expectEveryCallAnsweredOnce(parent.messages);
  });

  it("abort at the top answers every call at every depth", async () => {
    const { parent, waiting, refunds, transcripts } = tree();
    const run = parent.prompt("go");
    await waiting;
    parent.abort();
    const outcome = await run;
    expect(outcome.reason).toBe("aborted");
    expect(refunds).toEqual([]);
    expect(parent.pendingApprovals()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expectEveryCallAnsweredOnce(parent.messages);
    expectEveryCallAnsweredOnce(transcripts.get("researcher-p1")!);
    expectEveryCallAnsweredOnce(transcripts.get("writer-r1")!);
    // The refund two levels down was answered as aborted, once.
    const refundResults = transcripts.get("writer-r1")!.filter((m) => m.role === "toolResult");
    expect(refundResults).toHaveLength(1);
    expect(refundResults[0]).toMatchObject({ toolCallId: "w1", isError: true });
  });
});

describe("nested waits: client-run tools and snapshots", () => {
  it("a client-run tool's call in a sub-agent is listed at the top and answered from there", async () => {
    const pickColor = defineClientTool({
      name: "pick_color",
      description: "Asks the user for a color",
      parameters: z.object({}),
    });
    const child = scripted((request, call) =>
      call === 0
        ? { toolCalls: [{ id: "c1", name: "pick_color", arguments: {} }] }
        : { text: `child got ${JSON.stringify(request.messages.at(-1)!.content)}` },
    );
    const designer = subAgentTool({
      name: "designer",
      description: "Designs",
      tools: [pickColor],
      provider: child,
    });
    const parent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "p1", name: "designer", arguments: { task: "pick" } }] },
        { text: "ok" },
      ]),
      tools: [designer],
    });
    const asked = new Promise<AgentEvent>((resolve) =>
      parent.events$.subscribe((e) => e.type === "tool_result_requested" && resolve(e)),
    );
    const run = parent.prompt("go");
    expect(await asked).toMatchObject({ toolCallId: "p1/c1", toolName: "pick_color", path: ["p1", "c1"] });
    expect(parent.pendingToolCalls().map((p) => p.toolCallId)).toEqual(["p1/c1"]);
    expect(() => parent.resolveToolCall("p1/nope", "x")).toThrow(/No tool call "nope" waits/);
    parent.resolveToolCall("p1/c1", "blue");
    expect((await run).reason).toBe("stop");
    expect(JSON.stringify(child.requests[1]!.messages.at(-1))).toContain("blue");
    expectEveryCallAnsweredOnce(parent.messages);
  });

  it("a snapshot taken while a nested approval waits restores: the call is asked again at the top, and answered once", async () => {
    const first = tree();
    void first.parent.prompt("go");
    await first.waiting;
    const saved = JSON.parse(JSON.stringify(first.parent.getPersistedSnapshot()));
    first.parent.stop();

    // A new process: the same tools and models, the parent restored from the snapshot.
    const second = tree();
    const restored = createAgent({ provider: second.parentModel, tools: second.tools, snapshot: saved });
    const asked = new Promise<AgentEvent & { type: "approval_requested" }>((resolve) =>
      restored.events$.subscribe((e) => e.type === "approval_requested" && resolve(e)),
    );
    // The sub-agent call was running: it runs again (at least once), and its child asks again.
    expect((await asked).toolCallId).toBe("p1/r1/w1");
    const ended = new Promise<void>((resolve) =>
      restored.events$.subscribe((e) => e.type === "agent_end" && resolve()),
    );
    restored.approve("p1/r1/w1");
    await ended;
    expect(first.refunds).toEqual([]);
    expect(second.refunds).toEqual([20]);
    expect(restored.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "parent done" }],
    });
    expectEveryCallAnsweredOnce(restored.messages);
  });
});

describe("parallel sub-agents", () => {
  it("two sub-agents of one turn wait side by side; the same child call id in each stays distinct at the top", async () => {
    const refunds: string[] = [];
    const refund = defineTool({
      name: "refund",
      description: "Refunds an amount",
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: ({ amount }) => {
        refunds.push(String(amount));
        return `refunded ${amount}`;
      },
    });
    // Each child's model draws the same call id, "w1".
    const child = () =>
      scripted((_r, call) =>
        call === 0 ? { toolCalls: [{ id: "w1", name: "refund", arguments: { amount: 5 } }] } : { text: "ok" },
      );
    const a = subAgentTool({ name: "a", description: "A", tools: [refund], provider: child() });
    const b = subAgentTool({ name: "b", description: "B", tools: [refund], provider: child() });
    const parent = createAgent({
      provider: scripted([
        {
          toolCalls: [
            { id: "p1", name: "a", arguments: { task: "x" } },
            { id: "p2", name: "b", arguments: { task: "y" } },
          ],
        },
        { text: "both done" },
      ]),
      tools: [a, b],
      toolExecution: "parallel",
    });
    const asked: string[] = [];
    const both = new Promise<void>((resolve) =>
      parent.events$.subscribe((e) => {
        if (e.type === "approval_requested" && asked.push(e.toolCallId) === 2) resolve();
      }),
    );
    const run = parent.prompt("go");
    await both;
    expect(asked.sort()).toEqual(["p1/w1", "p2/w1"]);
    expect(
      parent
        .pendingApprovals()
        .map((p) => p.toolCallId)
        .sort(),
    ).toEqual(["p1/w1", "p2/w1"]);
    parent.deny("p2/w1", "not this one");
    parent.approve("p1/w1");
    expect((await run).reason).toBe("stop");
    expect(refunds).toEqual(["5"]);
    expectEveryCallAnsweredOnce(parent.messages);
  });
});

describe("a nested approval through the session host", () => {
  it("the AI SDK stream shows it, the host's approve route answers it, and a stale answer is refused", async () => {
    let made: ReturnType<typeof tree> | undefined;
    const host = createSessionHost({
      agent: () => {
        made = tree();
        return { provider: made.parentModel, tools: made.tools };
      },
      basePath: "/api",
      authorize: "none-local-only",
    });
    try {
      const post = (path: string, body: unknown) =>
        host.handle(
          new Request(`http://localhost/api${path}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          }),
        );
      const response = await post("/chat", {
        id: "t1",
        trigger: "submit-message",
        messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "go" }] }],
      });
      expect(response.status).toBe(200);
      // The stream shows the nested call's approval request while the run waits in the grandchild.
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let stream = "";
      while (!stream.includes('"tool-approval-request"')) {
        const { value, done } = await reader.read();
        if (done) break;
        stream += value;
      }
      expect(stream).toContain('"p1/r1/w1"');
      const agent = host.agent("t1")!;
      expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["p1/r1/w1"]);

      // The host's approve route answers it; the run goes on to its end on the same stream.
      expect((await post("/threads/t1/approve", { toolCallId: "p1/r1/w1" })).status).toBe(200);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        stream += value;
      }
      expect(stream).toContain('"finish"');
      await agent.waitForIdle();
      expect(made!.refunds).toEqual([20]);
      expect(agent.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "parent done" }],
      });
      // A second answer to a call that no longer waits is refused, and changes nothing.
      expect((await post("/threads/t1/approve", { toolCallId: "p1/r1/w1" })).status).toBe(404);
      expectEveryCallAnsweredOnce(agent.messages);
    } finally {
      await host.close();
    }
  });
});

describe("a nested approval answered the AI SDK way", () => {
  it("the chat response ends while the grandchild's call waits, and the next chat request's approval response resumes the run", async () => {
    let made: ReturnType<typeof tree> | undefined;
    const host = createSessionHost({
      agent: () => {
        made = tree();
        return { provider: made.parentModel, tools: made.tools };
      },
      authorize: "none-local-only",
    });
    try {
      const chat = (messages: unknown[]) =>
        host.handle(
          new Request("http://localhost/chat", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ id: "t1", trigger: "submit-message", messages }),
          }),
        );
      const user = { id: "u1", role: "user", parts: [{ type: "text", text: "go" }] };
      // The response ends by itself (the run is quiescent: its one call waits on a nested approval).
      const first = await (await chat([user])).text();
      expect(first).toContain('"tool-approval-request"');
      expect(first).toContain('"p1/r1/w1"');
      const agent = host.agent("t1")!;
      expect(agent.state).not.toBe("idle");
      expect(made!.refunds).toEqual([]);

      const answer = {
        id: agent.messages[1]!.id,
        role: "assistant",
        parts: [
          {
            type: "dynamic-tool",
            toolCallId: "p1/r1/w1",
            state: "approval-responded",
            approval: { id: "p1/r1/w1", approved: true },
          },
        ],
      };
      const second = await (await chat([user, answer])).text();
      expect(second).toContain('"text-delta","id"');
      expect(second).toContain('"parent done"');
      expect(second).toContain('"finish"');
      await agent.waitForIdle();
      expect(made!.refunds).toEqual([20]);
      expect(agent.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "parent done" }],
      });
      expectEveryCallAnsweredOnce(agent.messages);
    } finally {
      await host.close();
    }
  });
});

describe("a nested approval across a host restart", () => {
  it("a host restarted from its store takes the answer to the nested call before its sub-agent asks again; it runs once", async () => {
    const saved = new Map<string, unknown>();
    const store = {
      load: (id: string) => saved.get(id),
      save: (id: string, snapshot: unknown) => void saved.set(id, JSON.parse(JSON.stringify(snapshot))),
    };
    const made: ReturnType<typeof tree>[] = [];
    const start = () =>
      createSessionHost({
        agent: () => {
          const t = tree();
          made.push(t);
          return { provider: t.parentModel, tools: t.tools };
        },
        store,
        authorize: "none-local-only",
      });
    const post = (host: ReturnType<typeof start>, path: string, body: unknown) =>
      host.handle(
        new Request(`http://localhost${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
    const user = { id: "u1", role: "user", parts: [{ type: "text", text: "go" }] };
    const first = start();
    const asked = await (
      await post(first, "/chat", { id: "t1", trigger: "submit-message", messages: [user] })
    ).text();
    expect(asked).toContain('"p1/r1/w1"');
    await first.close();
    expect(saved.has("t1")).toBe(true);

    // The process restarts: the page's answer reaches a new host over the same store at once,
    // while the restored run's sub-agent call runs anew and has not asked again yet.
    const second = start();
    try {
      const approved = await post(second, "/threads/t1/approve", { toolCallId: "p1/r1/w1" });
      expect(approved.status, await approved.clone().text()).toBe(200);
      const agent = second.agent("t1")!;
      await agent.waitForIdle();
      expect(made.flatMap((t) => t.refunds)).toEqual([20]);
      expect(agent.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "parent done" }],
      });
      expectEveryCallAnsweredOnce(agent.messages);
      // An answer to a nested call no one will ask is still refused (after the run ended: at once).
      const stale = await post(second, "/threads/t1/approve", { toolCallId: "p1/r1/w1" });
      expect(stale.status).toBeGreaterThanOrEqual(400);
    } finally {
      await second.close();
    }
  });
});
