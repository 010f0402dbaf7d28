// The tree of agents live (issue 39, item 5) and agents that wake (issue 40), as the visualizer's page
// model folds them: sub-agents at any depth under the calls that run them, a handoff as the agent
// that answers changing, what woke a run, and when a schedule wakes the agent next.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import {
  type Agent,
  createAgent,
  createLaterResults,
  createScheduler,
  defineLaterTool,
  defineHandoff,
  defineTool,
  deliverEvent,
  readRecording,
  recordEvents,
  scripted,
  subAgentTool,
  type VisualizerMessage,
  visualize,
} from "../index.js";
import { agentTree, laterTexts, nextWakeText, wokenByText } from "../visualizer/page/agents.js";
import { apply, emptyModel, type PageModel } from "../visualizer/page/model.js";
import { describeNow } from "../visualizer/page/now.js";
import { followWakes, nextWakeOf } from "../visualizer/next-wake.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function recording(agent: Agent) {
  const dir = await mkdtemp(join(tmpdir(), "am-agents-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, "run.jsonl");
  const recorder = recordEvents(agent, path);
  return async () => {
    await recorder.close();
    return readRecording(path);
  };
}

/** The page model folded from `messages`, up to (and with) the first one `until` picks. */
function fold(
  messages: VisualizerMessage[],
  until: (m: VisualizerMessage) => boolean = () => false,
): PageModel {
  const model = emptyModel();
  for (const message of messages) {
    apply(model, message);
    if (until(message)) break;
  }
  return model;
}

/** A tree as lines: `label · status`, indented by depth. */
function lines(node: ReturnType<typeof agentTree>, depth = 0): string[] {
  return [
    `${"  ".repeat(depth)}${node.label} · ${node.status}`,
    ...node.children.flatMap((c) => lines(c, depth + 1)),
  ];
}

const refund = defineTool({
  name: "refund",
  description: "Refunds an amount",
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: ({ amount }) => `refunded ${amount}`,
});

describe("the tree of agents, live", () => {
  it("sub-agents two levels deep under the calls that run them, the waiting one saying so, all done at the end", async () => {
    const writer = subAgentTool({
      name: "writer",
      description: "Writes",
      tools: [refund],
      provider: scripted((_r, call) =>
        call === 0
          ? { toolCalls: [{ id: "w1", name: "refund", arguments: { amount: 20 } }] }
          : { text: "ok" },
      ),
    });
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [writer],
      provider: scripted((_r, call) =>
        call === 0
          ? { toolCalls: [{ id: "r1", name: "writer", arguments: { task: "refund" } }] }
          : { text: "ok" },
      ),
    });
    const agent = createAgent({
      id: "top",
      provider: scripted((_r, call) =>
        call === 0
          ? { toolCalls: [{ id: "p1", name: "researcher", arguments: { task: "go" } }] }
          : { text: "ok" },
      ),
      tools: [researcher],
    });
    cleanups.push(() => agent.stop());
    const done = await recording(agent);
    agent.events$.subscribe((e) => {
      if (e.type === "approval_requested") setTimeout(() => agent.approve(e.toolCallId), 20);
    });
    await agent.prompt("handle it");
    const messages = await done();

    // While the refund waits, two levels down.
    const waiting = fold(messages, (m) => m.kind === "event" && m.event.type === "approval_requested");
    expect(lines(agentTree(waiting))).toEqual([
      "main · running tools",
      "  p1 · researcher · running tools",
      "    r1 · writer · waiting for your approval (1)",
    ]);
    const child = agentTree(waiting).children[0]!;
    expect(child.key).toBe("p1");
    expect(child.children[0]!.key).toBe("p1/r1");
    // The call running the grandchild is the child's: no lane of its own on this agent's timeline.
    expect(waiting.lanes.has("p1/r1")).toBe(false);

    // At the end: every sub-agent done, with how its top call ended.
    expect(lines(agentTree(fold(messages)))).toEqual([
      "main · idle",
      "  p1 · researcher · done · ok",
      "    r1 · writer · done · ok",
    ]);
  });

  it("a handoff changes the agent that answers, and the handoffs are listed", async () => {
    const billing = defineHandoff({
      name: "billing",
      description: "Refunds and invoices",
      tools: [],
      provider: scripted([{ text: "Billing here." }]),
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] }]),
      handoffs: [billing],
    });
    cleanups.push(() => agent.stop());
    const done = await recording(agent);
    const before = fold([]);
    expect(agentTree(before).label).toBe("main");
    await agent.prompt("charged twice");
    const model = fold(await done());
    expect(agentTree(model).label).toBe("billing");
    expect(model.handoffs.map((h) => `${h.from} → ${h.to}`)).toEqual(["main → billing"]);
  });
});

