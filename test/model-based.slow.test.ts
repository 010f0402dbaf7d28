import { describe, expect, it } from "vitest";
import { type AnyMachineSnapshot, initialTransition, transition } from "xstate";
import { getShortestPaths, getSimplePaths } from "xstate/graph";
import {
  type AgentEvent,
  type AgentMachineEvent,
  type AssistantMessage,
  agentMachine,
  emptyUsage,
  type ToolResultMessage,
} from "../index.js";
import { expectEventInvariants, expectValidTranscript } from "./helpers.js";

// A model-based test: xstate/graph walks the agent machine's own transitions with every event the
// outside world (the model stream, the tool execution machine, the user, the clock) can send in
// each state; every path it finds is replayed with pure transitions and must keep the invariants.

const usage = { ...emptyUsage(), input: 10, output: 10, totalTokens: 20 };
const assistant = (
  content: AssistantMessage["content"],
  stopReason: AssistantMessage["stopReason"],
): AssistantMessage => ({
  role: "assistant",
  content,
  stopReason,
  usage,
  timestamp: 0,
});
const userMessage = (content: string) => ({ role: "user" as const, content, timestamp: 0 });

type Snapshot = AnyMachineSnapshot;

function possibleEvents(snapshot: Snapshot): AgentMachineEvent[] {
  const { context } = snapshot;
  const turn = context.run.turn as number;
  const calls = [
    { type: "toolCall" as const, id: `t${turn}a`, name: "tool", arguments: {} },
    { type: "toolCall" as const, id: `t${turn}b`, name: "tool", arguments: {} },
  ];
  // One queued message of each kind at most, and one run per path, keep the graph finite.
  const user: AgentMachineEvent[] = [
    ...(context.steeringQueue.length === 0
      ? [{ type: "STEER" as const, message: userMessage("steer") }]
      : []),
    ...(context.followUpQueue.length === 0
      ? [{ type: "FOLLOW_UP" as const, message: userMessage("follow") }]
      : []),
  ];
  if (snapshot.matches("idle")) {
    if (context.messages.length > 0 || context.run.endReason) return [];
    return [
      { type: "PROMPT", messages: [userMessage("go")] },
      { type: "PROMPT_REJECTED", reason: "no" },
    ];
  }
  if (snapshot.matches({ running: "streaming" })) {
    const aborting = context.run.endReason !== undefined;
    const done = (message: AssistantMessage, extra: object = {}): AgentMachineEvent => ({
      type: "STREAM_DONE",
      message,
      // Nothing streamed: the machine itself announces the message, so every event is visible here.
      started: false,
      ...extra,
    });
    if (aborting) return [done(assistant([], "aborted")), done(assistant([calls[0]!], "aborted"))];
    return [
      done(assistant([{ type: "text", text: "answer" }], "stop")),
      done(assistant(calls, "toolUse")),
      done(assistant([], "error"), { errorKind: "api" }),
      done(assistant([], "error"), { errorKind: "context_overflow" }),
      { type: "ABORT" },
      { type: "DEADLINE" },
      ...user,
    ];
  }
  if (snapshot.matches({ running: { compacting: "reducing" } })) {
    return [{ type: "xstate.done.actor.compaction", output: undefined } as never, { type: "ABORT" }];
  }
  if (snapshot.matches({ running: "executing" })) {
    const answered = new Set((context.run.turnResults as ToolResultMessage[]).map((r) => r.toolCallId));
    const open = (context.run.turnMessage as AssistantMessage).content.filter(
      (c) => c.type === "toolCall" && !answered.has(c.id),
    );
    if (open.length === 0) return [{ type: "xstate.done.actor.toolExecution" }];
    const results: ToolResultMessage[] = open.map((c) => ({
      role: "toolResult",
      toolCallId: (c as { id: string }).id,
      toolName: "tool",
      content: [{ type: "text", text: "r" }],
      isError: false,
      timestamp: 0,
    }));
    return [
      { type: "GROUP_DONE", results },
      { type: "GROUP_DONE", results: results.slice(0, 1) },
      { type: "ABORT" },
      ...user,
    ];
  }
  if (snapshot.matches({ running: "steeringCheck" }) || snapshot.matches({ running: "followUpCheck" })) {
    return [{ type: "CHECK" }, { type: "ABORT" }, ...user];
  }
  return [];
}

