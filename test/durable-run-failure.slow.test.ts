// A durable run that fails with a terminal error (a real Restate server) ends as a failed run: the
// session's status reads idle with the error as its last run's, the run's events end with an
// agent_end of reason "error", and the next run starts as after any other.
import { TerminalError } from "@restatedev/restate-sdk";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { type AgentOptions, scripted } from "../index.js";
import { durableHandle } from "../restate.js";
import { useSessionsPerSession } from "./fixtures/durable-harness.js";

const agents = new Map<string, AgentOptions>();
const harness = useSessionsPerSession(agents);

/**
 * An agent whose input filter (user code the run calls outside any step) hands back a verdict that
 * throws `failure` when read, on its first run: a failure the agent cannot turn into a run outcome
 * (a filter that throws refuses the prompt; this one fails while its answer is read), so the run's
 * invocation fails. Later runs pass. (An inspection observer that throws no longer fails a run: its
 * error is contained, test/inspect-observer-errors.test.ts.)
 */
function failingOnce(sessionId: string, failure: Error) {
  let failed = false;
  agents.set(sessionId, {
    provider: scripted([{ text: "Fine now." }]),
    inputFilters: [
      () => {
        if (failed) return { pass: true };
        failed = true;
        return {
          get reject(): string {
            throw failure;
          },
        };
      },
    ],
  });
}

describe("durable sessions: a run that fails with a terminal error", () => {
  it("ends as failed: status idle with the error's message, the next run goes ahead", async () => {
    const sessionId = `run-failure-${Date.now()}`;
    failingOnce(sessionId, new TerminalError("the filter is down"));
    const run = await harness.client.send(sessionId, "hello");
    await expect(harness.client.result(run)).rejects.toThrow("the filter is down");
    const status = await harness.client.status(sessionId);
    expect(status).toMatchObject({
      state: "idle",
      runId: run.invocationId,
      pendingApprovals: [],
      lastRun: { runId: run.invocationId, reason: "error", errorMessage: "the filter is down" },
    });
    const next = await harness.client.send(sessionId, "again");
    expect((await harness.client.result(next)).reason).toBe("stop");
    expect(await harness.client.status(sessionId)).toMatchObject({
      state: "idle",
      lastRun: { reason: "stop" },
    });
  });

  it("a durable handle sees the run end with reason error (any error: wrapped as the run's failure)", async () => {
    const sessionId = `run-failure-events-${Date.now()}`;
    failingOnce(sessionId, new Error("a bug"));
    const handle = durableHandle(harness.client, sessionId, {
      pollIntervalMs: 50,
      live: [harness.server.liveUrl!],
    });
    const { runId } = await handle.run({ role: "user", content: "hello", timestamp: Date.now() });
    const events = await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    expect(events.at(-1)!.event).toMatchObject({
      type: "agent_end",
      reason: "error",
      errorMessage: `The run of session "${sessionId}" failed: a bug`,
    });
    expect(await handle.status()).toMatchObject({ status: "idle", runId });
    // As Restate recorded them (what a reader that was not following gets).
    const { events: recorded } = await harness.client.updates(sessionId, {
      from: 0,
      events: { runId, since: 0 },
    });
    expect(recorded).toMatchObject({ ended: true });
    expect(recorded!.events.map(({ event }) => event.type)).toEqual(["agent_start", "agent_end"]);
  });
});
