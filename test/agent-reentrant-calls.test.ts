// An app calls back into its agent from inside an events$ subscriber: abort() on a call's end,
// steer() on turn_end, approve() on the approval request, prompt() again on agent_end, stop() on
// anything. Such a subscriber runs inside an action of one of the agent's actors (the agent's own,
// a call's, the execution's), so each call re-enters the actor tree mid-step. What a user relies
// on: nothing on the console (no XState warning that an action calls sendTo()/assign()), no
// unhandled rejection or uncaught exception, the method doing what it documents (abort stops the
// tools: their signals fire; steering reaches the next turn), a valid transcript (every call
// answered once) and the run's events in order, agent_end last and once.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentEvent,
  createAgent,
  defineClientTool,
  defineTool,
  type ProviderRequest,
  scripted,
  type ScriptedStep,
  textOf,
} from "../index.js";
import {
  expectEventInvariants,
  expectValidTranscript,
  resultText,
  sleep,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

type EventType = AgentEvent["type"];

/** Everything the process printed or failed with while the test ran. */
interface Trouble {
  console: string[];
  process: string[];
}

let trouble: Trouble;
const onProcessError = (error: unknown) => trouble.process.push(String(error));

beforeEach(() => {
  trouble = { console: [], process: [] };
  for (const level of ["warn", "error"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      trouble.console.push(`${level}: ${args.map(String).join(" ")}`);
    });
  }
  process.on("unhandledRejection", onProcessError);
  process.on("uncaughtException", onProcessError);
});

afterEach(() => {
  vi.restoreAllMocks();
  process.off("unhandledRejection", onProcessError);
  process.off("uncaughtException", onProcessError);
});

/** The calls of `slowTool` that started, that finished by themselves, and whose signal fired. */
interface Runs {
  started: string[];
  finished: string[];
  aborted: string[];
}

const newRuns = (): Runs => ({ started: [], finished: [], aborted: [] });

/** A tool that runs until its signal fires or `ms` pass; answers `done <label>`. */
function slowTool(runs: Runs) {
  return defineTool({
    name: "wait",
    description: "Waits some milliseconds",
    parameters: z.object({ ms: z.number(), label: z.string() }),
    execute: ({ ms, label }, { signal }) =>
      new Promise<string>((resolve, reject) => {
        runs.started.push(label);
        const timer = setTimeout(() => {
          runs.finished.push(label);
          resolve(`done ${label}`);
        }, ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          runs.aborted.push(label);
          reject(new Error(`aborted ${label}`));
        });
      }),
  });
}

/** No tool keeps running: every call that started finished by itself or had its signal fire. */
function expectNoneRunning(runs: Runs): void {
  expect([...runs.finished, ...runs.aborted].sort()).toEqual([...runs.started].sort());
}

/** A tool that asks for approval before each call. */
function guardedTool(ran: string[]) {
  return defineTool({
    name: "deploy",
    description: "Deploys",
    parameters: z.object({ env: z.string() }),
    needsApproval: true,
    execute: async ({ env }) => {
      ran.push(env);
      return `deployed ${env}`;
    },
  });
}

const deploy = (id: string, env: string) => ({ id, name: "deploy", arguments: { env } });
const lastUserText = (request: ProviderRequest | undefined) =>
  textOf(request?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "");

/**
 * Runs `agent.prompt("go")` with a subscriber that calls `react` (once, unless it returns `false`)
 * on the first event of type `at`; resolves once the run is over and the process had time to
 * report what went wrong late (XState and RxJS report on a later task).
 */
async function runWith(
  agent: Agent,
  at: EventType,
  react: (agent: Agent, event: AgentEvent) => void,
): Promise<{ events: AgentEvent[]; reacted: boolean; outcome: unknown }> {
  const events: AgentEvent[] = [];
  let reacted = false;
  agent.events$.subscribe((event) => {
    events.push(event);
    if (event.type !== at || reacted) return;
    reacted = true;
    react(agent, event);
  });
  const outcome = await agent.prompt("go").catch((error: unknown) => ({ rejected: String(error) }));
  await sleep(30);
  return { events, reacted, outcome };
}

