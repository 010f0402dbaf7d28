import { describe, expect, it } from "vitest";
import { type AnyMachineSnapshot, initialTransition, transition } from "xstate";
import {
  type AgentEvent,
  type AgentMachineEvent,
  type AgentMachineInput,
  type AssistantMessage,
  agentMachine,
  contextBudget,
  emptyUsage,
  estimateTokens,
  measuredOverhead,
  type ToolResultMessage,
} from "../index.js";

// Pure transitions: no actors run, no provider, no clock. Each step returns the next snapshot and
// the actions the machine would execute, including the events it emits.

const user = { role: "user" as const, content: "hi", timestamp: 1 };
const answer = (
  content: AssistantMessage["content"],
  stopReason: AssistantMessage["stopReason"] = "stop",
): AssistantMessage => ({
  role: "assistant",
  content,
  stopReason,
  usage: { ...emptyUsage(), input: 10, output: 5, totalTokens: 15 },
  timestamp: 2,
});
const call = (id: string) => ({ type: "toolCall" as const, id, name: "t", arguments: {} });
const result = (id: string): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "t",
  content: [{ type: "text", text: "ok" }],
  isError: false,
  timestamp: 3,
});

type Step = { snapshot: AnyMachineSnapshot; emitted: AgentEvent[]; actions: string[] };

function start(input: AgentMachineInput = {}): Step {
  const [snapshot, actions] = initialTransition(agentMachine, input);
  return describeStep(snapshot, actions);
}
function send(step: Step, event: AgentMachineEvent): Step {
  const [snapshot, actions] = transition(agentMachine, step.snapshot as never, event);
  return describeStep(snapshot, actions);
}
function describeStep(
  snapshot: AnyMachineSnapshot,
  actions: readonly { type: string; params?: unknown }[],
): Step {
  return {
    snapshot,
    emitted: actions
      .filter((a) => a.type === "xstate.emit")
      .map((a) => (a.params as { event: AgentEvent }).event),
    actions: actions.map((a) => {
      const params = a.params as { id?: string; to?: unknown; event?: { type: string } } | undefined;
      if (a.type === "xstate.spawnChild") return `spawn:${params?.id}`;
      if (a.type === "xstate.sendTo") return `sendTo:${(params?.event as { type: string })?.type}`;
      if (a.type === "xstate.stopChild") return "stopChild";
      return a.type;
    }),
  };
}
const types = (step: Step) => step.emitted.map((e) => e.type);
const prompt = (step: Step) => send(step, { type: "PROMPT", messages: [user] });

