// @vitest-environment happy-dom
// agent-machine/react's view of a remote thread: a session host (agent-machine/http) with the
// agent-machine protocol, reached through its web-standard handler (the store's `fetch` calls it in
// process: the same requests and streamed bodies as over a socket), and the page's store following
// it. The view must be the one an agent in the page gives, and the transcript the server's.
import { createElement as h, type ReactNode, useEffect } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentOptions, defineTool, type ScriptedStep, scripted } from "../browser.js";
import { firstValueFrom, toArray } from "rxjs";
import {
  agentMachineProtocol,
  createSessionHost,
  type SessionHost,
  type SessionHostOptions,
} from "../http.js";
import {
  type AgentView,
  createRemoteAgentStore,
  RemoteAgentError,
  remoteAgentHandle,
  useAgent,
} from "../react.js";

const settle = (ms = 10) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const hosts: SessionHost[] = [];
const roots: Root[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) root.unmount();
  for (const host of hosts.splice(0)) await host.close();
  document.body.innerHTML = "";
});

function hostWith(options: AgentOptions, more: Partial<SessionHostOptions> = {}) {
  const host = createSessionHost({
    ...more,
    agent: options,
    basePath: "/api",
    protocols: [agentMachineProtocol()],
    authorize: "none-local-only",
  });
  hosts.push(host);
  const requests: string[] = [];
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(new URL(String(input), "http://localhost"), init);
    requests.push(`${request.method} ${new URL(request.url).pathname}`);
    return host.handle(request);
  };
  const store = (threadId = "t1") => createRemoteAgentStore({ url: "http://localhost/api", threadId, fetch });
  return { host, store, requests };
}

/** A tool that runs until the test opens its gate. */
function gated(name: string, options: { needsApproval?: boolean } = {}) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const tool = defineTool({
    name,
    description: name,
    parameters: z.object({ target: z.enum(["staging", "production"]) }).partial(),
    ...(options.needsApproval && { needsApproval: true }),
    execute: async (args, { onProgress }) => {
      onProgress("halfway");
      await opened;
      return `${name} ${args.target ?? ""}`.trim();
    },
  });
  return { tool, open };
}