/** What every case asserts: a quiet process, a valid transcript, agent_end last and once. */
function expectClean(agent: Agent, events: readonly AgentEvent[]): void {
  expect(trouble.console, "nothing on the console").toEqual([]);
  expect(trouble.process, "no unhandled rejection or uncaught exception").toEqual([]);
  expect(events.filter((e) => e.type === "agent_end")).toHaveLength(1);
  expect(events.at(-1)?.type).toBe("agent_end");
  expectEventInvariants(events);
  expectValidTranscript(agent.messages);
  // What each call's tool_execution_end said is what the model reads.
  const byCall = (pairs: [string, unknown][]) => pairs.sort(([a], [b]) => a.localeCompare(b));
  const said = events.flatMap((e): [string, unknown][] =>
    e.type === "tool_execution_end" ? [[e.toolCallId, e.result.content]] : [],
  );
  const read = toolResults(agent.messages).map((m): [string, unknown] => [m.toolCallId, m.content]);
  expect(byCall(read)).toEqual(byCall(said));
}

/** A run whose tools answer, streamed text included: every event type a run publishes. */
function toolRun(runs: Runs, extra: ScriptedStep[] = [{ text: "all done here", chunkSize: 4 }]) {
  const provider = scripted([
    { text: "calling tools now", chunkSize: 4, toolCalls: [wait("quick", 1), wait("slow", 10_000)] },
    ...extra,
  ]);
  return { provider, agent: createAgent({ provider, tools: [slowTool(runs)] }) };
}

/** A run's events up to its first call's end, in the order a tool turn publishes them. */
const callTurnEvents: EventType[] = [
  "agent_start",
  "turn_start",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_end",
];

describe("abort() from a subscriber", () => {
  for (const at of callTurnEvents) {
    it(`on ${at}: the run ends aborted, no tool keeps running, nothing on the console`, async () => {
      const runs = newRuns();
      const { agent, provider } = toolRun(runs);
      const { events, reacted, outcome } = await runWith(agent, at, (a) => a.abort());
      expect(reacted).toBe(true);
      expect(outcome).toMatchObject({ reason: "aborted" });
      // The second model call never happens, and the slow call, if it started, had its signal fire.
      expect(provider.calls).toBe(1);
      expect(runs.finished).not.toContain("slow");
      expectNoneRunning(runs);
      expectClean(agent, events);
    });
  }

  it("on a call's end while another runs: the finished call keeps its result, the other is stopped", async () => {
    const runs = newRuns();
    const { agent } = toolRun(runs);
    const { events } = await runWith(agent, "tool_execution_end", (a) => a.abort());
    expect(runs).toEqual({ started: ["quick", "slow"], finished: ["quick"], aborted: ["slow"] });
    expect(toolResults(agent.messages).map((m) => [m.toolCallId, resultText(m)])).toEqual([
      ["quick", "done quick"],
      ["slow", "Tool wait aborted"],
    ]);
    expectClean(agent, events);
  });

  it("on turn_end, before the next model call: the run ends aborted there", async () => {
    const runs = newRuns();
    const provider = scripted([{ toolCalls: [wait("a", 1)] }, { text: "never" }]);
    const agent = createAgent({ provider, tools: [slowTool(runs)] });
    const { events, outcome } = await runWith(agent, "turn_end", (a) => a.abort());
    expect(outcome).toMatchObject({ reason: "aborted" });
    expect(provider.calls).toBe(1);
    expect(toolResults(agent.messages).map(resultText)).toEqual(["done a"]);
    expectClean(agent, events);
  });

  it("on approval_requested: the waiting call is answered once, the run ends aborted", async () => {
    const ran: string[] = [];
    const provider = scripted([{ toolCalls: [deploy("d1", "prod")] }, { text: "never" }]);
    const agent = createAgent({ provider, tools: [guardedTool(ran)] });
    const { events, outcome } = await runWith(agent, "approval_requested", (a) => a.abort());
    expect(outcome).toMatchObject({ reason: "aborted" });
    expect(ran).toEqual([]);
    expect(toolResults(agent.messages).map((m) => m.toolCallId)).toEqual(["d1"]);
    expectClean(agent, events);
  });

  it("sequential: on the first call's end, it keeps its result and the calls after it never run", async () => {
    const runs = newRuns();
    const provider = scripted([{ toolCalls: [wait("a", 1), wait("b", 1), wait("c", 1)] }, { text: "never" }]);
    const agent = createAgent({ provider, tools: [slowTool(runs)], toolExecution: "sequential" });
    const { events, outcome } = await runWith(agent, "tool_execution_end", (a) => a.abort());
    expect(outcome).toMatchObject({ reason: "aborted" });
    expect(runs.started).toEqual(["a"]);
    expect(toolResults(agent.messages).map((m) => [m.toolCallId, resultText(m)])).toEqual([
      ["a", "done a"],
      ["b", "Tool wait aborted"],
      ["c", "Tool wait aborted"],
    ]);
    expectClean(agent, events);
  });

  it("a fan-out past one actor's calls (shards): on a call's end, it keeps its result, the rest stop", async () => {
    const runs = newRuns();
    const calls = [wait("quick", 1), ...Array.from({ length: 79 }, (_, i) => wait(`s${i}`, 10_000))];
    const provider = scripted([{ toolCalls: calls }, { text: "never" }]);
    const agent = createAgent({ provider, tools: [slowTool(runs)] });
    const { events, outcome } = await runWith(agent, "tool_execution_end", (a) => a.abort());
    expect(outcome).toMatchObject({ reason: "aborted" });
    expect(runs.finished).toEqual(["quick"]);
    expectNoneRunning(runs);
    const results = toolResults(agent.messages);
    expect(results.map((m) => m.toolCallId)).toEqual(calls.map((c) => c.id));
    expect(resultText(results[0]!)).toBe("done quick");
    expect(results.slice(1).every((m) => resultText(m) === "Tool wait aborted")).toBe(true);
    expectClean(agent, events);
  });

  it("a fan-out: on the end of a call hosted in a shard, it keeps its result", async () => {
    const runs = newRuns();
    const calls = [...Array.from({ length: 79 }, (_, i) => wait(`s${i}`, 10_000)), wait("quick", 1)];
    const provider = scripted([{ toolCalls: calls }, { text: "never" }]);
    const agent = createAgent({ provider, tools: [slowTool(runs)] });
    const { events } = await runWith(agent, "tool_execution_end", (a) => a.abort());
    expect(runs.finished).toEqual(["quick"]);
    expectNoneRunning(runs);
    expect(resultText(toolResults(agent.messages).at(-1)!)).toBe("done quick");
    expectClean(agent, events);
  });
});

