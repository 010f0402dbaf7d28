// When a session client asks Restate about a run that reads "running" (durable/run-fates.ts): a
// poll (`updates()`) asks only once the run's record has read the same for QUIET_MS, then less and
// less often, so a healthy run costs no extra request while it changes and a handful during a long
// quiet call; a run found killed is remembered and read as ended with no further question. Against
// a stand-in for Restate's ingress on 127.0.0.1, with the clock set by the test.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { endedEvents } from "../durable/killed-runs.js";
import { createRunFates, MAX_QUIET_MS, QUIET_MS } from "../durable/run-fates.js";
import { createSessionClient, type SessionStatus } from "../restate.js";

const running = (turn: number, messageCount = 2): SessionStatus => ({
  sessionId: "s",
  state: "running",
  runId: "inv_1",
  turn,
  messageCount,
  generation: 0,
  pendingApprovals: [],
  pendingToolCalls: [],
});

describe("the cadence of questions about a running record", () => {
  it("asks nothing while the record changes, then after QUIET_MS unchanged, then at doubling pauses", () => {
    const fates = createRunFates();
    let now = 1_000_000;
    // A busy run: its record changes every poll for ten minutes.
    for (let poll = 0; poll < 1_200; poll++, now += 500) {
      expect(fates.due("s", running(poll), now)).toBe(false);
    }
    // Then a long tool call: the record reads the same from `quietFrom` on.
    const quietFrom = now;
    const asked: number[] = [];
    for (; now < quietFrom + 200_000; now += 500) if (fates.due("s", running(1_200), now)) asked.push(now);
    expect(asked.map((at) => at - quietFrom)).toEqual([
      QUIET_MS,
      3 * QUIET_MS,
      7 * QUIET_MS,
      7 * QUIET_MS + MAX_QUIET_MS,
      7 * QUIET_MS + 2 * MAX_QUIET_MS,
      7 * QUIET_MS + 3 * MAX_QUIET_MS,
      7 * QUIET_MS + 4 * MAX_QUIET_MS,
      7 * QUIET_MS + 5 * MAX_QUIET_MS,
    ]);
    // A change starts the wait again; a record not running is forgotten.
    expect(fates.due("s", running(1_201), now)).toBe(false);
    expect(fates.due("s", running(1_201), now + QUIET_MS - 1)).toBe(false);
    expect(fates.due("s", { ...running(1_201), state: "idle" }, now + QUIET_MS)).toBe(false);
    expect(fates.due("s", running(1_201), now + QUIET_MS)).toBe(false);
    expect(fates.due("s", running(1_201), now + 2 * QUIET_MS)).toBe(true);
  });

  it("keeps each session's record apart, and remembers the runs found killed", () => {
    const fates = createRunFates({ quietMs: 100 });
    expect(fates.due("a", running(1), 0)).toBe(false);
    expect(fates.due("b", running(1), 50)).toBe(false);
    expect(fates.due("a", running(1), 100)).toBe(true);
    expect(fates.due("b", running(1), 100)).toBe(false);
    expect(fates.due("b", running(1), 150)).toBe(true);
    expect(fates.killed("inv_1")).toBeUndefined();
    fates.noteKilled("inv_1", "killed");
    expect(fates.killed("inv_1")).toBe("killed");
  });
});

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
  vi.useRealTimers();
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(1_000_000);
});

/** An ingress answering `updates` and `status` with `record()`, an invocation's output with `output()`. */
async function ingress(
  record: () => SessionStatus,
  output: () => { status: number; body: unknown },
): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const path = request.url ?? "";
      paths.push(path);
      const answer = path.startsWith("/restate/invocation/")
        ? output()
        : path.endsWith("/status")
          ? { status: 200, body: record() }
          : { status: 200, body: { status: record(), from: 2, messages: [] } };
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, paths };
}

const questions = (paths: string[]) => paths.filter((path) => path.startsWith("/restate/invocation/"));

