// A run Restate kills (its retry policy's `onMaxAttempts: "kill"`, or an operator's kill) runs none
// of the run's code, so the session's state keeps the record of a running run. Its status read
// through the client asks Restate about a run that reads "running", and reads a killed one as
// ended with an error; the next run goes ahead as after any other.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentOptions, defineTool, scripted } from "../index.js";
import { eventually, useSessionsPerSession } from "./fixtures/durable-harness.js";

const agents = new Map<string, AgentOptions>();
const harness = useSessionsPerSession(agents);

/** A tool that answers only when its call is aborted: the run stays in its call until killed. */
const stuck = defineTool({
  name: "stuck",
  description: "Never answers",
  parameters: z.object({}),
  execute: (_args, { signal }) =>
    new Promise<string>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
});

describe("durable sessions: a run Restate kills", () => {
  it("reads as ended with an error once Restate has killed it; the next run goes ahead", async () => {
    const sessionId = `killed-${Date.now()}`;
    agents.set(sessionId, {
      provider: scripted([{ toolCalls: [{ id: "c1", name: "stuck", arguments: {} }] }, { text: "later" }]),
      tools: [stuck],
    });
    const run = await harness.client.send(sessionId, "go");
    await eventually(
      async () => (await harness.client.status(sessionId)).turn >= 1 || undefined,
      "the run's first turn",
    );
    // Still going: Restate says so, and the status reads running.
    expect(await harness.client.status(sessionId)).toMatchObject({
      state: "running",
      runId: run.invocationId,
    });

    // What `onMaxAttempts: "kill"` does when the attempts run out: none of the run's code runs.
    const kill = await fetch(new URL(`/invocations/${run.invocationId}/kill`, harness.restate.adminUrl), {
      method: "PATCH",
    });
    expect(kill.ok).toBe(true);
    await expect(harness.client.result(run)).rejects.toThrow("killed");

    expect(await harness.client.status(sessionId)).toMatchObject({
      state: "idle",
      runId: run.invocationId,
      pendingApprovals: [],
      pendingToolCalls: [],
      lastRun: {
        runId: run.invocationId,
        reason: "error",
        errorMessage: "The run was ended by Restate before it finished: killed",
      },
    });

    agents.set(sessionId, { provider: scripted([{ text: "fine now" }]) });
    const next = await harness.client.send(sessionId, "again");
    expect((await harness.client.result(next)).reason).toBe("stop");
    expect(await harness.client.status(sessionId)).toMatchObject({
      state: "idle",
      runId: next.invocationId,
      lastRun: { runId: next.invocationId, reason: "stop" },
    });
  }, 60_000);
});
