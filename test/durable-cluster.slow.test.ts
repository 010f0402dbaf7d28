import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentMessage } from "../index.js";
import {
  type AgentServer,
  createAgentServices,
  createSessionClient,
  registerDeployment,
  type RestateCluster,
  type RestateClusterNode,
  type SessionClient,
  type SessionUpdate,
  serveAgents,
  startRestateCluster,
} from "../restate.js";
import { durableTestAgent, type ExecutionRecord, readExecutions } from "./fixtures/durable-agent.js";
import { eventually, fastRetries, journalSteps, quietLogger, shape } from "./fixtures/durable-harness.js";
import { expectValidTranscript } from "./helpers.js";

// Durable sessions on a three-node Restate cluster (replicated log and metadata, replication 2)
// whose nodes the test SIGKILLs, as machines lost. The service runs in this process; executions
// are counted from its log. Figures (start, recovery after each kill, re-runs) go to the console.

const FOLLOWER = fileURLToPath(new URL("./fixtures/durable-follower.ts", import.meta.url));

let cluster: RestateCluster;
let server: AgentServer;
let dir: string;
let logFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-machine-cluster-"));
  logFile = join(dir, "executions.log");
  const started = performance.now();
  cluster = await startRestateCluster();
  figure("cluster start to serving", performance.now() - started);
  const services = createAgentServices({ agent: durableTestAgent(logFile), retryPolicy: fastRetries });
  server = await serveAgents({ services, logger: quietLogger });
  await registerDeployment({ adminUrl: cluster.adminUrl, uri: server.url });
  // The registration is answered by one node; the others learn it through the cluster's metadata,
  // later when the machine is busy. Every node's ingress must reach the service before a test
  // sends through it: a session that never ran answers "Unknown session" once it does.
  for (const node of cluster.nodes) {
    await eventually(
      () =>
        clientOf(node)
          .status("registration-probe")
          .then(
            () => true,
            (error: unknown) => (error instanceof Error && /Unknown session/.test(error.message)) || false,
          ),
      `node ${node.name} to know the registered services`,
    );
  }
}, 120_000);

afterAll(async () => {
  await server?.close();
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

function figure(what: string, ms: number): void {
  console.log(`[cluster] ${what}: ${(ms / 1000).toFixed(2)} s`);
}

const clientOf = (node: RestateClusterNode): SessionClient => createSessionClient({ url: node.ingressUrl });

const toolRuns = (log: ExecutionRecord[], toolCallId: string) =>
  log.filter((r) => r.kind === "tool" && r.phase === "start" && r.toolCallId === toolCallId) as Extract<
    ExecutionRecord,
    { kind: "tool" }
  >[];
const modelCalls = (log: ExecutionRecord[], scenario: string, step: number) =>
  log.filter((r) => r.kind === "model" && r.scenario === scenario && r.step === step);

/** Follows a session from another process through `node`'s ingress, until the run ends. */
function followInAnotherProcess(node: RestateClusterNode, sessionId: string, runId: string) {
  const child = spawn(process.execPath, ["--import", "tsx", FOLLOWER, node.ingressUrl, sessionId, runId], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const done = new Promise<SessionUpdate[]>((resolve, reject) => {
    child.once("exit", (code) =>
      code === 0
        ? resolve(
            out
              .split("\n")
              .filter(Boolean)
              .map((line) => JSON.parse(line) as SessionUpdate),
          )
        : reject(new Error(`the follower exited with ${code}`)),
    );
  });
  return { done, stop: () => child.kill("SIGKILL") };
}

/**
 * The leader of a settled cluster: a restarted node moves leadership (and the cluster controller)
 * for a few seconds after it serves, and each move re-runs the steps in flight, so a scenario
 * picks its victim, starts its run, and sends through a restarted node only once that is over.
 */
const settledLeader = () => cluster.settled({ timeoutMs: 30_000 });

/**
 * What the cluster was doing, for a failure's message: the invocations not completed (their
 * status, attempts and last failure) and each node's recent leadership and membership events.
 */
async function clusterReport(): Promise<string> {
  const rows = await cluster
    .query(
      "SELECT id, target, status, retry_count, last_failure, last_start_at, modified_at FROM sys_invocation WHERE status != 'completed'",
    )
    .catch((error: unknown) => [{ query: String(error) }]);
  const events = cluster.nodes.map(
    (node) =>
      `${node.name} (${node.running ? "running" : "down"}):\n` +
      node
        .log()
        .filter((line) =>
          /became Leader|processor stopped|reign must end|configuration transitions|switching|transitioned/.test(
            line,
          ),
        )
        .slice(-12)
        .join("\n"),
  );
  return [
    `leader: ${cluster.leader()?.name ?? "none"}`,
    ...rows.map((row) => JSON.stringify(row)),
    ...events,
  ].join("\n");
}

/** `work`, failing after `ms` with what the cluster was doing (rather than a bare test timeout). */
async function reportingAfter<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => void clusterReport().then((report) => reject(new Error(`${what} took over ${ms} ms\n${report}`))),
      ms,
    );
  });
  late.catch(() => {}); // a report that comes after the work answered is dropped
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A run whose slow call is in flight (its neighbour and everything before it journaled) when
 * `victim` is SIGKILLed: it completes; the journaled calls are not made again; the interrupted
 * call runs again with the same idempotency key; a follower elsewhere sees every message; then the
 * node restarts on its data and a second run goes through its ingress.
 */