describe("a session client's polls of a running run", () => {
  it("cost no question while the record changes, a few during a long quiet call", async () => {
    let turn = 1;
    const { url, paths } = await ingress(
      () => running(turn),
      () => ({ status: 470, body: { message: "not ready" } }),
    );
    const client = createSessionClient({ url });
    // A minute of a busy run, a poll every 500 ms: every poll finds the record changed.
    for (let poll = 0; poll < 120; poll++) {
      turn++;
      expect((await client.updates("s", { from: 2 })).status.state).toBe("running");
      vi.setSystemTime(Date.now() + 500);
    }
    expect(questions(paths)).toEqual([]);
    // Ten minutes of one tool call, a poll every 2 s (follow()'s slowest by default): the record
    // reads the same; the run still goes on.
    for (let poll = 0; poll < 300; poll++) {
      expect((await client.updates("s", { from: 2 })).status.state).toBe("running");
      vi.setSystemTime(Date.now() + 2_000);
    }
    expect(questions(paths).length).toBeGreaterThan(0);
    expect(questions(paths).length).toBeLessThanOrEqual(1 + 600_000 / MAX_QUIET_MS);
    expect(paths.length - questions(paths).length).toBe(420);
  });

  it("reads a killed run as ended after QUIET_MS of the same record, then without asking again", async () => {
    const { url, paths } = await ingress(
      () => running(3),
      // What Restate answers for a killed invocation's output.
      () => ({ status: 409, body: { code: 409, message: "killed", source: "invocation" } }),
    );
    const client = createSessionClient({ url });
    const read = () => client.updates("s", { from: 2, events: { runId: "inv_1", since: 0 } });
    expect((await read()).status.state).toBe("running");
    vi.setSystemTime(Date.now() + QUIET_MS - 1);
    expect((await read()).status.state).toBe("running");
    expect(questions(paths)).toEqual([]);
    vi.setSystemTime(Date.now() + 1);
    const ended = await read();
    expect(ended.status).toMatchObject({
      state: "idle",
      lastRun: {
        runId: "inv_1",
        reason: "error",
        errorMessage: "The run was ended by Restate before it finished: killed",
      },
    });
    expect(questions(paths)).toEqual(["/restate/invocation/inv_1/output"]);
    // Known now: every later read (status included) reads it ended, with no question.
    expect((await read()).status.state).toBe("idle");
    expect((await client.status("s")).state).toBe("idle");
    expect(questions(paths)).toHaveLength(1);
  });

  it("takes no other failure for a kill: a gateway's 5xx, the ingress's own refusal", async () => {
    const answers = [
      { status: 503, body: { message: "upstream unavailable" } },
      { status: 400, body: { code: 400, message: "bad invocation id", source: "ingress" } },
      { status: 500, body: "not json" },
    ];
    let asked = 0;
    const { url, paths } = await ingress(
      () => running(3),
      () => answers[asked++ % answers.length]!,
    );
    const client = createSessionClient({ url });
    for (let poll = 0; poll < 60; poll++) {
      expect((await client.updates("s", { from: 2 })).status.state).toBe("running");
      expect((await client.status("s")).state).toBe("running");
      vi.setSystemTime(Date.now() + 2_000);
    }
    expect(questions(paths).length).toBeGreaterThan(answers.length);
  });
});

describe("a killed run's recorded events", () => {
  const KILLED = "The run was ended by Restate before it finished: killed";
  const start = { seq: 0, event: { type: "agent_start" as const } };

  it("end as a failed run's: an agent_end of reason error after the last recorded, once per seq", () => {
    const recorded = { runId: "inv_1", events: [start], next: 1, ended: false };
    const ended = endedEvents(recorded, 0, "killed");
    expect(ended).toMatchObject({ runId: "inv_1", next: 2, ended: true });
    expect(ended.events).toEqual([
      start,
      {
        seq: 1,
        event: {
          type: "agent_end",
          reason: "error",
          messages: [],
          usage: expect.anything(),
          errorMessage: KILLED,
        },
      },
    ]);
    // A reader that has every event up to the end asks from past it: nothing again.
    expect(endedEvents({ ...recorded, events: [] }, 2, "killed").events).toEqual([]);
    expect(endedEvents({ ...recorded, ended: true }, 0, "killed")).toEqual({ ...recorded, ended: true });
  });

  it("begin with the agent_start of a run killed before it recorded one", () => {
    const ended = endedEvents({ runId: "inv_1", events: [], next: 0, ended: false }, 0, "killed");
    expect(ended.events.map(({ seq, event }) => [seq, event.type])).toEqual([
      [0, "agent_start"],
      [1, "agent_end"],
    ]);
    expect(ended.next).toBe(2);
  });
});