describe("a remote thread's view (createRemoteAgentStore)", () => {
  it("streams a run: text, a call in flight with its progress, an approval answered with edited arguments", async () => {
    const check = gated("check");
    const deploy = gated("deploy", { needsApproval: true });
    deploy.open();
    const steps: ScriptedStep[] = [
      { text: "Checking first.", toolCalls: [{ id: "c1", name: "check", arguments: {} }], delayMs: 2 },
      { toolCalls: [{ id: "d1", name: "deploy", arguments: { target: "staging" } }] },
      { text: "Deployed.", delayMs: 2 },
    ];
    const { host, store, requests } = hostWith({
      provider: scripted(steps),
      tools: [check.tool, deploy.tool],
    });
    const remote = store();
    const seen: AgentView[] = [];
    remote.subscribe(() => seen.push(remote.getSnapshot()));
    await settle();
    expect(remote.getSnapshot()).toMatchObject({ state: "idle", messages: [] });

    const outcome = remote.actions.prompt("Ship it");
    await expect
      .poll(() => remote.getSnapshot().toolCalls.map((c) => [c.toolCallId, c.progress]))
      .toEqual([["c1", "halfway"]]);
    expect(remote.getSnapshot()).toMatchObject({ state: "running.executing", running: true });
    // The text streamed before it ended in the transcript.
    expect(seen.some((v) => v.streaming?.text === "Checking first.")).toBe(true);
    check.open();

    await expect.poll(() => remote.getSnapshot().pendingApprovals.map((p) => p.toolCallId)).toEqual(["d1"]);
    // An edit the tool's schema refuses: the host says so, the call keeps waiting.
    const refused = await remote.actions.approve("d1", { args: { target: "moon" } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RemoteAgentError);
    expect(String(refused)).toMatch(/schema/);
    expect(remote.getSnapshot().error).toBe(refused);
    await remote.actions.approve("d1", { args: { target: "production" } });
    expect((await outcome).reason).toBe("stop");
    await settle();

    const view = remote.getSnapshot();
    expect(view).toMatchObject({ state: "idle", running: false, pendingApprovals: [], toolCalls: [] });
    expect(view.error).toBeUndefined();
    // The page's transcript is the server's, message for message.
    expect(view.messages).toEqual(host.agent("t1")!.messages);
    const result = view.messages.find((m) => m.role === "toolResult" && m.toolCallId === "d1");
    expect(result).toMatchObject({ editedArgs: { target: "production" } });
    // The run went quiescent at the approval (its response ended): each answer resumed it with a
    // request of its own (the refused one changed nothing).
    expect(requests).toEqual([
      "GET /api/threads/t1",
      "POST /api/threads/t1/run",
      "POST /api/threads/t1/run",
      "POST /api/threads/t1/run",
    ]);
  });

  it("decides on the side route while the run's response is open (another call still runs), on the same stream", async () => {
    const check = gated("check");
    const deploy = gated("deploy", { needsApproval: true });
    deploy.open();
    const { host, store, requests } = hostWith({
      provider: scripted([
        {
          toolCalls: [
            { id: "c1", name: "check", arguments: {} },
            { id: "d1", name: "deploy", arguments: { target: "staging" } },
          ],
        },
        { text: "Both done." },
      ]),
      tools: [check.tool, deploy.tool],
    });
    const remote = store();
    remote.subscribe(() => undefined);
    await settle();
    const outcome = remote.actions.prompt("Check and deploy");
    await expect.poll(() => remote.getSnapshot().pendingApprovals.map((p) => p.toolCallId)).toEqual(["d1"]);
    expect(remote.getSnapshot().toolCalls.map((c) => [c.toolCallId, c.phase])).toEqual([
      ["c1", "running"],
      ["d1", "awaitingApproval"],
    ]);
    await remote.actions.deny("d1", "not now");
    await expect.poll(() => remote.getSnapshot().pendingApprovals).toEqual([]);
    check.open();
    expect((await outcome).reason).toBe("stop");
    await settle();
    expect(requests).toEqual([
      "GET /api/threads/t1",
      "POST /api/threads/t1/run",
      "POST /api/threads/t1/deny",
    ]);
    const denied = remote
      .getSnapshot()
      .messages.find((m) => m.role === "toolResult" && m.toolCallId === "d1");
    expect(denied).toMatchObject({ isError: true });
    expect(remote.getSnapshot().messages).toEqual(host.agent("t1")!.messages);
  });

  it("a decision sent on the side route as the run's response closes (the run then waits): the page follows what the decision set going", async () => {
    const check = gated("check");
    const deploy = gated("deploy", { needsApproval: true });
    deploy.open();
    const { host, requests } = hostWith({
      provider: scripted([
        {
          toolCalls: [
            { id: "c1", name: "check", arguments: {} },
            { id: "d1", name: "deploy", arguments: { target: "staging" } },
          ],
        },
        { text: "Both done." },
      ]),
      tools: [check.tool, deploy.tool],
    });
    // The network holds the decision until the response it was sent beside has closed.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(new URL(String(input), "http://localhost"), init);
      requests.push(`${request.method} ${new URL(request.url).pathname}`);
      if (request.url.endsWith("/deny")) await held;
      return host.handle(request);
    };
    const remote = createRemoteAgentStore({ url: "http://localhost/api", threadId: "t1", fetch });
    remote.subscribe(() => undefined);
    await settle();
    const outcome = remote.actions.prompt("Check and deploy");
    await expect.poll(() => remote.getSnapshot().pendingApprovals.map((p) => p.toolCallId)).toEqual(["d1"]);
    const denied = remote.actions.deny("d1", "not now");
    check.open();
    await expect.poll(() => host.agent("t1")!.pendingApprovals().length).toBe(1);
    await settle(50); // the run waits for the page: its response has closed
    release();
    await denied;
    expect((await outcome).reason).toBe("stop");
    await expect.poll(() => remote.getSnapshot().state).toBe("idle");
    expect(remote.getSnapshot()).toMatchObject({ pendingApprovals: [], toolCalls: [] });
    expect(remote.getSnapshot().messages).toEqual(host.agent("t1")!.messages);
    expect(requests.slice(0, 3)).toEqual([
      "GET /api/threads/t1",
      "POST /api/threads/t1/run",
      "POST /api/threads/t1/deny",
    ]);
  });

  it("steers over the side route while the run works; the steered message shows queued, then in the transcript", async () => {
    const check = gated("check");
    const { host, store } = hostWith({
      provider: scripted([{ toolCalls: [{ id: "c1", name: "check", arguments: {} }] }, { text: "Noted." }]),
      tools: [check.tool],
    });
    const remote = store();
    remote.subscribe(() => undefined);
    await settle();
    const run = remote.actions.prompt("Check");
    await expect.poll(() => remote.getSnapshot().toolCalls.length).toBe(1);
    await remote.actions.steer("and the database too");
    expect(remote.getSnapshot().queued.steering.map((m) => m.content)).toEqual(["and the database too"]);
    check.open();
    await run;
    await settle();
    const view = remote.getSnapshot();
    expect(view.queued.steering).toEqual([]);
    expect(view.messages.find((m) => m.role === "user" && m.source === "steer")).toMatchObject({
      content: "and the database too",
    });
    expect(view.messages).toEqual(host.agent("t1")!.messages);
  });

  it("a page opened mid-run (a reload) shows the run so far, then follows it live", async () => {
    const check = gated("check");
    const { store } = hostWith({
      provider: scripted([
        { text: "Looking.", toolCalls: [{ id: "c1", name: "check", arguments: {} }] },
        { text: "Done." },
      ]),
      tools: [check.tool],
    });
    const first = store();
    first.subscribe(() => undefined);
    await settle();
    void first.actions.prompt("Look");
    await expect.poll(() => first.getSnapshot().toolCalls.length).toBe(1);

    const reloaded = store();
    reloaded.subscribe(() => undefined);
    // It reads the thread, sees a run working, and follows the response in progress from its start.
    await expect.poll(() => reloaded.getSnapshot().toolCalls.map((c) => c.toolCallId)).toEqual(["c1"]);
    expect(reloaded.getSnapshot().messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    check.open();
    await expect.poll(() => reloaded.getSnapshot().state).toBe("idle");
    expect(reloaded.getSnapshot().messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(reloaded.getSnapshot().outcome?.reason).toBe("stop");
  });

  it("sends each text delta once: an update carries its delta, not the whole message so far", async () => {
    const answer = "x".repeat(4000);
    const { host } = hostWith({ provider: scripted([{ text: answer, chunkSize: 10 }]) });
    const response = await host.handle(
      new Request("http://localhost/api/threads/t9/run", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: { text: "Say x" } }),
      }),
    );
    const body = await response.text();
    const updates = body.split("\n\n").filter((frame) => frame.includes('"message_update"'));
    expect(updates).toHaveLength(400);
    // Linear in the answer: each update is its delta and the message's metadata (the whole message
    // so far in each would be 400 × 2,000 characters on average, 800 KB), then the message a few
    // times whole (its end, the turn's, the run's, the closing transcript).
    expect(body.length).toBeLessThan(250_000);
    expect(Math.max(...updates.map((frame) => frame.length))).toBeLessThan(400);
  });

  it("stops a run: abort reaches the host as JSON (the host refuses a POST of any other type)", async () => {
    const check = gated("check");
    const { host, store, requests } = hostWith({
      provider: scripted([{ toolCalls: [{ id: "c1", name: "check", arguments: {} }] }, { text: "never" }]),
      tools: [check.tool],
    });
    const remote = store();
    await settle();
    const outcome = remote.actions.prompt("Check");
    await expect.poll(() => remote.getSnapshot().toolCalls.map((c) => c.toolCallId)).toEqual(["c1"]);
    await remote.actions.abort();
    expect((await outcome).reason).toBe("aborted");
    expect(remote.getSnapshot().error).toBeUndefined();
    expect(host.agent("t1")!.state).toBe("idle");
    expect(requests).toContain("POST /api/threads/t1/abort");
  });

  it("answers bad actions with the host's refusal and changes nothing", async () => {
    const { store, requests } = hostWith({ provider: scripted([{ text: "Hi" }]) });
    const remote = store("fresh");
    remote.subscribe(() => undefined);
    await settle();
    expect(requests).toEqual(["GET /api/threads/fresh"]);
    const refused = await remote.actions.approve("nope").catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: "RemoteAgentError", status: 404 });
    await remote.actions.prompt("Hello");
    await settle();
    expect(remote.getSnapshot().messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("stops a run that waits for an approval: the page shows it ended (aborted), with no approval left", async () => {
    const deploy = gated("deploy", { needsApproval: true });
    const { store, requests } = hostWith({
      provider: scripted([{ toolCalls: [{ id: "d1", name: "deploy", arguments: {} }] }, { text: "never" }]),
      tools: [deploy.tool],
    });
    const remote = store();
    remote.subscribe(() => undefined);
    await settle();
    const outcome = remote.actions.prompt("Deploy");
    await expect.poll(() => remote.getSnapshot().pendingApprovals.map((p) => p.toolCallId)).toEqual(["d1"]);
    await settle(30); // the run's response has ended: it waits for the page
    await remote.actions.abort();
    expect((await outcome).reason).toBe("aborted");
    await expect.poll(() => remote.getSnapshot().state).toBe("idle");
    expect(remote.getSnapshot()).toMatchObject({ running: false, pendingApprovals: [], toolCalls: [] });
    expect(requests).toContain("POST /api/threads/t1/abort");
  });

  it("a run restored mid-way on a restarted host (its approval waited in the store): the page approves it and follows the rest to the end", async () => {
    const saved = new Map<string, unknown>();
    const threads = {
      load: (id: string) => saved.get(id),
      save: (id: string, snapshot: unknown) => void saved.set(id, JSON.parse(JSON.stringify(snapshot))),
    };
    const deploy = gated("deploy", { needsApproval: true });
    deploy.open();
    const agent = (): AgentOptions => ({
      provider: scripted((request) =>
        request.messages.some((m) => m.role === "toolResult")
          ? { text: "Deployed." }
          : { toolCalls: [{ id: "d1", name: "deploy", arguments: { target: "staging" } }] },
      ),
      tools: [deploy.tool],
    });
    const first = hostWith(agent(), { store: threads });
    const page = first.store();
    page.subscribe(() => undefined);
    await settle();
    void page.actions.prompt("Deploy").catch(() => undefined);
    await expect.poll(() => page.getSnapshot().pendingApprovals.length).toBe(1);
    await expect.poll(() => saved.has("t1")).toBe(true);
    await first.host.close();

    const second = hostWith(agent(), { store: threads });
    const reloaded = second.store();
    reloaded.subscribe(() => undefined);
    await expect.poll(() => reloaded.getSnapshot().pendingApprovals.map((p) => p.toolCallId)).toEqual(["d1"]);
    await reloaded.actions.approve("d1");
    await expect.poll(() => reloaded.getSnapshot().state).toBe("idle");
    const view = reloaded.getSnapshot();
    expect(view).toMatchObject({
      running: false,
      pendingApprovals: [],
      toolCalls: [],
      outcome: { reason: "stop" },
    });
    expect(view.messages).toEqual(second.host.agent("t1")!.messages);
    expect(view.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "Deployed." }],
    });
  });

  it("another page's handle reads a run that has ended by its id, from any seq (GET …/events?runId=…&seq=…)", async () => {
    const { host, store } = hostWith({ provider: scripted([{ text: "Hello there." }]) });
    const remote = store();
    await remote.actions.prompt("Hi");
    const fetchHost = (input: RequestInfo | URL, init?: RequestInit) => host.handle(new Request(input, init));
    const other = remoteAgentHandle({ url: "http://localhost/api", threadId: "t1", fetch: fetchHost });
    const { runId } = await other.status();
    const events = await firstValueFrom(other.eventsSince(runId!, 0).pipe(toArray()));
    expect(events[0]).toMatchObject({ runId, seq: 0, event: { type: "agent_start" } });
    expect(events.at(-1)!.event.type).toBe("agent_end");
    const tail = await firstValueFrom(other.eventsSince(runId!, 2).pipe(toArray()));
    expect(tail).toEqual(events.slice(2));
    // A run the host does not keep: refused as the contract says, not an empty stream.
    const unknown = await firstValueFrom(other.eventsSince("run-unknown", 0)).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: "events_unavailable" });
    const bad = await host.handle(
      new Request(`http://localhost/api/threads/t1/events?runId=${runId}&seq=-1`),
    );
    expect(bad.status).toBe(400);
  });

  it("re-renders a component that selects the approvals only when they change, not per text delta", async () => {
    const deploy = gated("deploy", { needsApproval: true });
    deploy.open();
    const { store } = hostWith({
      provider: scripted([
        {
          text: "a fairly long answer, streamed in many small pieces",
          chunkSize: 2,
          delayMs: 1,
          toolCalls: [{ id: "d1", name: "deploy", arguments: {} }],
        },
        { text: "ok" },
      ]),
      tools: [deploy.tool],
    });
    const remote = store();
    const renders = { approvals: 0, text: 0 };
    function Approvals() {
      renders.approvals++;
      const approvals = useAgent(remote, (v) => v.pendingApprovals);
      return h("p", null, approvals.map((a) => a.toolCallId).join(","));
    }
    function Text() {
      renders.text++;
      return h(
        "p",
        null,
        useAgent(remote, (v) => v.streaming?.text),
      );
    }
    let mounted!: () => void;
    const ready = new Promise<void>((resolve) => (mounted = resolve));
    function Mounted({ children }: { children: ReactNode }) {
      useEffect(() => mounted(), []);
      return children;
    }
    const container = document.createElement("div");
    document.body.append(container);
    const root = createRoot(container);
    roots.push(root);
    root.render(h(Mounted, null, h(Approvals), h(Text)));
    await ready;
    await settle();
    const before = renders.approvals;
    void remote.actions.prompt("Deploy");
    await expect.poll(() => remote.getSnapshot().pendingApprovals.length).toBe(1);
    await settle(30);
    expect(renders.text).toBeGreaterThan(5);
    // Once for the approval that appeared (whatever the text did meanwhile).
    expect(renders.approvals - before).toBe(1);
    await remote.actions.approve("d1");
    await expect.poll(() => remote.getSnapshot().state).toBe("idle");
    await settle(30);
    expect(renders.approvals - before).toBe(2);
  });
});