async function runThroughNodeLoss(sessionId: string, pickVictim: () => Promise<RestateClusterNode>) {
  const victim = await pickVictim();
  const survivors = cluster.nodes.filter((n) => n !== victim);
  // The run enters through the victim's ingress when it can (a leader's death also cuts that call).
  const run = await clientOf(victim).send(sessionId, `slow tool #${sessionId}`);
  const follower = followInAnotherProcess(survivors[1]!, sessionId, run.invocationId);
  try {
    const b1 = `b1-${sessionId}`;
    await eventually(async () => {
      const { completed } = await journalSteps(cluster, run.invocationId);
      return (
        completed.has(`tool:b2-${sessionId}`) && toolRuns(await readExecutions(logFile), b1).length === 1
      );
    }, "the slow call running beside a journaled one");

    const killedAt = performance.now();
    await victim.kill();
    const result = await clientOf(survivors[0]!).result(run);
    figure(
      `${sessionId}: SIGKILL to the run's end (the slow call takes 1.5 s)`,
      performance.now() - killedAt,
    );
    expect(result.reason).toBe("stop");

    const log = await readExecutions(logFile);
    const scenario = `slow tool #${sessionId}`;
    expect(toolRuns(log, `a1-${sessionId}`)).toHaveLength(1);
    expect(toolRuns(log, `b2-${sessionId}`)).toHaveLength(1);
    for (const step of [0, 1]) expect(modelCalls(log, scenario, step), `model step ${step}`).toHaveLength(1);
    // The call in flight ran at least once, every time with the same idempotency key (a node's
    // death can run it again, even twice, overlapping itself: docs/durable.md).
    const slow = toolRuns(log, b1);
    expect(slow.length).toBeGreaterThanOrEqual(1);
    expect(new Set(slow.map((r) => r.key))).toEqual(new Set([b1]));
    console.log(`[cluster] ${sessionId}: the call in flight ran ${slow.length} time(s)`);

    const survivor = clientOf(survivors[0]!);
    const transcript = await survivor.transcript(sessionId);
    expectValidTranscript(transcript);
    expect(shape(transcript)).toEqual([
      `user slow tool #${sessionId}`,
      `assistant [a1-${sessionId}]`,
      "toolResult a1-" + sessionId + ": noted: first",
      `assistant [${b1},b2-${sessionId}]`,
      `toolResult ${b1}: done slow`,
      `toolResult b2-${sessionId}: noted: beside`,
      'assistant "All done."',
    ]);
    const followed = (await follower.done).flatMap((u) => (u.type === "message" ? [u.message] : []));
    expect(followed).toEqual(transcript);

    const restartedAt = performance.now();
    await victim.restart();
    figure(`${sessionId}: the killed node back on its data`, performance.now() - restartedAt);
    await settledLeader();
    figure(`${sessionId}: the restarted node's return settled`, performance.now() - restartedAt);
    const again = await reportingAfter(
      30_000,
      "the second run",
      clientOf(victim).prompt(sessionId, "and now?"),
    );
    expect(again.reason).toBe("stop");
    const after: AgentMessage[] = await clientOf(victim).transcript(sessionId);
    expectValidTranscript(after);
    expect(after.slice(0, transcript.length)).toEqual(transcript);
    expect(shape(after.slice(transcript.length))).toEqual(["user and now?", 'assistant "All done."']);
  } finally {
    follower.stop();
  }
}

describe("durable sessions on a three-node Restate cluster", () => {
  // First, on the cluster as it started: after a leader's death and restart, leadership can move
  // back to the restarted node some seconds later, and a move re-runs the steps in flight, which
  // is the leader's case, not the follower's.
  it("a run survives the SIGKILL of a follower node mid-tool", async () => {
    await runThroughNodeLoss("follower", async () => {
      const leader = await settledLeader();
      return cluster.nodes.find((n) => n !== leader && n.running)!;
    });
  });

  it("a run survives the SIGKILL of the partition leader mid-tool", async () => {
    await runThroughNodeLoss("leader", settledLeader);
  });

  it("an approval waiting while the leader dies is decided through another node; the tool runs once", async () => {
    const leader = await settledLeader();
    const other = clientOf(cluster.nodes.find((n) => n !== leader)!);
    const run = await other.send("approval", "approval #approval");
    await eventually(
      async () => (await other.status("approval")).pendingApprovals.length === 1,
      "the call waiting for approval",
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await clusterReport()}`);
    });
    await leader.kill();
    const killedAt = performance.now();
    // The survivors elect a leader and move the partition's replicas for a few seconds after the
    // death, and a move during the approved call would run it again (the leader case: at least
    // once). Decided once they have settled, the call the dead leader held runs exactly once.
    await cluster.settled({ survivors: true, timeoutMs: 30_000 });
    await eventually(() => other.approve("approval", "g1-approval").then(() => true), "the approval", 30_000);
    figure("approval: SIGKILL of the leader to the decision taken", performance.now() - killedAt);
    const result = await other.result(run);
    expect(result.reason).toBe("stop");
    expect(toolRuns(await readExecutions(logFile), "g1-approval")).toHaveLength(1);
    const transcript = await other.transcript("approval");
    expectValidTranscript(transcript);
    expect(shape(transcript)).toEqual([
      "user approval #approval",
      "assistant [g1-approval]",
      "toolResult g1-approval: did deploy",
      'assistant "Deployed."',
    ]);
    await leader.restart();
  });
});