const serialize = (snapshot: Snapshot) => {
  const { context } = snapshot;
  return JSON.stringify([
    snapshot.value,
    context.run.turn,
    context.run.endReason ?? "",
    context.run.overflowRetried,
    context.run.answeringLimit,
    context.run.turnResults.length,
    context.steeringQueue.length,
    context.followUpQueue.length,
    context.messages.length,
    (context.run.turnMessage?.content ?? []).map((c: { type: string; id?: string }) => c.id ?? c.type),
  ]);
};

const input = { limits: { maxTurns: 2 } };

/** Replays a path with pure transitions, collecting what the machine emits. */
function replay(events: readonly AgentMachineEvent[], machineInput = input) {
  let [snapshot] = initialTransition(agentMachine, machineInput);
  const emitted: AgentEvent[] = [];
  for (const event of events) {
    const [next, actions] = transition(agentMachine, snapshot, event);
    snapshot = next;
    for (const a of actions as readonly { type: string; params?: unknown }[]) {
      if (a.type === "xstate.emit") emitted.push((a.params as { event: AgentEvent }).event);
    }
  }
  return { snapshot, emitted };
}

function checkPath(events: readonly AgentMachineEvent[], machineInput = input) {
  const { snapshot, emitted } = replay(events, machineInput);
  expectEventInvariants(emitted, { lastRunOpen: !snapshot.matches("idle") });
  const runs = emitted.filter((e) => e.type === "agent_start").length;
  const ends = emitted.filter((e) => e.type === "agent_end").length;
  if (snapshot.matches("idle")) {
    expect(ends, "every run that returned to idle ended with agent_end").toBe(runs);
    expectValidTranscript(snapshot.context.messages);
  } else {
    expect(ends).toBe(runs - 1);
  }
  // maxTurns work turns, then at most one more that asks for the answer (onLimit "answer").
  const maxTurns = machineInput.limits.maxTurns;
  for (const e of emitted) if (e.type === "turn_start") expect(e.turn).toBeLessThanOrEqual(maxTurns + 1);
  return snapshot;
}

describe(
  "model-based: every path through the agent machine keeps the invariants",
  {
    timeout: 60_000,
  },
  () => {
    it("shortest paths to every reachable state", () => {
      const paths = getShortestPaths(agentMachine, {
        events: possibleEvents,
        serializeState: serialize,
        input,
        limit: 50_000,
      });
      console.log(`model-based: ${paths.length} shortest paths`);
      expect(paths.length).toBeGreaterThan(40);
      const reached = new Set<string>();
      for (const path of paths) {
        const snapshot = checkPath(path.steps.map((s) => s.event as AgentMachineEvent));
        reached.add(JSON.stringify(snapshot.value));
      }
      // Every resting state of the diagram is visited.
      for (const state of [
        '"idle"',
        '{"running":"streaming"}',
        '{"running":"executing"}',
        '{"running":"steeringCheck"}',
        '{"running":"followUpCheck"}',
        '{"running":{"compacting":"reducing"}}',
      ]) {
        expect(reached, state).toContain(state);
      }
    });

    it("every simple path of a one-turn run, from the prompt to its agent_end", () => {
      const oneTurn = { limits: { maxTurns: 1 } };
      const paths = getSimplePaths(agentMachine, {
        events: (snapshot) =>
          possibleEvents(snapshot).filter((e) => e.type !== "STEER" && e.type !== "FOLLOW_UP"),
        serializeState: serialize,
        input: oneTurn,
        limit: 50_000,
        toState: (s) => s.matches("idle") && s.context.messages.length > 0,
      });
      expect(paths.length).toBeGreaterThan(10);
      console.log(`model-based: ${paths.length} simple paths`);
      for (const path of paths) {
        const snapshot = checkPath(
          path.steps.map((s) => s.event as AgentMachineEvent),
          oneTurn,
        );
        expect(snapshot.matches("idle")).toBe(true);
      }
    });
  },
);
