// Issue 39 item 1: an agent inside the app's own XState machine (fromAgent): output on onDone,
// events to the parent, commands by events, nested in the parent's persisted snapshot, checked input.
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type AnyActorRef,
  assign,
  createActor,
  type InspectionEvent,
  sendTo,
  setup,
  spawnChild,
  waitFor,
} from "xstate";
import { z } from "zod";
import {
  type AgentMessage,
  defineTool,
  FromAgentInputError,
  fromAgent,
  type RunOutcome,
  scripted,
} from "../index.js";
import { expectValidTranscript } from "./helpers.js";

function refundTool(ran: unknown[]) {
  return defineTool({
    name: "refund",
    description: "Refunds an order",
    parameters: z.object({ order: z.string() }),
    needsApproval: true,
    execute: async (args) => {
      ran.push(args);
      return `refunded ${args.order}`;
    },
  });
}

const Ticket = z.object({ ticket: z.string().min(1) });

/** An app machine that invokes `logic` as "writer" and records what reaches it. */
function appMachine(logic: ReturnType<typeof fromAgent<z.infer<typeof Ticket>>>, input: unknown) {
  return setup({
    types: {
      context: {} as { seen: string[]; outcome?: RunOutcome; error?: unknown },
    },
    actors: { writer: logic },
  }).createMachine({
    id: "app",
    context: { seen: [] },
    initial: "drafting",
    states: {
      drafting: {
        invoke: {
          id: "writer",
          src: "writer",
          input: () => input as z.infer<typeof Ticket>,
          onDone: { target: "review", actions: assign({ outcome: ({ event }) => event.output }) },
          onError: { target: "failed", actions: assign({ error: ({ event }) => event.error }) },
        },
        on: {
          "agent.*": { actions: assign({ seen: ({ context, event }) => [...context.seen, event.type] }) },
          approveAll: {
            actions: sendTo("writer", ({ event }) => ({
              type: "agent.approve" as const,
              toolCallId: (event as unknown as { toolCallId: string }).toolCallId,
            })),
          },
        },
      },
      review: { type: "final" },
      failed: { type: "final" },
    },
  });
}

