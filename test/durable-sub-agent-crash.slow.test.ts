// A durable session's sub-agent is a journaled child of its run: when the service process dies
// while the child works, the restarted service replays the child's finished steps from the journal
// (its model and tool calls never run twice), and a call waiting in the child survives the crash.
// The service is a process of its own (fixtures/durable-service.ts), SIGKILLed mid-run; executions
// are counted from the log file every process appends to.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSessionClient,
  registerDeployment,
  type RestateServer,
  type SessionClient,
  startRestateServer,
} from "../restate.js";
import { type ExecutionRecord, readExecutions } from "./fixtures/durable-agent.js";
import {
  eventually,
  invocationStatus,
  journalSteps,
  type ServiceProcess,
  shape,
  startServiceProcess,
} from "./fixtures/durable-harness.js";
import { expectValidTranscript } from "./helpers.js";

const SERVICE = fileURLToPath(new URL("./fixtures/durable-service.ts", import.meta.url));

type Service = ServiceProcess;

let restate: RestateServer;
let client: SessionClient;
let dir: string;
const running = new Set<Service>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-machine-sub-agent-"));
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
async function startService(logFile: string, port = 0): Promise<Service> {
  const started = await startServiceProcess(SERVICE, [String(port), logFile]);
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

type ToolRecord = Extract<ExecutionRecord, { kind: "tool" }>;
const toolRuns = (log: ExecutionRecord[], toolCallId: string) =>
  log.filter((r): r is ToolRecord => r.kind === "tool" && r.phase === "start" && r.toolCallId === toolCallId);
const modelCalls = (log: ExecutionRecord[], scenario: string) =>
  log.filter((r) => r.kind === "model" && r.scenario === scenario);

/** Every call of the transcript is answered exactly once. */
function expectEachCallAnsweredOnce(messages: Awaited<ReturnType<SessionClient["transcript"]>>) {
  expectValidTranscript(messages);
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.filter((p) => p.type === "toolCall").map((p) => p.id) : [],
  );
  const answers = messages.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
  expect(answers.sort()).toEqual(calls.sort());
}

