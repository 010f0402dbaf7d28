// A long answer streamed token by token through a durable session (a real Restate server): what the
// live channel sends grows with the answer's length, not its square, and a durable handle still
// passes on each partial message as the agent published it.
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import type { AgentEvent, AgentOptions } from "../index.js";
import { scripted } from "../index.js";
import { durableHandle } from "../restate.js";
import { useSessionsPerSession } from "./fixtures/durable-harness.js";

const agents = new Map<string, AgentOptions>();
const harness = useSessionsPerSession(agents);
let sessions = 0;

/** A session whose agent answers `text` in deltas of `chunkSize` characters. */
function answering(text: string, chunkSize: number): string {
  const sessionId = `long-answer-${Date.now()}-${sessions++}`;
  agents.set(sessionId, { provider: scripted([{ text, chunkSize }]) });
  return sessionId;
}

/** Runs the session's agent through a durable handle on the live channel; its events and the run's id. */
async function runFollowed(sessionId: string) {
  const handle = durableHandle(harness.client, sessionId, {
    pollIntervalMs: 10_000,
    live: [harness.server.liveUrl!],
  });
  const { runId } = await handle.run({ role: "user", content: "Talk", timestamp: Date.now() });
  const events = (await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()))).map((e) => e.event);
  return { runId, events };
}

/** The bytes the live channel sends a follower that reads the run from its start. */
async function liveBytes(sessionId: string, runId: string): Promise<number> {
  const response = await fetch(
    `${harness.server.liveUrl}/runs/${encodeURIComponent(sessionId)}/${encodeURIComponent(runId)}?since=0`,
  );
  expect(response.status).toBe(200);
  return (await response.text()).length;
}

const textUpdates = (events: AgentEvent[]) =>
  events.filter(
    (e): e is Extract<AgentEvent, { type: "message_update" }> =>
      e.type === "message_update" && e.kind === "text_delta",
  );

describe("a long answer on the live channel", () => {
  it("costs bytes in proportion to its length, and each partial reaches the handle as published", async () => {
    const text = "word ".repeat(2_400); // 12,000 characters in 3,000 deltas of 4
    const sessionId = answering(text, 4);
    const { runId, events } = await runFollowed(sessionId);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });

    const updates = textUpdates(events);
    expect(updates.length).toBeGreaterThan(2_000);
    // Each update's message is the answer as it was at that delta: its text is the deltas so far.
    let sofar = "";
    for (const update of updates) {
      sofar += update.delta;
      expect(update.message.content).toEqual([{ type: "text", text: sofar }]);
    }
    expect(sofar).toBe(text);

    // Every partial sent whole would be ~3,000 × 6,000 characters (18 MB); one delta a frame is < 1 MB.
    const bytes = await liveBytes(sessionId, runId);
    expect(bytes).toBeLessThan(1_500_000);
  });
});
