import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentMessage,
  createAgent,
  createFileScheduleStore,
  createMemoryScheduleStore,
  createLaterResults,
  createScheduler,
  defineLaterTool,
  type LaterReport,
  type LaterResults,
  LaterResultError,
  type LaterWork,
  type ScheduleStore,
  scripted,
} from "../index.js";
import { createTestClock, type TestClock } from "../testing.js";
import { expectValidTranscript, resultText, toolResults } from "./helpers.js";

// Tools that answer later, through the public API, on the test kit's clock: a call is answered at
// once with a handle, the result wakes the agent minutes later as a message of its own.

const MINUTE = 60_000;
const START = Date.UTC(2026, 0, 5, 8, 0, 0);

let clock: TestClock;
beforeEach(() => {
  clock = createTestClock({ now: START }).install();
});
afterEach(() => clock.uninstall());

const parameters = z.object({ scene: z.string() });

/** Work that takes `ms` of clock time, honouring its signal; `calls` records each start. */
function slowWork(ms: number, calls: { handle: string; key: string; signal: AbortSignal }[] = []) {
  const work: LaterWork<{ scene: string }> = ({ scene }, { handle, signal, idempotencyKey }) => {
    calls.push({ handle, key: idempotencyKey, signal });
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve(`${scene}.mp4, 12 s`), ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      });
    });
  };
  return { work, calls };
}

/** The model: asks for a render when told to render, else answers "ok". */
function renderingModel() {
  return scripted((request) => {
    const last = request.messages.at(-1)!;
    const asked =
      last.role === "user" && typeof last.content === "string" && last.content.startsWith("Render");
    return asked ? { toolCalls: [{ name: "render", arguments: { scene: "intro" } }] } : { text: "ok" };
  });
}

function laterResults(agents: Map<string, Agent>, store?: ScheduleStore, timeoutMs?: number) {
  const errors: Error[] = [];
  const reports: LaterReport[] = [];
  const later = createLaterResults({
    agents,
    store,
    timeoutMs,
    onError: (error) => errors.push(error),
    onSettle: (report) => reports.push(report),
  });
  return { later, errors, reports };
}

async function startedLater(agents: Map<string, Agent>, store?: ScheduleStore, timeoutMs?: number) {
  const made = laterResults(agents, store, timeoutMs);
  await made.later.start();
  return made;
}

function renderTool(later: LaterResults, work: LaterWork<{ scene: string }>, extra: object = {}) {
  return defineLaterTool({
    later,
    agentId: "ada",
    name: "render",
    description: "Renders a scene to video",
    parameters,
    run: work,
    ...extra,
  });
}

