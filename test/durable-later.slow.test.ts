// Tools that answer later and the agent's schedule tool inside durable sessions (issue 40), on a
// real Restate server: a `defineLaterTool` call is answered with a handle kept in the session's
// SessionWakes object; its work runs as an invocation of its own and its result wakes the session
// once; its timeout is a delayed call; a cancel stops the work and makes a late result a no-op; a
// service SIGKILLed mid-run and mid-work acts once. The service is a process of its own
// (fixtures/durable-later-service.ts), so the test can kill it.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentMessage } from "../index.js";
import {
  createSessionClient,
  createWakeClient,
  registerDeployment,
  type RestateServer,
  startRestateServer,
} from "../restate.js";
import { eventually, type ServiceProcess, startServiceProcess } from "./fixtures/durable-harness.js";
import { expectValidTranscript } from "./helpers.js";

const SERVICE = fileURLToPath(new URL("./fixtures/durable-later-service.ts", import.meta.url));

let restate: RestateServer;
let dir: string;
let service: ServiceProcess;
const started: ServiceProcess[] = [];
let sessions: ReturnType<typeof createSessionClient>;
let wakes: ReturnType<typeof createWakeClient>;
let logFile: string;

async function start(port = 0): Promise<ServiceProcess> {
  const process = await startServiceProcess(SERVICE, [String(port), logFile]);
  started.push(process);
  return process;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-machine-later-"));
  logFile = join(dir, "work.log");
  restate = await startRestateServer();
  service = await start();
  await registerDeployment({ adminUrl: restate.adminUrl, uri: service.url, force: true });
  sessions = createSessionClient({ url: restate.ingressUrl });
  wakes = createWakeClient({ url: restate.ingressUrl });
});

afterEach(async () => {
  // A test that killed the service leaves one running on the same port.
  for (const process of started.splice(0, started.length - 1)) await process.kill();
});

afterAll(async () => {
  for (const process of started) await process.kill();
  await restate?.stop();
  await rm(dir, { recursive: true, force: true });
});

let count = 0;
const newSession = (prefix: string) => `${prefix}-${Date.now()}-${count++}`;

interface WorkEvent {
  pid: number;
  handle: string;
  event: "start" | "done" | "aborted";
  idempotencyKey?: string;
}
async function workLog(handle: string): Promise<WorkEvent[]> {
  const text = await readFile(logFile, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as WorkEvent)
    .filter((entry) => entry.handle === handle);
}

/** The handle the session's (only) later call was answered with, from its transcript. */
function handleIn(messages: readonly AgentMessage[]): string {
  const result = messages.find((m) => m.role === "toolResult");
  const text = result?.role === "toolResult" ? (result.content[0] as { text: string }).text : "";
  const handle = /\(handle (later_[\w-]+)\)/.exec(text)?.[1];
  if (!handle) throw new Error(`no handle in ${JSON.stringify(messages)}`);
  return handle;
}

/** Waits for the message whose id is `handle` and the answer after it. */
async function wokenBy(sessionId: string, handle: string): Promise<AgentMessage[]> {
  return eventually(async () => {
    const messages = await sessions.transcript(sessionId);
    const at = messages.findIndex((m) => m.id === handle);
    return at >= 0 && messages[at + 1]?.role === "assistant" && messages;
  }, `the message of ${handle}`);
}

