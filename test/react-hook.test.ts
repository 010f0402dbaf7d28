// @vitest-environment happy-dom
// agent-machine/react, as an app uses it: components rendered with react-dom into a (happy-dom)
// document, reading an agent that runs in the page through `useAgent`. The model is driven by hand
// (each delta pushed by the test), so what a render shows and how often it happens is exact.
import { createElement as h, type ReactNode, useEffect } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentOptions,
  createAgent,
  defineClientTool,
  defineTool,
  type Provider,
  type ProviderEvent,
  type ToolResultMessage,
} from "../browser.js";
import { type AgentView, agentStoreOf, createAgentStore, useAgent, useAgentActions } from "../react.js";

/** One model call the test plays by hand: push events, then end it. */
interface ManualCall {
  push(...events: ProviderEvent[]): void;
  end(): void;
}

/** A provider whose calls the test plays: `next()` resolves with the next call once the agent makes it. */
function manualModel() {
  const calls: ManualCall[] = [];
  const waiters: ((call: ManualCall) => void)[] = [];
  const provider: Provider = {
    id: "manual",
    model: "manual-1",
    stream(_request, signal) {
      const queue: ProviderEvent[] = [];
      let closed = false;
      let wake: (() => void) | undefined;
      const call: ManualCall = {
        push: (...events) => {
          queue.push(...events);
          wake?.();
        },
        end: () => {
          closed = true;
          wake?.();
        },
      };
      const waiter = waiters.shift();
      if (waiter) waiter(call);
      else calls.push(call);
      return (async function* () {
        for (;;) {
          if (signal.aborted) return yield { type: "error", kind: "aborted", message: "aborted" };
          if (queue.length > 0) {
            yield queue.shift()!;
            continue;
          }
          if (closed) return;
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener("abort", () => resolve(), { once: true });
          });
        }
      })();
    },
  };
  return {
    provider,
    next: () =>
      new Promise<ManualCall>((resolve) => (calls.length ? resolve(calls.shift()!) : waiters.push(resolve))),
  };
}

const text = (delta: string): ProviderEvent => ({ type: "text_delta", delta });
const done = (stopReason: "stop" | "toolUse" = "stop"): ProviderEvent => ({ type: "done", stopReason });
function toolCall(id: string, name: string, args: Record<string, unknown>): ProviderEvent[] {
  return [
    { type: "toolcall_start", id, name },
    { type: "toolcall_delta", id, delta: JSON.stringify(args) },
    { type: "toolcall_end", id, name, arguments: args },
  ];
}

/**
 * Lets the agent's async work (the stream, tool actors) run and React render what it changed, as in
 * a page (no `act`: React schedules its renders itself, so the counts below are a page's).
 */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

const roots: Root[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) root.unmount();
  document.body.innerHTML = "";
});

async function render(node: ReactNode): Promise<HTMLElement> {
  const container = document.createElement("div");
  document.body.append(container);
  const root = createRoot(container);
  roots.push(root);
  // Resolved by the effect of a component around `node`: effects run children first, so by then
  // every component inside has subscribed to its store (React subscribes in an effect).
  let mounted!: () => void;
  const ready = new Promise<void>((resolve) => (mounted = resolve));
  function Mounted({ children }: { children: ReactNode }) {
    useEffect(() => mounted(), []);
    return children;
  }
  root.render(h(Mounted, null, node));
  await ready;
  return container;
}

/** A component that renders what `select` picks, as text, and counts its renders. */
function probe<T>(agent: Agent, select: (view: AgentView) => T, isEqual?: (a: T, b: T) => boolean) {
  const counter = { renders: 0, last: undefined as T | undefined };
  function Probe() {
    counter.renders++;
    const value = useAgent(agent, select, isEqual);
    counter.last = value;
    return h("pre", null, JSON.stringify(value) ?? "undefined");
  }
  return { counter, element: h(Probe) };
}

const gated = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
};

function agentWith(options: Partial<AgentOptions>) {
  const model = manualModel();
  const agent = createAgent({ provider: model.provider, ...options });
  return { agent, model };
}