/** Lets the event loop turn until `done()` (a wake's run starts after a few promise hops). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await clock.advance(0);
  expect(done()).toBe(true);
}

const roles = (messages: readonly AgentMessage[]) =>
  messages.map((m) => (m.role === "user" ? `user:${m.source}` : m.role));

describe("tools that answer later", () => {
  it("answers the call at once with a handle; the result wakes the hibernated agent as a message of its own", async () => {
    const agents = new Map<string, Agent>();
    const { later, errors, reports } = await startedLater(agents);
    const { work, calls } = slowWork(10 * MINUTE);
    const provider = renderingModel();
    const agent = createAgent({
      id: "ada",
      provider,
      tools: [renderTool(later, work)],
      hibernate: "whenIdle",
    });
    agents.set("ada", agent);

    await clock.runUntil(agent.prompt("Render the intro"));
    // The call was answered once, at once, and the run ended: the model read that the result comes later.
    const [started] = toolResults(agent.messages);
    const handle = later.list("ada")[0]!.id;
    expect(handle).toMatch(/^later_/);
    expect(resultText(started!)).toBe(
      `Started render in the background (handle ${handle}). Its result will come later, in a message ` +
        "of its own, at the latest by 2026-01-05T09:00:00.000Z: do not wait for it or call render again for it.",
    );
    expect(started!.isError).toBeFalsy();
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({
      role: "toolResult",
      toolCallId: "call_0_0",
    });
    expect(roles(agent.messages)).toEqual(["user:prompt", "assistant", "toolResult", "assistant"]);
    expect(calls).toEqual([{ handle, key: handle, signal: expect.any(AbortSignal) }]);
    await clock.advance(0);
    expect(agent.hibernated).toBe(true);

    await clock.advance(10 * MINUTE);
    await until(() => provider.requests.length === 3);
    await clock.runUntil(agent.waitForIdle());
    const woke = agent.messages[4]!;
    expect(woke).toMatchObject({
      role: "user",
      source: "laterResult",
      id: handle,
      content: `The result of render (handle ${handle}, started 2026-01-05T08:00:00.000Z):\n\nintro.mp4, 12 s`,
    });
    // What the model saw on waking: the whole transcript, the result last.
    expect(provider.requests[2]!.messages.at(-1)).toMatchObject({
      role: "user",
      content: woke.role === "user" && woke.content,
    });
    expect(roles(agent.messages)).toEqual([
      "user:prompt",
      "assistant",
      "toolResult",
      "assistant",
      "user:laterResult",
      "assistant",
    ]);
    expect(toolResults(agent.messages)).toHaveLength(1);
    expectValidTranscript(agent.messages);
    expect(later.list()).toEqual([]);
    expect(reports).toMatchObject([{ outcome: "result", delivery: "delivered", handle: { id: handle } }]);
    expect(errors).toEqual([]);
    later.stop();
  });

  it("a result that comes while the agent runs waits in its follow-up queue for the end of the run", async () => {
    const agents = new Map<string, Agent>();
    const { later } = await startedLater(agents);
    const provider = scripted((request, call) => {
      if (call === 0) return { toolCalls: [{ name: "render", arguments: { scene: "intro" } }] };
      if (call === 2) return { text: "still busy", delayMs: 5 * MINUTE };
      return { text: "ok" };
    });
    const agent = createAgent({ id: "ada", provider, tools: [renderTool(later, () => undefined)] });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render the intro"));
    const handle = later.list("ada")[0]!.id;

    const run = agent.prompt("Something else meanwhile");
    await until(() => provider.requests.length === 3);
    expect(await later.complete(handle, "intro.mp4")).toBe("delivered");
    expect(agent.queued.followUp).toMatchObject([{ id: handle, source: "laterResult" }]);
    await clock.runUntil(run);
    expect(roles(agent.messages).slice(4)).toEqual([
      "user:prompt",
      "assistant",
      "user:laterResult",
      "assistant",
    ]);
    later.stop();
  });

  it("a result queued in a run that is then aborted is kept for the next run (abort drops what a person queued)", async () => {
    const agents = new Map<string, Agent>();
    const { later } = await startedLater(agents);
    const provider = scripted((request, call) => {
      if (call === 0) return { toolCalls: [{ name: "render", arguments: { scene: "intro" } }] };
      if (call === 2) return { text: "still busy", delayMs: 5 * MINUTE };
      return { text: "ok" };
    });
    const agent = createAgent({ id: "ada", provider, tools: [renderTool(later, () => undefined)] });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render the intro"));
    const handle = later.list("ada")[0]!.id;

    const run = agent.prompt("Something else meanwhile");
    await until(() => provider.requests.length === 3);
    expect(await later.complete(handle, "intro.mp4")).toBe("delivered");
    agent.followUp("and then tidy up");
    agent.abort();
    await clock.runUntil(run);
    // The handle is settled (a second answer is a no-op): the queue is the result's only copy.
    expect(await later.complete(handle, "intro.mp4")).toBe("duplicate");
    expect(agent.queued.followUp).toMatchObject([{ id: handle, source: "laterResult" }]);
    expect(provider.requests).toHaveLength(3); // the abort started nothing

    await clock.runUntil(agent.prompt("Where were we?"));
    expect(roles(agent.messages).slice(-4)).toEqual([
      "user:prompt",
      "assistant",
      "user:laterResult",
      "assistant",
    ]);
    expect(agent.messages.filter((m) => m.id === handle)).toHaveLength(1);
    expectValidTranscript(agent.messages);
    later.stop();
  });

  it("times out: the work's signal fires and the model is told no result will come; a result after that is a no-op", async () => {
    const agents = new Map<string, Agent>();
    const { later, reports } = await startedLater(agents, undefined, 15 * MINUTE);
    // Work that ignores its signal and answers after an hour.
    const calls: AbortSignal[] = [];
    const provider = renderingModel();
    const tool = renderTool(later, (_args, { signal }) => {
      calls.push(signal);
      return new Promise<string>((resolve) => setTimeout(() => resolve("too late"), 60 * MINUTE));
    });
    const agent = createAgent({ id: "ada", provider, tools: [tool], hibernate: "whenIdle" });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render the intro"));
    const handle = later.list()[0]!.id;

    await clock.advance(15 * MINUTE - 1);
    expect(calls[0]!.aborted).toBe(false);
    expect(provider.requests).toHaveLength(2);
    await clock.advance(1);
    expect(calls[0]!.aborted).toBe(true);
    expect((calls[0]!.reason as Error).name).toBe("TimeoutError");
    await until(() => provider.requests.length === 3);
    await clock.runUntil(agent.waitForIdle());
    expect(agent.messages[4]).toMatchObject({
      role: "user",
      source: "laterResult",
      id: handle,
      content: `render (handle ${handle}) timed out: no result within 15 min. Its work was stopped; no result will come.`,
    });

    await clock.advance(60 * MINUTE); // the work answers anyway
    expect(await later.complete(handle, "too late")).toBe("timedOut");
    expect(provider.requests).toHaveLength(3);
    expect(roles(agent.messages)).toHaveLength(6);
    expect(reports.map((r) => r.outcome)).toEqual(["timedOut"]);
    later.stop();
  });

  it("cancels: the work's signal fires, no run starts, the notice waits for the next turn, a late result is a no-op", async () => {
    const agents = new Map<string, Agent>();
    const { later } = await startedLater(agents);
    const provider = renderingModel();
    const calls: AbortSignal[] = [];
    // Work that ignores its signal: its result still comes, after the cancel.
    const tool = renderTool(later, (_args, { signal }) => {
      calls.push(signal);
      return new Promise<string>((resolve) => setTimeout(() => resolve("intro.mp4"), 10 * MINUTE));
    });
    const agent = createAgent({ id: "ada", provider, tools: [tool], hibernate: "whenIdle" });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render the intro"));
    const handle = later.list()[0]!.id;

    expect(await later.cancel(handle, "the user closed the ticket")).toBe(true);
    expect(calls[0]!.aborted).toBe(true);
    expect((calls[0]!.reason as Error).message).toBe(`${handle} was cancelled: the user closed the ticket`);
    expect(await later.cancel(handle)).toBe(false);
    await clock.advance(10 * MINUTE);
    expect(await later.complete(handle, "intro.mp4")).toBe("cancelled");
    expect(provider.requests).toHaveLength(2);
    expect(agent.queued.steering).toMatchObject([
      {
        id: handle,
        source: "laterResult",
        content: `render (handle ${handle}) was cancelled: the user closed the ticket. No result will come.`,
      },
    ]);

    await clock.runUntil(agent.prompt("Where is my video?"));
    expect(provider.requests[2]!.messages.slice(-2)).toMatchObject([
      { role: "user", content: "Where is my video?" },
      { role: "user", content: expect.stringContaining("was cancelled") },
    ]);
    expect(agent.messages.filter((m) => m.id === handle)).toHaveLength(1);
    later.stop();
  });

  it("a duplicate answer, a bad result and a result for an agent that is gone: a no-op or a clear error, nothing lost", async () => {
    const agents = new Map<string, Agent>();
    const { later, errors } = await startedLater(agents);
    const provider = renderingModel();
    const agent = createAgent({ id: "ada", provider, tools: [renderTool(later, () => undefined)] });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render"));
    const handle = later.list()[0]!.id;
    expect(later.list()[0]!.phase).toBe("awaiting"); // the work handed the job on: complete() answers

    await expect(later.complete(handle, { nope: 1 } as never)).rejects.toThrow(LaterResultError);
    expect(later.list()).toHaveLength(1); // still pending
    // A result JSON cannot hold (it is stored with its handle, and journaled on Restate) likewise.
    await expect(
      later.complete(handle, { content: [{ type: "text", text: "intro.mp4" }], details: { bytes: 1n } }),
    ).rejects.toThrow(
      new LaterResultError("a late result must be JSON: Do not know how to serialize a BigInt"),
    );
    expect(later.list()).toHaveLength(1);
    expect(await later.complete("later_nobody", "x")).toBe("unknown");

    expect(await later.complete(handle, "intro.mp4")).toBe("delivered");
    expect(await later.complete(handle, "intro.mp4")).toBe("duplicate");
    expect(await later.fail(handle, new Error("boom"))).toBe("duplicate");
    await clock.runUntil(agent.waitForIdle());
    expect(agent.messages.filter((m) => m.id === handle)).toHaveLength(1);

    // A second call; then the agent leaves the directory before its result comes.
    await clock.runUntil(agent.prompt("Render again"));
    const second = later.list()[0]!.id;
    agents.delete("ada");
    const error = await later.complete(second, "outro.mp4").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaterResultError);
    expect((error as Error).message).toBe(
      `no agent "ada": the result of render (${second}) was not delivered, and the handle is dropped`,
    );
    expect((error as LaterResultError).result).toEqual({ content: [{ type: "text", text: "outro.mp4" }] });
    expect(later.list()).toEqual([]);
    expect(await later.complete(second, "outro.mp4")).toBe("unknown");
    expect(errors).toEqual([]);
    later.stop();
  });

  it("a call for an agent the manager does not know, or before start, is an error result the model reads", async () => {
    const later = createLaterResults({ agents: new Map() });
    const provider = renderingModel();
    const agent = createAgent({ id: "ada", provider, tools: [renderTool(later, () => "x")] });
    await clock.runUntil(agent.prompt("Render"));
    expect(toolResults(agent.messages)[0]).toMatchObject({ isError: true });
    expect(resultText(toolResults(agent.messages)[0]!)).toContain("call laterResults.start()");

    await later.start();
    await clock.runUntil(agent.prompt("Render"));
    const refused = toolResults(agent.messages)[1]!;
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toContain('no agent "ada": render was not started');
    expect(later.list()).toEqual([]);
    later.stop();
  });

  it("a tool made for durable sessions only (no manager) answers an error in process; half a manager is refused", async () => {
    const durableOnly = defineLaterTool({
      name: "render",
      description: "Renders",
      parameters,
      run: () => "x",
    });
    const agent = createAgent({ id: "ada", provider: renderingModel(), tools: [durableOnly] });
    await clock.runUntil(agent.prompt("Render"));
    const [result] = toolResults(agent.messages);
    expect(result!.isError).toBe(true);
    expect(resultText(result!)).toContain("render answers later only in a durable session");
    const later = createLaterResults({ agents: new Map() });
    expect(() =>
      defineLaterTool({ later, name: "render", description: "Renders", parameters, run: () => "x" }),
    ).toThrow(/give both later and agentId/);
  });

  it("work that fails tells the model it failed, as a late message", async () => {
    const agents = new Map<string, Agent>();
    const { later, reports } = await startedLater(agents);
    const provider = renderingModel();
    const tool = renderTool(later, async () => {
      await new Promise((resolve) => setTimeout(resolve, MINUTE));
      throw new Error("the render farm is full");
    });
    const agent = createAgent({ id: "ada", provider, tools: [tool], hibernate: "whenIdle" });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render"));
    const handle = later.list()[0]!.id;
    await clock.advance(MINUTE);
    await until(() => provider.requests.length === 3);
    expect(provider.requests[2]!.messages.at(-1)).toMatchObject({
      role: "user",
      content: `render (handle ${handle}, started 2026-01-05T08:00:00.000Z) failed:\n\nthe render farm is full`,
    });
    expect(reports.map((r) => r.outcome)).toEqual(["error"]);
    later.stop();
  });

  it("holds one timer for every handle of every agent; agent.abort() leaves the handles alone", async () => {
    const agents = new Map<string, Agent>();
    const timersBefore = clock.pending();
    const { later } = await startedLater(agents);
    const make = (id: string) => {
      const provider = renderingModel();
      const tool = defineLaterTool({
        later,
        agentId: id,
        name: "render",
        description: "Renders",
        parameters,
        run: () => undefined, // the job goes elsewhere: no timer of its own
      });
      const agent = createAgent({ id, provider, tools: [tool], hibernate: "whenIdle" });
      agents.set(id, agent);
      return { agent, provider };
    };
    const ada = make("ada");
    const bob = make("bob");
    await clock.runUntil(ada.agent.prompt("Render"));
    await clock.runUntil(bob.agent.prompt("Render"));
    await clock.runUntil(ada.agent.prompt("Render another"));
    expect(later.list()).toHaveLength(3);
    await clock.advance(0);
    expect(ada.agent.hibernated && bob.agent.hibernated).toBe(true);
    expect(clock.pending() - timersBefore).toBe(1);

    ada.agent.abort();
    expect(later.list("ada")).toHaveLength(2);
    expect(await later.complete(later.list("ada")[0]!.id, "intro.mp4")).toBe("delivered");
    await clock.runUntil(ada.agent.waitForIdle());
    expect(ada.agent.messages.at(-2)).toMatchObject({ source: "laterResult" });
    later.stop();
  });

  it("stopped, then started again: the same manager runs the stopped work again and keeps the timeouts", async () => {
    const agents = new Map<string, Agent>();
    const { later, reports } = await startedLater(agents, undefined, 30 * MINUTE);
    const { work, calls } = slowWork(10 * MINUTE);
    const provider = renderingModel();
    const agent = createAgent({
      id: "ada",
      provider,
      tools: [renderTool(later, work)],
      hibernate: "whenIdle",
    });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render the intro"));
    const handle = later.list()[0]!.id;
    later.stop();
    expect(calls[0]!.signal.aborted).toBe(true);

    await later.start();
    expect(calls.map((call) => call.handle)).toEqual([handle, handle]);
    await clock.advance(10 * MINUTE);
    await clock.runUntil(agent.waitForIdle());
    expect(agent.messages.find((m) => m.id === handle)).toMatchObject({ source: "laterResult" });
    expect(reports.map((r) => r.outcome)).toEqual(["result"]);

    // A new call after the restart is taken, and its timeout still comes.
    const stuck = slowWork(24 * 60 * MINUTE);
    const other = createAgent({
      id: "bob",
      provider: renderingModel(),
      tools: [
        defineLaterTool({
          later,
          agentId: "bob",
          name: "render",
          description: "Renders",
          parameters,
          run: stuck.work,
        }),
      ],
    });
    agents.set("bob", other);
    later.stop();
    await later.start();
    await clock.runUntil(other.prompt("Render the outro"));
    expect(later.list("bob")).toHaveLength(1);
    await clock.advance(30 * MINUTE);
    await clock.runUntil(other.waitForIdle());
    expect(reports.map((r) => r.outcome)).toEqual(["result", "timedOut"]);
    later.stop();
  });

  it("a timeout of 0 or less, no agents or half a store: a TypeError when the manager or the tool is made", () => {
    const agents = new Map<string, Agent>();
    expect(() => createLaterResults({ agents, timeoutMs: 0 })).toThrow(
      /createLaterResults: timeoutMs must be above 0 milliseconds \(Infinity for no timeout\), got 0/,
    );
    expect(() => createLaterResults({ agents, timeoutMs: Number.NaN })).toThrow(/timeoutMs must be above 0/);
    expect(() => createLaterResults({} as never)).toThrow(/createLaterResults needs agents/);
    expect(() => createLaterResults({ agents, store: { load: () => [] } as never })).toThrow(
      /store must have/,
    );
    expect(() => createLaterResults({ agents, maxResultChars: 0 })).toThrow(/maxResultChars must be above 0/);
    const later = createLaterResults({ agents, timeoutMs: Infinity });
    expect(() => renderTool(later, () => "x", { timeoutMs: -1 })).toThrow(
      /defineLaterTool "render": timeoutMs must be above 0/,
    );
    // A tool for durable sessions is checked the same way.
    expect(() =>
      defineLaterTool({ name: "render", description: "Renders", parameters, run: () => "x", timeoutMs: 0 }),
    ).toThrow(/timeoutMs must be above 0/);
  });

  it("an onSettle or onError of the app's that throws stops nothing: results and timeouts still come", async () => {
    const agents = new Map<string, Agent>();
    const later = createLaterResults({
      agents,
      timeoutMs: 30 * MINUTE,
      onSettle: () => {
        throw new Error("the app's dashboard is down");
      },
      onError: () => {
        throw new Error("and so is its logger");
      },
    });
    await later.start();
    const provider = renderingModel();
    const fast = slowWork(MINUTE);
    const agent = createAgent({
      id: "ada",
      provider,
      tools: [renderTool(later, fast.work)],
      hibernate: "whenIdle",
    });
    const stuck = slowWork(24 * 60 * MINUTE);
    const other = createAgent({
      id: "bob",
      provider: renderingModel(),
      tools: [
        defineLaterTool({
          later,
          agentId: "bob",
          name: "render",
          description: "Renders",
          parameters,
          run: stuck.work,
        }),
      ],
    });
    agents.set("ada", agent).set("bob", other);
    await clock.runUntil(agent.prompt("Render the intro"));
    await clock.runUntil(other.prompt("Render the outro"));
    await clock.advance(MINUTE);
    await clock.runUntil(agent.waitForIdle());
    expect(agent.messages.filter((m) => m.role === "user" && m.source === "laterResult")).toHaveLength(1);
    await clock.advance(30 * MINUTE);
    await clock.runUntil(other.waitForIdle());
    expect(other.messages.filter((m) => m.role === "user" && m.source === "laterResult")).toMatchObject([
      { content: expect.stringContaining("timed out") },
    ]);
    expect(later.list()).toEqual([]);
    later.stop();
  });

  it("a long result is cut to its head and tail; images come as they are", async () => {
    const agents = new Map<string, Agent>();
    const later = createLaterResults({ agents, maxResultChars: 200 });
    await later.start();
    const provider = renderingModel();
    const agent = createAgent({ id: "ada", provider, tools: [renderTool(later, () => undefined)] });
    agents.set("ada", agent);
    await clock.runUntil(agent.prompt("Render"));
    await clock.runUntil(agent.prompt("Render again"));
    const [first, second] = later.list().map((h) => h.id);

    const log = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n");
    await later.complete(first!, log);
    await clock.runUntil(agent.waitForIdle());
    const text = agent.messages.find((m) => m.id === first)!.content as string;
    expect(text).toMatch(/^The result of render .*:\n\nline 0\n/);
    expect(text).toMatch(/characters cut …\]/);
    expect(text).toMatch(/line 99$/);
    expect(text.length).toBeLessThan(400);

    const image = { type: "image" as const, data: "iVBORw0KGgo=", mimeType: "image/png" };
    await later.complete(second!, { content: [{ type: "text", text: "the poster" }, image] });
    await clock.runUntil(agent.waitForIdle());
    expect(agent.messages.find((m) => m.id === second)!.content).toEqual([
      { type: "text", text: expect.stringMatching(/^The result of render/) },
      { type: "text", text: "the poster" },
      image,
    ]);
    later.stop();
  });

  describe("across a restart", () => {
    /** Process one: the call is answered, the work is under way, then the process dies. */
    async function firstProcess(store: ScheduleStore) {
      const agents = new Map<string, Agent>();
      const { later } = await startedLater(agents, store, 30 * MINUTE);
      const provider = renderingModel();
      const { work, calls } = slowWork(10 * MINUTE);
      const agent = createAgent({
        id: "ada",
        provider,
        tools: [renderTool(later, work)],
        hibernate: "whenIdle",
      });
      agents.set("ada", agent);
      await clock.runUntil(agent.prompt("Render the intro"));
      const handle = later.list()[0]!.id;
      await clock.advance(MINUTE);
      later.stop(); // the process dies: its timer and work are gone
      expect(calls[0]!.signal.aborted).toBe(true);
      return { handle, snapshot: agent.getPersistedSnapshot() };
    }

    /** Process two: the agent restored from its snapshot with the tool made again, then the manager started. */
    async function secondProcess(store: ScheduleStore, snapshot: unknown, extra: object = {}) {
      const agents = new Map<string, Agent>();
      const provider = scripted(() => ({ text: "ok" }));
      const { later, errors } = laterResults(agents, store, 30 * MINUTE);
      const { work, calls } = slowWork(10 * MINUTE);
      const tool = renderTool(later, work, extra);
      const agent = createAgent({ id: "ada", provider, tools: [tool], hibernate: "whenIdle", snapshot });
      agents.set("ada", agent);
      await later.start();
      return { later, agent, provider, calls, errors };
    }

    it("the pending handle is in the scheduler's store; its work runs again with the same handle and the result wakes the agent", async () => {
      const store = createMemoryScheduleStore();
      const scheduler = createScheduler({ agents: new Map(), store });
      await scheduler.start();
      const { handle, snapshot } = await firstProcess(store);
      expect([...store.records.values()]).toMatchObject([
        {
          kind: "laterResult",
          id: handle,
          agentId: "ada",
          toolName: "render",
          args: { scene: "intro" },
          phase: "running",
        },
      ]);
      // The scheduler shares the store and leaves the handle alone.
      const restarted = createScheduler({ agents: new Map(), store });
      await restarted.start();
      expect(restarted.list()).toEqual([]);

      const two = await secondProcess(store, snapshot);
      expect(two.calls).toEqual([{ handle, key: handle, signal: expect.any(AbortSignal) }]);
      await clock.advance(10 * MINUTE);
      await until(() => two.provider.requests.length === 1);
      await clock.runUntil(two.agent.waitForIdle());
      expect(two.agent.messages[4]).toMatchObject({ source: "laterResult", id: handle });
      expect(roles(two.agent.messages)).toEqual([
        "user:prompt",
        "assistant",
        "toolResult",
        "assistant",
        "user:laterResult",
        "assistant",
      ]);
      expect(store.records.size).toBe(0);
      expect(two.errors).toEqual([]);
      two.later.stop();
      scheduler.stop();
      restarted.stop();
    });

    it("with rerunAfterRestart false the handle waits for an answer from outside", async () => {
      const store = createMemoryScheduleStore();
      const { handle, snapshot } = await firstProcess(store);
      const two = await secondProcess(store, snapshot, { rerunAfterRestart: false });
      expect(two.calls).toEqual([]);
      expect(await two.later.complete(handle, "intro.mp4 (from the farm's webhook)")).toBe("delivered");
      await clock.runUntil(two.agent.waitForIdle());
      expect(two.agent.messages[4]).toMatchObject({
        source: "laterResult",
        content: expect.stringContaining("webhook"),
      });
      two.later.stop();
    });

    it("a deadline that passed while the process was down times out at start", async () => {
      const store = createMemoryScheduleStore();
      const { handle, snapshot } = await firstProcess(store);
      await clock.advance(2 * 60 * MINUTE); // down for two hours: the 30 min deadline passed
      const two = await secondProcess(store, snapshot);
      await until(() => two.provider.requests.length === 1);
      await clock.runUntil(two.agent.waitForIdle());
      expect(two.agent.messages[4]).toMatchObject({
        id: handle,
        content: expect.stringContaining("timed out: no result within 30 min"),
      });
      expect(two.calls).toEqual([]); // timed out at start: not run again
      two.later.stop();
    });

    it("a result delivered just before the crash (the store still has its handle) is a duplicate, not taken twice", async () => {
      const inner = createMemoryScheduleStore();
      let failDeletes = true;
      const store: ScheduleStore = {
        load: () => inner.load(),
        put: (record) => inner.put(record),
        delete: (id) => {
          if (failDeletes) throw new Error("disk gone");
          return inner.delete(id);
        },
      };
      const agents = new Map<string, Agent>();
      const { later, errors } = await startedLater(agents, store);
      const provider = renderingModel();
      const agent = createAgent({ id: "ada", provider, tools: [renderTool(later, () => undefined)] });
      agents.set("ada", agent);
      await clock.runUntil(agent.prompt("Render"));
      const handle = later.list()[0]!.id;
      expect(await later.complete(handle, "intro.mp4")).toBe("delivered");
      await clock.runUntil(agent.waitForIdle());
      expect(errors.map((e) => e.message)).toEqual(["disk gone"]);
      later.stop();

      failDeletes = false;
      const { later: again } = await startedLater(agents, store);
      expect(again.list().map((h) => h.id)).toEqual([handle]);
      expect(await again.complete(handle, "intro.mp4")).toBe("duplicate");
      expect(agent.messages.filter((m) => m.id === handle)).toHaveLength(1);
      expect(again.list()).toEqual([]);
      again.stop();
    });
  });
});

