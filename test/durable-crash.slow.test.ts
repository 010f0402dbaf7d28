import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastValueFrom, toArray } from "rxjs";
import {
  createSessionClient,
  durableHandle,
  registerDeployment,
  type RestateServer,
  type SessionCallError,
  type SessionClient,
  startRestateServer,
} from "../restate.js";
import { type ExecutionRecord, readExecutions } from "./fixtures/durable-agent.js";
import { eventually, invocationStatus, journalSteps, shape } from "./fixtures/durable-harness.js";
import { type Balancer, startBalancer } from "./fixtures/h2-balancer.js";
import { expectValidTranscript } from "./helpers.js";

// Durable sessions whose service processes die: each service is a process of its own
// (fixtures/durable-service.ts) that the test SIGKILLs and starts again, on the same address, as a
// supervisor would. Executions are counted from the log file every process appends to.

const SERVICE = fileURLToPath(new URL("./fixtures/durable-service.ts", import.meta.url));

interface Service {
  port: number;
  pid: number;
  /** The port of its live channel. */
  livePort: number;
  url: string;
  process: ChildProcess;
  kill(): Promise<void>;
}

let restate: RestateServer;
let client: SessionClient;
let dir: string;
const running = new Set<Service>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-machine-durable-"));
  restate = await startRestateServer();
  client = createSessionClient({ url: restate.ingressUrl });
});

afterEach(async () => {
  for (const service of running) await service.kill();
});

afterAll(async () => {
  await restate?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Starts a service process (on `port`, or a free one) and waits for it to serve. */
async function startService(logFile: string, port = 0, livePort = 0): Promise<Service> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", SERVICE, String(port), logFile, String(livePort)],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = await new Promise<{ port: number; pid: number; livePort: number }>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\d+) (\d+) (\d+)/.exec(out);
      if (match) resolve({ port: Number(match[1]), pid: Number(match[2]), livePort: Number(match[3]) });
    });
    child.once("exit", (code) => reject(new Error(`the service process exited (${code}) before serving`)));
  });
  const service: Service = {
    ...ready,
    url: `http://127.0.0.1:${ready.port}`,
    process: child,
    async kill() {
      running.delete(service);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
  running.add(service);
  return service;
}

const toolRuns = (log: ExecutionRecord[], toolCallId: string) =>
  log.filter((r) => r.kind === "tool" && r.phase === "start" && r.toolCallId === toolCallId) as Extract<
    ExecutionRecord,
    { kind: "tool" }
  >[];
/** The error a rejected call throws. */
async function refusal(call: Promise<unknown>): Promise<SessionCallError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "the call should have been refused").toBeInstanceOf(Error);
  return error as SessionCallError;
}

const modelCalls = (log: ExecutionRecord[], scenario: string, step: number) =>
  log.filter((r) => r.kind === "model" && r.scenario === scenario && r.step === step);

