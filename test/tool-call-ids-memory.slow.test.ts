// A tool call's actor is named by its tool call id, unique per call, and XState types the actor's
// done event with that id. The agent's machines are shared by every agent in the process: no call
// may leave anything behind in them, or a service's memory grows with every tool call it runs.
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, type ScriptedStep, scripted } from "../index.js";

const noop = defineTool({
  name: "noop",
  description: "Does nothing",
  parameters: z.object({ n: z.number() }),
  readOnly: true,
  execute: ({ n }) => `ok ${n}`,
});

/** `turns` turns of `perTurn` calls each (one: the agent's own child; more: the execution machine), every id new. */
async function runCalls(turns: number, perTurn: number): Promise<void> {
  const provider = scripted(
    (request): ScriptedStep => {
      const step = request.messages.filter((m) => m.role === "assistant").length;
      if (step === turns) return { text: "done" };
      return {
        toolCalls: Array.from({ length: perTurn }, (_, i) => ({
          id: `call_${Math.random().toString(36).slice(2)}_${i}`,
          name: "noop",
          arguments: { n: step },
        })),
      };
    },
    { record: false },
  );
  const agent = createAgent({ provider, tools: [noop], limits: { maxTurns: turns + 5 } });
  const result = await agent.prompt("go");
  expect(result.reason).toBe("stop");
  expect(result.messages).toHaveLength(1 + turns * (1 + perTurn) + 1);
  agent.stop();
}

function heapAfterCollection(): number {
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe("tool call ids and the shared machines", () => {
  it("runs thousands of calls with fresh ids without the process's heap growing per call", async () => {
    /** 1,500 calls in one-call turns (the agent's own child) and 1,500 in two-call turns (the execution machine). */
    const batch = async () => {
      for (let i = 0; i < 5; i++) {
        await runCalls(300, 1);
        await runCalls(150, 2);
      }
    };
    // Warm up: V8's code for the loop and the machines' own lookups are made once, not per call.
    await batch();
    const before = heapAfterCollection();
    await batch();
    const perCall = (heapAfterCollection() - before) / 3_000;
    // Some 450 bytes a call stayed in the machines before (XState's lookup per event type).
    expect(perCall).toBeLessThan(250);
  }, 60_000);
});
