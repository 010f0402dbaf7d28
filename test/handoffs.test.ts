import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type AgentMessage,
  createAgent,
  createPermissions,
  defineHandoff,
  defineTool,
  fromAgent,
  scripted,
  type ToolResultMessage,
} from "../index.js";
import { createActor, setup, waitFor } from "xstate";
import { agentMachine } from "../machines/agent.machine.js";

const refund = defineTool({
  name: "refund",
  description: "Refunds an amount",
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: ({ amount }) => `refunded ${amount}`,
});

function recordEvents(agent: { events$: { subscribe(f: (e: AgentEvent) => void): unknown } }) {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((event) => events.push(event));
  return events;
}

/** Every tool call of the transcript has exactly one result, and every result its call. */
function expectEveryCallAnsweredOnce(messages: readonly AgentMessage[]) {
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.filter((p) => p.type === "toolCall").map((p) => p.id) : [],
  );
  const results = messages
    .filter((m): m is ToolResultMessage => m.role === "toolResult")
    .map((m) => m.toolCallId);
  expect([...results].sort()).toEqual([...calls].sort());
  expect(new Set(calls).size).toBe(calls.length);
}

describe("handoffs", () => {
  it("hands the conversation to another agent: its prompt, tools and model answer from the next turn", async () => {
    const mainModel = scripted([{ toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] }]);
    const billingModel = scripted([{ text: "Billing here: I can refund you." }, { text: "You're welcome." }]);
    const billing = defineHandoff({
      name: "billing",
      description: "Refunds and invoices",
      systemPrompt: "You handle billing.",
      tools: [refund],
      provider: billingModel,
    });
    const inspected: string[] = [];
    const agent = createAgent({
      provider: mainModel,
      systemPrompt: "You triage.",
      handoffs: [billing],
      inspect: (event: { type: string; snapshot?: { value?: unknown } }) => {
        if (event.type === "@xstate.microstep") inspected.push(JSON.stringify(event.snapshot?.value));
      },
    });
    const events = recordEvents(agent);
    const outcome = await agent.prompt("I was charged twice");

    expect(outcome.reason).toBe("stop");
    // The main model was offered the transfer; billing's model got its own prompt and tools.
    expect(mainModel.requests[0]!.tools.map((t) => t.name)).toEqual(["transfer_to_billing"]);
    expect(billingModel.requests[0]!.systemPrompt).toBe("You handle billing.");
    expect(billingModel.requests[0]!.tools.map((t) => t.name).sort()).toEqual(["refund", "transfer_to_main"]);
    // With the default filter ("all"), billing saw the whole conversation, the transfer included.
    expect(billingModel.requests[0]!.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
    ]);
    // The switch is a transition of the chart, seen by an inspector.
    expect(agentMachine.states.running!.states.handingOff).toBeDefined();
    expect(inspected).toContain(JSON.stringify({ running: "handingOff" }));
    const handoff = events.find((e) => e.type === "handoff");
    expect(handoff).toMatchObject({
      from: "main",
      to: "billing",
      toolCallId: "t1",
      before: 1,
      after: 1,
      removedIds: [],
    });
    // The event comes after the transfer's result and before billing's turn.
    const order = events.map((e) => e.type);
    expect(order.indexOf("handoff")).toBeGreaterThan(order.lastIndexOf("tool_execution_end"));
    expect(order.lastIndexOf("turn_start")).toBeGreaterThan(order.indexOf("handoff"));
    expectEveryCallAnsweredOnce(agent.messages);
    expect(agent.actor.getSnapshot().context.activeAgent).toBe("billing");

    // The next prompt goes to billing, the active agent.
    await agent.prompt("thanks");
    expect(billingModel.requests).toHaveLength(2);
    expect(mainModel.requests).toHaveLength(1);
  });

  it("records what the context filter removed, in the event and the transcript, and the new model sees only what crossed", async () => {
    const mainModel = scripted([
      { text: "Hello, how can I help?" },
      { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] },
    ]);
    const billingModel = scripted([{ text: "Billing here." }]);
    const billing = defineHandoff({
      name: "billing",
      description: "Refunds",
      provider: billingModel,
      context: { lastTurns: 1 },
    });
    const agent = createAgent({ provider: mainModel, handoffs: [billing] });
    const events = recordEvents(agent);
    await agent.prompt("Hi");
    const firstTurn = agent.messages.map((m) => m.id!);
    await agent.prompt("Refund me please");

    const handoff = events.find((e) => e.type === "handoff")!;
    expect(handoff).toMatchObject({
      from: "main",
      to: "billing",
      before: 3,
      after: 1,
      removedIds: firstTurn,
    });
    // Billing's model saw the last turn alone: the user's request and the transfer.
    expect(billingModel.requests[0]!.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
    ]);
    expect(billingModel.requests[0]!.messages[0]!.content).toBe("Refund me please");
    // The transcript records it: the transfer's result says what was removed, and the removed messages left.
    const result = agent.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
    expect(result.details).toMatchObject({ handoff: { from: "main", to: "billing", removedIds: firstTurn } });
    expect(agent.messages.some((m) => firstTurn.includes(m.id!))).toBe(false);
    expectEveryCallAnsweredOnce(agent.messages);
  });

  it("hands back, and refuses a transfer past the loop guard with the transcript valid", async () => {
    const pingPong = (to: string) =>
      scripted((request, call) => {
        const last = request.messages.at(-1)!;
        // After a refused transfer, answer the user.
        if (last.role === "toolResult" && last.isError)
          return { text: `stopped: ${JSON.stringify(last.content)}` };
        return { toolCalls: [{ id: `${to}-${call}`, name: `transfer_to_${to}`, arguments: {} }] };
      });
    const billing = defineHandoff({ name: "billing", description: "Refunds", provider: pingPong("main") });
    const agent = createAgent({
      provider: pingPong("billing"),
      handoffs: [billing],
      limits: { maxHandoffs: 3 },
    });
    const events = recordEvents(agent);
    const outcome = await agent.prompt("loop forever");

    expect(outcome.reason).toBe("stop");
    expect(events.filter((e) => e.type === "handoff").map((e) => (e as { to: string }).to)).toEqual([
      "billing",
      "main",
      "billing",
    ]);
    const refused = agent.messages.filter(
      (m): m is ToolResultMessage => m.role === "toolResult" && m.isError,
    );
    expect(refused).toHaveLength(1);
    expect(JSON.stringify(refused[0]!.content)).toContain("3 handoffs since the user's last message");
    expectEveryCallAnsweredOnce(agent.messages);
  });

  it("restores a snapshot with the right agent active, while its call waits for approval", async () => {
    const mainModel = scripted([{ toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] }]);
    const billingModel = scripted([
      { toolCalls: [{ id: "r1", name: "refund", arguments: { amount: 20 } }] },
      { text: "Refunded 20." },
    ]);
    const options = {
      provider: mainModel,
      handoffs: [
        defineHandoff({ name: "billing", description: "Refunds", tools: [refund], provider: billingModel }),
      ],
    };
    const agent = createAgent(options);
    const asked = new Promise<void>((resolve) =>
      agent.events$.subscribe((e) => e.type === "approval_requested" && resolve()),
    );
    void agent.prompt("refund me");
    await asked;
    const saved = JSON.parse(JSON.stringify(agent.getPersistedSnapshot()));
    agent.stop();

    const restored = createAgent({ ...options, snapshot: saved });
    expect(restored.pendingApprovals().map((p) => p.toolCallId)).toEqual(["r1"]);
    const ended = new Promise<void>((resolve) =>
      restored.events$.subscribe((e) => e.type === "agent_end" && resolve()),
    );
    restored.approve("r1");
    await ended;
    // Billing's model answered after the restore (the main model has no second step).
    expect(billingModel.requests).toHaveLength(2);
    expect(billingModel.requests[1]!.tools.map((t) => t.name)).toContain("refund");
    expect(restored.messages.at(-1)).toMatchObject({ role: "assistant" });
    expectEveryCallAnsweredOnce(restored.messages);
  });

  it("inside an app's machine (fromAgent): the app's persisted snapshot restores with the right agent active", async () => {
    const script = () => ({
      main: scripted([{ toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] }]),
      billing: scripted([
        { toolCalls: [{ id: "r1", name: "refund", arguments: { amount: 20 } }] },
        { text: "Billing: refunded 20." },
      ]),
    });
    const app = (models: { main: ReturnType<typeof scripted>; billing: ReturnType<typeof scripted> }) =>
      setup({
        actors: {
          agent: fromAgent({
            agent: {
              provider: models.main,
              handoffs: [
                defineHandoff({
                  name: "billing",
                  description: "Refunds",
                  tools: [refund],
                  provider: models.billing,
                }),
              ],
            },
            prompt: () => "refund me",
          }),
        },
      }).createMachine({
        initial: "working",
        states: {
          working: { invoke: { id: "agent", src: "agent", onDone: "done" } },
          done: { type: "final" },
        },
      });
    const first = createActor(app(script())).start();
    await new Promise<void>((resolve) =>
      first.getSnapshot().children.agent!.on("approval_requested", () => resolve()),
    );
    const saved = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();

    // A new process: billing's model answers the rest of the run.
    const models = { main: scripted([]), billing: scripted([{ text: "Billing: refunded 20." }]) };
    const second = createActor(app(models), { snapshot: saved }).start();
    second.getSnapshot().children.agent!.send({ type: "agent.approve", toolCallId: "r1" });
    const done = await waitFor(second, (s) => s.status === "done");
    expect(done.status).toBe("done");
    // Billing's model answered after the restore; the main model was never asked again.
    expect(models.main.requests).toHaveLength(0);
    expect(models.billing.requests).toHaveLength(1);
    expect(models.billing.requests[0]!.tools.map((t) => t.name)).toContain("refund");
  });

  it("a run's own tools stay with the run across a handoff, and leave with it", async () => {
    const pickColor = defineTool({
      name: "pick_color",
      description: "Picks a color",
      parameters: z.object({}),
      execute: () => "blue",
    });
    const billingModel = scripted([{ text: "Billing here." }, { text: "Still billing." }]);
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] }]),
      handoffs: [defineHandoff({ name: "billing", description: "Refunds", provider: billingModel })],
    });
    await agent.prompt("hi", { tools: [pickColor] });
    // During the run, billing was offered the run's tool besides its own.
    expect(billingModel.requests[0]!.tools.map((t) => t.name).sort()).toEqual([
      "pick_color",
      "transfer_to_main",
    ]);
    await agent.prompt("again");
    expect(billingModel.requests[1]!.tools.map((t) => t.name)).toEqual(["transfer_to_main"]);
  });

  it("a context filter that would break the transcript fails the transfer with a clear error, and nothing moves", async () => {
    const billingModel = scripted([]);
    const billing = defineHandoff({
      name: "billing",
      description: "Refunds",
      provider: billingModel,
      // Keeps an assistant's call without its result.
      context: (messages) => messages.filter((m) => m.role !== "toolResult"),
    });
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "l1", name: "lookup", arguments: {} }] },
        { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] },
        { text: "I stay." },
      ]),
      tools: [
        defineTool({ name: "lookup", description: "x", parameters: z.object({}), execute: () => "42" }),
      ],
      handoffs: [billing],
    });
    const events = recordEvents(agent);
    expect((await agent.prompt("hi")).reason).toBe("stop");
    const transfer = agent.messages.find(
      (m): m is ToolResultMessage => m.role === "toolResult" && m.toolCallId === "t1",
    )!;
    expect(transfer.isError).toBe(true);
    expect(JSON.stringify(transfer.content)).toContain(
      'the context filter kept tool call \\"l1\\" without its result',
    );
    expect(events.some((e) => e.type === "handoff")).toBe(false);
    expect(billingModel.requests).toHaveLength(0);
    expectEveryCallAnsweredOnce(agent.messages);
  });

  it("refuses a handoff to an unknown agent at setup, and answers a transfer no agent offers as an error", async () => {
    expect(() =>
      createAgent({
        provider: scripted([]),
        handoffs: [defineHandoff({ name: "billing", description: "x", handoffs: ["sales"] })],
      }),
    ).toThrow(/agent "billing" hands off to unknown agent "sales"/);
    expect(() => defineHandoff({ name: "main", description: "x" })).toThrow(/"main" is the name/);
    expect(() => defineHandoff({ name: "a", description: "x", context: { lastTurns: 0 } })).toThrow(
      /lastTurns/,
    );
    expect(() => createAgent({ provider: scripted([]), limits: { maxHandoffs: -1 } })).toThrow(/maxHandoffs/);
    // Permission rules may name a handoff agent's tools and the transfers; a name none has is refused.
    const agents = [defineHandoff({ name: "billing", description: "Refunds", tools: [refund] })];
    expect(() =>
      createAgent({
        provider: scripted([]),
        handoffs: agents,
        permissions: createPermissions({
          rules: { allow: ["refund", "transfer_to_billing", "transfer_to_main"] },
        }),
      }),
    ).not.toThrow();
    expect(() =>
      createAgent({
        provider: scripted([]),
        handoffs: agents,
        permissions: createPermissions({ rules: { allow: ["refnd"] } }),
      }),
    ).toThrow(/refnd/);

    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "t1", name: "transfer_to_sales", arguments: {} }] },
        { text: "ok" },
      ]),
      handoffs: [defineHandoff({ name: "billing", description: "Refunds" })],
    });
    const events = recordEvents(agent);
    await agent.prompt("hi");
    expect(events.some((e) => e.type === "handoff")).toBe(false);
    const result = agent.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
    expect(result.isError).toBe(true);
    expectEveryCallAnsweredOnce(agent.messages);
  });
});
