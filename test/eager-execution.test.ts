import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type Agent, createAgent, defineTool, type Provider, scripted } from "../index.js";
import {
  expectEventInvariants,
  expectValidTranscript,
  record,
  resultText,
  sleepTool,
  toolResults,
  trace,
} from "./helpers.js";

const wait = (id: string) => ({ id, name: "wait", arguments: { ms: 1, label: id } });

describe("eager tool execution", () => {
  it("parallel: a call starts as soon as its arguments are complete, before the message ends", async () => {
    const provider = scripted([
      { text: "calling", toolCalls: [wait("a"), wait("b")], delayMs: 15 },
      { text: "ok" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()], eagerToolExecution: true });
    const events = record(agent);
    await agent.prompt("go");
    const order = trace(events);
    expect(order.indexOf("tool_execution_start:a")).toBeLessThan(order.indexOf("message_end:assistant"));
    expect(order.indexOf("tool_execution_start:b")).toBeLessThan(order.indexOf("message_end:assistant"));
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("sequential: only the first call may start early", async () => {
    const provider = scripted([{ toolCalls: [wait("a"), wait("b")], delayMs: 15 }, { text: "ok" }]);
    const agent = createAgent({
      provider,
      tools: [sleepTool()],
      eagerToolExecution: true,
      toolExecution: "sequential",
    });
    const events = record(agent);
    await agent.prompt("go");
    const order = trace(events);
    expect(order.indexOf("tool_execution_start:a")).toBeLessThan(order.indexOf("message_end:assistant"));
    expect(order.indexOf("tool_execution_start:b")).toBeGreaterThan(order.indexOf("message_end:assistant"));
    expectEventInvariants(events);
  });

  it("auto: the leading run of concurrency-safe calls starts early, a mutating call waits", async () => {
    const read = sleepTool({ name: "read", readOnly: true });
    const write = sleepTool({ name: "write" });
    const c = (id: string, name: string) => ({ id, name, arguments: { ms: 1, label: id } });
    const provider = scripted([
      { toolCalls: [c("r1", "read"), c("w1", "write")], delayMs: 15 },
      { text: "ok" },
    ]);
    const agent = createAgent({
      provider,
      tools: [read, write],
      eagerToolExecution: true,
      toolExecution: "auto",
    });
    const events = record(agent);
    await agent.prompt("go");
    const order = trace(events);
    expect(order.indexOf("tool_execution_start:r1")).toBeLessThan(order.indexOf("message_end:assistant"));
    expect(order.indexOf("tool_execution_start:w1")).toBeGreaterThan(order.indexOf("message_end:assistant"));
    expect(
      agent.messages
        .filter((m) => m.role === "toolResult")
        .map((m) => m.role === "toolResult" && m.toolCallId),
    ).toEqual(["r1", "w1"]);
  });

  it("abort mid-stream answers the calls that already started", async () => {
    const provider = scripted([
      {
        toolCalls: [{ id: "slow", name: "wait", arguments: { ms: 10_000, label: "s" } }, wait("b")],
        delayMs: 20,
      },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()], eagerToolExecution: true });
    const events = record(agent);
    const run = agent.prompt("go");
    await new Promise<void>((resolve) => {
      const sub = agent.events$.subscribe((e) => {
        if (e.type === "tool_execution_start") {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    agent.abort();
    await run;
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
  });
});

describe("a stream that fails after an eager call", () => {
  const counted = (ran: string[]) =>
    defineTool({
      name: "t",
      description: "Counts its runs",
      parameters: z.object({ n: z.number() }),
      execute: ({ n }) => {
        ran.push(`t${n}`);
        return `ran ${n}`;
      },
    });

  /** Streams calls t1 and t2 (both complete), waits until t1 has finished, then fails. */
  function failingAfterFirstCall(agentRef: { agent?: Agent }): Provider {
    return {
      id: "failing",
      model: "m",
      async *stream() {
        const firstDone = new Promise<void>((resolve) => {
          const sub = agentRef.agent!.events$.subscribe((e) => {
            if (e.type === "tool_execution_end" && e.toolCallId === "c1") {
              sub.unsubscribe();
              resolve();
            }
          });
        });
        yield { type: "start" };
        for (const n of [1, 2]) {
          yield { type: "toolcall_start", id: `c${n}`, name: "t" };
          yield { type: "toolcall_end", id: `c${n}`, name: "t", arguments: { n } };
        }
        await firstDone;
        yield { type: "error", kind: "api", message: "stream broke" };
      },
    };
  }

  for (const strategy of ["sequential", { batched: 1 }, "parallel"] as const) {
    it(`${JSON.stringify(strategy)}: every call is answered once, none that had not started runs, no internal warning`, async () => {
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const ran: string[] = [];
        const ref: { agent?: Agent } = {};
        const agent = (ref.agent = createAgent({
          provider: failingAfterFirstCall(ref),
          tools: [counted(ran)],
          eagerToolExecution: true,
          toolExecution: strategy,
        }));
        const events = record(agent);
        await agent.prompt("go");
        const results = toolResults(agent.messages).map((m) => [m.toolCallId, resultText(m)]);
        if (strategy === "parallel") {
          // Both started eagerly at their toolcall_end; the second ran as the stream failed.
          expect(ran.sort()).toEqual(["t1", "t2"]);
        } else {
          expect(ran).toEqual(["t1"]);
          expect(results).toEqual([
            ["c1", "ran 1"],
            ["c2", "Tool t aborted"],
          ]);
        }
        expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "error" });
        expectValidTranscript(agent.messages);
        expectEventInvariants(events);
        expect(warn).not.toHaveBeenCalled();
      } finally {
        warn.mockRestore();
      }
    });
  }
});

describe("snapshot$", () => {
  it("emits the current snapshot on subscribe, then every new one", async () => {
    const agent = createAgent({ provider: scripted([{ text: "hi" }]) });
    const states: string[] = [];
    agent.snapshot$.subscribe((s) => states.push(JSON.stringify(s.value)));
    expect(states).toEqual(['"idle"']);
    await agent.prompt("go");
    expect(states).toContain('{"running":"streaming"}');
    expect(states).toContain('{"running":"steeringCheck"}');
    expect(states).toContain('{"running":"followUpCheck"}');
    expect(states.at(-1)).toBe('"idle"');
  });
});