describe("from a subscriber of a tool's own updates", () => {
  /** A tool that reports progress at once (from inside its call's first step), then works. */
  const reporting = (runs: Runs) =>
    defineTool({
      name: "report",
      description: "Reports, then waits",
      parameters: z.object({ ms: z.number() }),
      execute: ({ ms }, { signal, onUpdate }) => {
        onUpdate("starting");
        return new Promise<string>((resolve, reject) => {
          runs.started.push("report");
          const timer = setTimeout(() => {
            runs.finished.push("report");
            resolve("reported");
          }, ms);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            runs.aborted.push("report");
            reject(new Error("aborted"));
          });
        });
      },
    });
  const call = { id: "r1", name: "report", arguments: { ms: 10_000 } };

  it("abort on tool_execution_update: the tool's signal fires, the run ends aborted", async () => {
    const runs = newRuns();
    const agent = createAgent({ provider: scripted([{ toolCalls: [call] }]), tools: [reporting(runs)] });
    const { events, outcome } = await runWith(agent, "tool_execution_update", (a) => a.abort());
    expect(outcome).toMatchObject({ reason: "aborted" });
    expect(runs.aborted).toEqual(["report"]);
    expectClean(agent, events);
  });

  it("steer on tool_execution_update: the model reads it in the next turn", async () => {
    const provider = scripted([{ toolCalls: [{ ...call, arguments: { ms: 5 } }] }, { text: "ok" }]);
    const agent = createAgent({ provider, tools: [reporting(newRuns())] });
    const { events } = await runWith(agent, "tool_execution_update", (a) => a.steer("while you work"));
    expect(lastUserText(provider.requests[1])).toBe("while you work");
    expectClean(agent, events);
  });
});