describe("one file for schedules and late results", () => {
  it("the scheduler and the late results share a file store: each brings back its own records after a restart", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "later-")), "wake.json");
    const agents = new Map<string, Agent>();
    const agent = createAgent({ id: "ada", provider: renderingModel(), hibernate: "whenIdle" });
    agents.set("ada", agent);

    const store = createFileScheduleStore(path);
    const scheduler = createScheduler({ agents, store });
    const later = createLaterResults({ agents, store });
    await Promise.all([scheduler.start(), later.start()]);
    await scheduler.schedule({ agentId: "ada", at: START + 60 * MINUTE, message: "Standup", id: "standup" });
    const handle = await later.begin({ agentId: "ada", toolName: "render", toolCallId: "c1", args: {} });
    scheduler.stop();
    later.stop();
    const kinds = (JSON.parse(await readFile(path, "utf8")) as { kind?: string }[]).map(
      (r) => r.kind ?? "schedule",
    );
    expect(kinds.sort()).toEqual(["laterResult", "schedule"]);

    const store2 = createFileScheduleStore(path);
    const scheduler2 = createScheduler({ agents, store: store2 });
    const later2 = createLaterResults({ agents, store: store2 });
    await scheduler2.start();
    await later2.start();
    expect(scheduler2.list().map((s) => s.id)).toEqual(["standup"]);
    expect(later2.list().map((h) => h.id)).toEqual([handle.id]);
    await expect(
      scheduler2.schedule({ agentId: "ada", at: START + MINUTE, message: "x", id: "later_mine" }),
    ).rejects.toThrow(/may not start with "later_"/);
    scheduler2.stop();
    later2.stop();
  });
});
