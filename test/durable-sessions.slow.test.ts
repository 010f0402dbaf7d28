import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentServer,
  type AgentServices,
  createAgentServices,
  createSessionClient,
  createWakeClient,
  registerDeployment,
  type RestateServer,
  type SessionCallError,
  type SessionClient,
  type SessionEvent,
  type SessionUpdate,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { type AgentEvent, type AgentMessage, createAgent, EventsUnavailableError } from "../index.js";
import { durableTestAgent } from "./fixtures/durable-agent.js";
import {
  eventsOf,
  eventually,
  fastRetries,
  journalSteps,
  quietLogger,
  shape,
  withoutClock,
} from "./fixtures/durable-harness.js";
import { expectEventInvariants, expectValidTranscript, trace } from "./helpers.js";

// Durable sessions against a real Restate server (one per file, started on 127.0.0.1 with random
// ports and its own data folder), served from this test process.

let restate: RestateServer;
let services: AgentServices;
let server: AgentServer;
let client: SessionClient;
const published: SessionEvent[] = [];

beforeAll(async () => {
  restate = await startRestateServer();
  // Sessions named "limited…" run with a time limit; "raced…" take every queued steer at a check;
  // "broken…" have options no agent can be made from.
  services = createAgentServices({
    agent: (id) =>
      id.startsWith("raced")
        ? { ...durableTestAgent(), steeringMode: "all", followUpMode: "all" }
        : id.startsWith("limited")
          ? { ...durableTestAgent(), limits: { maxDurationMs: 300 } }
          : id.startsWith("compacted")
            ? { ...durableTestAgent(), context: { maxContextTokens: 2_000, keepRecent: 2 } }
            : id.startsWith("broken")
              ? ({ ...durableTestAgent(), notAnOption: true } as never)
              : durableTestAgent(),
    retryPolicy: fastRetries,
  });
  services.events$.subscribe((event) => published.push(event));
  server = await serveAgents({ services, logger: quietLogger });
  await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
  client = createSessionClient({ url: restate.ingressUrl });
});

afterAll(async () => {
  await server?.close();
  await restate?.stop();
});

/** The error a rejected call throws. */
async function refusal(call: Promise<unknown>): Promise<SessionCallError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "the call should have been refused").toBeInstanceOf(Error);
  return error as SessionCallError;
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Resolves when this process's services publish an event of `sessionId` that matches. */
function published$(sessionId: string, match: (event: AgentEvent) => boolean): Promise<AgentEvent> {
  return eventually(() => eventsOf(published, sessionId).find(match), `an event of ${sessionId}`);
}