describe("steer() and followUp() from a subscriber", () => {
  const steerAt: EventType[] = [
    "turn_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "turn_end",
  ];
  for (const at of steerAt) {
    it(`steer on ${at}: the model reads the message in the next turn`, async () => {
      const runs = newRuns();
      const provider = scripted([
        { text: "calling", chunkSize: 4, toolCalls: [wait("a", 1), wait("b", 20)] },
        { text: "ok" },
      ]);
      const agent = createAgent({ provider, tools: [slowTool(runs)] });
      const { events, outcome } = await runWith(agent, at, (a) => a.steer(`steered on ${at}`));
      expect(outcome).toMatchObject({ reason: "stop" });
      expect(provider.calls).toBe(2);
      expect(lastUserText(provider.requests[1])).toBe(`steered on ${at}`);
      expect(runs.aborted).toEqual([]);
      expectClean(agent, events);
    });
  }

  it("steer on the last turn's turn_end: the run takes it and goes on", async () => {
    const provider = scripted([{ text: "first" }, { text: "second" }]);
    const agent = createAgent({ provider });
    const { events, outcome } = await runWith(agent, "turn_end", (a) => a.steer("one more thing"));
    expect(outcome).toMatchObject({ reason: "stop" });
    expect(lastUserText(provider.requests[1])).toBe("one more thing");
    expectClean(agent, events);
  });

  it("sequential: steer on the first call's end skips the calls after it", async () => {
    const provider = scripted([{ toolCalls: [wait("a", 1), wait("b", 1), wait("c", 1)] }, { text: "ok" }]);
    const agent = createAgent({ provider, tools: [slowTool(newRuns())], toolExecution: "sequential" });
    const { events } = await runWith(agent, "tool_execution_end", (a) => a.steer("change of plan"));
    expect(toolResults(agent.messages).map((m) => [m.toolCallId, resultText(m)])).toEqual([
      ["a", "done a"],
      ["b", "Skipped due to queued user message."],
      ["c", "Skipped due to queued user message."],
    ]);
    expect(lastUserText(provider.requests[1])).toBe("change of plan");
    expectClean(agent, events);
  });

  for (const at of ["message_update", "tool_execution_end", "turn_end"] as const) {
    it(`followUp on ${at}: the run takes it when it would otherwise stop`, async () => {
      const provider = scripted([
        { text: "calling", chunkSize: 4, toolCalls: [wait("a", 1)] },
        { text: "done" },
        { text: "followed up" },
      ]);
      const agent = createAgent({ provider, tools: [slowTool(newRuns())] });
      const { events, outcome } = await runWith(agent, at, (a) => a.followUp("and then this"));
      expect(outcome).toMatchObject({ reason: "stop" });
      expect(provider.calls).toBe(3);
      expect(lastUserText(provider.requests[1])).toBe("go");
      expect(lastUserText(provider.requests[2])).toBe("and then this");
      expectClean(agent, events);
    });
  }
});

describe("approve() and deny() from a subscriber of approval_requested", () => {
  it("approve: the call runs and the run completes", async () => {
    const ran: string[] = [];
    const provider = scripted([{ toolCalls: [deploy("d1", "prod")] }, { text: "deployed" }]);
    const agent = createAgent({ provider, tools: [guardedTool(ran)] });
    const { events, outcome } = await runWith(agent, "approval_requested", (a, e) => {
      if (e.type === "approval_requested") a.approve(e.toolCallId);
    });
    expect(outcome).toMatchObject({ reason: "stop" });
    expect(ran).toEqual(["prod"]);
    expect(toolResults(agent.messages).map(resultText)).toEqual(["deployed prod"]);
    expectClean(agent, events);
  });

  it("deny: the model reads the refusal and the run completes", async () => {
    const ran: string[] = [];
    const provider = scripted([{ toolCalls: [deploy("d1", "prod")] }, { text: "understood" }]);
    const agent = createAgent({ provider, tools: [guardedTool(ran)] });
    const { events, outcome } = await runWith(agent, "approval_requested", (a, e) => {
      if (e.type === "approval_requested") a.deny(e.toolCallId, "not on a Friday");
    });
    expect(outcome).toMatchObject({ reason: "stop" });
    expect(ran).toEqual([]);
    const [result] = toolResults(agent.messages);
    expect(result?.isError).toBe(true);
    expect(resultText(result!)).toContain("not on a Friday");
    expectClean(agent, events);
  });

  for (const method of ["abort", "stop"] as const) {
    it(`${method} on approval_decided: the decision goes nowhere, quietly; the call never runs`, async () => {
      const ran: string[] = [];
      const provider = scripted([{ toolCalls: [deploy("d1", "prod")] }, { text: "never" }]);
      const agent = createAgent({ provider, tools: [guardedTool(ran)] });
      const events: AgentEvent[] = [];
      agent.events$.subscribe((e) => {
        events.push(e);
        if (e.type === "approval_requested") queueMicrotask(() => agent.approve(e.toolCallId));
        if (e.type === "approval_decided") agent[method]();
      });
      const run = agent.prompt("go");
      // A stopped run publishes no agent_end: its prompt() says it was stopped.
      if (method === "stop") await expect(run).rejects.toThrow("Agent is stopped");
      const outcome = method === "abort" ? await run : undefined;
      await sleep(30);
      expect(ran).toEqual([]);
      expect(events.some((e) => e.type === "approval_decided")).toBe(true);
      if (outcome) {
        expect(outcome.reason).toBe("aborted");
        expectClean(agent, events);
      } else {
        expect(trouble.console).toEqual([]);
        expect(trouble.process).toEqual([]);
      }
    });
  }

  it("every request of a parallel turn decided as it comes, some approved, some denied", async () => {
    const ran: string[] = [];
    const provider = scripted([
      { toolCalls: [deploy("d1", "a"), deploy("d2", "b"), deploy("d3", "c")] },
      { text: "done" },
    ]);
    const agent = createAgent({ provider, tools: [guardedTool(ran)] });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((e) => {
      events.push(e);
      if (e.type !== "approval_requested") return;
      if (e.toolCallId === "d2") agent.deny(e.toolCallId, "no");
      else agent.approve(e.toolCallId);
    });
    const outcome = await agent.prompt("go");
    await sleep(30);
    expect(outcome.reason).toBe("stop");
    expect(ran.sort()).toEqual(["a", "c"]);
    expect(toolResults(agent.messages).map((m) => m.toolCallId)).toEqual(["d1", "d2", "d3"]);
    expectClean(agent, events);
  });
});