describe("agents that wake, on the page", () => {
  it("what woke a run: an event, by its sender's id, on the run and the panel", async () => {
    const agent = createAgent({ id: "ada", provider: scripted([{ text: "On it." }]) });
    cleanups.push(() => agent.stop());
    const done = await recording(agent);
    await deliverEvent(new Map([["ada", agent]]), { agentId: "ada", id: "build-42", text: "CI failed" });
    await agent.waitForIdle();
    const model = fold(await done());
    expect(wokenByText(model.wokenBy)).toBe("an event (build-42)");
    expect(model.runs.at(-1)!.wokenBy).toEqual({ source: "event", id: "event_build-42" });
    expect(wokenByText({ source: "schedule", id: "wake_daily_1767254400000" })).toBe("a schedule (daily)");
    expect(wokenByText({ source: "laterResult", id: "later_abc" })).toBe("a late result (later_abc)");
    // A person's prompt is no wake-up.
    expect(wokenByText(undefined)).toBe("");
  });

  it("visualize(agent, { scheduler, agentId }): the page learns the next wake-up of the agent the scheduler knows by that key", async () => {
    // Made without an id: the directory's key is not agent.id.
    const agent = createAgent({ provider: scripted([{ text: "ok" }]), hibernate: "whenIdle" });
    cleanups.push(() => agent.stop());
    const scheduler = createScheduler({ agents: new Map([["ada", agent]]) });
    cleanups.push(() => scheduler.stop());
    await scheduler.start();
    const daily = await scheduler.schedule({
      agentId: "ada",
      id: "daily",
      cron: "0 9 * * *",
      message: "Report",
    });

    const wakesOn = async (options: { agentId?: string }) => {
      const server = await visualize(agent, { scheduler, ...options });
      cleanups.push(() => server.close());
      const { host } = new URL(server.url);
      const socket = new WebSocket(`ws://${host}/ws?token=${server.token}`, { origin: `http://${host}` });
      cleanups.push(() => socket.close());
      const wakes: VisualizerMessage[] = [];
      socket.on("message", (data) => {
        const message = JSON.parse(String(data));
        for (const m of message.kind === "backlog" ? message.messages : [message])
          if (m.kind === "wake") wakes.push(m);
      });
      await new Promise((resolve) => socket.once("open", resolve));
      for (let i = 0; i < 100 && wakes.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      return wakes;
    };
    expect(await wakesOn({ agentId: "ada" })).toMatchObject([
      {
        kind: "wake",
        next: { at: daily.nextAt, scheduleId: "daily", when: "cron 0 9 * * *", message: "Report" },
      },
    ]);
    expect(agent.hibernated).toBe(true); // the page woke nothing to learn it
    // Left out: agent.id, which the scheduler does not know.
    expect(await wakesOn({})).toMatchObject([{ kind: "wake", next: null }]);
  });

  it("the next wake-up by schedule: sent when it changes, said in the header while the agent sleeps", async () => {
    const agent = createAgent({ id: "ada", provider: scripted([{ text: "ok" }]) });
    cleanups.push(() => agent.stop());
    const scheduler = createScheduler({ agents: new Map([["ada", agent]]) });
    cleanups.push(() => scheduler.stop());
    await scheduler.start();
    const sent: VisualizerMessage[] = [];
    const wakes = followWakes({ scheduler }, "ada", (m) => sent.push(m), 60_000);
    cleanups.push(() => wakes.stop());
    expect(sent).toMatchObject([{ kind: "wake", next: null }]);

    const at = Date.now() + 3 * 3_600_000;
    await scheduler.schedule({ agentId: "ada", id: "later-check", at, message: "Check the deploy" });
    await scheduler.schedule({
      agentId: "ada",
      id: "daily",
      cron: "0 9 * * *",
      timeZone: "UTC",
      message: "Report",
    });
    wakes.check();
    wakes.check(); // unchanged: nothing sent
    expect(sent).toHaveLength(2);
    const next = nextWakeOf(scheduler, "ada");
    expect(next!.at).toBe(Math.min(at, scheduler.nextWake("ada")!));
    expect(sent[1]).toMatchObject({ kind: "wake", next });

    const model = emptyModel();
    apply(model, { kind: "state", t: Date.now(), value: "idle" });
    for (const m of sent) apply(model, m);
    expect(describeNow(model).text).toBe(`Sleeping: wakes at ${nextWakeText(next, Date.now())}`);
    expect(nextWakeText(next, Date.now())).toMatch(
      /\(schedule (later-check, once|daily, cron 0 9 \* \* \* \(UTC\))\)$/,
    );

    // A paused schedule wakes nothing: the next one is the other's, or none.
    await scheduler.pause("later-check");
    await scheduler.pause("daily");
    wakes.check();
    expect(sent.at(-1)).toMatchObject({ kind: "wake", next: null });
    apply(model, sent.at(-1)!);
    expect(describeNow(model).text).toBe("Idle: waiting for a prompt");
  });

  it("the late results it waits for: listed while it sleeps, and what woke it when one came", async () => {
    const agents = new Map<string, Agent>();
    const later = createLaterResults({ agents, timeoutMs: 3_600_000 });
    cleanups.push(() => later.stop());
    let finish!: (text: string) => void;
    const render = defineLaterTool({
      later,
      agentId: "ada",
      name: "render",
      description: "Renders",
      parameters: z.object({ scene: z.string() }),
      run: () => new Promise<string>((resolve) => (finish = resolve)),
    });
    const agent = createAgent({
      id: "ada",
      provider: scripted((request) =>
        request.messages.length === 1
          ? { toolCalls: [{ id: "c1", name: "render", arguments: { scene: "intro" } }] }
          : { text: "Noted." },
      ),
      tools: [render],
    });
    agents.set("ada", agent);
    cleanups.push(() => agent.stop());
    await later.start();
    const done = await recording(agent);
    await agent.prompt("Render the intro");

    const sent: VisualizerMessage[] = [];
    const wakes = followWakes({ laterResults: later }, "ada", (m) => sent.push(m), 60_000);
    cleanups.push(() => wakes.stop());
    const model = fold(await done());
    apply(model, sent[0]!);
    expect(model.laterPending).toMatchObject([{ toolName: "render", toolCallId: "c1" }]);
    expect(describeNow(model).text).toBe("Sleeping: waits for a late result of `render`");
    expect(laterTexts(model.laterPending, Date.now())[0]).toMatch(/^render \(call c1, times out at .+\)$/);

    const handle = model.laterPending[0]!.handle;
    const woken = await recording(agent);
    finish("intro.mp4");
    await new Promise((resolve) => setTimeout(resolve, 50));
    await agent.waitForIdle();
    wakes.check();
    expect(sent.at(-1)).toMatchObject({ kind: "wake", later: [] });
    const after = fold(await woken());
    expect(wokenByText(after.wokenBy)).toBe(`a late result (${handle})`);
  });
});