describe("useAgent on an agent in the page", () => {
  it("shows the run live: state, streaming text, then the message in the transcript and the outcome", async () => {
    const { agent, model } = agentWith({});
    let view: (AgentView & ReturnType<typeof useAgentActions>) | undefined;
    function Chat() {
      view = useAgent(agent);
      return h("p", null, view.streaming?.text ?? view.messages.map((m) => m.role).join(","));
    }
    const container = await render(h(Chat));
    expect(view!.state).toBe("idle");
    expect(view!.messages).toEqual([]);

    const run = view!.prompt("Hi");
    const call = await model.next();
    call.push({ type: "start" }, text("Hel"));
    await settle();
    expect(view!.state).toBe("running.streaming");
    expect(view!.running).toBe(true);
    expect(container.textContent).toBe("Hel");
    call.push(text("lo!"));
    await settle();
    expect(view!.streaming).toMatchObject({ text: "Hello!", thinking: "", toolCalls: [] });
    const id = view!.streaming!.id;
    expect(id).toEqual(expect.any(String));

    call.push(done());
    call.end();
    await settle();
    await run;
    expect(view!.state).toBe("idle");
    expect(view!.streaming).toBeUndefined();
    expect(view!.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    // The message that streamed is the transcript's, by id.
    expect(view!.messages[1]!.id).toBe(id);
    expect(view!.outcome?.reason).toBe("stop");
    expect(container.textContent).toBe("user,assistant");
  });

  it("re-renders a component only when the part it selects changes", async () => {
    const gate = gated();
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: z.object({ env: z.string() }),
      needsApproval: true,
      execute: async (_args, { onProgress }) => {
        onProgress("10%");
        await gate.opened;
        return "deployed";
      },
    });
    const lint = defineTool({
      name: "lint",
      description: "Lints",
      parameters: z.object({}),
      execute: async (_args, { onProgress }) => {
        for (const step of ["a", "b", "c"]) onProgress(step);
        await gate.opened;
        return "clean";
      },
    });
    const { agent, model } = agentWith({ tools: [deploy, lint] });
    const streamingText = probe(agent, (v) => v.streaming?.text);
    const approvals = probe(agent, (v) => v.pendingApprovals);
    const count = probe(
      agent,
      (v) => ({ messages: v.messages.length }),
      (a, b) => a.messages === b.messages,
    );
    let actionsRenders = 0;
    function Buttons() {
      actionsRenders++;
      useAgentActions(agent);
      return null;
    }
    await render(h("div", null, streamingText.element, approvals.element, count.element, h(Buttons)));
    const initial = { text: streamingText.counter.renders, approvals: approvals.counter.renders };
    const initialCount = count.counter.renders;

    void agent.prompt("Ship it");
    const call = await model.next();
    call.push({ type: "start" });
    await settle();
    const afterStart = streamingText.counter.renders;
    const countAfterPrompt = count.counter.renders;
    for (const delta of ["Shipping", " to", " prod", "."]) {
      call.push(text(delta));
      await settle();
    }
    // Each delta renders the text once; nothing else moves.
    expect(streamingText.counter.renders - afterStart).toBe(4);
    expect(streamingText.counter.last).toBe("Shipping to prod.");
    expect(approvals.counter.renders).toBe(initial.approvals);
    expect(count.counter.renders).toBe(countAfterPrompt);

    call.push(...toolCall("c1", "deploy", { env: "prod" }), ...toolCall("c2", "lint", {}), done("toolUse"));
    call.end();
    await settle();
    await expect.poll(() => agent.pendingApprovals().length).toBe(1);
    await settle();
    // The approval appeared: the approvals probe rendered for it, once or twice (it may land in the
    // same batch as the message's end), never for the lint's progress lines.
    expect(approvals.counter.last).toEqual([{ toolCallId: "c1", toolName: "deploy", args: { env: "prod" } }]);
    const approvalsRenders = approvals.counter.renders;
    expect(approvalsRenders - initial.approvals).toBeGreaterThanOrEqual(1);
    expect(
      agentStoreOf(agent)
        .getSnapshot()
        .toolCalls.find((c) => c.toolCallId === "c2")?.progress,
    ).toBe("c");
    expect(actionsRenders).toBe(1);
    expect(initialCount).toBe(1);

    await agentStoreOf(agent).actions.approve("c1");
    await settle();
    expect(approvals.counter.last).toEqual([]);
    expect(approvals.counter.renders).toBe(approvalsRenders + 1);
    gate.open();
    const next = await model.next();
    next.push({ type: "start" }, text("Done."), done());
    next.end();
    await settle();
    await agent.waitForIdle();
    await settle();
    expect(streamingText.counter.last).toBeUndefined();
    expect(actionsRenders).toBe(1);
    // user, assistant (two calls), two results, assistant
    expect(count.counter.last).toEqual({ messages: 5 });
  });

  it("approves with edited arguments and denies with a reason; a refused decision rejects and sets error", async () => {
    const ran: unknown[] = [];
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: z.object({ env: z.enum(["staging", "prod"]) }),
      needsApproval: true,
      execute: async (args) => {
        ran.push(args);
        return `deployed to ${args.env}`;
      },
    });
    const { agent, model } = agentWith({ tools: [deploy] });
    let view!: AgentView & ReturnType<typeof useAgentActions>;
    function Approvals() {
      view = useAgent(agent);
      return h(
        "ul",
        null,
        view.pendingApprovals.map((p) =>
          h("li", { key: p.toolCallId }, `${p.toolName} ${JSON.stringify(p.args)}`),
        ),
      );
    }
    const container = await render(h(Approvals));
    void view.prompt("Deploy twice");
    const call = await model.next();
    call.push(
      { type: "start" },
      ...toolCall("a", "deploy", { env: "prod" }),
      ...toolCall("b", "deploy", { env: "prod" }),
      done("toolUse"),
    );
    call.end();
    await expect.poll(() => agent.pendingApprovals().length).toBe(2);
    await settle();
    expect(container.textContent).toBe('deploy {"env":"prod"}deploy {"env":"prod"}');
    expect(view.toolCalls.map((c) => [c.toolCallId, c.phase])).toEqual([
      ["a", "awaitingApproval"],
      ["b", "awaitingApproval"],
    ]);

    // An edit the tool's schema refuses: rejected, shown as the view's error, the call still waits.
    let refusal: unknown;
    await view.approve("a", { args: { env: "moon" } }).catch((error) => void (refusal = error));
    expect(String(refusal)).toMatch(/fail the schema of tool deploy/);
    expect(view.error?.message).toMatch(/fail the schema/);
    expect(view.pendingApprovals).toHaveLength(2);

    await view.approve("a", { args: { env: "staging" } });
    expect(view.error).toBeUndefined();
    await view.deny("b", "not today");
    // Already decided: the second decision is refused.
    await view.deny("a").catch((error) => void (refusal = error));
    expect(String(refusal)).toMatch(/not waiting for approval|already finished/);

    const next = await model.next();
    next.push({ type: "start" }, text("ok"), done());
    next.end();
    await agent.waitForIdle();
    await settle();
    expect(ran).toEqual([{ env: "staging" }]);
    const results = view.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(results.map((r) => [r.toolCallId, r.isError, r.editedArgs])).toEqual([
      ["a", false, { env: "staging" }],
      ["b", true, undefined],
    ]);
    expect(view.pendingApprovals).toEqual([]);
    expect(view.toolCalls).toEqual([]);
  });

  it("steers a running agent: the message shows as queued, then in the transcript", async () => {
    const { agent, model } = agentWith({});
    const queued = probe(agent, (v) => v.queued.steering.map((m) => m.content));
    await render(queued.element);
    const { prompt, steer } = agentStoreOf(agent).actions;
    void prompt("Write a poem");
    const call = await model.next();
    call.push({ type: "start" }, text("Roses"));
    await settle();
    await steer("make it about the sea");
    expect(queued.counter.last).toEqual(["make it about the sea"]);
    call.push(done());
    call.end();
    const next = await model.next();
    await settle();
    expect(queued.counter.last).toEqual([]);
    const steered = agentStoreOf(agent)
      .getSnapshot()
      .messages.find((m) => m.role === "user" && m.source === "steer");
    expect(steered).toMatchObject({ content: "make it about the sea" });
    next.push({ type: "start" }, text("Waves"), done());
    next.end();
    await agent.waitForIdle();
  });

  it("answers a client-run tool from the page, and abort ends a run with every call answered", async () => {
    const pickColor = defineClientTool({
      name: "pick_color",
      description: "Asks the user",
      parameters: z.object({ options: z.array(z.string()) }),
    });
    const { agent, model } = agentWith({ tools: [pickColor] });
    const waiting = probe(agent, (v) => v.pendingToolCalls);
    await render(waiting.element);
    const store = agentStoreOf(agent);
    void store.actions.prompt("Pick a color");
    let call = await model.next();
    call.push(
      { type: "start" },
      ...toolCall("p1", "pick_color", { options: ["red", "blue"] }),
      done("toolUse"),
    );
    call.end();
    await expect.poll(() => agent.pendingToolCalls().length).toBe(1);
    await settle();
    expect(waiting.counter.last).toEqual([
      { toolCallId: "p1", toolName: "pick_color", args: { options: ["red", "blue"] } },
    ]);
    expect(store.getSnapshot().toolCalls[0]).toMatchObject({ toolCallId: "p1", phase: "awaitingResult" });
    await store.actions.resolveToolCall("p1", "blue");
    call = await model.next();
    // The next model call: it asks again, and the user aborts while it waits.
    call.push({ type: "start" }, ...toolCall("p2", "pick_color", { options: ["green"] }), done("toolUse"));
    call.end();
    await expect.poll(() => agent.pendingToolCalls().length).toBe(1);
    await settle();
    await store.actions.abort();
    await agent.waitForIdle();
    await settle();
    const view = store.getSnapshot();
    expect(view.outcome?.reason).toBe("aborted");
    expect(view.pendingToolCalls).toEqual([]);
    expect(view.toolCalls).toEqual([]);
    const results = view.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["p1", false],
      ["p2", true],
    ]);
  });

  it("a component mounted mid-run shows the run so far (from the agent's replay buffer)", async () => {
    const { agent, model } = agentWith({});
    void agent.prompt("Hi");
    const call = await model.next();
    call.push({ type: "start" }, { type: "thinking_delta", delta: "hmm" }, text("Hello, "));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const late = probe(agent, (v) => ({
      state: v.state,
      text: v.streaming?.text,
      thinking: v.streaming?.thinking,
    }));
    await render(late.element);
    expect(late.counter.last).toEqual({ state: "running.streaming", text: "Hello, ", thinking: "hmm" });
    call.push(text("world"), done());
    call.end();
    await agent.waitForIdle();
    await settle();
    expect(late.counter.last).toEqual({ state: "idle", text: undefined, thinking: undefined });
  });

  it("does not keep a hibernating agent awake, and reads its transcript without waking it", async () => {
    const { agent, model } = agentWith({ hibernate: "whenIdle" });
    const messages = probe(agent, (v) => v.messages.map((m) => m.role));
    await render(messages.element);
    expect(agent.hibernated).toBe(true);
    void agentStoreOf(agent).actions.prompt("Hi");
    const call = await model.next();
    call.push({ type: "start" }, text("Hello"), done());
    call.end();
    await agent.waitForIdle();
    await settle();
    expect(agent.hibernated).toBe(true);
    expect(messages.counter.last).toEqual(["user", "assistant"]);
  });

  it("works without React: a store's subscribers hear each change, and one store per agent is shared", async () => {
    const { agent, model } = agentWith({});
    expect(agentStoreOf(agent)).toBe(agentStoreOf(agent));
    const store = createAgentStore(agent);
    expect(agentStoreOf(store)).toBe(store);
    const texts: (string | undefined)[] = [];
    const stop = store.subscribe(() => texts.push(store.getSnapshot().streaming?.text));
    const run = store.actions.prompt("Hi");
    const call = await model.next();
    call.push({ type: "start" }, text("a"), text("b"), done());
    call.end();
    const outcome = await run;
    stop();
    expect(outcome.reason).toBe("stop");
    expect(texts).toContain("a");
    expect(texts).toContain("ab");
    expect(texts.at(-1)).toBeUndefined();
    // Unsubscribed: the store reads the agent when asked.
    expect(store.getSnapshot().messages).toHaveLength(2);
  });
});
