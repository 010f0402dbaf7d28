import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { createActor, setup } from "xstate";
import { z } from "zod";
import {
  createAgent,
  createInspectorRelay,
  createStatelyBrowserInspector,
  createStatelyInspector,
  defineTool,
  type StatelyInspector,
  scripted,
  subAgentTool,
} from "../index.js";

const SECRET = "sk-test-DO-NOT-LEAK-4242";

const sleep = defineTool({
  name: "sleep",
  description: "Waits a while",
  parameters: z.object({ ms: z.number() }),
  execute: ({ ms }) => new Promise<string>((resolve) => setTimeout(() => resolve(`slept ${ms}`), ms)),
});

/** A provider that, like a careless one, carries its key on the object. */
function providerWithKey() {
  const provider = scripted([
    {
      toolCalls: [
        { name: "sleep", arguments: { ms: 5, apiKey: SECRET } },
        { name: "sleep", arguments: { ms: 15, headers: { Authorization: `Bearer ${SECRET}` } } },
        { name: "sleep", arguments: { ms: 10 } },
      ],
    },
    { text: "done" },
  ]);
  return Object.assign(provider, { apiKey: SECRET });
}

interface Received {
  type: string;
  name?: string;
  sessionId: string;
  parentId?: string;
  rootId?: string;
  definition?: string;
  snapshot?: { value?: unknown; status?: string; context?: Record<string, unknown> };
  event?: { type: string };
}

/** A client of the relay, as the Stately bridge page is. */
function listen(url: string, origin?: string) {
  const raw: string[] = [];
  const socket = new WebSocket(url, origin ? { origin } : {});
  const opened = new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`HTTP ${response.statusCode}`)),
    );
  });
  socket.on("message", (data) => raw.push(data.toString()));
  return {
    opened,
    raw,
    events: () => raw.map((data) => JSON.parse(data) as Received),
    close: () => socket.close(),
  };
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started(): Promise<StatelyInspector> {
  const inspector = await createStatelyInspector();
  cleanups.push(() => inspector.stop());
  return inspector;
}