describe("resolveToolCall() from a subscriber of tool_result_requested", () => {
  it("the client's answer is the call's result and the run completes", async () => {
    const provider = scripted([
      { toolCalls: [{ id: "g1", name: "geo", arguments: {} }] },
      { text: "you are home" },
    ]);
    const geo = defineClientTool({ name: "geo", description: "Where the user is", parameters: z.object({}) });
    const agent = createAgent({ provider, tools: [geo] });
    const { events, outcome } = await runWith(agent, "tool_result_requested", (a, e) => {
      if (e.type === "tool_result_requested") a.resolveToolCall(e.toolCallId, "home");
    });
    expect(outcome).toMatchObject({ reason: "stop" });
    expect(toolResults(agent.messages).map(resultText)).toEqual(["home"]);
    expectClean(agent, events);
  });
});

describe("prompt() from a subscriber", () => {
  for (const at of ["turn_start", "message_update", "tool_execution_end", "turn_end"] as const) {
    it(`while running (on ${at}): it rejects with "Agent is already running" and the run goes on`, async () => {
      const provider = scripted([
        { text: "calling", chunkSize: 4, toolCalls: [wait("a", 1)] },
        { text: "ok" },
      ]);
      const agent = createAgent({ provider, tools: [slowTool(newRuns())] });
      let second: Promise<unknown> | undefined;
      const { events, outcome } = await runWith(agent, at, (a) => {
        second = a.prompt("again").catch((error: Error) => error.message);
      });
      expect(await second).toBe("Agent is already running");
      expect(outcome).toMatchObject({ reason: "stop" });
      expect(provider.calls).toBe(2);
      expectClean(agent, events);
    });
  }

  it("on agent_end: the next run starts and completes, its events after the first run's", async () => {
    const provider = scripted([{ text: "first" }, { text: "second" }]);
    const agent = createAgent({ provider });
    let second: Promise<unknown> | undefined;
    const { events, outcome } = await runWith(agent, "agent_end", (a) => {
      second = a.prompt("again");
    });
    expect(outcome).toMatchObject({ reason: "stop" });
    expect(await second).toMatchObject({ reason: "stop" });
    await sleep(30);
    expect(lastUserText(provider.requests[1])).toBe("again");
    expect(events.filter((e) => e.type === "agent_start")).toHaveLength(2);
    expect(trouble.console).toEqual([]);
    expect(trouble.process).toEqual([]);
    expect(events.at(-1)?.type).toBe("agent_end");
    expectEventInvariants(events);
    expectValidTranscript(agent.messages);
  });
});