describe("durable sessions when service processes die", () => {
  it("SIGKILL mid-tool: a restarted service resumes the run; finished calls do not run again", async () => {
    const logFile = join(dir, "mid-tool.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url });

    const run = await client.send("mid-tool", "slow tool");
    // The slow call runs; the call beside it has finished and its result is journaled.
    await eventually(async () => {
      const { completed } = await journalSteps(restate, run.invocationId);
      return completed.has("tool:b2") && toolRuns(await readExecutions(logFile), "b1").length === 1;
    }, "the slow call running beside a journaled one");
    expect((await journalSteps(restate, run.invocationId)).completed.has("tool:b1")).toBe(false);
    await first.kill();

    await startService(logFile, first.port);
    const result = await client.result(run);
    expect(result.reason).toBe("stop");

    const log = await readExecutions(logFile);
    expect(toolRuns(log, "a1")).toHaveLength(1);
    expect(toolRuns(log, "b2")).toHaveLength(1);
    // The interrupted call ran again, in the new process, with the same idempotency key.
    const slow = toolRuns(log, "b1");
    expect(slow.map((r) => r.key)).toEqual(["b1", "b1"]);
    expect(slow[0]!.pid).toBe(first.pid);
    expect(slow[1]!.pid).not.toBe(first.pid);
    // Each model call ran once: the answers before the crash came from the journal.
    for (const step of [0, 1, 2])
      expect(modelCalls(log, "slow tool", step), `model step ${step}`).toHaveLength(1);

    const transcript = await client.transcript("mid-tool");
    expectValidTranscript(transcript);
    expect(shape(transcript)).toEqual([
      "user slow tool",
      "assistant [a1]",
      "toolResult a1: noted: first",
      "assistant [b1,b2]",
      "toolResult b1: done slow",
      "toolResult b2: noted: beside",
      'assistant "All done."',
    ]);
  });

  it("SIGKILL after a fallback chain's second model answered: the replay asks neither model again", async () => {
    const logFile = join(dir, "failover.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });

    const run = await client.send("failover", "failover");
    // The first model failed mid-stream, the second answered with a slow call, which now runs.
    await eventually(
      async () => toolRuns(await readExecutions(logFile), "f1").length === 1,
      "the slow call the second model asked for",
    );
    await first.kill();

    await startService(logFile, first.port);
    const result = await client.result(run);
    expect(result.reason).toBe("stop");

    const log = await readExecutions(logFile);
    // The first model call was asked of both models once, in the killed process, and never again.
    const step0 = modelCalls(log, "failover", 0) as Extract<ExecutionRecord, { kind: "model" }>[];
    expect(step0.map((r) => [r.model, r.pid])).toEqual([
      ["scripted", first.pid],
      ["backup", first.pid],
    ]);
    const transcript = await client.transcript("failover");
    expectValidTranscript(transcript);
    const answers = transcript.filter((m) => m.role === "assistant");
    expect(answers.map((m) => (m as { model?: string }).model)).toEqual(["backup", "backup"]);
    expect(shape(transcript)).toEqual([
      "user failover",
      "assistant [f1]",
      "toolResult f1: done after failover",
      'assistant "Failed over."',
    ]);
  });

  it("SIGKILL mid-stream: the interrupted model call streams again; nothing before it runs again", async () => {
    const logFile = join(dir, "mid-stream.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });

    const run = await client.send("mid-stream", "slow stream");
    // A follower on the live channel of the serving process (the restarted one serves on the same port).
    const handle = durableHandle(client, "mid-stream", {
      pollIntervalMs: 50,
      live: [`http://127.0.0.1:${first.livePort}`],
    });
    await eventually(async () => (await handle.status()).runId === run.invocationId, "the run to start");
    const followed = lastValueFrom(handle.eventsSince(run.invocationId, 0).pipe(toArray()));
    await eventually(async () => {
      const { started, completed } = await journalSteps(restate, run.invocationId);
      return started.includes("model:2") && !completed.has("model:2");
    }, "the second model call streaming");
    await first.kill();

    await startService(logFile, first.port, first.livePort);
    const result = await client.result(run);
    expect(result.reason).toBe("stop");

    // The follower saw the answer's text token by token, each token once: the part streamed before
    // the kill, then the rest from the retried call (which streamed it all again).
    const events = (await followed).map((e) => e.event);
    const deltas = events.flatMap((e) =>
      e.type === "message_update" && e.kind === "text_delta" ? [e.delta] : [],
    );
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.join("")).toBe("word ".repeat(60));
    // The events the run recorded are the same after the replay: one start, one end, each stored
    // message ended once, in order.
    const recorded = (await client.events("mid-stream", { runId: run.invocationId })).events.map(
      (e) => e.event,
    );
    expect(recorded.filter((e) => e.type === "agent_start")).toHaveLength(1);
    expect(recorded.filter((e) => e.type === "agent_end")).toHaveLength(1);
    const ended = recorded.flatMap((e) => (e.type === "message_end" ? [e.message.id] : []));
    expect(ended).toEqual((await client.transcript("mid-stream")).map((m) => m.id));

    const log = await readExecutions(logFile);
    expect(modelCalls(log, "slow stream", 0)).toHaveLength(1);
    expect(modelCalls(log, "slow stream", 1).map((r) => r.pid)).toEqual([first.pid, expect.any(Number)]);
    expect(modelCalls(log, "slow stream", 1)[1]!.pid).not.toBe(first.pid);
    expect(toolRuns(log, "s1")).toHaveLength(1);

    const transcript = await client.transcript("mid-stream");
    expectValidTranscript(transcript);
    expect(shape(transcript)).toEqual([
      "user slow stream",
      "assistant [s1]",
      "toolResult s1: noted: before the stream",
      `assistant ${JSON.stringify("word ".repeat(6))}`,
    ]);
    const answer = transcript.at(-1)!;
    expect(answer.role === "assistant" && answer.content).toEqual([
      { type: "text", text: "word ".repeat(60) },
    ]);
  });

  it("an approval waits in Restate with no service process; approved after a restart, the tool runs once", async () => {
    const logFile = join(dir, "approval.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });

    const run = await client.send("approval-wait", "approval");
    await eventually(
      async () => (await client.status("approval-wait")).pendingApprovals.length === 1,
      "the request",
    );
    await first.kill();
    // Nothing serves the session now: Restate holds the run (retrying to reach a service).
    await eventually(
      async () => (await invocationStatus(restate, run.invocationId)) === "backing-off",
      "the run to wait in Restate",
    );

    await startService(logFile, first.port);
    await eventually(
      async () => (await client.status("approval-wait")).pendingApprovals[0]?.toolCallId === "g1",
      "the restarted service to wait for the decision again",
    );
    await client.approve("approval-wait", "g1");
    const result = await client.result(run);

    expect(result.reason).toBe("stop");
    expect(shape(result.messages)).toContain("toolResult g1: did deploy");
    expect(toolRuns(await readExecutions(logFile), "g1")).toHaveLength(1);
    expect((await client.status("approval-wait")).pendingApprovals).toEqual([]);
  });

  it("a client-run call waits through a dead service and a killed Restate server; answered after, the run ends", async () => {
    const logFile = join(dir, "client-wait.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });

    const run = await client.send("client-wait", "client");
    await eventually(
      async () => (await client.status("client-wait")).pendingToolCalls.length === 1,
      "the client-run call",
    );
    await first.kill();
    process.kill(restate.pid, "SIGKILL");
    await restate.restart();
    client = createSessionClient({ url: restate.ingressUrl });

    await startService(logFile, first.port);
    // The run is replayed in the new process up to the same wait (the same awakeable).
    await eventually(
      async () => (await invocationStatus(restate, run.invocationId)) === "running",
      "the resumed run to wait again",
    );
    expect((await client.status("client-wait")).pendingToolCalls.map((p) => p.toolCallId)).toEqual(["p1"]);
    await client.resolveToolCall("client-wait", "p1", "red");
    const second = await refusal(client.rejectToolCall("client-wait", "p1", "too late"));
    expect(second.status).toBe(404);

    const result = await client.result(run);
    expect(result.reason).toBe("stop");
    expectValidTranscript(result.messages);
    expect(shape(result.messages)).toEqual([
      "user client",
      "assistant [p1]",
      "toolResult p1: red",
      'assistant "picked"',
    ]);
    // The model call before the wait was made once, across both kills.
    expect(modelCalls(await readExecutions(logFile), "client", 0)).toHaveLength(1);
  });

  describe("two service processes behind one address", () => {
    let balancer: Balancer | undefined;
    afterEach(async () => {
      await balancer?.close();
    });

    it("spreads sessions over both; killing one mid-run loses no session", async () => {
      const logFile = join(dir, "two.log");
      const a = await startService(logFile);
      const b = await startService(logFile);
      balancer = await startBalancer([a.url, b.url]);
      await registerDeployment({ adminUrl: restate.adminUrl, uri: balancer.url, force: true });

      const sessions = ["1", "2", "3", "4", "5", "6"];
      const runs = await Promise.all(sessions.map((n) => client.send(`spread-${n}`, `slow tool #${n}`)));
      // Every session's slow call has started somewhere.
      const started = await eventually(async () => {
        const log = await readExecutions(logFile);
        const slow = sessions.map((n) => toolRuns(log, `b1-${n}`)[0]);
        return slow.every(Boolean) && slow;
      }, "every slow call to start");
      const pids = new Set(started.map((r) => r!.pid));
      expect(pids, "sessions ran in both processes").toEqual(new Set([a.pid, b.pid]));

      await a.kill();
      const results = await Promise.all(runs.map((run) => client.result(run)));
      expect(results.map((r) => r.reason)).toEqual(sessions.map(() => "stop"));

      const log = await readExecutions(logFile);
      for (const n of sessions) {
        const transcript = await client.transcript(`spread-${n}`);
        expectValidTranscript(transcript);
        expect(shape(transcript).at(-1)).toBe('assistant "All done."');
        const slow = toolRuns(log, `b1-${n}`);
        // A call cut off in the killed process ran again in the other, with the same key.
        if (slow[0]!.pid === a.pid) {
          expect(slow.map((r) => [r.key, r.pid === b.pid])).toEqual([
            [`b1-${n}`, false],
            [`b1-${n}`, true],
          ]);
        } else {
          expect(slow).toHaveLength(1);
        }
      }
    });
  });
});
