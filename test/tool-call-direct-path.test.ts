import { describe, expect, it } from "vitest";
import {
  type AnyActorLogic,
  type AnyActorRef,
  createActor,
  createMachine,
  type InspectionEvent,
  stopChild,
} from "xstate";
import { z } from "zod";
import {
  type AgentEvent,
  createAgent,
  defineClientTool,
  defineTool,
  scripted,
  toolCallMachine,
} from "../index.js";
import { bindRuntime, runtimeOf } from "../core/runtime.js";
import { sleep, sleepTool } from "./helpers.js";

// A plain call (its tool exists, its arguments pass, nothing checks or holds it, no client runs it)
// skips XState's working out of the chart's steps. Each case below runs one call under the
// exported machine and under the bare chart (`provide({})` makes a plain StateMachine of the same
// config), and everything an observer can see must be the same: the actor's snapshots, the actions
// the inspector reports, the agent's events, the output its parent gets, the tool's abort.

const gated = defineTool({
  name: "gated",
  description: "Asks first",
  parameters: z.object({ n: z.number() }),
  needsApproval: true,
  execute: ({ n }) => `gated ${n}`,
});
const clientRun = defineClientTool({
  name: "pick",
  description: "The client picks",
  parameters: z.object({}),
});

interface Seen {
  snapshots: unknown[];
  actions: string[];
  microsteps: number;
  events: unknown[];
  aborted: number;
}

/** Runs one call actor of `logic` under a parent bound to a fresh agent's runtime; `act` drives it. */
async function runCall(
  logic: AnyActorLogic,
  input: { toolCallId: string; toolName: string; args: unknown },
  act: (call: AnyActorRef, stop: () => void) => Promise<void>,
): Promise<Seen> {
  let aborted = 0;
  const agent = createAgent({
    provider: scripted([{ text: "unused" }]),
    tools: [sleepTool({ onAbort: () => aborted++ }), gated, clientRun],
  });
  const events: AgentEvent[] = [];
  agent.events$.subscribe((e) => events.push(e));
  const inspected: InspectionEvent[] = [];
  const parent = createActor(parentMachine, { inspect: (e) => inspected.push(e) });
  bindRuntime(parent, runtimeOf(agent.actor));
  parent.start();
  const call = createActor(logic, { parent, id: input.toolCallId, input });
  call.start();
  await act(call, () => parent.send({ type: "STOP", ref: call }));
  const own = inspected.filter((e) => e.actorRef === call);
  return {
    snapshots: own
      .filter((e) => e.type === "@xstate.snapshot")
      .map((e) => {
        const { value, status, context, output } = e.snapshot as unknown as {
          value: unknown;
          status: string;
          context: unknown;
          output?: unknown;
        };
        return normalize({ value, status, context, output });
      }),
    actions: own
      .filter((e) => e.type === "@xstate.action")
      .map((e) => (e as { action: { type: string } }).action.type),
    microsteps: own.filter((e) => e.type === "@xstate.microstep").length,
    events: events.map(normalize),
    aborted,
  };
}

/** Timestamps and message ids differ from run to run; everything else must match. */
function normalize(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value ?? null, (key, v: unknown) => (key === "timestamp" || key === "id" ? "·" : v)),
  );
}

const untilDone = (call: AnyActorRef) =>
  new Promise<void>((resolve) => {
    if (call.getSnapshot().status !== "active") return resolve();
    call.subscribe({ complete: () => resolve(), error: () => resolve() });
  });

const chart = toolCallMachine.provide({});

/** The calls' parent: stops a call as an execution machine does (`stopChild`). */
const parentMachine = createMachine({
  types: {} as { events: { type: "STOP"; ref: AnyActorRef } },
  on: { STOP: { actions: stopChild(({ event }) => event.ref) } },
});

describe("a plain tool call's direct path", () => {
  it("goes straight to executing, then done, with the chart's snapshots, actions, events and output, and no microstep", async () => {
    const input = { toolCallId: "c1", toolName: "wait", args: { ms: 5, label: "one" } };
    const direct = await runCall(toolCallMachine, input, untilDone);
    const charted = await runCall(chart, input, untilDone);
    expect(direct.snapshots.map((s) => (s as { value: string }).value)).toEqual(["executing", "done"]);
    expect(direct.actions).toEqual(["announceStart", "runTool", "announceEnd"]);
    expect(direct).toEqual({ ...charted, microsteps: 0 });
    expect(charted.microsteps).toBeGreaterThan(0);
    expect(direct.events.map((e) => (e as { type: string }).type)).toEqual([
      "tool_execution_start",
      "tool_execution_end",
    ]);
  });

  it("stopped while its tool runs: the tool is aborted, as under the chart", async () => {
    const input = { toolCallId: "c2", toolName: "wait", args: { ms: 10_000, label: "long" } };
    const stopIt = async (_call: AnyActorRef, stop: () => void) => {
      await sleep(5);
      stop();
      await sleep(5);
    };
    const direct = await runCall(toolCallMachine, input, stopIt);
    const charted = await runCall(chart, input, stopIt);
    expect(direct.aborted).toBe(1);
    // The stop itself is one step of XState's (the chart's `xstate.stop`), under both.
    expect({ ...direct, microsteps: 0 }).toEqual({ ...charted, microsteps: 0 });
    expect(direct.microsteps).toBeLessThan(charted.microsteps);
  });

  it("leaves every other call to the chart: unknown tool, invalid arguments, approval, client-run", async () => {
    const cases: [
      { toolCallId: string; toolName: string; args: unknown },
      (call: AnyActorRef) => Promise<void>,
    ][] = [
      [{ toolCallId: "u", toolName: "nope", args: {} }, untilDone],
      [{ toolCallId: "v", toolName: "wait", args: { ms: "soon" } }, untilDone],
      [
        { toolCallId: "a", toolName: "gated", args: { n: 1 } },
        async (call) => {
          await sleep(5);
          call.send({ type: "APPROVE" });
          await untilDone(call);
        },
      ],
      [
        { toolCallId: "p", toolName: "pick", args: {} },
        async (call) => {
          await sleep(5);
          call.send({ type: "RESULT_PROVIDED", result: { content: [{ type: "text", text: "left" }] } });
          await untilDone(call);
        },
      ],
    ];
    for (const [input, act] of cases) {
      const direct = await runCall(toolCallMachine, input, act);
      const charted = await runCall(chart, input, act);
      // An approved call takes the direct step from `executing` to `done`: one microstep fewer.
      expect({ ...direct, microsteps: 0 }, input.toolName).toEqual({ ...charted, microsteps: 0 });
      expect(direct.microsteps, input.toolName).toBeGreaterThan(0);
      expect(direct.snapshots.at(-1), input.toolName).toMatchObject({ status: "done", value: "done" });
    }
  });
});
