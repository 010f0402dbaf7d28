import { afterEach, describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { WebSocket } from "ws";
import { z } from "zod";
import { apply, emptyModel, laneStatus } from "../visualizer/page/model.js";
import { followAgent } from "../visualizer/wire.js";
import {
  type AgentOptions,
  createAgent,
  createStatelyInspector,
  defineTool,
  scripted,
  type VisualizerMessage,
  visualize,
} from "../index.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

const echo = defineTool({
  name: "echo",
  description: "Says it back",
  parameters: z.object({ text: z.string() }),
  readOnly: true,
  execute: ({ text }) => text,
});

/** Two runs; the second has two calls (so a tool execution machine) and one call that asks first. */
const twoRuns = (): AgentOptions => ({
  provider: scripted([
    { toolCalls: [{ id: "first_call", name: "echo", arguments: { text: "one" } }] },
    { text: "first done" },
    {
      toolCalls: [
        { id: "second_a", name: "echo", arguments: { text: "a" } },
        { id: "second_b", name: "echo", arguments: { text: "b" } },
      ],
    },
    { text: "second done" },
  ]),
  tools: [echo],
  permissions: { check: ({ toolCall }) => ({ behavior: toolCall.id === "second_b" ? "ask" : "allow" }) },
  hibernate: "whenIdle",
});

function connect(url: string) {
  const messages: VisualizerMessage[] = [];
  const socket = new WebSocket(`ws://${new URL(url).host}/ws${new URL(url).search}`);
  const opened = new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  socket.on("message", (data) => {
    const message = JSON.parse(String(data));
    // The history a page gets on connecting comes in one backlog message: taken one by one.
    if (message.kind === "backlog") messages.push(...message.messages);
    else messages.push(message);
  });
  cleanups.push(() => socket.close());
  return { messages, opened };
}

describe("visualize() across hibernation", () => {
  it("the page keeps receiving events and states after the agent sleeps and wakes", async () => {
    const agent = createAgent(twoRuns());
    const server = await visualize(agent, { port: 0 });
    cleanups.push(
      () => agent.stop(),
      () => server.close(),
    );
    const page = connect(server.url);
    await page.opened;

    await agent.prompt("first");
    await tick();
    expect(agent.hibernated).toBe(true);

    const second = agent.prompt("second");
    // The woken actor's call asks for approval: the page must show it as such, and can answer it.
    await expect
      .poll(() => page.messages.some((m) => m.kind === "tool_state" && m.value === "awaitingApproval"))
      .toBe(true);
    const model = emptyModel();
    for (const message of page.messages) apply(model, message);
    expect(model.stateName).toBe("running.executing");
    expect(model.execution).toBeDefined();
    expect(laneStatus(model.lanes.get("second_b")!)).toBe("awaiting approval");
    agent.approve("second_b");
    await second;
    await tick();
    expect(agent.hibernated).toBe(true);

    await expect
      .poll(() => page.messages.filter((m) => m.kind === "event" && m.event.type === "agent_end").length)
      .toBe(2);
    const toolStates = page.messages.flatMap((m) =>
      m.kind === "tool_state" ? [`${m.toolCallId}:${m.value}`] : [],
    );
    expect(toolStates).toEqual(expect.arrayContaining(["second_a:executing", "second_b:executing"]));
    const final = emptyModel();
    for (const message of page.messages) apply(final, message);
    expect(final.stateName).toBe("idle");
    expect(final.execution).toBeUndefined();
    expect(final.runs.map((r) => [r.run, r.prompt, r.reason])).toEqual([
      [1, "first", "stop"],
      [2, "second", "stop"],
    ]);
    expect([...final.lanes.values()].map((l) => [l.id, l.run, laneStatus(l)])).toEqual([
      ["first_call", 1, "ok"],
      ["second_a", 2, "ok"],
      ["second_b", 2, "ok"],
    ]);
  });

  it("followAgent (visualize, recordEvents) stops for good: a later wake is not followed", async () => {
    const agent = createAgent(twoRuns());
    cleanups.push(() => agent.stop());
    const sent: VisualizerMessage[] = [];
    const stop = followAgent(agent, (message) => sent.push(message), { coalesceMs: 0 });
    await agent.prompt("first");
    await tick();
    expect(sent.some((m) => m.kind === "tool_state" && m.toolCallId === "first_call")).toBe(true);
    stop();
    const heard = sent.length;
    const second = agent.prompt("second");
    await expect.poll(() => agent.pendingApprovals().length).toBe(1);
    agent.approve("second_b");
    await second;
    await tick();
    expect(agent.hibernated).toBe(true);
    expect(sent.length).toBe(heard);
  });
});

describe("the Stately inspector across hibernation", () => {
  /** The actors the inspector saw registered, and the session ids of actors that sent it snapshots. */
  function watch() {
    const registered: string[] = [];
    const snapshotsFrom = new Set<string>();
    const observer = (event: InspectionEvent) => {
      if (event.type === "@xstate.actor") registered.push(event.actorRef.sessionId);
      if (event.type === "@xstate.snapshot") snapshotsFrom.add(event.actorRef.sessionId);
    };
    return { registered, snapshotsFrom, observer };
  }

  it("createAgent({ inspect }) sees the actor of every wake", async () => {
    const seen = watch();
    const agent = createAgent({ ...twoRuns(), inspect: seen.observer });
    cleanups.push(() => agent.stop());
    await agent.prompt("first");
    await tick();
    const second = agent.prompt("second");
    const secondActor = agent.actor.sessionId;
    await expect.poll(() => agent.pendingApprovals().length).toBe(1);
    agent.approve("second_b");
    await second;
    expect(seen.registered).toContain(secondActor);
    expect(seen.snapshotsFrom).toContain(secondActor);
  });

  it("inspector.attach(agent) follows the actor of every wake to the relay, until detached", async () => {
    const inspector = await createStatelyInspector();
    cleanups.push(() => inspector.stop());
    const relay = new WebSocket(inspector.relayUrl);
    const received: { type: string; name?: string; sessionId: string; event?: { type: string } }[] = [];
    relay.on("message", (data) => received.push(JSON.parse(String(data))));
    cleanups.push(() => relay.close());
    await new Promise((resolve) => relay.once("open", resolve));

    const agent = createAgent(twoRuns());
    cleanups.push(() => agent.stop());
    const detach = inspector.attach(agent);
    expect(agent.hibernated).toBe(true); // attaching does not wake it
    const actors = new Set<string>();
    const follow = agent.events$.subscribe((e) => {
      if (e.type === "agent_start") actors.add(agent.actor.sessionId);
    });
    cleanups.push(() => follow.unsubscribe());
    const sessionsOf = (type: string, eventType?: string) =>
      new Set(
        received
          .filter((e) => e.type === type && (eventType === undefined || e.event?.type === eventType))
          .map((e) => e.sessionId),
      );
    for (const prompt of ["first", "second"]) {
      const run = agent.prompt(prompt);
      if (prompt === "second") {
        await expect.poll(() => agent.pendingApprovals().length).toBe(1);
        agent.approve("second_b");
      }
      await run;
      await tick();
      expect(agent.hibernated).toBe(true);
    }
    expect(actors.size).toBe(2);
    for (const sessionId of actors) {
      await expect.poll(() => sessionsOf("@xstate.actor").has(sessionId)).toBe(true);
      await expect.poll(() => sessionsOf("@xstate.event", "PROMPT").has(sessionId)).toBe(true);
    }
    // The second run's tool calls were registered under it.
    expect(received.filter((e) => e.type === "@xstate.actor").map((e) => e.name)).toEqual(
      expect.arrayContaining([agent.id, "first_call", "toolExecution", "second_a", "second_b"]),
    );

    detach();
    const before = received.length;
    agent.steer("after detaching"); // wakes it: a new actor, not followed any more
    await tick();
    // A second, inspected agent's event arrives after anything the first could still have sent.
    const sentinel = createAgent({ provider: scripted([]), inspect: inspector.inspect });
    cleanups.push(() => sentinel.stop());
    sentinel.steer("sentinel");
    await expect
      .poll(() => received.slice(before).some((e) => e.type === "@xstate.event" && e.event?.type === "STEER"))
      .toBe(true);
    const steers = received
      .slice(before)
      .filter((e) => e.type === "@xstate.event" && e.event?.type === "STEER");
    expect(steers.map((e) => e.sessionId)).toEqual([sentinel.actor.sessionId]);
  });
});