describe("agent machine transitions (pure)", () => {
  it("PROMPT starts a run and a turn, appends the prompt and invokes the model stream", () => {
    const step = prompt(start());
    expect(step.snapshot.value).toEqual({ running: "streaming" });
    expect(types(step)).toEqual(["agent_start", "turn_start", "message_start", "message_end"]);
    expect(step.actions).toContain("spawn:modelStream");
    // The prompt enters with an id and says it came from prompt().
    expect(step.snapshot.context.messages).toEqual([{ ...user, id: expect.any(String), source: "prompt" }]);
  });

  it("a text answer ends the turn and rests in steeringCheck, which asks itself to CHECK", () => {
    const step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([{ type: "text", text: "yo" }]),
      started: true,
    });
    expect(step.snapshot.value).toEqual({ running: "steeringCheck" });
    expect(types(step)).toEqual(["message_end", "turn_end"]);
    expect(step.actions).toContain("sendTo:CHECK");

    const followUp = send(step, { type: "CHECK" });
    expect(followUp.snapshot.value).toEqual({ running: "followUpCheck" });
    const end = send(followUp, { type: "CHECK" });
    expect(end.snapshot.value).toBe("idle");
    expect(end.emitted).toEqual([
      {
        type: "agent_end",
        messages: [expect.objectContaining(user), expect.objectContaining({ role: "assistant" })],
        reason: "stop",
        usage: expect.objectContaining({ input: 10 }),
      },
    ]);
  });

  it("a message that was never started gets its message_start before message_end", () => {
    const step = send(prompt(start()), { type: "STREAM_DONE", message: answer([], "error"), started: false });
    expect(types(step)).toEqual(["message_start", "message_end", "turn_end", "agent_end"]);
  });

  it("tool calls go to executing, which spawns the execution machine; results then a new turn", () => {
    let step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([call("a"), call("b")], "toolUse"),
      started: true,
    });
    expect(step.snapshot.value).toEqual({ running: "executing" });
    expect(step.actions).toContain("spawn:toolExecution");

    step = send(step, { type: "GROUP_DONE", results: [result("a"), result("b")] });
    expect(types(step)).toEqual(["message_start", "message_end", "message_start", "message_end"]);
    step = send(step, { type: "xstate.done.actor.toolExecution" });
    expect(step.snapshot.value).toEqual({ running: "steeringCheck" });
    expect(step.emitted[0]).toMatchObject({
      type: "turn_end",
      turn: 1,
      toolResults: [result("a"), result("b")],
    });

    step = send(step, { type: "CHECK" });
    expect(step.snapshot.value).toEqual({ running: "streaming" });
    expect(types(step)).toEqual(["turn_start"]);
    expect(step.snapshot.context.run.turn).toBe(2);
  });

  it("the execution machine's output is the results it had not reported: the last group's", () => {
    let step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([call("a"), call("b")], "toolUse"),
      started: true,
    });
    step = send(step, { type: "xstate.done.actor.toolExecution", output: [result("a"), result("b")] });
    expect(step.snapshot.value).toEqual({ running: "steeringCheck" });
    expect(types(step)).toEqual(["message_start", "message_end", "message_start", "message_end", "turn_end"]);
    expect(step.emitted.at(-1)).toMatchObject({ toolResults: [result("a"), result("b")] });
  });

  it("a turn with one call runs its actor as the agent's own child, without the execution machine", () => {
    let step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([call("a")], "toolUse"),
      started: true,
    });
    expect(step.snapshot.value).toEqual({ running: "executing" });
    expect(step.actions).toContain("spawn:a");
    expect(step.actions).not.toContain("spawn:toolExecution");

    step = send(step, {
      type: "xstate.done.actor.a",
      output: { toolCallId: "a", message: result("a") },
    } as AgentMachineEvent);
    expect(step.snapshot.value).toEqual({ running: "steeringCheck" });
    expect(step.actions).toContain("stopChild");
    expect(types(step)).toEqual(["message_start", "message_end", "turn_end"]);
    expect(step.snapshot.context.messages.at(-1)).toEqual({ ...result("a"), id: expect.any(String) });
  });

  it("ABORT during a turn's one call stops it and answers it as aborted", () => {
    let step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([call("a")], "toolUse"),
      started: true,
    });
    step = send(step, { type: "ABORT" });
    expect(step.actions).toContain("stopChild");
    expect(types(step)).toEqual([
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    expect(step.snapshot.context.messages.at(-1)).toMatchObject({
      role: "toolResult",
      toolCallId: "a",
      isError: true,
      content: [{ type: "text", text: "Tool t aborted" }],
    });
    expect(step.snapshot.value).toBe("idle");
  });

  it("if the execution machine fails, every call still unanswered gets an error result", () => {
    let step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([call("a"), call("b")], "toolUse"),
      started: true,
    });
    step = send(step, { type: "GROUP_DONE", results: [result("a")] });
    step = send(step, { type: "xstate.error.actor.toolExecution", error: new Error("boom") });
    expect(step.snapshot.value).toEqual({ running: "steeringCheck" });
    expect(types(step)).toEqual(["tool_execution_end", "message_start", "message_end", "turn_end"]);
    expect(step.snapshot.context.messages.at(-1)).toMatchObject({
      role: "toolResult",
      toolCallId: "b",
      isError: true,
      content: [{ type: "text", text: "Tool execution failed: boom" }],
    });
    expect(step.emitted.at(-1)).toMatchObject({
      type: "turn_end",
      toolResults: [result("a"), expect.objectContaining({ toolCallId: "b" })],
    });
  });

  it("STEER while executing queues the message and tells the execution machine", () => {
    let step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([call("a"), call("b")], "toolUse"),
      started: true,
    });
    step = send(step, { type: "STEER", message: { role: "user", content: "wait", timestamp: 5 } });
    expect(step.snapshot.context.steeringQueue).toHaveLength(1);
    expect(step.actions).toContain("sendTo:STEERING_QUEUED");
  });

  it("steering is taken at steeringCheck into the next turn", () => {
    let step = send(prompt(start()), {
      type: "STREAM_DONE",
      message: answer([{ type: "text", text: "x" }]),
      started: true,
    });
    step = send(step, { type: "STEER", message: { role: "user", content: "more", timestamp: 5 } });
    step = send(step, { type: "CHECK" });
    expect(step.snapshot.value).toEqual({ running: "streaming" });
    expect(types(step)).toEqual(["turn_start", "message_start", "message_end"]);
    expect(step.snapshot.context.messages.at(-1)).toMatchObject({ content: "more" });
  });

  it("maxTurns ends the run at the turn gate with the notice, after the last turn_end", () => {
    let step = prompt(start({ limits: { maxTurns: 1, onLimit: "stop" } }));
    step = send(step, { type: "STREAM_DONE", message: answer([call("a")], "toolUse"), started: true });
    step = send(step, { type: "GROUP_DONE", results: [result("a")] });
    step = send(step, { type: "xstate.done.actor.toolExecution" });
    step = send(step, { type: "CHECK" });
    expect(step.snapshot.value).toBe("idle");
    expect(types(step)).toEqual(["limit_reached", "message_start", "message_end", "agent_end"]);
    expect(step.emitted[0]).toEqual({
      type: "limit_reached",
      limit: "maxTurns",
      action: "stop",
      text: "Max turns reached (1/1)",
    });
    expect(step.emitted.at(-1)).toMatchObject({ reason: "limit" });
  });

  it("maxTurns with the default onLimit: one more turn, opened by the notice, then the run ends with the answer", () => {
    let step = prompt(start({ limits: { maxTurns: 1 } }));
    step = send(step, { type: "STREAM_DONE", message: answer([call("a")], "toolUse"), started: true });
    step = send(step, { type: "GROUP_DONE", results: [result("a")] });
    step = send(step, { type: "xstate.done.actor.toolExecution" });
    step = send(step, { type: "CHECK" });
    expect(step.snapshot.value).toEqual({ running: "streaming" });
    expect(types(step)).toEqual(["limit_reached", "turn_start", "message_start", "message_end"]);
    expect(step.emitted[0]).toMatchObject({ limit: "maxTurns", action: "answer" });
    expect(step.emitted[2]).toMatchObject({ message: { role: "custom", customType: "limit_notice" } });
    expect(step.actions).toContain("spawn:modelStream");
    expect(step.snapshot.context.run).toMatchObject({ answeringLimit: true, endReason: "limit", turn: 2 });

    step = send(step, {
      type: "STREAM_DONE",
      message: answer([{ type: "text", text: "so far: a" }]),
      started: true,
    });
    expect(step.snapshot.value).toBe("idle");
    expect(types(step)).toEqual(["message_end", "turn_end", "agent_end"]);
    expect(step.emitted.at(-1)).toMatchObject({ reason: "limit" });
    expect(step.snapshot.context.messages.at(-1)).toMatchObject({
      content: [{ type: "text", text: "so far: a" }],
    });
  });

  it("ABORT while streaming asks the stream to stop; its aborted message ends the run", () => {
    let step = send(prompt(start()), { type: "ABORT" });
    expect(step.snapshot.value).toEqual({ running: "streaming" });
    expect(step.actions).toContain("sendTo:ABORT");
    step = send(step, {
      type: "STREAM_DONE",
      message: answer([{ type: "text", text: "par" }], "aborted"),
      started: true,
    });
    expect(step.snapshot.value).toBe("idle");
    expect(types(step)).toEqual(["message_end", "turn_end", "agent_end"]);
    expect(step.emitted.at(-1)).toMatchObject({ reason: "aborted" });
  });

  it("a rejected prompt never leaves idle", () => {
    const step = send(start(), { type: "PROMPT_REJECTED", reason: "no" });
    expect(step.snapshot.value).toBe("idle");
    expect(types(step)).toEqual(["agent_start", "input_rejected", "agent_end"]);
  });

  it("the turn gate enters compacting only for a turn over budget, counting what the turn adds", () => {
    const long = { role: "user" as const, content: "word ".repeat(400), timestamp: 1 };
    const fits = send(start({ contextBudget: { maxContextTokens: 100_000 } }), {
      type: "PROMPT",
      messages: [long],
    });
    expect(fits.snapshot.value).toEqual({ running: "streaming" });
    // The transcript is empty before the turn: only the prompt the turn appends is over budget.
    const over = send(start({ contextBudget: { maxContextTokens: 50 } }), {
      type: "PROMPT",
      messages: [long],
    });
    expect(over.snapshot.value).toEqual({ running: { compacting: "reducing" } });
    expect(types(over)).toEqual(["agent_start", "turn_start", "message_start", "message_end"]);
  });

  it("the answer a limit asks for is measured with its notice: over budget only because of it, it compacts", () => {
    const toAnswerTurn = (input: AgentMachineInput) => {
      let step = prompt(start({ limits: { maxTurns: 1 }, ...input }));
      step = send(step, { type: "STREAM_DONE", message: answer([call("a")], "toolUse"), started: true });
      step = send(step, { type: "GROUP_DONE", results: [result("a")] });
      step = send(step, { type: "xstate.done.actor.toolExecution" });
      return step;
    };
    // A budget the transcript meets exactly: what the provider counted beyond the messages (the
    // calibration from the turn's usage) is added to the window, so the budget left is `tokens`.
    const measured = toAnswerTurn({ contextBudget: { maxContextTokens: 1_000_000 } });
    const tokens = estimateTokens(measured.snapshot.context.messages);
    const overhead = measuredOverhead(measured.snapshot.context.calibration);
    const window = tokens + Math.ceil(overhead);
    expect(contextBudget({ maxContextTokens: window }, measured.snapshot.context.calibration)).toBe(tokens);
    const exact = send(toAnswerTurn({ contextBudget: { maxContextTokens: window } }), { type: "CHECK" });
    expect(exact.snapshot.value).toEqual({ running: { compacting: "reducing" } });
    expect(exact.snapshot.context.run.answeringLimit).toBe(true);
    const roomy = send(toAnswerTurn({ contextBudget: { maxContextTokens: window + 1_000 } }), {
      type: "CHECK",
    });
    expect(roomy.snapshot.value).toEqual({ running: "streaming" });
  });

  it("a context overflow teaches the window and goes back to compacting, at most 3 times a turn", () => {
    const overflow = {
      type: "STREAM_DONE" as const,
      message: { ...answer([], "error"), errorMessage: "prompt is too long: 50 tokens > 20 maximum" },
      started: false,
      errorKind: "context_overflow" as const,
    };
    let step = send(prompt(start()), overflow);
    expect(step.snapshot.value).toEqual({ running: { compacting: "reducing" } });
    expect(step.emitted).toEqual([
      expect.objectContaining({ type: "context_window_learned", providerMaximum: 20 }),
    ]);
    expect(step.snapshot.context.learnedMaxContextTokens).toBeGreaterThan(0);
    for (let retry = 1; retry <= 3; retry++) {
      const compacted = {
        messages: step.snapshot.context.messages,
        level: 2,
        tokensBefore: 10,
        tokensAfter: 5,
        budget: 8,
        target: 4,
        fits: true,
      };
      step = send(step, { type: "xstate.done.actor.compaction", output: compacted } as never);
      expect(step.snapshot.value).toEqual({ running: "streaming" });
      step = send(step, overflow);
      expect(step.snapshot.value).toEqual(retry < 3 ? { running: { compacting: "reducing" } } : "idle");
    }
    expect(step.emitted.at(-1)).toMatchObject({
      type: "agent_end",
      reason: "error",
      errorKind: "context_overflow",
      errorMessage: expect.stringMatching(/^The conversation does not fit the model's context window/),
    });
  });

  it("after an overflow, a compaction that finds nothing to remove ends the run without another request", () => {
    const overflow = {
      type: "STREAM_DONE" as const,
      message: { ...answer([], "error"), errorMessage: "prompt is too long" },
      started: false,
      errorKind: "context_overflow" as const,
    };
    let step = send(prompt(start()), overflow);
    step = send(step, { type: "xstate.done.actor.compaction", output: undefined } as never);
    expect(step.snapshot.value).toBe("idle");
    expect(types(step)).not.toContain("message_update");
    expect(step.emitted.at(-1)).toMatchObject({
      type: "agent_end",
      reason: "error",
      errorKind: "context_overflow",
      errorMessage: expect.stringMatching(/\(Provider: prompt is too long\)$/),
    });
  });

  it("DEADLINE ends the run like an abort, with reason limit", () => {
    let step = send(prompt(start({ limits: { maxDurationMs: 5 } })), { type: "DEADLINE" });
    expect(step.actions).toContain("sendTo:ABORT");
    step = send(step, { type: "STREAM_DONE", message: answer([], "aborted"), started: false });
    expect(step.snapshot.value).toBe("idle");
    expect(step.emitted.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
    expect(step.emitted.at(-3)).toMatchObject({
      type: "message_start",
      message: { content: [{ text: "[Agent stopped: Time limit reached (5 ms)]" }] },
    });
  });
});