describe("defineLaterTool in a durable session", () => {
  it("answers the call with a handle at once; the work's result wakes the session once", async () => {
    const id = newSession("result");
    const run = await sessions.prompt(id, "render intro 600");
    expect(run.reason).toBe("stop");
    const handle = handleIn(await sessions.transcript(id));
    const transcript = await wokenBy(id, handle);
    const woken = transcript.filter((m) => m.id === handle);
    expect(woken).toHaveLength(1);
    expect(woken[0]).toMatchObject({ role: "user", source: "laterResult" });
    expect(woken[0]!.content).toMatch(
      /^The result of render \(handle later_[\w-]+, started .*\):\n\nintro\.mp4, 600 ms$/,
    );
    expectValidTranscript(transcript);
    // The work ran once, keyed by its handle; a result sent again is a no-op.
    expect((await workLog(handle)).filter((e) => e.event === "start")).toMatchObject([
      { idempotencyKey: handle },
    ]);
    expect(await wakes.deliverLaterResult(id, { handle, text: "again" })).toBe("duplicate");
    expect(await wakes.laterHandles(id)).toEqual([]);
  });

  it("times out: the session is told, the work is stopped, a late result is a no-op", async () => {
    const id = newSession("timeout");
    await sessions.prompt(id, "brief outro");
    const handle = handleIn(await sessions.transcript(id));
    const transcript = await wokenBy(id, handle);
    expect(transcript.find((m) => m.id === handle)?.content).toBe(
      `render_brief (handle ${handle}) timed out: no result within 1 s. Its work was stopped; no result will come.`,
    );
    await eventually(
      async () => (await workLog(handle)).some((e) => e.event === "aborted"),
      "the work stopped",
    );
    expect(await wakes.deliverLaterResult(id, { handle, text: "outro.mp4" })).toBe("timedOut");
    expect((await sessions.transcript(id)).filter((m) => m.id === handle)).toHaveLength(1);
  });

  it("cancels: the work stops, the notice waits for the next turn, a late result is a no-op", async () => {
    const id = newSession("cancel");
    await sessions.prompt(id, "render long 60000");
    const handle = handleIn(await sessions.transcript(id));
    const [pending] = await eventually(async () => {
      const handles = await wakes.laterHandles(id);
      return handles.length === 1 && handles;
    }, "the pending handle");
    expect(pending).toMatchObject({ id: handle, toolName: "render", args: { scene: "long", ms: 60000 } });
    await eventually(async () => (await workLog(handle)).length > 0, "the work to start");
    expect(await wakes.cancelLater(id, handle, "the user closed the ticket")).toBe(true);
    expect(await wakes.cancelLater(id, handle)).toBe(false);
    await eventually(
      async () => (await workLog(handle)).some((e) => e.event === "aborted"),
      "the work stopped",
    );
    expect(await wakes.deliverLaterResult(id, { handle, text: "long.mp4" })).toBe("cancelled");
    // No run started for the notice: the session's next turn reads it.
    const before = await sessions.transcript(id);
    expect((await sessions.status(id)).state).toBe("idle");
    expect(before.some((m) => m.id === handle)).toBe(false);
    await sessions.prompt(id, "hello");
    const after = await sessions.transcript(id);
    expect(after.find((m) => m.id === handle)).toMatchObject({
      role: "user",
      source: "laterResult",
      content: `render (handle ${handle}) was cancelled: the user closed the ticket. No result will come.`,
    });
    expect(await wakes.laterHandles(id)).toEqual([]);
  });

  it("a result from outside, for work that handed its job on: delivered once", async () => {
    const id = newSession("outside");
    await sessions.prompt(id, "outside teaser");
    const handle = handleIn(await sessions.transcript(id));
    await eventually(async () => (await wakes.laterHandles(id)).length === 1, "the pending handle");
    expect(await wakes.deliverLaterResult(id, { handle, text: "the farm failed", isError: true })).toBe(
      "delivered",
    );
    expect(await wakes.deliverLaterResult(id, { handle, text: "teaser.mp4" })).toBe("duplicate");
    const transcript = await wokenBy(id, handle);
    expect(transcript.find((m) => m.id === handle)?.content).toMatch(
      /^render \(handle later_[\w-]+, started .*\) failed:\n\nthe farm failed$/,
    );
  });

  it("the service SIGKILLed mid-run and mid-work: one handle, the work run again with it, one message", async () => {
    const id = newSession("crash");
    const sent = await sessions.send(id, "render crash 1500 crash");
    // The call was answered and the work started; the run is answering the call's result.
    const [pending] = await eventually(async () => {
      const handles = await wakes.laterHandles(id);
      return handles.length === 1 && handles;
    }, "the pending handle");
    const handle = pending!.id;
    await eventually(async () => (await workLog(handle)).length > 0, "the work to start");
    await service.kill();
    service = await start(service.port);
    await sessions.result(sent);
    const transcript = await wokenBy(id, handle);
    // The run resumed from its journal: the call has the handle it had, and no second one was made.
    expect(handleIn(transcript)).toBe(handle);
    expect(transcript.filter((m) => m.role === "toolResult")).toHaveLength(1);
    expect(transcript.filter((m) => m.id === handle)).toHaveLength(1);
    expect(transcript.find((m) => m.id === handle)?.content).toMatch(/crash\.mp4, 1500 ms$/);
    const log = await workLog(handle);
    const starts = log.filter((e) => e.event === "start");
    expect(new Set(starts.map((e) => e.pid)).size).toBe(2);
    expect(starts.every((e) => e.idempotencyKey === handle)).toBe(true);
    expect(log.filter((e) => e.event === "done").map((e) => e.pid)).toEqual([service.pid]);
    expectValidTranscript(transcript);
  });
});

