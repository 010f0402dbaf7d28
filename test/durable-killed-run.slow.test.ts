// A run Restate kills (its retry policy's `onMaxAttempts: "kill"`, or an operator's kill) runs none
// of the run's code, so the session's state keeps the record of a running run. Its status read
// through the client asks Restate about a run that reads "running", and reads a killed one as
// ended with an error; the next run goes ahead as after any other. What polls read (`updates()`,
// `follow()`, a durable handle, the session host over it) reads it as ended too, once its record
// has read the same for a few seconds, and whoever waited on the run sees its end, once.
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agentMachineProtocol, createSessionHost, serveNode } from "../http.js";
import { type AgentEvent, type AgentOptions, defineTool, scripted } from "../index.js";
import { createSessionClient, durableHandle, type SessionStatus } from "../restate.js";
import { eventually, useSessionsPerSession } from "./fixtures/durable-harness.js";
import { sseData } from "./helpers.js";

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

/** Kills invocation `runId` through the admin API, as `onMaxAttempts: "kill"` would. */
async function kill(runId: string): Promise<void> {
  const response = await fetch(new URL(`/invocations/${runId}/kill`, harness.restate.adminUrl), {
    method: "PATCH",
  });
  expect(response.ok).toBe(true);
}

/** A session whose run calls `stuck` (then answers "later" if it ever gets there). */
function stuckSession(name: string): string {
  const sessionId = `${name}-${Date.now()}`;
  agents.set(sessionId, {
    provider: scripted([{ toolCalls: [{ id: "c1", name: "stuck", arguments: {} }] }, { text: "later" }]),
    tools: [stuck],
  });
  return sessionId;
}

const KILLED = "The run was ended by Restate before it finished: killed";

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

  it("follow() and updates() read it as ended: a follower waiting for the run's end stops", async () => {
    const sessionId = stuckSession("killed-follow");
    const run = await harness.client.send(sessionId, "go");
    await eventually(
      async () => (await harness.client.status(sessionId)).turn >= 1 || undefined,
      "the run's first turn",
    );
    const statuses: SessionStatus[] = [];
    const followed = (async () => {
      for await (const update of harness.client.follow(sessionId, {
        intervalMs: 100,
        until: (status) => status.lastRun?.runId === run.invocationId,
      })) {
        if (update.type === "status") statuses.push(update.status);
      }
    })();
    await kill(run.invocationId);
    await expect(harness.client.result(run)).rejects.toThrow("killed");
    await followed;
    expect(statuses.at(-1)).toMatchObject({
      state: "idle",
      pendingApprovals: [],
      pendingToolCalls: [],
      lastRun: { runId: run.invocationId, reason: "error", errorMessage: KILLED },
    });

    // A fresh client's poll (its own cadence) comes to the same, and the run's events end there.
    const other = createSessionClient({ url: harness.restate.ingressUrl });
    const ended = await eventually(async () => {
      const answer = await other.updates(sessionId, { from: 0, events: { runId: run.invocationId } });
      return answer.status.state === "idle" ? answer : undefined;
    }, "the killed run read as ended by updates()");
    expect(ended.status.lastRun).toMatchObject({ reason: "error", errorMessage: KILLED });
    expect(ended.events).toMatchObject({ runId: run.invocationId, ended: true });
    expect(ended.events!.events.at(-1)!.event).toMatchObject({
      type: "agent_end",
      reason: "error",
      errorMessage: KILLED,
    });
    const seqs = ended.events!.events.map(({ seq }) => seq);
    expect(seqs).toEqual(seqs.map((_, i) => i));
  }, 60_000);

  it("a durable handle's run ends with the error: its events end, its status reads idle", async () => {
    const sessionId = stuckSession("killed-handle");
    const handle = durableHandle(harness.client, sessionId, {
      pollIntervalMs: 50,
      live: [harness.server.liveUrl!],
    });
    const { runId } = await handle.run({ role: "user", content: "go", timestamp: Date.now() });
    const events = lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    await eventually(async () => (await handle.status()).state === "running.executing", "the stuck call");
    await kill(runId);
    const seen = await events;
    const ends = seen.filter(({ event }) => event.type === "agent_end");
    expect(ends).toHaveLength(1);
    expect(seen.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "error", errorMessage: KILLED });
    expect(await handle.status()).toMatchObject({
      status: "idle",
      runId,
      pendingApprovals: [],
      pendingToolCalls: [],
    });
  }, 60_000);

  it("the session host serves it as ended: its stream closes with the error, its status reads idle", async () => {
    const sessionId = stuckSession("killed-host");
    const host = createSessionHost({
      durable: harness.client,
      protocols: [agentMachineProtocol()],
      authorize: "none-local-only",
    });
    const http = await serveNode(host.handle);
    try {
      const response = await fetch(`${http.url}/threads/${sessionId}/run`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: { text: "go" } }),
      });
      expect(response.status).toBe(200);
      const frames: { type: string; runId?: string; event?: AgentEvent; ending?: unknown }[] = [];
      let runId: string | undefined;
      let killed = false;
      for await (const parsed of sseData<(typeof frames)[number]>(response)) {
        frames.push(parsed);
        if (parsed.event?.type === "agent_start") runId = parsed.runId;
        if (parsed.event?.type === "tool_execution_start" && !killed) {
          killed = true;
          await kill(runId!);
        }
      }
      expect(killed).toBe(true);
      const ends = frames.filter((f) => f.event?.type === "agent_end");
      expect(ends).toHaveLength(1);
      expect(ends[0]!.event).toMatchObject({ reason: "error", errorMessage: KILLED });
      expect(frames.at(-1)!.type).toBe("close");
      const status = await fetch(`${http.url}/threads/${sessionId}`);
      expect(await status.json()).toMatchObject({
        status: "idle",
        runId,
        pendingApprovals: [],
        pendingToolCalls: [],
      });
    } finally {
      await host.close();
      await http.close();
    }
  }, 60_000);
});