describe("durable sessions on Restate", () => {
  it("runs a prompt with tool calls to the same transcript and events as the same agent in process", async () => {
    const result = await client.prompt("same-as-local", "tools");

    const local = createAgent(durableTestAgent());
    const localEvents: AgentEvent[] = [];
    local.events$.subscribe((event) => localEvents.push(event));
    await local.prompt("tools");

    const transcript = await client.transcript("same-as-local");
    expect(withoutClock(transcript)).toEqual(withoutClock(local.messages));
    // Every message has an id; a durable run counts them under its invocation id, so a replay of
    // the run mints the same ones.
    expect(new Set(transcript.map((m) => m.id)).size).toBe(transcript.length);
    expect(transcript.every((m) => m.id?.startsWith(`${result.runId}-`))).toBe(true);
    expect(shape(transcript)).toEqual([
      "user tools",
      "assistant [t1,t2]",
      "toolResult t1: noted: one",
      "toolResult t2: noted: two",
      'assistant "Both noted."',
    ]);
    expectValidTranscript(transcript);
    expect(result).toMatchObject({ reason: "stop", messages: transcript });

    // The serving process's events$ saw the run as an in-process subscriber sees it (parallel calls
    // end in the order they finish, which a journal round trip may change).
    const durableEvents = eventsOf(published, "same-as-local");
    const inOrder = (events: AgentEvent[]) =>
      trace(events, { updates: true }).filter((t) => !t.startsWith("tool_execution_end"));
    const ends = (events: AgentEvent[]) =>
      trace(events)
        .filter((t) => t.startsWith("tool_execution_end"))
        .sort();
    expect(inOrder(durableEvents)).toEqual(inOrder(localEvents));
    expect(ends(durableEvents)).toEqual(ends(localEvents));
    expectEventInvariants(durableEvents);
    expect(
      published.filter((e) => e.sessionId === "same-as-local").every((e) => e.runId === result.runId),
    ).toBe(true);

    const status = await client.status("same-as-local");
    expect(status).toMatchObject({
      state: "idle",
      runId: result.runId,
      turn: 2,
      messageCount: 5,
      pendingApprovals: [],
      lastRun: { runId: result.runId, reason: "stop" },
    });
  });

  it("journals no step of its own for the run's start: its time comes with the first drain's answer", async () => {
    const before = Date.now();
    const result = await client.prompt("steps-only", "tools");
    const { started } = await journalSteps(restate, result.runId);
    expect([...started].sort()).toEqual([
      "model:1",
      "model:2",
      "permission:t1",
      "permission:t2",
      "tool:t1",
      "tool:t2",
    ]);
    // The prompt is stamped with that time: after it was sent, before the model answered it.
    const [prompt, answer] = await client.transcript("steps-only");
    expect(prompt!.timestamp).toBeGreaterThanOrEqual(before);
    expect(prompt!.timestamp).toBeLessThanOrEqual(answer!.timestamp);
  });

  it("takes a steer sent while a tool runs at the next check, and a follow-up when the run would stop", async () => {
    const run = await client.send("steered", "steer");
    await published$("steered", (e) => e.type === "tool_execution_start");
    expect(await client.steer("steered", "change of plan")).toEqual({ queued: 1 });
    expect(
      await client.followUp("steered", { role: "user", content: "one more thing", timestamp: 1 }),
    ).toEqual({
      queued: 1,
    });
    // Both were queued while the tool was still running.
    expect(eventsOf(published, "steered").some((e) => e.type === "tool_execution_end")).toBe(false);

    const result = await client.result(run);
    expect(result.reason).toBe("stop");
    const transcript = await client.transcript("steered");
    expect(shape(transcript)).toEqual([
      "user steer",
      "assistant [w1]",
      "toolResult w1: done waiting",
      "user change of plan",
      'assistant "answer 1"',
      "user one more thing",
      'assistant "answer 2"',
    ]);
    expectValidTranscript(transcript);

    // Steered between runs: the next run takes it with its prompt, into its first turn (as in process).
    expect(await client.steer("steered", "later")).toEqual({ queued: 1 });
    const next = await client.prompt("steered", "go on");
    expect(shape(next.messages)).toEqual(["user go on", "user later", 'assistant "answer 3"']);
  });

  it("takes a steer that returned at the very next check, never one later, and a follow-up in the same run, when they race the checks", async () => {
    // One timeline of this process: when each steer call returned, and each turn_end the serving
    // services published (a turn's steering check is decided right after its turn_end).
    const marks: ({ sent: string } | { turnEnd: number })[] = [];
    const sub = services.events$.subscribe(({ sessionId, event }) => {
      if (sessionId.startsWith("raced") && event.type === "turn_end") marks.push({ turnEnd: event.turn });
    });
    try {
      // Round 3 sends follow-ups only: no steer rings the doorbell for them.
      for (const round of [1, 2, 3]) {
        const sessionId = `raced-${round}`;
        marks.length = 0;
        const run = await client.send(sessionId, "race");
        const sent: string[] = [];
        // (After the run's first check, so the run's peek at its start cannot see them.)
        if (round === 3) await eventually(() => marks.length > 0, "the first turn's end");
        // Steers (and every third a follow-up) at jittered moments while the run's 16 short turns go
        // by, each sent after the last returned.
        for (let i = 0; i < 9; i++) {
          await new Promise((resolve) => setTimeout(resolve, (i * 5) % 17));
          const followUp = round === 3 || i % 3 === 2;
          const text = followUp ? `follow-up ${round}.${i}` : `steer ${round}.${i}`;
          await (followUp ? client.followUp(sessionId, text) : client.steer(sessionId, text));
          marks.push({ sent: text });
          sent.push(text);
        }
        const result = await client.result(run);
        expect(result.reason).toBe("stop");
        const transcript = await client.transcript(sessionId);
        expectValidTranscript(transcript);

        // The turn after whose check each steer appears in the transcript (0: before the first turn).
        const takenAfterTurn = new Map<string, number>();
        let turn = 0;
        for (const message of transcript) {
          if (message.role === "assistant") turn++;
          if (message.role === "user" && typeof message.content === "string" && message.content !== "race")
            takenAfterTurn.set(message.content, turn);
        }
        expect(marks.filter((m) => "turnEnd" in m)[0]).toEqual({ turnEnd: 1 });
        for (const text of sent) {
          const returnedAt = marks.findIndex((m) => "sent" in m && m.sent === text);
          const nextTurnEnd = marks.slice(returnedAt).find((m): m is { turnEnd: number } => "turnEnd" in m);
          // Returned after the run's last check: left for the next run.
          if (!nextTurnEnd) {
            expect(takenAfterTurn.has(text), `"${text}" returned after the last check`).toBe(false);
            continue;
          }
          // A follow-up is taken when the run would stop: in this run, since a check came after it.
          if (text.startsWith("follow-up")) {
            expect(
              takenAfterTurn.has(text),
              `"${text}" returned before turn ${nextTurnEnd.turnEnd} ended`,
            ).toBe(true);
            continue;
          }
          expect(
            takenAfterTurn.get(text),
            `"${text}" returned before turn ${nextTurnEnd.turnEnd} ended: taken at that turn's check`,
          ).toBeLessThanOrEqual(nextTurnEnd.turnEnd);
        }
      }
    } finally {
      sub.unsubscribe();
    }
  });

  it("waits for an approval keyed by tool call id and takes a denial from a client", async () => {
    const run = await client.send("denied", "approval");
    const status = await eventually(async () => {
      const s = await client.status("denied");
      return s.pendingApprovals.length > 0 && s;
    }, "the approval request");
    expect(status.pendingApprovals).toEqual([
      { toolCallId: "g1", toolName: "guarded", args: { action: "deploy" } },
    ]);
    expect(status.state).toBe("running");

    await client.deny("denied", "g1", "not on a Friday");
    const result = await client.result(run);
    expect(shape(result.messages)).toContain(
      "toolResult g1: The user denied this tool call: not on a Friday",
    );
    expect((await client.status("denied")).pendingApprovals).toEqual([]);
    // The decision is taken: a second one finds nothing to decide.
    const late = await refusal(client.approve("denied", "g1"));
    expect(late.status).toBe(404);
    expect(late.message).toMatch(/No pending approval for tool call "g1"/);
  });

  it("a decision is taken once: of an approve and a deny sent together, only the one that takes effect succeeds", async () => {
    for (const round of [1, 2, 3]) {
      const sessionId = `race-${round}`;
      const run = await client.send(sessionId, "approval");
      await eventually(
        async () => (await client.status(sessionId)).pendingApprovals.length > 0,
        "the approval request",
      );
      const [approved, denied] = await Promise.allSettled([
        client.approve(sessionId, "g1"),
        client.deny(sessionId, "g1", "raced"),
      ]);
      // Exactly one is answered with success, the other with a 404 saying it is decided.
      expect([approved.status, denied.status].filter((s) => s === "fulfilled")).toHaveLength(1);
      const loser = (approved.status === "rejected" ? approved : denied) as PromiseRejectedResult;
      expect((loser.reason as SessionCallError).status).toBe(404);
      const result = await client.result(run);
      const line = shape(result.messages).find((l) => l.startsWith("toolResult g1"));
      // What the winner was told is what happened.
      if (approved.status === "fulfilled") expect(line).toBe("toolResult g1: did deploy");
      else expect(line).toBe("toolResult g1: The user denied this tool call: raced");
    }
    // One after the other, before the run has taken the first: the second is refused too.
    const run = await client.send("race-seq", "approval");
    await eventually(
      async () => (await client.status("race-seq")).pendingApprovals.length > 0,
      "the request",
    );
    await client.approve("race-seq", "g1");
    const second = await refusal(client.deny("race-seq", "g1"));
    expect(second.status).toBe(404);
    expect(shape((await client.result(run)).messages)).toContain("toolResult g1: did deploy");
  });

  it("approves with edited arguments: refused ones leave the call waiting, accepted ones are what runs", async () => {
    const run = await client.send("edited", "approval");
    await eventually(
      async () => (await client.status("edited")).pendingApprovals.length > 0,
      "the approval request",
    );

    const refused = await refusal(client.approve("edited", "g1", { args: { action: 42 } }));
    expect(refused.status).toBe(400);
    expect(refused.message).toMatch(/fail the schema of tool guarded.*still waits for approval/s);
    expect((await client.status("edited")).pendingApprovals.map((p) => p.toolCallId)).toEqual(["g1"]);

    await client.approve("edited", "g1", { args: { action: "rollback" } });
    const result = await client.result(run);
    const ran = result.messages.find((m) => m.role === "toolResult");
    expect(ran).toMatchObject({ editedArgs: { action: "rollback" } });
    // The tool ran with the edited arguments; the model is told they were edited.
    expect(ran?.role === "toolResult" && ran.content.map((c) => (c.type === "text" ? c.text : ""))).toEqual([
      '[The user edited the arguments before approving; the call ran with: {"action":"rollback"}]',
      "did rollback",
    ]);
  });

  it("a forged resolution of the approval's awakeable with edited arguments the schema refuses runs nothing", async () => {
    const run = await client.send("forged", "approval");
    await eventually(
      async () => (await client.status("forged")).pendingApprovals.length > 0,
      "the approval request",
    );
    // The attacker reads the awakeable's id from the admin API, as anyone who reaches it can...
    const [row] = await restate.query<{ value_utf8: string }>(
      `SELECT value_utf8 FROM state WHERE service_name = '${services.names.session}' AND service_key = 'forged' AND key = 'approvals'`,
    );
    const awakeableId = (JSON.parse(row!.value_utf8) as Record<string, { awakeableId: string }>).g1!
      .awakeableId;
    // ...and resolves it through the ingress with arguments the tool's schema refuses.
    const forged = await fetch(new URL(`/restate/awakeables/${awakeableId}/resolve`, restate.ingressUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approved: true, args: { action: 42 } }),
    });
    expect(forged.ok).toBe(true);

    const result = await client.result(run);
    const answered = result.messages.find((m) => m.role === "toolResult");
    expect(answered).toMatchObject({ isError: true });
    expect(answered).not.toHaveProperty("editedArgs");
    const text =
      answered?.role === "toolResult" &&
      answered.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    expect(text).toMatch(
      /^The user denied this tool call: the edited arguments fail the schema of tool guarded/,
    );
    expect(shape(result.messages)).not.toContain("toolResult g1: did 42");
  });

  it("waits for a client-run call's result; the first answer is taken, a malformed one or a second refused", async () => {
    const run = await client.send("client-run", "client");
    const status = await eventually(async () => {
      const s = await client.status("client-run");
      return s.pendingToolCalls.length > 0 && s;
    }, "the client-run call");
    expect(status.pendingToolCalls).toEqual([
      { toolCallId: "p1", toolName: "pick", args: { options: ["red", "blue"] } },
    ]);
    expect(status).toMatchObject({ state: "running", pendingApprovals: [] });
    expect(eventsOf(published, "client-run").find((e) => e.type === "tool_result_requested")).toMatchObject({
      toolCallId: "p1",
      toolName: "pick",
      args: { options: ["red", "blue"] },
    });

    const malformed = await refusal(client.resolveToolCall("client-run", "p1", { content: "blue" } as never));
    expect(malformed.status).toBe(400);
    expect(malformed.message).toMatch(/must be text or a ToolResult.*still waits/s);
    expect((await refusal(client.resolveToolCall("client-run", "p9", "blue"))).status).toBe(404);
    expect((await client.status("client-run")).pendingToolCalls.map((p) => p.toolCallId)).toEqual(["p1"]);

    // Sent together: exactly one is answered with success, and it is what the model reads.
    const [resolved, rejected] = await Promise.allSettled([
      client.resolveToolCall("client-run", "p1", { content: [{ type: "text", text: "blue" }] }),
      client.rejectToolCall("client-run", "p1", "the user closed the page"),
    ]);
    expect([resolved.status, rejected.status].filter((s) => s === "fulfilled")).toHaveLength(1);
    const loser = (resolved.status === "rejected" ? resolved : rejected) as PromiseRejectedResult;
    expect((loser.reason as SessionCallError).status).toBe(404);
    expect((loser.reason as SessionCallError).message).toMatch(
      /No tool call "p1" waits for a client result in session "client-run"/,
    );

    const result = await client.result(run);
    expect(result.reason).toBe("stop");
    expectValidTranscript(result.messages);
    const answer = result.messages.find((m) => m.role === "toolResult");
    if (resolved.status === "fulfilled") {
      expect(answer).toMatchObject({
        toolCallId: "p1",
        isError: false,
        content: [{ type: "text", text: "blue" }],
      });
    } else {
      expect(answer).toMatchObject({
        toolCallId: "p1",
        isError: true,
        content: [{ type: "text", text: "the user closed the page" }],
      });
    }
    expect((await client.status("client-run")).pendingToolCalls).toEqual([]);
    expect((await refusal(client.resolveToolCall("client-run", "p1", "late"))).status).toBe(404);
  });

  it("answers a client-run call the client never answers when its tool's timeout ends; a late answer is refused", async () => {
    const result = await client.prompt("client-late", "client soon");
    expect(result.reason).toBe("stop");
    expect(shape(result.messages)).toEqual([
      "user client soon",
      "assistant [q1]",
      "toolResult q1: Tool pick_soon timed out after 300 ms waiting for the client's result",
      'assistant "moved on"',
    ]);
    expect(result.messages[2]).toMatchObject({ isError: true });
    const late = await refusal(client.resolveToolCall("client-late", "q1", "red"));
    expect(late.status).toBe(404);
    expect(late.message).toMatch(/No tool call "q1" waits for a client result/);
  });

  it("aborts a run waiting for a client's result: the call is answered, a later result refused", async () => {
    const run = await client.send("client-aborted", "client");
    await eventually(
      async () => (await client.status("client-aborted")).pendingToolCalls.length > 0,
      "the client-run call",
    );
    expect(await client.abort("client-aborted")).toBe(true);
    const result = await client.result(run);
    expect(result.reason).toBe("aborted");
    expectValidTranscript(result.messages);
    expect(result.messages.find((m) => m.role === "toolResult")).toMatchObject({
      toolCallId: "p1",
      isError: true,
    });
    expect((await client.status("client-aborted")).pendingToolCalls).toEqual([]);
    expect((await refusal(client.resolveToolCall("client-aborted", "p1", "red"))).status).toBe(404);
  });

  it("aborts a run mid-tool: the open call is answered, the run ends aborted, the session stays usable", async () => {
    const run = await client.send("aborted", "long");
    await published$("aborted", (e) => e.type === "tool_execution_start" && e.toolCallId === "l1");
    expect(await client.abort("aborted")).toBe(true);

    const result = await client.result(run);
    expect(result.reason).toBe("aborted");
    const transcript = await client.transcript("aborted");
    expectValidTranscript(transcript);
    expect(shape(transcript).slice(-2)).toEqual(["assistant [l1]", "toolResult l1: Tool slow aborted"]);
    expect(await client.status("aborted")).toMatchObject({ state: "idle", lastRun: { reason: "aborted" } });
    expect(await client.abort("aborted")).toBe(false);
  });

  it("aborts a run mid-stream and keeps the partial answer the journal recorded", async () => {
    const run = await client.send("aborted-stream", "slow stream");
    await published$("aborted-stream", (e) => e.type === "message_update" && e.kind === "text_delta");
    expect(await client.abort("aborted-stream")).toBe(true);

    const result = await client.result(run);
    expect(result.reason).toBe("aborted");
    const last = (await client.transcript("aborted-stream")).at(-1)!;
    expect(last).toMatchObject({ role: "assistant", stopReason: "aborted" });
    const text = last.role === "assistant" && last.content[0]?.type === "text" ? last.content[0].text : "";
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan("word ".repeat(60).length);
    expect("word ".repeat(60).startsWith(text)).toBe(true);
    // What the serving process announced is what was stored.
    const ended = eventsOf(published, "aborted-stream")
      .filter((e) => e.type === "message_end")
      .at(-1);
    expect(ended).toMatchObject({ message: last });
  });

  it("ends a run at maxDurationMs through a durable timer, with the notice and every call answered", async () => {
    const result = await client.prompt("limited", "long");
    expect(result.reason).toBe("limit");
    const transcript = await client.transcript("limited");
    expectValidTranscript(transcript);
    expect(shape(transcript)).toEqual([
      "user long",
      "assistant [l0]",
      "toolResult l0: Tool slow aborted",
      'assistant "[Agent stopped: Time limit rea"',
    ]);
  });

  it("journals a compaction and stores the compacted transcript, telling followers it was rewritten", async () => {
    const long = (label: string) => `${label} ${"lorem ipsum ".repeat(150)}`;
    const runIds: string[] = [];
    for (let run = 0; run < 5; run++)
      runIds.push((await client.prompt("compacted", long(`part ${run}`))).runId);
    const compactions = eventsOf(published, "compacted").filter((e) => e.type === "compaction");
    expect(compactions.length).toBeGreaterThan(0);
    // Each compaction was a journaled step of its run.
    const steps = await Promise.all(runIds.map((id) => journalSteps(restate, id)));
    const journaled = steps.flatMap((s) => [...s.completed].filter((name) => name.startsWith("compaction:")));
    expect(journaled).toHaveLength(compactions.length);

    const slice = await client.messages("compacted");
    expect(slice.generation).toBeGreaterThan(0);
    expect(slice.messages).toEqual(await client.transcript("compacted"));
    expect(slice.count).toBe(slice.messages.length);
    // Ten messages were written; the compaction kept fewer, and the first (the task) verbatim.
    expect(slice.count).toBeLessThan(10);
    expect(slice.messages[0]).toMatchObject({ role: "user", content: long("part 0") });
    expectValidTranscript(slice.messages);
  });

  it("journals no more for a long-lived session's later runs than for its second, and keeps its transcript exact", async () => {
    const commands = async (invocationId: string) => {
      const rows = await restate.query<{ entry_lite_json: string }>(
        `SELECT entry_lite_json FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`,
      );
      return rows.filter((row) => "Command" in (JSON.parse(row.entry_lite_json) as object)).length;
    };
    const counts: number[] = [];
    let before: AgentMessage[] = [];
    for (let run = 1; run <= 10; run++) {
      const result = await client.prompt("long-lived", "tools");
      expect(result.reason).toBe("stop");
      counts.push(await commands(result.runId));
      const transcript = await client.transcript("long-lived");
      // Every earlier message as it was, then this run's.
      expect(transcript.slice(0, before.length)).toEqual(before);
      expect(transcript.length).toBeGreaterThan(before.length + 1);
      expect(shape(transcript.slice(before.length, before.length + 1))).toEqual(["user tools"]);
      expect(result.messages).toEqual(transcript.slice(before.length));
      expectValidTranscript(transcript);
      expect((await client.messages("long-lived", before.length + 1)).messages).toEqual(
        transcript.slice(before.length + 1),
      );
      before = transcript;
    }
    expect(counts[1]).toBeGreaterThan(0);
    for (const count of counts.slice(2)) expect(count).toBeLessThanOrEqual(counts[1]!);
    // From the third run on every run does the same work (the script answers "tools" the same
    // way): the tenth journals what the third did, not one read more per run before it.
    expect(counts[9]).toBeLessThanOrEqual(counts[2]!);
  });

  it("lets a client in another process follow a run: its messages as they are stored, and its status", async () => {
    const run = await client.send("followed", "slow tool");
    const updates: SessionUpdate[] = [];
    for await (const update of client.follow("followed", {
      intervalMs: 50,
      until: (status) => status.lastRun?.runId === run.invocationId,
    })) {
      updates.push(update);
    }
    const messages = updates.flatMap((u) => (u.type === "message" ? [u.message] : []));
    expect(messages).toEqual(await client.transcript("followed"));
    expect(updates.flatMap((u) => (u.type === "message" ? [u.index] : []))).toEqual(
      messages.map((_, i) => i),
    );
    const states = updates.flatMap((u) => (u.type === "status" ? [u.status.state] : []));
    expect(states.at(-1)).toBe("idle");
    // The transcript was stored turn by turn: the follower saw messages before the run ended.
    const firstIdle = updates.findIndex((u) => u.type === "status" && u.status.state === "idle");
    expect(updates.slice(0, firstIdle).some((u) => u.type === "message")).toBe(true);
  });

  it("resumes a run's messages from a seq in another client, and says when the run is no longer kept", async () => {
    // Followed from the moment it is sent: the run (of a session that has never run) is waited for.
    const run = await client.send("resumed", "slow tool");
    const live: SessionUpdate[] = [];
    for await (const update of client.follow("resumed", { runId: run.invocationId, intervalMs: 50 }))
      live.push(update);
    const transcript = await client.transcript("resumed");
    const messages = live.flatMap((u) => (u.type === "message" ? [u] : []));
    expect(messages.map((u) => u.message)).toEqual(transcript);
    expect(messages.map((u) => [u.runId, u.seq])).toEqual(transcript.map((_, i) => [run.invocationId, i]));
    expect(live.at(-1)).toMatchObject({ type: "status", status: { state: "idle", runId: run.invocationId } });

    // A consumer that saw seq 0 to 2 resumes after them, from another client.
    const other = createSessionClient({ url: restate.ingressUrl });
    const resumed: SessionUpdate[] = [];
    for await (const update of other.follow("resumed", { runId: run.invocationId, since: 3 }))
      resumed.push(update);
    expect(resumed.flatMap((u) => (u.type === "message" ? [[u.seq, u.message]] : []))).toEqual(
      transcript.slice(3).map((m, i) => [3 + i, m]),
    );
    const ahead = await refusal(collect(other.follow("resumed", { runId: run.invocationId, since: 99 })));
    expect((ahead as SessionCallError).status).toBe(400);
    expect(ahead.message).toMatch(/seq 99 is not reached yet/);

    // Another run since: the first is no longer kept, and the error carries the transcript.
    const second = await client.prompt("resumed", "and now?");
    const gone = await refusal(collect(other.follow("resumed", { runId: run.invocationId, since: 3 })));
    expect(gone).toBeInstanceOf(EventsUnavailableError);
    expect(gone.message).toMatch(/not the current or last run.*resynchronise from the transcript/);
    expect((gone as unknown as EventsUnavailableError).messages).toEqual(await client.transcript("resumed"));
    // The second run's own numbering starts at its prompt.
    const fromSecond: SessionUpdate[] = [];
    for await (const update of other.follow("resumed", { runId: second.runId })) fromSecond.push(update);
    expect(fromSecond.flatMap((u) => (u.type === "message" ? [[u.seq, u.message.role]] : []))).toEqual([
      [0, "user"],
      [1, "assistant"],
    ]);
  });

  it("reads a session right after send(): its first run is there, never 'Unknown session'", async () => {
    for (let i = 0; i < 10; i++) {
      const handle = await client.send(`sent-${i}`, "hello");
      const status = await client.status(`sent-${i}`);
      expect(status.runId).toBe(handle.invocationId);
      expect((await client.result(handle)).reason).toBe("stop");
    }
    const handle = await client.send("sent-read", "hello");
    // Found, not 404: empty until the run stores its first turn, then starting with the prompt.
    const early = await client.transcript("sent-read");
    expect(early.slice(0, 1).map((m) => m.role)).toEqual(early.length ? ["user"] : []);
    await client.result(handle);

    // The same while this client's prompt() waits for its answer.
    const prompted = client.prompt("sent-prompted", "hello");
    const whilePrompted = await client.status("sent-prompted");
    expect(whilePrompted.runId).toBe((await prompted).runId);

    // A first run whose input is refused ends without a record: the session is still unknown.
    const refused = await client.send("sent-refused", { role: "user" } as never);
    expect((await refusal(client.result(refused))).status).toBe(400);
    const unknown = await refusal(client.status("sent-refused"));
    expect(unknown.status).toBe(404);
    expect(unknown.message).toMatch(/Unknown session "sent-refused"/);
  });

  it("serves session ids with slashes, unicode and 2 000 characters; refuses the ones no path can carry", async () => {
    for (const id of ["team/42/chat", "a b?c#d%2F", "ünï-ĉødé 🚀", "x".repeat(2_000)]) {
      const { reason } = await client.prompt(id, "hello");
      expect(reason, id.slice(0, 20)).toBe("stop");
      expect(shape(await client.transcript(id)), id.slice(0, 20)).toEqual([
        "user hello",
        'assistant "You said: hello"',
      ]);
      expect((await client.status(id)).sessionId).toBe(id);
    }
    // "", "." and ".." are path segments a URL cannot hold (".." would reach another path).
    for (const id of ["", ".", ".."]) {
      for (const call of [
        client.prompt(id, "hello"),
        client.status(id),
        client.steer(id, "x"),
        client.abort(id),
      ]) {
        const error = await refusal(call);
        expect(error.status, JSON.stringify(id)).toBe(400);
        expect(error.message).toMatch(/Invalid session id .*: Restate's ingress cannot address it/);
      }
    }
    const wakes = createWakeClient({ url: restate.ingressUrl });
    await expect(wakes.deliverEvent("..", { id: "e1", text: "hi" })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/Invalid session id "\.\."/),
    });
    await expect(wakes.list("")).rejects.toMatchObject({ status: 400 });
    expect(await wakes.list("team/42/chat")).toEqual([]);
  });

  it("a run whose agent cannot be created leaves the session as it was", async () => {
    const failed = await refusal(client.prompt("broken-1", "hello"));
    expect(failed.status).toBe(500);
    expect(failed.message).toMatch(/The agent of session "broken-1" could not be created: .*notAnOption/);
    const unknown = await refusal(client.status("broken-1"));
    expect(unknown.status).toBe(404);
    // Nor does the inbox take it for one (its first drain had said the session exists).
    const wakes = createWakeClient({ url: restate.ingressUrl });
    await expect(wakes.deliverEvent("broken-1", { id: "e1", text: "hello" })).rejects.toMatchObject({
      status: 404,
      message: expect.stringMatching(/No session "broken-1": the event was not delivered/),
    });
  });

  it("refuses bad input with a clear error and changes nothing", async () => {
    await client.prompt("kept", "hello");
    const before = await client.transcript("kept");
    const statusBefore = await client.status("kept");

    const unknown = await refusal(client.status("never-prompted"));
    expect(unknown.status).toBe(404);
    expect(unknown.message).toMatch(/Unknown session "never-prompted"/);
    expect((await refusal(client.transcript("never-prompted"))).status).toBe(404);

    const malformed = await refusal(client.prompt("kept", { role: "user" } as never));
    expect(malformed.status).toBe(400);
    expect(malformed.message).toMatch(/Invalid prompt: content must be text/);
    const forged = await refusal(client.prompt("kept", [{ role: "assistant", content: [] }] as never));
    expect(forged.message).toMatch(/role "assistant" cannot be sent/);
    expect((await refusal(client.prompt("kept", 42 as never))).status).toBe(400);
    expect((await refusal(client.prompt("never-prompted", "  "))).message).toMatch(/the text is empty/);
    // A user message with nothing in it is refused as blank text is, stored nowhere.
    expect(
      (await refusal(client.prompt("kept", { role: "user", content: "", timestamp: 1 }))).message,
    ).toMatch(/Invalid prompt: the text is empty/);
    expect((await refusal(client.prompt("kept", { role: "user", content: [], timestamp: 1 }))).status).toBe(
      400,
    );
    expect((await refusal(client.steer("kept", { role: "user", content: " ", timestamp: 1 }))).status).toBe(
      400,
    );
    // A refused first prompt does not create the session.
    expect((await refusal(client.status("never-prompted"))).status).toBe(404);

    const badSteer = await refusal(client.steer("kept", { role: "assistant" } as never));
    expect(badSteer.status).toBe(400);
    expect(badSteer.message).toMatch(/Invalid steer message/);

    const unknownCall = await refusal(client.approve("kept", "no-such-call"));
    expect(unknownCall.status).toBe(404);
    expect(unknownCall.message).toMatch(/No pending approval for tool call "no-such-call" in session "kept"/);
    expect((await refusal(client.deny("never-prompted", "x"))).status).toBe(404);

    expect(await client.transcript("kept")).toEqual(before);
    expect(await client.status("kept")).toEqual(statusBefore);
  });

  // Last: it restarts the server every other test uses.
  it("resumes a session stored by earlier versions (one key per message, the count apart)", async () => {
    const source = await client.prompt("format-source", "tools");
    const old = source.messages;
    expect(old).toHaveLength(5);
    // What format 1 stored after that run: the run record without a count, "count", one "m/<i>" per message.
    const json = (value: unknown) => [...Buffer.from(JSON.stringify(value))];
    const earlier = {
      run: json({ state: "idle", runId: "inv_earlier", turn: 2, startedAt: 1, firstIndex: 0, generation: 0 }),
      count: json(old.length),
      ...Object.fromEntries(old.map((message, i) => [`m/${i}`, json(message)])),
    };
    const response = await fetch(`${restate.adminUrl}/services/${services.names.session}/state`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ object_key: "format-1", new_state: earlier }),
    });
    expect(response.ok, await response.text()).toBe(true);
    await eventually(async () => (await client.status("format-1")).messageCount === 5, "the state applied");
    expect(await client.transcript("format-1")).toEqual(old);
    expect((await client.messages("format-1", 3)).messages).toEqual(old.slice(3));

    const second = await client.prompt("format-1", "and now?");
    expect(second.reason).toBe("stop");
    const after = await client.transcript("format-1");
    expect(after.slice(0, 5)).toEqual(old);
    expect(shape(after.slice(5))).toEqual(["user and now?", 'assistant "Both noted."']);
    expectValidTranscript(after);
    expect(await client.status("format-1")).toMatchObject({ state: "idle", messageCount: 7 });
    // Reads from an old key into the new batch, and from inside the new batch.
    expect(await client.messages("format-1", 4)).toMatchObject({
      count: 7,
      from: 4,
      messages: after.slice(4),
    });
    expect((await client.messages("format-1", 6)).messages).toEqual(after.slice(6));
    // The count now lives in the run record; the old key is gone.
    const keys = await restate.query<{ key: string }>(
      `SELECT key FROM state WHERE service_name = '${services.names.session}' AND service_key = 'format-1'`,
    );
    expect(keys.map((k) => k.key)).not.toContain("count");

    const third = await client.prompt("format-1", "and then?");
    expect(third.reason).toBe("stop");
    const last = await client.transcript("format-1");
    expect(last.slice(0, 7)).toEqual(after);
    expect(shape(last.slice(7))).toEqual(["user and then?", 'assistant "Both noted."']);
  });

  it("keeps a session's transcript when the Restate server restarts between two runs", async () => {
    const first = await client.prompt("restarted", "tools");
    expect(first.reason).toBe("stop");
    const before = await client.transcript("restarted");

    await restate.restart();
    client = createSessionClient({ url: restate.ingressUrl });

    expect(await client.transcript("restarted")).toEqual(before);
    const second = await client.prompt("restarted", "and now?");
    expect(second.reason).toBe("stop");
    const after = await client.transcript("restarted");
    expect(after.slice(0, before.length)).toEqual(before);
    expect(shape(after.slice(before.length))).toEqual(["user and now?", 'assistant "Both noted."']);
    expect(await client.status("restarted")).toMatchObject({ state: "idle", messageCount: 7 });
  });
});