describe("the Stately inspector hook-up", () => {
  it("relays the agent, its tool actors and their snapshots, with no secret and a cut transcript", async () => {
    const inspector = await started();
    expect(inspector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    const page = listen(inspector.relayUrl, new URL(inspector.url!).origin);
    cleanups.push(page.close);
    await page.opened;

    const agent = createAgent({ provider: providerWithKey(), tools: [sleep], inspect: inspector.inspect });
    cleanups.push(() => agent.stop());
    await agent.prompt(`Please check everything. ${"x".repeat(5_000)}`);

    const toolIds = ["call_0_0", "call_0_1", "call_0_2"];
    await expect
      .poll(() => {
        const done = page
          .events()
          .filter((e) => e.type === "@xstate.snapshot" && e.snapshot?.value === "done");
        return toolIds.filter((id) => done.some((e) => e.sessionId === sessionOf(page.events(), id)));
      })
      .toEqual(toolIds);
    await expect
      .poll(() =>
        page
          .events()
          .some(
            (e) =>
              e.type === "@xstate.snapshot" &&
              e.snapshot?.value === "idle" &&
              e.sessionId === agent.actor.sessionId,
          ),
      )
      .toBe(true);

    const events = page.events();
    const root = events.find((e) => e.type === "@xstate.actor" && e.sessionId === agent.actor.sessionId)!;
    expect(root.name).toBe(agent.id);
    expect(JSON.parse(root.definition!)).toMatchObject({ id: "agent", states: { idle: {}, running: {} } });

    const execution = events.find((e) => e.type === "@xstate.actor" && e.name === "toolExecution")!;
    expect(execution.parentId).toBe(agent.actor.sessionId);
    for (const id of toolIds) {
      const actor = events.find((e) => e.type === "@xstate.actor" && e.name === id)!;
      expect(actor.parentId).toBe(execution.sessionId);
      expect(actor.rootId).toBe(agent.actor.sessionId);
      const states = events
        .filter((e) => e.type === "@xstate.snapshot" && e.sessionId === actor.sessionId)
        .map((e) => e.snapshot!.value);
      expect(states).toContain("executing");
    }
    expect(events.some((e) => e.type === "@xstate.actor" && e.name === "modelStream")).toBe(true);
    expect(events.some((e) => e.type === "@xstate.event" && e.event?.type === "PROMPT")).toBe(true);

    const everything = page.raw.join("\n");
    expect(everything).not.toContain(SECRET);
    expect(everything).toContain("[redacted]");
    // The 5,000-character prompt is cut in every context and event that carries it.
    expect(everything).not.toContain("x".repeat(600));
    expect(everything).toContain("more characters]");
  });

  it("names every actor the agent starts, invoked ones too (no generated 0.agent.running ids)", async () => {
    const names: string[] = [];
    const agent = createAgent({
      provider: providerWithKey(),
      tools: [sleep],
      permissions: { check: () => ({ behavior: "allow" }) },
      limits: { maxDurationMs: 60_000 },
      inspect: (event) => {
        if (event.type === "@xstate.actor") names.push(event.actorRef.id);
      },
    });
    cleanups.push(() => agent.stop());
    await agent.prompt("Go");
    expect(names).toEqual(
      expect.arrayContaining(["runDeadline", "modelStream", "toolExecution", "checkPermission"]),
    );
    expect(names.filter((name) => /^\d+\./.test(name))).toEqual([]);
  });

  it("redacts secrets inside a machine definition too (it travels as a JSON string)", async () => {
    const inspector = await started();
    const page = listen(inspector.relayUrl);
    cleanups.push(page.close);
    await page.opened;
    const machine = setup({}).createMachine({
      id: "keyed",
      context: { apiKey: SECRET },
      initial: "a",
      states: { a: {} },
    });
    const actor = createActor(machine, { inspect: inspector.inspect }).start();
    cleanups.push(() => actor.stop());
    await expect.poll(() => page.events().some((e) => e.type === "@xstate.actor" && e.definition)).toBe(true);
    const registration = page.events().find((e) => e.type === "@xstate.actor")!;
    expect(JSON.parse(registration.definition!)).toMatchObject({
      id: "keyed",
      context: { apiKey: "[redacted]" },
    });
    expect(page.raw.join("\n")).not.toContain(SECRET);
  });

  it("shows a sub-agent as an actor in its parent's tree, under the tool call that runs it", async () => {
    const inspector = await started();
    const page = listen(inspector.relayUrl);
    cleanups.push(page.close);
    await page.opened;
    const researcher = subAgentTool({
      name: "researcher",
      description: "Looks things up",
      provider: scripted([{ toolCalls: [{ name: "sleep", arguments: { ms: 5 } }] }, { text: "Found it." }]),
      tools: [sleep],
    });
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ name: "researcher", arguments: { task: "Find it" }, id: "delegate" }] },
        { text: "The researcher found it." },
      ]),
      tools: [researcher],
      inspect: inspector.inspect,
    });
    cleanups.push(() => agent.stop());
    await agent.prompt("Ask the researcher");

    const actors = () => page.events().filter((e) => e.type === "@xstate.actor");
    // Registrations travel over the relay's socket: wait for the child's own tool call too.
    await expect
      .poll(() => {
        const all = actors();
        const child = all.find((e) => e.name === "researcher-delegate");
        return child && all.some((e) => e.name === "call_0_0" && e.parentId === child.sessionId);
      })
      .toBe(true);
    const all = actors();
    const child = all.find((e) => e.name === "researcher-delegate")!;
    const delegate = all.find((e) => e.name === "delegate")!;
    // agent → toolCall "delegate" → the sub-agent, one tree: a turn with one call runs its call actor
    // as the agent's own child, and a tool runs in its call's actor.
    expect(child.rootId).toBe(agent.actor.sessionId);
    expect(delegate.parentId).toBe(agent.actor.sessionId);
    expect(child.parentId).toBe(delegate.sessionId);
  });

  it("gives a page that connects late every actor registration", async () => {
    const inspector = await started();
    const agent = createAgent({ provider: providerWithKey(), tools: [sleep], inspect: inspector.inspect });
    cleanups.push(() => agent.stop());
    await agent.prompt("Go");

    const late = listen(inspector.relayUrl);
    cleanups.push(late.close);
    await late.opened;
    await expect
      .poll(() =>
        late
          .events()
          .filter((e) => e.type === "@xstate.actor")
          .map((e) => e.name),
      )
      .toEqual(expect.arrayContaining([agent.id, "toolExecution", "call_0_0", "call_0_1", "call_0_2"]));
  });

  it("attaches to an agent created without an inspector", async () => {
    const inspector = await started();
    const page = listen(inspector.relayUrl);
    cleanups.push(page.close);
    await page.opened;
    const agent = createAgent({ provider: providerWithKey(), tools: [sleep] });
    cleanups.push(() => agent.stop());

    const detach = inspector.attach(agent);
    await agent.prompt("Go");
    await expect
      .poll(() =>
        page
          .events()
          .filter((e) => e.type === "@xstate.actor")
          .map((e) => e.name),
      )
      .toEqual(expect.arrayContaining([agent.id, "call_0_0", "call_0_1", "call_0_2"]));
    const registered = page.events().find((e) => e.type === "@xstate.actor" && e.name === agent.id)!;
    expect(registered.rootId).toBe(agent.actor.sessionId);

    detach();
    agent.steer("after detaching");
    // A second, inspected agent's event arrives after anything the first one could still have sent.
    const sentinel = createAgent({ provider: scripted([]), inspect: inspector.inspect });
    cleanups.push(() => sentinel.stop());
    sentinel.steer("sentinel");
    const steers = () => page.events().filter((e) => e.type === "@xstate.event" && e.event?.type === "STEER");
    await expect.poll(() => steers().some((e) => e.sessionId === sentinel.actor.sessionId)).toBe(true);
    expect(steers().filter((e) => e.sessionId === agent.actor.sessionId)).toEqual([]);
  });

  it("binds 127.0.0.1 and refuses pages from other origins", async () => {
    const relay = await createInspectorRelay();
    cleanups.push(() => relay.close());
    expect(relay.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    await expect(listen(relay.wsUrl, "http://evil.example").opened).rejects.toThrow("403");
    const page = await fetch(relay.url);
    expect(await page.text()).toContain(`new WebSocket("${relay.wsUrl}")`);
  });

  it("explains that the browser variant needs a window, and sanitizes what it posts", async () => {
    await expect(createStatelyBrowserInspector()).rejects.toThrow("needs a browser window");

    const posted: unknown[] = [];
    const listeners: ((event: { data: unknown }) => void)[] = [];
    const fakeWindow = {
      open: () => ({ postMessage: (message: unknown) => posted.push(message) }),
      addEventListener: (_type: string, listener: (event: { data: unknown }) => void) =>
        listeners.push(listener),
    } as unknown as Window;
    const inspector = await createStatelyBrowserInspector({ window: fakeWindow });
    for (const listener of listeners) listener({ data: { type: "@statelyai.connected" } });
    const agent = createAgent({ provider: providerWithKey(), tools: [sleep], inspect: inspector.inspect });
    cleanups.push(() => agent.stop());
    await agent.prompt("Go");
    await expect.poll(() => posted.length).toBeGreaterThan(10);
    inspector.stop();
    expect(JSON.stringify(posted)).not.toContain(SECRET);
  });
});

function sessionOf(events: Received[], name: string): string | undefined {
  return events.find((e) => e.type === "@xstate.actor" && e.name === name)?.sessionId;
}
