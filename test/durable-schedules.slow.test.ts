import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSessionClient,
  createWakeClient,
  registerDeployment,
  type RestateServer,
  SessionCallError,
  type SessionClient,
  startRestateServer,
} from "../restate.js";
import type { AgentMessage } from "../index.js";
import { eventually, type ServiceProcess, startServiceProcess } from "./fixtures/durable-harness.js";
import { expectValidTranscript } from "./helpers.js";

// Schedules and events of durable sessions on a real Restate server: a schedule is delayed calls
// kept in Restate, so it fires exactly once per slot while its service process is SIGKILLed as
// slots fire, and its missed-run policy decides what runs when the server itself was down across
// slots. The service is a process of its own (fixtures/durable-wake-service.ts) with a 400 ms
// missed-after bound, so every slot takes seconds, not minutes.

const SERVICE = fileURLToPath(new URL("./fixtures/durable-wake-service.ts", import.meta.url));
const MISSED_AFTER_MS = 400;

type Service = ServiceProcess;

let restate: RestateServer;
let dir: string;
const running = new Set<Service>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-machine-wakes-"));
  restate = await startRestateServer();
});

afterEach(async () => {
  for (const service of running) await service.kill();
});

afterAll(async () => {
  await restate?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function startService(logFile: string, port = 0): Promise<Service> {
  const started = await startServiceProcess(SERVICE, [String(port), logFile, String(MISSED_AFTER_MS)]);
  const service: Service = {
    ...started,
    async kill() {
      running.delete(service);
      await started.kill();
    },
  };
  running.add(service);
  return service;
}

const clients = () => ({
  sessions: createSessionClient({ url: restate.ingressUrl }),
  wakes: createWakeClient({ url: restate.ingressUrl }),
});

/** The slots whose message reached the transcript, in transcript order (`wake_<schedule>_<slot>`). */
function slotsIn(messages: readonly AgentMessage[], scheduleId: string): number[] {
  const prefix = `wake_${scheduleId}_`;
  return messages.flatMap((message) =>
    message.role === "user" && message.id?.startsWith(prefix)
      ? [Number(message.id.slice(prefix.length))]
      : [],
  );
}

async function transcriptOf(sessions: SessionClient, sessionId: string): Promise<AgentMessage[]> {
  try {
    return await sessions.transcript(sessionId);
  } catch (error) {
    if (error instanceof SessionCallError && error.status === 404) return [];
    throw error;
  }
}

const sleepUntil = (time: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, time - Date.now())));

async function modelCalls(logFile: string): Promise<{ pid: number; ids: string[]; at: number }[]> {
  const text = await readFile(logFile, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { pid: number; ids: string[]; at: number });
}

