// Black-box scenarios, fourth batch: an agent inside the app's own statechart (fromAgent), left by
// its parent mid-tool and mid-approval; a late approval sent to it.
import { describe, expect, it } from "vitest";
import { createActor, sendTo, setup } from "xstate";
import { z } from "zod";
import { type AgentActorParentEvent, defineTool, fromAgent, scripted } from "../index.js";
import { sleep } from "./helpers.js";

/** Polls `ready` (a loaded machine is slow; a fixed sleep would flake), for at most 5 s. */
async function until(ready: () => boolean, tries = 500): Promise<void> {
  for (let i = 0; i < tries && !ready(); i++) await sleep(10);
}

describe("the loop inside a parent: fromAgent", () => {
  it("the parent leaving the state mid-tool aborts the tool; an approval sent late is rejected, not fatal", async () => {
    let aborted = 0;
    let ran = 0;
    const slow = defineTool({
      name: "slow",
      description: "slow",
      parameters: z.object({}),
      execute: (_a, { signal }) =>
        new Promise<string>((resolve, reject) => {
          ran++;
          const t = setTimeout(() => resolve("done"), 10_000);
          signal.addEventListener("abort", () => {
            aborted++;
            clearTimeout(t);
            reject(new Error("aborted"));
          });
        }),
    });
    const provider = scripted([{ toolCalls: [{ id: "s", name: "slow", arguments: {} }] }, { text: "ok" }]);
    const worker = fromAgent({ agent: { provider, tools: [slow] }, prompt: () => "go" });
    const rejected: unknown[] = [];
    const app = setup({
      types: { events: {} as { type: "cancel" } | { type: "late" } | AgentActorParentEvent },
      actors: { worker },
    }).createMachine({
      initial: "working",
      states: {
        working: {
          invoke: { id: "worker", src: "worker", onDone: "done", onError: "failed" },
          on: {
            cancel: "cancelled",
            late: { actions: sendTo("worker", { type: "agent.approve", toolCallId: "nope" }) },
            "agent.command_rejected": { actions: ({ event }) => rejected.push(event) },
          },
        },
        cancelled: {},
        done: {},
        failed: {},
      },
    });
    const actor = createActor(app);
    const errors: unknown[] = [];
    actor.subscribe({ error: (e) => errors.push(e) });
    actor.start();
    while (ran === 0) await sleep(5);
    actor.send({ type: "late" });
    await until(() => rejected.length > 0);
    expect(actor.getSnapshot().value).toBe("working");
    expect(rejected).toHaveLength(1);
    actor.send({ type: "cancel" });
    await until(() => aborted > 0);
    expect(aborted).toBe(1);
    expect(actor.getSnapshot().value).toBe("cancelled");
    expect(errors).toEqual([]);
    actor.stop();
  });

  it("a parent stopped while its agent waits for an approval leaves no call running", async () => {
    let ran = 0;
    const ask = defineTool({
      name: "ask",
      description: "needs approval",
      parameters: z.object({}),
      needsApproval: true,
      execute: async () => {
        ran++;
        return "did";
      },
    });
    const provider = scripted([{ toolCalls: [{ id: "q", name: "ask", arguments: {} }] }, { text: "ok" }]);
    const worker = fromAgent({ agent: { provider, tools: [ask] }, prompt: () => "go" });
    let asked = false;
    const app = setup({ types: { events: {} as AgentActorParentEvent }, actors: { worker } }).createMachine({
      initial: "working",
      states: {
        working: {
          invoke: { id: "worker", src: "worker" },
          on: { "agent.approval_requested": { actions: () => (asked = true) } },
        },
      },
    });
    const actor = createActor(app).start();
    while (!asked) await sleep(5);
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    // Restored, the approval still waits and the run goes on when it is answered.
    let done: unknown;
    const app2 = setup({
      types: { events: {} as AgentActorParentEvent | { type: "yes" } },
      actors: { worker },
    }).createMachine({
      initial: "working",
      states: {
        working: {
          invoke: {
            id: "worker",
            src: "worker",
            onDone: { target: "done", actions: ({ event }) => (done = event.output) },
          },
          on: { yes: { actions: sendTo("worker", { type: "agent.approve", toolCallId: "q" }) } },
        },
        done: {},
      },
    });
    const restored = createActor(app2, { snapshot: persisted }).start();
    // The restored agent takes a moment to be where it was; an approval sent before is rejected
    // (agent.command_rejected), so the app answers again until the run goes on.
    for (let i = 0; i < 50 && done === undefined; i++) {
      restored.send({ type: "yes" });
      await until(() => done !== undefined, 20);
    }
    expect(ran).toBe(1);
    expect(done).toMatchObject({ reason: "stop" });
    restored.stop();
  });
});
