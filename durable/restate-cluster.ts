import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ClusterLogEvent,
  clusterLogEvent,
  currentLeader,
  leaderSinceIn,
  type NodeLogState,
  settledLeader,
} from "./cluster-state.js";
import { findRestateServerBinary, GUARD, kill, runQuery } from "./restate-server.js";

/** Options of {@link startRestateCluster}. */
export interface StartRestateClusterOptions {
  /** How many nodes (each runs every role). Default 3: a replicated log and metadata that survive the loss of one. */
  nodes?: number;
  /** The `restate-server` binary. Default: `$RESTATE_SERVER_BIN`, else the installed platform package. */
  binary?: string;
  /** Extra TOML appended to every node's configuration (top-level keys, before any section). */
  extraConfig?: string;
  /** How long to wait for the cluster to serve. Default 60 s. */
  readyTimeoutMs?: number;
}

/** One node of a {@link RestateCluster}. */
export interface RestateClusterNode {
  /** `n1`, `n2`, … (Restate's node ids do not follow these names). */
  readonly name: string;
  /** This node's ingress, e.g. `http://127.0.0.1:41234` (the same across restarts). */
  readonly ingressUrl: string;
  /** This node's admin API. */
  readonly adminUrl: string;
  readonly dataDir: string;
  /** The server's pid, `undefined` while the node is down. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILLs the node, as a machine lost would; its data stays for {@link RestateClusterNode.restart}. */
  kill(): Promise<void>;
  /** Starts the node again on its data and waits until it serves. */
  restart(): Promise<void>;
  /** The node's recent log lines (JSON), newest last. */
  log(): readonly string[];
  /**
   * When this node last became the partition's leader since it started (from its log), if it still
   * leads: `undefined` once its processor stopped or conceded.
   */
  leaderSince(): string | undefined;
}

/** A local Restate cluster started by {@link startRestateCluster}. */
export interface RestateCluster {
  readonly nodes: readonly RestateClusterNode[];
  /** The ingress of the first node up. */
  readonly ingressUrl: string;
  /** The admin API of the first node up. */
  readonly adminUrl: string;
  /** Runs a SQL query on the first node that answers (a survivor's SQL fails for ~2 s after a leader dies). */
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /**
   * The node that leads the partition now (from the logs: the running node with the newest claim
   * of leadership, unless it has stepped down since), if one does: `undefined` while the partition
   * has no leader (the last one stepped down or died, and none has taken over yet).
   */
  leader(): RestateClusterNode | undefined;
  /**
   * Waits until the cluster has settled, and answers its leader: every node runs, every node sees
   * each restarted node alive again, a node leads the partition, and no change of leadership, of
   * the partition's replicas or of the cluster controller has come for `quietMs` (default 3 s). A node that
   * restarts moves leadership for a few seconds after it serves, and each move runs the steps in
   * flight again: start work that must not be disturbed once this answers. With `survivors`, a
   * killed node may stay down: its death counts as a change, and the nodes that run must settle.
   * Throws after
   * `timeoutMs` (default 60 s), saying what it waited for.
   */
  settled(options?: {
    quietMs?: number;
    timeoutMs?: number;
    survivors?: boolean;
  }): Promise<RestateClusterNode>;
  /** Stops every node (by pid) and removes the data. */
  stop(): Promise<void>;
}

/**
 * Starts a local Restate cluster for tests and development: `nodes` servers (3 by default) on
 * 127.0.0.1, each running every role with its own ports and data folder, sharing a replicated log
 * and replicated metadata (replication 2), so the cluster serves on when one node dies. It answers
 * once every node serves SQL (the partitions are up, not just the health endpoints). Each server runs
 * under a guard process that kills it if the process that started the cluster dies, even by SIGKILL.
 *
 * @example
 * ```ts
 * const cluster = await startRestateCluster();
 * await registerDeployment({ adminUrl: cluster.adminUrl, uri: server.url });
 * const leader = await cluster.settled();
 * await leader.kill(); // a machine lost: runs in flight carry on
 * await leader.restart();
 * await cluster.settled(); // leadership moves back and forth for a few seconds first
 * await cluster.stop();
 * ```
 */
