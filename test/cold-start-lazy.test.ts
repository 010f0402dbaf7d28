import { StateMachine } from "xstate";
import { afterEach, expect, it, vi } from "vitest";

// A cold start pays for what the import does (issue 44). The durable agent's machine (the agent
// machine with its journal's checks, `agentMachine.provide(...)`) is made when a durable agent first
// starts, so the import and a plain agent's prompt build no such copy of the statechart.

afterEach(() => {
  vi.restoreAllMocks();
});

it("builds no durable copy of the agent machine on import or on a plain agent's prompt", async () => {
  const provide = vi.spyOn(StateMachine.prototype, "provide");
  vi.resetModules();
  const { createAgent, scripted } = await import("../index.js");
  const agent = createAgent({ provider: scripted([{ text: "Hello." }]) });
  await agent.prompt("Hi");
  expect(agent.messages.at(-1)).toMatchObject({ role: "assistant" });
  agent.stop();
  expect(provide).not.toHaveBeenCalled();
});

it("makes the durable copy once, on first use, and hands out the same machine after", async () => {
  vi.resetModules();
  const { journaledAgentMachine } = await import("../machines/journaled-agent.machine.js");
  const { agentMachine } = await import("../machines/agent.machine.js");
  const provide = vi.spyOn(StateMachine.prototype, "provide");
  const first = journaledAgentMachine();
  expect(journaledAgentMachine()).toBe(first);
  expect(provide).toHaveBeenCalledTimes(1);
  expect(first).not.toBe(agentMachine);
  expect(first.root.id).toBe(agentMachine.root.id);
});