describe("stop() from a subscriber", () => {
  const atEvents: EventType[] = [
    "turn_start",
    "message_update",
    "tool_execution_start",
    "tool_execution_end",
    "turn_end",
    "approval_requested",
    "agent_end",
  ];
  for (const at of atEvents) {
    it(`on ${at}: the agent stops quietly, no tool keeps running, events$ completes`, async () => {
      const runs = newRuns();
      const ran: string[] = [];
      // The slow call is there while the agent stops mid-run; a run that must end first has none.
      const runsToEnd = at === "turn_end" || at === "agent_end";
      const provider = scripted([
        {
          text: "calling",
          chunkSize: 4,
          toolCalls: [
            wait("quick", 1),
            ...(runsToEnd ? [] : [wait("slow", 10_000)]),
            ...(at === "approval_requested" ? [deploy("d1", "x")] : []),
          ],
        },
        { text: "ok" },
      ]);
      const agent = createAgent({ provider, tools: [slowTool(runs), guardedTool(ran)] });
      const events: AgentEvent[] = [];
      let completed = false;
      let reacted = false;
      agent.events$.subscribe({
        next: (event) => {
          events.push(event);
          if (event.type !== at || reacted) return;
          reacted = true;
          agent.stop();
        },
        complete: () => (completed = true),
      });
      // A run stopped mid-way does not end (stop() is for good, a snapshot taken before it resumes):
      // its prompt() says so, unless the run had ended.
      const run = agent.prompt("go").then(
        () => "ended",
        (error: Error) => error.message,
      );
      await vi.waitFor(() => expect(completed).toBe(true));
      expect(await run).toBe(
        at === "agent_end" ? "ended" : "Agent is stopped: the run was stopped before it ended",
      );
      await sleep(30);
      expect(reacted).toBe(true);
      expect(agent.actor.getSnapshot().status).toBe("stopped");
      expect(runs.finished).not.toContain("slow");
      expectNoneRunning(runs);
      expect(ran).toEqual([]);
      expect(trouble.console, "nothing on the console").toEqual([]);
      expect(trouble.process, "no unhandled rejection or uncaught exception").toEqual([]);
      expect(events.filter((e) => e.type === "agent_end").length).toBe(at === "agent_end" ? 1 : 0);
      await expect(agent.prompt("again")).rejects.toThrow("Agent is stopped");
    });
  }
});

describe("every method at every event of a turn with approvals, per execution strategy", () => {
  const types: EventType[] = [...callTurnEvents, "approval_requested", "approval_decided", "turn_end"];
  const methods = ["abort", "steer", "followUp", "prompt", "stop"] as const;
  const strategies = ["parallel", "sequential", { batched: 2 }] as const;
  for (const strategy of strategies) {
    it(`${JSON.stringify(strategy)}: quiet, agent_end last and once, every call answered once`, async () => {
      const failures: string[] = [];
      for (const at of types) {
        for (const method of methods) {
          trouble.console.length = 0;
          const provider = scripted([
            {
              text: "calling the tools",
              chunkSize: 5,
              toolCalls: [wait("a", 2), wait("b", 1), deploy("d", "x"), wait("c", 3)],
            },
            { text: "two" },
            { text: "three" },
          ]);
          const agent = createAgent({
            provider,
            tools: [slowTool(newRuns()), guardedTool([])],
            toolExecution: strategy,
          });
          const events: AgentEvent[] = [];
          let reacted = false;
          let completed = false;
          agent.events$.subscribe({
            next: (event) => {
              events.push(event);
              if (event.type === "approval_requested") {
                queueMicrotask(() => agent.pendingApprovals().length && agent.approve(event.toolCallId));
              }
              if (event.type !== at || reacted) return;
              reacted = true;
              if (method === "prompt") void agent.prompt("again").catch(() => {});
              else if (method === "steer" || method === "followUp") agent[method](`${method} at ${at}`);
              else agent[method]();
            },
            complete: () => (completed = true),
          });
          const run = agent.prompt("go");
          const settled = run.then(
            () => "ended",
            (error: Error) => error.message,
          );
          if (method === "stop") {
            await vi.waitFor(() => expect(completed).toBe(true));
            const said = await settled;
            if (!said.startsWith("Agent is stopped")) failures.push(`stop on ${at}: prompt() ${said}`);
          } else await run;
          await sleep(5);
          const where = `${method} on ${at}`;
          if (!reacted) failures.push(`${where}: never reached`);
          if (trouble.console.length) failures.push(`${where}: ${trouble.console[0]}`);
          if (method !== "stop") {
            try {
              expect(events.filter((e) => e.type === "agent_end")).toHaveLength(1);
              expect(events.at(-1)?.type).toBe("agent_end");
              expectEventInvariants(events);
              expectValidTranscript(agent.messages);
            } catch (error) {
              failures.push(`${where}: ${String(error)}`);
            }
            agent.stop();
          }
        }
      }
      expect(failures).toEqual([]);
      expect(trouble.process).toEqual([]);
    });
  }
});