describe("durable schedules and events on Restate", () => {
  it("a slot fires exactly once while the service is SIGKILLed as slots fire", async () => {
    const logFile = join(dir, "kill.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });
    const { sessions, wakes } = clients();

    const start = Date.now() + 1_500;
    const schedule = await wakes.schedule("kill", {
      every: 1_000,
      startAt: start,
      message: "Check the queue",
      missed: "each",
    });
    expect(schedule).toMatchObject({ agentId: "kill", nextAt: start, runs: 0, paused: false });

    // Killed as the first slot's run answers (the slot has fired, its run is mid-model-call).
    await eventually(async () => (await modelCalls(logFile)).length > 0, "the first slot's run");
    await first.kill();
    await startService(logFile, first.port);
    // Killed again at the very time of the third slot.
    await sleepUntil(start + 2_000);
    const [second] = [...running];
    await second!.kill();
    await startService(logFile, first.port);

    await eventually(
      async () => slotsIn(await transcriptOf(sessions, "kill"), schedule.id).length >= 4,
      "four slots delivered",
    );
    const [listed] = (await wakes.pause("kill", schedule.id)) ? await wakes.list("kill") : [];
    // The runs of the slots fired before the pause have stored their messages.
    const transcript = await eventually(async () => {
      const messages = await transcriptOf(sessions, "kill");
      return slotsIn(messages, schedule.id).length >= listed!.runs && messages;
    }, "every slot fired in the transcript");
    expect(await wakes.cancel("kill", schedule.id)).toBe(true);
    expect(await wakes.cancel("kill", schedule.id)).toBe(false);

    const slots = slotsIn(transcript, schedule.id);
    // Every slot once, in order, none skipped: the ones a kill interrupted were not run twice.
    expect(slots).toEqual(slots.map((_, i) => start + i * 1_000));
    const woken = transcript.filter((m) => m.role === "user");
    expect(woken.every((m) => m.role === "user" && m.source === "schedule")).toBe(true);
    expectValidTranscript(transcript);
    // The model calls came from three processes: the killed ones did answer slots.
    const calls = await modelCalls(logFile);
    expect(new Set(calls.map((call) => call.pid)).size).toBeGreaterThanOrEqual(2);
    // A slot's delayed call comes a little early (SLOT_LEAD_MS), but its run never starts before it.
    for (const slot of slots) {
      const first = calls.find((call) => call.ids.includes(`wake_${schedule.id}_${slot}`));
      expect(first?.at, `the run of slot ${slot}`).toBeGreaterThanOrEqual(slot);
    }
  });

  it("the server down across slots: once runs one for all, skip none, each every missed slot", async () => {
    const logFile = join(dir, "missed.log");
    const service = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: service.url, force: true });
    const { wakes } = clients();

    const start = Date.now() + 1_500;
    const made: Record<string, string> = {};
    for (const missed of ["once", "skip", "each"] as const) {
      const schedule = await wakes.schedule(`missed-${missed}`, {
        every: 1_000,
        startAt: start,
        message: `Tick (${missed})`,
        missed,
      });
      made[missed] = schedule.id;
    }
    // Down across slots: those between its stop and its restart (less the 400 ms bound) were missed.
    await restate.shutdown();
    const down = Date.now();
    await sleepUntil(start + 3_000);
    // Restate may fire an overdue call as soon as it boots, before restart() returns: a slot counts
    // as missed only if it was late by the bound when the restart began, the earliest it could fire.
    const restarting = Date.now();
    await restate.restart();
    const up = Date.now();
    const missedSlots = [0, 1, 2, 3, 4, 5]
      .map((i) => start + i * 1_000)
      .filter((slot) => slot > down && slot + MISSED_AFTER_MS < restarting);
    expect(missedSlots.length, "slots missed while the server was down").toBeGreaterThanOrEqual(2);
    const after = clients();

    const slotsOf = async (missed: string) =>
      slotsIn(await transcriptOf(after.sessions, `missed-${missed}`), made[missed]!);
    // Each goes on firing on time after the restart.
    for (const missed of ["once", "skip", "each"]) {
      await eventually(
        async () => (await slotsOf(missed)).some((slot) => slot > up + 300),
        `${missed}: a slot after the restart`,
      );
    }
    const report: Record<string, { slots: number[]; runs: number; skipped: number; nextAt: number }> = {};
    for (const missed of ["once", "skip", "each"] as const) {
      await after.wakes.pause(`missed-${missed}`, made[missed]!);
      const [listed] = await after.wakes.list(`missed-${missed}`);
      // The runs of the slots fired before the pause have stored their messages.
      const slots = await eventually(async () => {
        const delivered = await slotsOf(missed);
        return delivered.length === listed!.runs && delivered;
      }, `${missed}: the runs of the slots fired`);
      report[missed] = { slots, runs: listed!.runs, skipped: listed!.skipped, nextAt: listed!.nextAt! };
    }
    for (const [missed, { slots, skipped, nextAt }] of Object.entries(report)) {
      // Each slot before the next one due was run once, in order, or counted as skipped (a slot
      // after the restart may be skipped too, when it fires later than the bound on a loaded machine).
      expect(new Set(slots).size, missed).toBe(slots.length);
      expect(slots, missed).toEqual([...slots].sort((a, b) => a - b));
      expect(
        slots.every((slot) => slot < nextAt),
        missed,
      ).toBe(true);
      expect(skipped, missed).toBe((nextAt - start) / 1_000 - slots.length);
    }
    // each: every missed slot, in order, once
    expect(report.each!.slots).toEqual(report.each!.slots.map((_, i) => start + i * 1_000));
    // once: one run for all the missed slots (the latest due when Restate came back), none of the others
    expect(report.once!.slots.filter((slot) => missedSlots.slice(0, -1).includes(slot))).toEqual([]);
    expect(report.once!.skipped).toBeGreaterThanOrEqual(missedSlots.length - 1);
    // skip: none of them
    expect(report.skip!.slots.filter((slot) => missedSlots.includes(slot))).toEqual([]);
    expect(report.skip!.skipped).toBeGreaterThanOrEqual(missedSlots.length);
  });

  it("an event and a late result wake an idle session once per id; bad schedules, events and results are refused", async () => {
    const logFile = join(dir, "event.log");
    const service = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: service.url, force: true });
    const { sessions, wakes } = clients();

    await expect(wakes.deliverEvent("never-ran", { id: "e1", text: "hello" })).rejects.toMatchObject({
      status: 404,
      message: expect.stringMatching(/No session "never-ran": the event was not delivered/),
    });
    await sessions.prompt("evented", "Hello");
    expect(await wakes.deliverEvent("evented", { id: "gh_81", text: "CI failed on main" })).toBe("delivered");
    expect(await wakes.deliverEvent("evented", { id: "gh_81", text: "CI failed on main" })).toBe("duplicate");
    const transcript = await eventually(async () => {
      const messages = await sessions.transcript("evented");
      return messages.at(-1)?.role === "assistant" && messages.length === 4 && messages;
    }, "the event's run");
    expect(transcript[2]).toMatchObject({
      role: "user",
      id: "event_gh_81",
      source: "event",
      content: "CI failed on main",
    });
    expectValidTranscript(transcript);

    // A late result: the handle a tool answered with is the message's id.
    const handle = "later_render_42";
    expect(await wakes.deliverLaterResult("evented", { handle, text: "intro.mp4, 12 s" })).toBe("delivered");
    expect(await wakes.deliverLaterResult("evented", { handle, text: "intro.mp4, 12 s" })).toBe("duplicate");
    const woken = await eventually(async () => {
      const messages = await sessions.transcript("evented");
      return messages.length === 6 && messages.at(-1)?.role === "assistant" && messages;
    }, "the late result's run");
    expect(woken[4]).toMatchObject({
      role: "user",
      id: handle,
      source: "laterResult",
      content: "intro.mp4, 12 s",
    });

    const refusals: [() => Promise<unknown>, RegExp][] = [
      [
        () => wakes.schedule("evented", { cron: "0 0 30 2 *", message: "never" }),
        /cron "0 0 30 2 \*" never fires/,
      ],
      [() => wakes.schedule("evented", { at: Date.now() - 1_000, message: "late" }), /is in the past/],
      [() => wakes.schedule("evented", { every: 10, message: "busy" }), /every must be/],
      [() => wakes.schedule("evented", { every: 60_000, message: " " }), /needs the message/],
      [() => wakes.deliverEvent("evented", { id: "", text: "x" }), /needs the sender's id/],
      [
        () => wakes.deliverEvent("evented", { id: "e2", text: "x", queue: "later" as "steer" }),
        /queue must be/,
      ],
      [() => wakes.pause("evented", "sch_none"), /No schedule "sch_none"/],
      [() => wakes.deliverLaterResult("evented", { handle: "", text: "x" }), /needs the tool's handle/],
    ];
    for (const [call, message] of refusals) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, String(message)).toBeInstanceOf(SessionCallError);
      expect((error as SessionCallError).message).toMatch(message);
    }
    expect(await wakes.list("evented")).toEqual([]);
  });
});
