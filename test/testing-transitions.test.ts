import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted, userMessage } from "../index.js";
import {
  agentMachine,
  agentMachineInput,
  initialTransition,
  modelAnswer,
  startAgentMachine,
  stepAgentMachine,
  transition,
} from "../testing.js";

// Stepping a configured agent machine with the kit's pure transitions (agent-machine/testing).

const read = defineTool({
  name: "read",
  description: "Reads",
  parameters: z.object({ path: z.string() }),
  readOnly: true,
  execute: () => "text",
});
const write = defineTool({
  name: "write",
  description: "Writes",
  parameters: z.object({ path: z.string() }),
  execute: () => "ok",
});

describe("stepping the agent machine (agent-machine/testing)", () => {
  it("starts as createAgent would: the same context from the same options", () => {
    const options = {
      tools: [read, write],
      toolExecution: "auto" as const,
      limits: { maxTurns: 3 },
      loopDetection: { maxIdenticalCalls: 2 },
      context: { maxContextTokens: 50_000 },
    };
    const agent = createAgent({ ...options, provider: scripted([]) });
    const step = startAgentMachine(options);
    expect(step.value).toBe("idle");
    expect(step.context).toEqual(agent.actor.getSnapshot().context);
    expect(agentMachineInput(options).concurrencySafeTools).toEqual(["read"]);
  });

  it("walks a run event by event: prompt, two calls, their results, the turn limit's stop", () => {
    let step = startAgentMachine({ tools: [read, write], limits: { maxTurns: 1, onLimit: "stop" } });
    step = stepAgentMachine(step, { type: "PROMPT", messages: [userMessage("go", 1)] });
    expect(step.value).toEqual({ running: "streaming" });
    expect(step.emitted.map((e) => e.type)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
    ]);
    expect(step.actions).toContain("spawn:modelStream");

    const answer = modelAnswer({
      toolCalls: [
        { name: "read", arguments: { path: "a" } },
        { name: "write", arguments: { path: "b" } },
      ],
    });
    step = stepAgentMachine(step, { type: "STREAM_DONE", message: answer, started: true });
    expect(step.value).toEqual({ running: "executing" });
    expect(step.actions).toContain("spawn:toolExecution");

    const result = (id: string) => ({
      role: "toolResult" as const,
      toolCallId: id,
      toolName: "t",
      content: [{ type: "text" as const, text: "ok" }],
      isError: false,
      timestamp: 2,
    });
    step = stepAgentMachine(step, { type: "GROUP_DONE", results: [result("call_0"), result("call_1")] });
    step = stepAgentMachine(step, { type: "xstate.done.actor.toolExecution" });
    // One turn allowed and `onLimit: "stop"`: the run ends here rather than calling the model again.
    for (let i = 0; i < 3 && step.value !== "idle"; i++) step = stepAgentMachine(step, { type: "CHECK" });
    expect(step.value).toBe("idle");
    const types = step.emitted.map((e) => e.type);
    expect(types).toContain("agent_end");
    expect(step.emitted.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
    expect(step.context.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
    ]);
  });

  it("re-exports XState's transition functions: no xstate dependency of your own", () => {
    const [snapshot] = initialTransition(agentMachine, agentMachineInput());
    const [next, actions] = transition(agentMachine, snapshot, { type: "ABORT" });
    expect(next.value).toBe("idle");
    expect(actions).toEqual([]);
  });
});