export async function startRestateCluster(options: StartRestateClusterOptions = {}): Promise<RestateCluster> {
  const binary = options.binary ?? findRestateServerBinary();
  if (!binary) {
    throw new Error(
      "No restate-server binary: install @restatedev/restate-server (or the platform package for this machine, " +
        `@restatedev/restate-server-${process.platform}-${process.arch}), or set RESTATE_SERVER_BIN`,
    );
  }
  const count = options.nodes ?? 3;
  if (!Number.isInteger(count) || count < 1) throw new Error(`A cluster needs 1 or more nodes, got ${count}`);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const baseDir = await mkdtemp(join(tmpdir(), "agent-machine-restate-cluster-"));
  const ports = await freePorts(count * 3);
  const specs = Array.from({ length: count }, (_, i) => ({
    name: `n${i + 1}`,
    fabric: ports[i * 3]!,
    admin: ports[i * 3 + 1]!,
    ingress: ports[i * 3 + 2]!,
    dataDir: join(baseDir, `n${i + 1}`),
  }));
  const metadataAddresses = specs.map((s) => `"http://127.0.0.1:${s.fabric}/"`).join(", ");
  const nodes: ClusterNode[] = [];
  for (const [i, spec] of specs.entries()) {
    await mkdir(spec.dataDir, { recursive: true });
    const configFile = join(spec.dataDir, "restate.toml");
    await writeFile(
      configFile,
      nodeConfig(
        { ...spec, provision: i === 0, replication: Math.min(2, count), metadataAddresses },
        options.extraConfig,
      ),
    );
    nodes.push(new ClusterNode(binary, spec, configFile, readyTimeoutMs));
  }
  try {
    await Promise.all(nodes.map((node) => node.start()));
  } catch (error) {
    await Promise.all(nodes.map((node) => node.kill()));
    await rm(baseDir, { recursive: true, force: true });
    throw error;
  }

  const up = () => {
    const node = nodes.find((n) => n.running);
    if (!node) throw new Error("No node of the Restate cluster is running");
    return node;
  };
  return {
    nodes,
    get ingressUrl() {
      return up().ingressUrl;
    },
    get adminUrl() {
      return up().adminUrl;
    },
    async query<T>(sql: string): Promise<T[]> {
      let lastError: unknown;
      for (const node of nodes.filter((n) => n.running)) {
        try {
          return await runQuery<T>(node.adminUrl, sql);
        } catch (error) {
          lastError = error;
        }
      }
      throw lastError ?? new Error("No node of the Restate cluster is running");
    },
    leader() {
      const index = currentLeader(nodes.map((node) => node.logState()));
      return index === undefined ? undefined : nodes[index];
    },
    async settled(options = {}) {
      const quietMs = options.quietMs ?? 3_000;
      const timeoutMs = options.timeoutMs ?? 60_000;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const state = settledLeader(
          nodes.map((node) => node.logState()),
          Date.now(),
          quietMs,
          { survivors: options.survivors },
        );
        if ("leader" in state) return nodes[state.leader]!;
        if (Date.now() > deadline) {
          throw new Error(
            `The Restate cluster did not settle within ${timeoutMs} ms: waiting for ${state.waiting}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      await Promise.all(nodes.map((node) => node.kill()));
      await rm(baseDir, { recursive: true, force: true });
    },
  };
}

interface NodeSpec {
  name: string;
  fabric: number;
  admin: number;
  ingress: number;
  dataDir: string;
}

function nodeConfig(
  node: NodeSpec & { provision: boolean; replication: number; metadataAddresses: string },
  extra = "",
): string {
  return [
    `node-name = "${node.name}"`,
    'cluster-name = "agent-machine-local"',
    'roles = ["metadata-server", "admin", "worker", "log-server", "http-ingress"]',
    `auto-provision = ${node.provision}`,
    // Log and partitions; with three nodes one may die (3 would stall log writes after one death).
    `default-replication = ${node.replication}`,
    "default-num-partitions = 1",
    `bind-address = "127.0.0.1:${node.fabric}"`,
    `advertised-address = "http://127.0.0.1:${node.fabric}/"`,
    'listen-mode = "tcp"',
    "disable-telemetry = true",
    'rocksdb-total-memory-size = "256 MiB"',
    // The 5 s default adds ~5 s to every start and rejoin.
    'gossip-suspect-interval = "1s"',
    'log-format = "json"',
    "log-disable-ansi-codes = true",
    'log-filter = "warn,restate=info"',
    extra,
    "[metadata-client]",
    `addresses = [${node.metadataAddresses}]`,
    "[bifrost]",
    'default-provider = "replicated"',
    "[admin]",
    `bind-address = "127.0.0.1:${node.admin}"`,
    "disable-web-ui = true",
    "[ingress]",
    `bind-address = "127.0.0.1:${node.ingress}"`,
    "",
  ].join("\n");
}

const LOG_LINES = 400;
/** Leadership and membership events kept per node (apart from the lines: SQL retries flood those). */
const EVENT_LINES = 400;

class ClusterNode implements RestateClusterNode {
  readonly name: string;
  readonly ingressUrl: string;
  readonly adminUrl: string;
  readonly dataDir: string;
  private guard: ChildProcess | undefined;
  private serverPid: number | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly lines: string[] = [];
  private readonly events: ClusterLogEvent[] = [];
  private starts = 0;
  private startedAt = 0;
  private killedAt: number | undefined;

  constructor(
    private readonly binary: string,
    spec: NodeSpec,
    private readonly configFile: string,
    private readonly readyTimeoutMs: number,
  ) {
    this.name = spec.name;
    this.ingressUrl = `http://127.0.0.1:${spec.ingress}`;
    this.adminUrl = `http://127.0.0.1:${spec.admin}`;
    this.dataDir = spec.dataDir;
  }

  get pid() {
    return this.serverPid;
  }

  get running() {
    return this.guard !== undefined;
  }

  log(): readonly string[] {
    return this.lines;
  }

  leaderSince(): string | undefined {
    return this.running ? leaderSinceIn(this.events) : undefined;
  }

  /** What this node's log says about leadership and membership since it last started. */
  logState(): NodeLogState {
    return {
      running: this.running,
      restarted: this.starts > 1,
      startedAt: this.startedAt,
      events: this.events,
      killedAt: this.killedAt,
    };
  }

  async start(): Promise<void> {
    this.lines.length = 0;
    this.events.length = 0;
    this.starts++;
    this.startedAt = Date.now();
    const guard = spawn(
      process.execPath,
      [
        "-e",
        GUARD,
        JSON.stringify([this.binary, "-c", this.configFile, "--base-dir", this.dataDir, "--no-logo"]),
      ],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    this.guard = guard;
    this.exited = new Promise<void>((resolve) => guard.once("exit", () => resolve()));
    guard.once("exit", () => {
      if (this.guard === guard) {
        this.guard = undefined;
        this.serverPid = undefined;
      }
    });
    guard.stdout?.on("data", (chunk: Buffer) => {
      const match = /pid (\d+)/.exec(chunk.toString());
      if (match) this.serverPid = Number(match[1]);
    });
    let buffered = "";
    guard.stderr?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        this.lines.push(line);
        if (this.lines.length > LOG_LINES) this.lines.shift();
        const event = clusterLogEvent(line);
        if (event) {
          this.events.push(event);
          if (this.events.length > EVENT_LINES) this.events.shift();
        }
      }
    });
    try {
      await this.waitUntilServing();
    } catch (error) {
      await this.kill();
      throw new Error(
        `${error instanceof Error ? error.message : String(error)}\n${this.lines.slice(-20).join("\n")}`,
        {
          cause: error,
        },
      );
    }
  }

  /** Health, then ingress health, then SQL: the node's partitions can serve. */
  private async waitUntilServing(): Promise<void> {
    const deadline = Date.now() + this.readyTimeoutMs;
    const checks = [
      () => ok(fetch(new URL("/health", this.adminUrl))),
      () => ok(fetch(new URL("/restate/health", this.ingressUrl))),
      () => runQuery(this.adminUrl, "SELECT count(*) AS n FROM sys_invocation"),
    ];
    for (const check of checks) {
      for (;;) {
        if (!this.guard) throw new Error(`restate-server ${this.name} exited while starting`);
        try {
          await check();
          break;
        } catch (error) {
          if (Date.now() > deadline) {
            throw new Error(`restate-server ${this.name} did not serve within ${this.readyTimeoutMs} ms`, {
              cause: error,
            });
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  }

  async kill(): Promise<void> {
    const guard = this.guard;
    if (!guard) return;
    this.killedAt = Date.now();
    if (this.serverPid !== undefined) kill(this.serverPid, "SIGKILL");
    guard.stdin?.end();
    const timer = setTimeout(() => guard.kill("SIGKILL"), 5_000);
    await this.exited;
    clearTimeout(timer);
    guard.stdin?.destroy();
  }

  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }
}

async function ok(response: Promise<Response>): Promise<void> {
  const answer = await response;
  await answer.arrayBuffer();
  if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
}

/** `count` distinct free ports on 127.0.0.1 (held open together, so none is handed out twice). */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