describe("fromAgent", () => {
  it("finishes with the run's outcome as output; the parent's on handlers see the agent's events", async () => {
    const writer = fromAgent({
      agent: { provider: scripted([{ text: "Sorry about that, refunded." }]) },
      input: Ticket,
      prompt: ({ ticket }) => `Reply to: ${ticket}`,
    });
    const app = createActor(appMachine(writer, { ticket: "charged twice" })).start();
    const done = await waitFor(app, (s) => s.status === "done");
    expect(done.value).toBe("review");
    const outcome = done.context.outcome!;
    expect(outcome.reason).toBe("stop");
    expect(outcome.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(outcome.messages[0])).toContain("Reply to: charged twice");
    expect(done.context.seen).toContain("agent.agent_start");
    expect(done.context.seen).toContain("agent.turn_end");
    expect(done.context.seen.at(-1)).toBe("agent.agent_end");
    // Streamed deltas stay out of the parent by default (one transition each otherwise).
    expect(done.context.seen).not.toContain("agent.message_update");
  });

  it("types the output from the agent's schema", async () => {
    const Triage = z.object({ severity: z.enum(["low", "high"]) });
    const triage = fromAgent({
      agent: { provider: scripted([{ text: '{"severity":"high"}' }]), output: Triage },
      prompt: (input: string) => input,
    });
    const actor = createActor(triage, { input: "card charged twice" }).start();
    const snapshot = await waitFor(actor, (s) => s.status === "done");
    expectTypeOf(snapshot.output!.output).toEqualTypeOf<{ severity: "low" | "high" } | undefined>();
    expect(snapshot.output!.output).toEqual({ severity: "high" });
  });

  it("input that fails its schema fails the actor with a clear error; the agent never starts", async () => {
    const provider = scripted([{ text: "x" }]);
    const writer = fromAgent({
      agent: { provider },
      input: Ticket,
      prompt: ({ ticket }) => ticket,
    });
    const app = createActor(appMachine(writer, { ticket: 42 })).start();
    const done = await waitFor(app, (s) => s.status === "done");
    expect(done.value).toBe("failed");
    expect(done.context.error).toBeInstanceOf(FromAgentInputError);
    expect(String((done.context.error as Error).message)).toMatch(/ticket: .*expected string/i);
    expect(provider.calls).toBe(0);
  });

  it("an approval waits for the parent, which answers it by an event", async () => {
    const ran: unknown[] = [];
    const writer = fromAgent({
      agent: {
        provider: scripted([
          { toolCalls: [{ id: "r1", name: "refund", arguments: { order: "A7" } }] },
          { text: "Refunded A7." },
        ]),
        tools: [refundTool(ran)],
      },
      input: Ticket,
      prompt: ({ ticket }) => ticket,
    });
    const app = createActor(appMachine(writer, { ticket: "refund A7" })).start();
    await waitFor(app, (s) => s.context.seen.includes("agent.approval_requested"));
    expect(ran).toEqual([]);
    app.send({ type: "approveAll", toolCallId: "r1" } as never);
    const done = await waitFor(app, (s) => s.status === "done");
    expect(ran).toEqual([{ order: "A7" }]);
    expect(done.context.outcome!.reason).toBe("stop");
    expectValidTranscript(done.context.outcome!.messages);
  });

  it("a command the agent cannot carry out reaches the parent as agent.command_rejected; the agent goes on", async () => {
    const ran: unknown[] = [];
    const writer = fromAgent({
      agent: {
        provider: scripted([
          { toolCalls: [{ id: "r1", name: "refund", arguments: { order: "A7" } }] },
          { text: "Refunded A7." },
        ]),
        tools: [refundTool(ran)],
      },
      input: Ticket,
      prompt: ({ ticket }) => ticket,
    });
    const app = createActor(appMachine(writer, { ticket: "refund A7" })).start();
    await waitFor(app, (s) => s.context.seen.includes("agent.approval_requested"));
    const child = app.getSnapshot().children.writer!;
    const rejected: unknown[] = [];
    child.on("agent.command_rejected" as never, (e) => rejected.push(e));
    app.send({ type: "approveAll", toolCallId: "nope" } as never);
    expect(app.getSnapshot().context.seen).toContain("agent.command_rejected");
    expect(rejected).toEqual([
      expect.objectContaining({ command: "agent.approve", error: expect.stringMatching(/nope/) }),
    ]);
    expect(app.getSnapshot().value).toBe("drafting");
    app.send({ type: "approveAll", toolCallId: "r1" } as never);
    const done = await waitFor(app, (s) => s.status === "done");
    expect(ran).toEqual([{ order: "A7" }]);
    expectValidTranscript(done.context.outcome!.messages);
  });

  it("the parent's persisted snapshot holds the agent: restored while an approval waits, it resumes", async () => {
    const ran: unknown[] = [];
    const steps = [
      { toolCalls: [{ id: "r1", name: "refund", arguments: { order: "A7" } }] },
      { text: "Refunded A7." },
    ];
    const writer = fromAgent({
      agent: { provider: scripted(steps), tools: [refundTool(ran)] },
      input: Ticket,
      prompt: ({ ticket }) => ticket,
    });
    const first = createActor(appMachine(writer, { ticket: "refund A7" })).start();
    await waitFor(first, (s) => s.context.seen.includes("agent.approval_requested"));
    const saved = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    expect(ran).toEqual([]);

    // A new process: the same machine, a provider that answers the rest of the run.
    const again = fromAgent({
      agent: { provider: scripted(steps.slice(1)), tools: [refundTool(ran)] },
      input: Ticket,
      prompt: ({ ticket }) => ticket,
    });
    const second = createActor(appMachine(again, undefined), { snapshot: saved }).start();
    const writerRef = second.getSnapshot().children.writer!;
    expect(writerRef.getSnapshot().status).toBe("active");
    second.send({ type: "approveAll", toolCallId: "r1" } as never);
    const done = await waitFor(second, (s) => s.status === "done");
    expect(done.value).toBe("review");
    expect(ran).toEqual([{ order: "A7" }]);
    expect(done.context.outcome!.reason).toBe("stop");
    const text = JSON.stringify(done.context.outcome!.messages);
    expect(text).toContain("Refunded A7.");
  });

  it("a persisted agent that cannot be restored fails the actor (onError) with the reason; the app goes on", async () => {
    const ran: unknown[] = [];
    const steps = [{ toolCalls: [{ id: "r1", name: "refund", arguments: { order: "A7" } }] }];
    const writer = fromAgent({
      agent: { provider: scripted(steps), tools: [refundTool(ran)] },
      input: Ticket,
      prompt: ({ ticket }) => ticket,
    });
    const first = createActor(appMachine(writer, { ticket: "refund A7" })).start();
    await waitFor(first, (s) => s.context.seen.includes("agent.approval_requested"));
    const saved = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    saved.children.writer.snapshot.context.agent = { status: "active", value: "nowhere", context: {} };
    const second = createActor(appMachine(writer, undefined), { snapshot: saved }).start();
    const done = await waitFor(second, (s) => s.status === "done");
    expect(done.value).toBe("failed");
    expect(String((done.context.error as Error).message)).toMatch(/snapshot/i);
    expect(ran).toEqual([]);
  });

  it("emits every event (deltas too) to actorRef.on listeners, and abort ends the run as aborted", async () => {
    const slow = defineTool({
      name: "slow",
      description: "Takes a while",
      parameters: z.object({}),
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => ctx.signal.addEventListener("abort", () => resolve("stopped"))),
    });
    const worker = fromAgent({
      agent: {
        provider: scripted([{ text: "Working", toolCalls: [{ id: "s1", name: "slow", arguments: {} }] }]),
        tools: [slow],
      },
      prompt: () => "go",
    });
    const parent = createActor(
      setup({ actors: { worker } }).createMachine({
        entry: spawnChild("worker", { id: "worker", input: {} }),
      }),
    ).start();
    const child = parent.getSnapshot().children.worker!;
    const seen: string[] = [];
    const started = new Promise<void>((resolve) =>
      child.on("*", (e) => {
        seen.push(e.type);
        if (e.type === "tool_execution_start") resolve();
      }),
    );
    await started;
    child.send({ type: "agent.abort" });
    const done = await waitFor(child, (s) => s.status === "done");
    expect(done.output!.reason).toBe("aborted");
    expect(seen).toContain("message_update");
    expectValidTranscript(done.output!.messages as AgentMessage[]);
  });

  it("the agent's machine is a child of the agent actor in the app's inspector", async () => {
    const inspected: InspectionEvent[] = [];
    const writer = fromAgent({
      agent: { provider: scripted([{ text: "ok" }]) },
      input: Ticket,
      prompt: ({ ticket }) => ticket,
    });
    const app = createActor(appMachine(writer, { ticket: "hi" }), {
      inspect: (e) => inspected.push(e),
    }).start();
    await waitFor(app, (s) => s.status === "done");
    const writerActor = inspected.find(
      (e) => e.type === "@xstate.actor" && (e.actorRef as AnyActorRef).id === "writer",
    )?.actorRef;
    expect(writerActor).toBeDefined();
    const agentMachine = inspected.find(
      (e) =>
        e.type === "@xstate.actor" &&
        e.actorRef !== writerActor &&
        (e.actorRef as AnyActorRef)._parent === writerActor,
    );
    expect(agentMachine).toBeDefined();
    // The events the agent sent the app are seen with the agent actor as their source.
    expect(
      inspected.some(
        (e) =>
          e.type === "@xstate.event" && e.event.type === "agent.agent_end" && e.sourceRef === writerActor,
      ),
    ).toBe(true);
  });

  it("refuses options it sets itself", () => {
    expect(() =>
      fromAgent({ agent: { provider: scripted([]), snapshot: {} } as never, prompt: () => "x" }),
    ).toThrow(/agent.snapshot is set by the actor/);
    expect(() => fromAgent({ agent: { provider: scripted([]) }, prompt: "x" } as never)).toThrow(
      /prompt must be a function/,
    );
  });
});
