import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage } from "../index.js";
import { newRun } from "../rules/agent.logic.js";
import { initialContext } from "../machines/agent/context.js";
import { agentGuards } from "../machines/agent/guards.js";

// The agent machine's guards by name, called as XState calls them: no actor, no transition.

const assistant = (content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"]) =>
  ({
    role: "assistant",
    content,
    provider: "test",
    model: "test",
    usage: newRun().usage,
    stopReason,
    timestamp: 0,
  }) satisfies AssistantMessage;
const withCall = (stopReason: AssistantMessage["stopReason"]) =>
  assistant([{ type: "toolCall", id: "c1", name: "t", arguments: {} }], stopReason);
const done = (message: AssistantMessage) => ({ type: "STREAM_DONE" as const, message, started: true });
const note: AgentMessage = { role: "user", content: "a loop notice", timestamp: 0 };

describe("agent machine guards", () => {
  it("callsNotToRun: the calls of an aborted or failed message are answered, not run", () => {
    const context = initialContext({});
    expect(agentGuards.callsNotToRun({ context }, done(withCall("aborted")))).toBe(true);
    expect(agentGuards.callsNotToRun({ context }, done(withCall("error")))).toBe(true);
    expect(agentGuards.callsNotToRun({ context }, done(withCall("toolUse")))).toBe(false);
    // Once a call started eagerly, the execution machine answers them instead.
    const spawned = { ...context, run: { ...context.run, executionSpawned: true } };
    expect(agentGuards.callsNotToRun({ context: spawned }, done(withCall("aborted")))).toBe(false);
  });

  it("nextTurnStreams: only a turn with calls, nothing queued, no limit met, skips the turn gate", () => {
    const context = initialContext({});
    const afterCalls = { ...context, run: { ...context.run, turnMessage: withCall("toolUse") } };
    expect(agentGuards.nextTurnStreams({ context: afterCalls })).toBe(true);
    expect(agentGuards.nextTurnStreams({ context })).toBe(false);
    expect(agentGuards.nextTurnStreams({ context: { ...afterCalls, pending: [note] } })).toBe(false);
    const atLimit = { ...afterCalls, limits: { maxTurns: 1 }, run: { ...afterCalls.run, turn: 1 } };
    expect(agentGuards.nextTurnStreams({ context: atLimit })).toBe(false);
    expect(agentGuards.limitReached({ context: atLimit })).toBe(true);
  });

  it("overflowRetryable: a context overflow is retried a bounded number of times", () => {
    const context = initialContext({});
    const overflow = { ...done(assistant([], "error")), errorKind: "context_overflow" as const };
    expect(agentGuards.overflowRetryable({ context }, overflow)).toBe(true);
    const retried = { ...context, run: { ...context.run, overflowRetries: 3 } };
    expect(agentGuards.overflowRetryable({ context: retried }, overflow)).toBe(false);
    expect(agentGuards.overflowRetryable({ context }, done(assistant([], "error")))).toBe(false);
  });
});