describe("defineLaterTool inside a durable session's sub-agent", () => {
  /** The handle the sub-agent's call was answered with, from the session's pending handles. */
  const pendingHandle = async (id: string) => {
    const [pending] = await eventually(async () => {
      const handles = await wakes.laterHandles(id);
      return handles.length === 1 && handles;
    }, "the pending handle");
    return pending!;
  };

  it("answers the sub-agent's call with a handle kept in SessionWakes; the result wakes the session once", async () => {
    const id = newSession("sub-result");
    const run = await sessions.prompt(id, "delegate clip intro 600");
    expect(run.reason).toBe("stop");
    const pending = await pendingHandle(id);
    expect(pending).toMatchObject({ toolName: "clip", args: { scene: "intro", ms: 600 } });
    // The parent's model read the sub-agent's answer, after the sub-agent read the handle.
    expect(pending.toolCallId).toMatch(/^call_\w+\/call_\w+$/);
    const transcript = await wokenBy(id, pending.id);
    const woken = transcript.filter((m) => m.id === pending.id);
    expect(woken).toHaveLength(1);
    expect(woken[0]).toMatchObject({ role: "user", source: "laterResult" });
    expect(woken[0]!.content).toMatch(
      /^The result of clip \(handle later_[\w-]+, started .*\):\n\nclip of intro\.mp4, 600 ms$/,
    );
    expectValidTranscript(transcript);
    expect((await workLog(pending.id)).filter((e) => e.event === "start")).toMatchObject([
      { idempotencyKey: pending.id },
    ]);
    expect(await wakes.laterHandles(id)).toEqual([]);
  });

  it("a sub-agent's handle times out: the session is told once, the work is stopped", async () => {
    const id = newSession("sub-timeout");
    await sessions.prompt(id, "delegate brief outro");
    const pending = await pendingHandle(id);
    expect(pending.toolName).toBe("render_brief");
    const transcript = await wokenBy(id, pending.id);
    expect(transcript.filter((m) => m.id === pending.id).map((m) => m.content)).toEqual([
      `render_brief (handle ${pending.id}) timed out: no result within 1 s. Its work was stopped; no result will come.`,
    ]);
    await eventually(
      async () => (await workLog(pending.id)).some((e) => e.event === "aborted"),
      "the work stopped",
    );
    expect(await wakes.deliverLaterResult(id, { handle: pending.id, text: "outro.mp4" })).toBe("timedOut");
    expectValidTranscript(transcript);
  });

  it("a sub-agent's handle is cancelled: its work stops, a late result is a no-op", async () => {
    const id = newSession("sub-cancel");
    await sessions.prompt(id, "delegate clip long 60000");
    const pending = await pendingHandle(id);
    await eventually(async () => (await workLog(pending.id)).length > 0, "the work to start");
    expect(await wakes.cancelLater(id, pending.id, "not needed")).toBe(true);
    await eventually(
      async () => (await workLog(pending.id)).some((e) => e.event === "aborted"),
      "the work stopped",
    );
    expect(await wakes.deliverLaterResult(id, { handle: pending.id, text: "long.mp4" })).toBe("cancelled");
  });

  it("the service SIGKILLed mid-run and mid-work: one handle, the work run again with it, one message", async () => {
    const id = newSession("sub-crash");
    const sent = await sessions.send(id, "delegate clip crash 1500 crash");
    const pending = await pendingHandle(id);
    await eventually(async () => (await workLog(pending.id)).length > 0, "the work to start");
    await service.kill();
    service = await start(service.port);
    await sessions.result(sent);
    const transcript = await wokenBy(id, pending.id);
    expect(transcript.filter((m) => m.id === pending.id)).toHaveLength(1);
    expect(transcript.find((m) => m.id === pending.id)?.content).toMatch(/clip of crash\.mp4, 1500 ms$/);
    const log = await workLog(pending.id);
    const starts = log.filter((e) => e.event === "start");
    expect(new Set(starts.map((e) => e.pid)).size).toBe(2);
    expect(starts.every((e) => e.idempotencyKey === pending.id)).toBe(true);
    expect(log.filter((e) => e.event === "done").map((e) => e.pid)).toEqual([service.pid]);
    // No second handle was made by the replay, and none is left.
    expect(await wakes.laterHandles(id)).toEqual([]);
    expectValidTranscript(transcript);
  });
});