describe("durable sessions: a sub-agent is a journaled child of its run", () => {
  it("SIGKILL while the child's tool runs: its finished calls do not run again, the run completes", async () => {
    const logFile = join(dir, "child-mid-tool.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });

    const run = await client.send("child-mid-tool", "delegate");
    // The child's quick call is journaled under the parent's call; its slow call now runs.
    await eventually(async () => {
      const { completed } = await journalSteps(restate, run.invocationId);
      return completed.has("d1/tool:c1") && toolRuns(await readExecutions(logFile), "c2").length === 1;
    }, "the child's slow call running after its journaled quick one");
    const before = await journalSteps(restate, run.invocationId);
    expect(before.completed.has("d1/tool:c2")).toBe(false);
    // The sub-agent's call is its child's steps, not one step of its own.
    expect(before.started).not.toContain("tool:d1");
    await first.kill();

    const second = await startService(logFile, first.port);
    const result = await client.result(run);
    expect(result.reason).toBe("stop");

    const log = await readExecutions(logFile);
    // The child's finished call ran once, in the killed process; the interrupted one again, in the new.
    expect(toolRuns(log, "c1").map((r) => r.pid)).toEqual([first.pid]);
    expect(toolRuns(log, "c2").map((r) => [r.key, r.pid])).toEqual([
      ["c2", first.pid],
      ["c2", second.pid],
    ]);
    // The child's model answered each step once (the answers before the crash came from the journal).
    const childSteps = modelCalls(log, "child:child work").map((r) => (r as { step: number }).step);
    expect(childSteps).toEqual([0, 1, 2]);
    expect(modelCalls(log, "delegate").map((r) => (r as { step: number }).step)).toEqual([0, 1]);

    const transcript = await client.transcript("child-mid-tool");
    expectEachCallAnsweredOnce(transcript);
    expect(shape(transcript)).toEqual([
      "user delegate",
      "assistant [d1]",
      "toolResult d1: Child done.",
      'assistant "Delegated."',
    ]);
  });

  it("two sub-agents side by side: after a SIGKILL, both replay their finished calls and neither runs them again", async () => {
    const logFile = join(dir, "children-side-by-side.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });

    const run = await client.send("children-side-by-side", "delegate both");
    // The quick child has finished; the other's slow call runs.
    await eventually(async () => {
      const { completed } = await journalSteps(restate, run.invocationId);
      return completed.has("d4/model:2") && toolRuns(await readExecutions(logFile), "c2").length === 1;
    }, "the quick child done and the slow child's call running");
    await first.kill();

    const second = await startService(logFile, first.port);
    const result = await client.result(run);
    expect(result.reason).toBe("stop");

    const log = await readExecutions(logFile);
    expect(toolRuns(log, "c1").map((r) => r.pid)).toEqual([first.pid]);
    expect(toolRuns(log, "q1").map((r) => r.pid)).toEqual([first.pid]);
    expect(toolRuns(log, "c2").map((r) => r.pid)).toEqual([first.pid, second.pid]);
    expect(modelCalls(log, "child:child quick").map((r) => (r as { step: number }).step)).toEqual([0, 1]);
    expect(modelCalls(log, "child:child work").map((r) => (r as { step: number }).step)).toEqual([0, 1, 2]);

    const transcript = await client.transcript("children-side-by-side");
    expectEachCallAnsweredOnce(transcript);
    expect(shape(transcript)).toEqual([
      "user delegate both",
      "assistant [d3,d4]",
      "toolResult d3: Child done.",
      "toolResult d4: Quick done.",
      'assistant "Both delegated."',
    ]);
  });

  it("a child's call waiting for approval survives the crash; approved by its path after, it runs once", async () => {
    const logFile = join(dir, "child-approval.log");
    const first = await startService(logFile);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: first.url, force: true });

    const run = await client.send("child-approval", "delegate approval");
    const waiting = await eventually(async () => {
      const status = await client.status("child-approval");
      return status.pendingApprovals.find((call) => call.toolCallId === "d2/e2");
    }, "the child's call waiting for approval");
    expect(waiting).toMatchObject({ toolName: "guarded", path: ["d2", "e2"] });
    await first.kill();
    // Nothing serves the session now: Restate holds the run (retrying to reach a service).
    await eventually(
      async () => (await invocationStatus(restate, run.invocationId)) === "backing-off",
      "the run to wait in Restate",
    );

    const second = await startService(logFile, first.port);
    // The replayed child waits for the same decision, under the same path id.
    await eventually(async () => {
      const { pendingApprovals } = await client.status("child-approval");
      return pendingApprovals.length === 1 && pendingApprovals[0]!.toolCallId === "d2/e2";
    }, "the restarted service to wait for the child's decision again");
    await client.approve("child-approval", "d2/e2");
    const result = await client.result(run);
    expect(result.reason).toBe("stop");

    const log = await readExecutions(logFile);
    expect(toolRuns(log, "e1").map((r) => r.pid)).toEqual([first.pid]);
    expect(toolRuns(log, "e2").map((r) => r.pid)).toEqual([second.pid]);
    // The child asked for its call once; the replay took its first two answers from the journal.
    expect(modelCalls(log, "child:child approval").map((r) => (r as { step: number }).step)).toEqual([
      0, 1, 2,
    ]);
    expect((await client.status("child-approval")).pendingApprovals).toEqual([]);

    const transcript = await client.transcript("child-approval");
    expectEachCallAnsweredOnce(transcript);
    expect(shape(transcript)).toEqual([
      "user delegate approval",
      "assistant [d2]",
      "toolResult d2: Child deployed.",
      'assistant "Delegated with approval."',
    ]);
  });
});