describe("the schedule tool in a durable session", () => {
  const toolResults = (messages: readonly AgentMessage[]) =>
    messages.flatMap((m) =>
      m.role === "toolResult" ? [{ text: (m.content[0] as { text: string }).text, isError: m.isError }] : [],
    );

  it("creates, lists and cancels the session's wake-ups in its SessionWakes object, at most maxSchedules", async () => {
    const id = newSession("remind");
    await sessions.prompt(id, "remind 5");
    const [made] = await wakes.list(id);
    expect(made).toMatchObject({
      agentId: id,
      createdBy: "agent",
      message: "Reminder 5",
      when: { at: made!.nextAt },
    });
    expect(made!.nextAt! - Date.now()).toBeGreaterThan(4 * 60_000);
    // What the model read is the schedule that was made, to the millisecond.
    expect(toolResults(await sessions.transcript(id)).at(-1)).toEqual({
      text: `Scheduled: ${made!.id}: once, next ${new Date(made!.nextAt!).toISOString()}: "Reminder 5"`,
      isError: false,
    });
    await sessions.prompt(id, "remind 10");
    await sessions.prompt(id, "remind 15");
    expect(toolResults(await sessions.transcript(id)).at(-1)).toEqual({
      text: "you have 2 wake-ups scheduled, the most allowed: cancel one first",
      isError: true,
    });
    await sessions.prompt(id, "list");
    expect(
      toolResults(await sessions.transcript(id))
        .at(-1)!
        .text.split("\n"),
    ).toHaveLength(2);
    await sessions.prompt(id, `cancel ${made!.id}`);
    expect(toolResults(await sessions.transcript(id)).at(-1)).toEqual({
      text: `Cancelled ${made!.id}.`,
      isError: false,
    });
    await sessions.prompt(id, "cancel sch_none");
    expect(toolResults(await sessions.transcript(id)).at(-1)).toEqual({
      text: 'no wake-up "sch_none" of yours',
      isError: true,
    });
    expect((await wakes.list(id)).map((s) => s.message)).toEqual(["Reminder 10"]);
  });

  it('an injected agent neither lists nor cancels the app\'s schedule: the answer of an unknown id; manage: "all" may', async () => {
    const id = newSession("remind-app");
    const report = await wakes.schedule(id, { cron: "0 9 * * *", message: "Daily report" });
    // The app's schedule does not count against maxSchedules (2): the agent still makes two.
    await sessions.prompt(id, "remind 5");
    await sessions.prompt(id, "remind 10");
    await sessions.prompt(id, "list");
    const listed = toolResults(await sessions.transcript(id)).at(-1)!;
    expect(listed.text.split("\n")).toHaveLength(2);
    expect(listed.text).not.toContain(report.id);
    await sessions.prompt(id, `cancel ${report.id}`);
    await sessions.prompt(id, "cancel sch_none");
    const [cancelApp, cancelUnknown] = toolResults(await sessions.transcript(id)).slice(-2);
    // No oracle: cancelling the app's schedule reads exactly as cancelling one that never was.
    expect(cancelApp).toEqual({ text: `no wake-up "${report.id}" of yours`, isError: true });
    expect(cancelUnknown).toEqual({ text: 'no wake-up "sch_none" of yours', isError: true });
    expect((await wakes.list(id)).map((s) => s.id)).toContain(report.id);

    // The tool the app made with manage: "all" lists the app's schedule (marked) and cancels it.
    await sessions.prompt(id, "listall");
    const all = toolResults(await sessions.transcript(id))
      .at(-1)!
      .text.split("\n");
    expect(all).toHaveLength(3);
    expect(all).toContain(
      `${report.id}: cron "0 9 * * *", next ${new Date(report.nextAt!).toISOString()} (made by the app): "Daily report"`,
    );
    await sessions.prompt(id, `cancelall ${report.id}`);
    expect(toolResults(await sessions.transcript(id)).at(-1)).toEqual({
      text: `Cancelled ${report.id}.`,
      isError: false,
    });
    expect((await wakes.list(id)).map((s) => s.createdBy)).toEqual(["agent", "agent"]);
    expectValidTranscript(await sessions.transcript(id));
  });

  it("two calls of one turn at maxSchedules - 1: exactly one is made, the other is an error the model reads", async () => {
    const id = newSession("remind-race");
    await sessions.prompt(id, "remind 5");
    await sessions.prompt(id, "remind2 10");
    const made = await wakes.list(id);
    expect(made.filter((s) => s.createdBy === "agent")).toHaveLength(2);
    const results = toolResults(await sessions.transcript(id)).slice(1);
    expect(results).toHaveLength(2);
    expect(results.filter((r) => !r.isError)).toHaveLength(1);
    expect(results.filter((r) => r.isError)).toEqual([
      { text: "you have 2 wake-ups scheduled, the most allowed: cancel one first", isError: true },
    ]);
    // What the model read of the one made is the schedule that was made.
    const scheduled = results.find((r) => !r.isError)!.text;
    expect(made.some((s) => scheduled.startsWith(`Scheduled: ${s.id}:`))).toBe(true);
    expectValidTranscript(await sessions.transcript(id));
  });

  it("a run SIGKILLed after its schedule call replays it: one schedule", async () => {
    const id = newSession("remind-crash");
    const sent = await sessions.send(id, "remind 30 crash");
    // The schedule is made; the run is answering the call's result (about half a second).
    await eventually(async () => (await wakes.list(id)).length === 1, "the schedule");
    await service.kill();
    service = await start(service.port);
    const run = await sessions.result(sent);
    expect(run.reason).toBe("stop");
    expect(await wakes.list(id)).toHaveLength(1);
    const transcript = await sessions.transcript(id);
    expect(toolResults(transcript)).toHaveLength(1);
    expectValidTranscript(transcript);
  });
});
