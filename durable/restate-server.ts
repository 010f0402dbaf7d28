import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Options of {@link startRestateServer}. */
export interface StartRestateServerOptions {
  /**
   * The `restate-server` binary. Default: `$RESTATE_SERVER_BIN`, else the one inside the installed
   * `@restatedev/restate-server-<platform>-<arch>` package.
   */
  binary?: string;
  /** Where the server keeps its data. Default: a new temporary folder, removed by `stop()`. */
  dataDir?: string;
  /** Extra TOML appended to the configuration (e.g. a `[default-retry-policy]` section). */
  extraConfig?: string;
  /** How long to wait for the server to serve. Default 30 s. */
  readyTimeoutMs?: number;
}

/** A Restate server started by {@link startRestateServer}. */
export interface RestateServer {
  /** Where clients call services, e.g. `http://127.0.0.1:41234` (changes with each start). */
  readonly ingressUrl: string;
  /** The admin API (register deployments, SQL), e.g. `http://127.0.0.1:40000`. */
  readonly adminUrl: string;
  readonly pid: number;
  readonly dataDir: string;
  /** Runs a SQL query on the admin API (`sys_invocation`, `sys_journal`, `state`). */
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /** Stops the server (SIGTERM, then SIGKILL after `graceMs`) and keeps the data for a restart. */
  shutdown(graceMs?: number): Promise<void>;
  /** Starts it again on the same data: registered deployments and every session are still there. */
  restart(): Promise<void>;
  /** Stops it and removes a data folder it created. */
  stop(): Promise<void>;
}

/**
 * Starts a local Restate server for development, tests and benchmarks: on 127.0.0.1 only, with
 * random ports, telemetry off, and its own data folder. It answers once it can serve (its SQL
 * works, not just its health endpoint). The server runs under a small guard process that kills it
 * when the process that started it dies, even by SIGKILL, so no server outlives a crashed test run.
 *
 * @example
 * ```ts
 * const restate = await startRestateServer();
 * await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
 * const client = createSessionClient({ url: restate.ingressUrl });
 * await restate.stop();
 * ```
 */
export async function startRestateServer(options: StartRestateServerOptions = {}): Promise<RestateServer> {
  const binary = options.binary ?? findRestateServerBinary();
  if (!binary) {
    throw new Error(
      "No restate-server binary: install @restatedev/restate-server (or the platform package for this machine, " +
        `@restatedev/restate-server-${process.platform}-${process.arch}), or set RESTATE_SERVER_BIN`,
    );
  }
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "agent-machine-restate-")));
  await mkdir(dataDir, { recursive: true });
  const configFile = join(dataDir, "restate.toml");
  await writeFile(configFile, serverConfig(options.extraConfig));

  let child: RunningServer | undefined;
  const launch = async () => {
    child = await launchServer(binary, configFile, dataDir, options.readyTimeoutMs ?? 30_000);
  };
  await launch();

  const current = () => {
    if (!child) throw new Error("The Restate server is not running");
    return child;
  };
  const shutdown = async (graceMs = 10_000) => {
    const running = child;
    child = undefined;
    if (running) await running.terminate(graceMs);
  };

  return {
    get ingressUrl() {
      return current().ingressUrl;
    },
    get adminUrl() {
      return current().adminUrl;
    },
    get pid() {
      return current().pid;
    },
    dataDir,
    query: (sql) => runQuery(current().adminUrl, sql),
    shutdown,
    async restart() {
      await shutdown();
      await launch();
    },
    async stop() {
      await shutdown();
      if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The binary from `$RESTATE_SERVER_BIN` or the installed platform package, or `undefined`. */
export function findRestateServerBinary(): string | undefined {
  const fromEnv = process.env.RESTATE_SERVER_BIN;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  const require = createRequire(import.meta.url);
  try {
    const manifest = require.resolve(
      `@restatedev/restate-server-${process.platform}-${process.arch}/package.json`,
    );
    const binary = join(manifest, "..", "bin", "restate-server");
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

function serverConfig(extra = ""): string {
  return [
    'bind-ip = "127.0.0.1"',
    'listen-mode = "tcp"',
    "disable-telemetry = true",
    "default-num-partitions = 4",
    'rocksdb-total-memory-size = "512 MiB"',
    'log-format = "json"',
    "log-disable-ansi-codes = true",
    'log-filter = "warn,restate=info"',
    extra,
    "[admin]",
    "disable-web-ui = true",
    "",
  ].join("\n");
}

interface RunningServer {
  ingressUrl: string;
  adminUrl: string;
  pid: number;
  terminate(graceMs: number): Promise<void>;
}

// The guard: runs the server as its child, prints the server's pid, relays its output to stderr,
// and kills it when its own stdin closes (the process that started it is gone) or when it is told
// to stop. Plain JavaScript, so it starts in a few milliseconds.
export const GUARD = `
const { spawn } = require("node:child_process");
const [command, ...args] = JSON.parse(process.argv[1]);
const server = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: process.env });
process.stdout.write("pid " + server.pid + "\\n");
server.stdout.pipe(process.stderr);
server.stderr.pipe(process.stderr);
const kill = () => { try { server.kill("SIGKILL"); } catch {} };
process.stdin.on("end", kill);
process.stdin.on("error", kill);
process.stdin.resume();
process.on("SIGTERM", () => { try { server.kill("SIGTERM"); } catch {} });
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
setInterval(() => { if (process.ppid === 1) kill(); }, 500).unref();
`;

async function launchServer(
  binary: string,
  configFile: string,
  dataDir: string,
  readyTimeoutMs: number,
): Promise<RunningServer> {
  const guard = spawn(
    process.execPath,
    ["-e", GUARD, JSON.stringify([binary, "-c", configFile, "--base-dir", dataDir, "--no-logo"])],
    {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, RESTATE_USE_RANDOM_PORTS: "true" },
    },
  );
  const exited = new Promise<void>((resolve) => guard.once("exit", () => resolve()));
  try {
    const ports = await readPorts(guard, readyTimeoutMs);
    const running: RunningServer = {
      ingressUrl: `http://127.0.0.1:${ports.ingress}`,
      adminUrl: `http://127.0.0.1:${ports.admin}`,
      pid: ports.pid,
      async terminate(graceMs) {
        if (guard.exitCode !== null || guard.signalCode !== null) return;
        kill(ports.pid, "SIGTERM");
        const timer = setTimeout(() => kill(ports.pid, "SIGKILL"), graceMs);
        await exited;
        clearTimeout(timer);
        guard.stdin?.destroy();
      },
    };
    await waitUntilServing(running.adminUrl, guard, readyTimeoutMs);
    return running;
  } catch (error) {
    guard.stdin?.end();
    guard.kill("SIGKILL");
    throw error;
  }
}

/** Sends `signal` to `pid`, ignoring a process already gone. */
export function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {}
}

/** The server's pid (from the guard) and its ingress and admin ports (from its JSON log). */
function readPorts(
  guard: ChildProcess,
  timeoutMs: number,
): Promise<{ pid: number; ingress: number; admin: number }> {
  return new Promise((resolve, reject) => {
    let pid: number | undefined;
    let ingress: number | undefined;
    let admin: number | undefined;
    const log: string[] = [];
    const timer = setTimeout(
      () => fail(new Error(`restate-server did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const done = () => {
      if (pid === undefined || ingress === undefined || admin === undefined) return;
      cleanup();
      resolve({ pid, ingress, admin });
    };
    const fail = (error: Error) => {
      cleanup();
      reject(new Error(`${error.message}\n${log.slice(-20).join("\n")}`));
    };
    const onExit = () => fail(new Error("restate-server exited while starting"));
    const cleanup = () => {
      clearTimeout(timer);
      guard.off("exit", onExit);
      guard.stdout?.removeAllListeners("data");
    };
    guard.once("exit", onExit);
    guard.stdout?.on("data", (chunk: Buffer) => {
      const match = /pid (\d+)/.exec(chunk.toString());
      if (match) pid = Number(match[1]);
      done();
    });
    let buffered = "";
    guard.stderr?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (log.length < 200) log.push(line);
        const span = parseSpan(line);
        if (span?.server_name === "http-ingress-server") ingress = Number(span["server.port"]);
        if (span?.server_name === "admin-api-server") admin = Number(span["server.port"]);
      }
      done();
    });
  });
}

export function parseSpan(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    return (JSON.parse(line) as { span?: Record<string, unknown> }).span;
  } catch {
    return undefined;
  }
}

/** The health endpoints answer before the partitions can serve: wait until a SQL query works. */
async function waitUntilServing(adminUrl: string, guard: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (guard.exitCode !== null) throw new Error("restate-server exited while starting");
    try {
      await runQuery(adminUrl, "SELECT count(*) AS n FROM sys_invocation");
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`restate-server did not serve within ${timeoutMs} ms`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Runs a SQL query on a Restate admin API (`POST /query`). */
export async function runQuery<T>(adminUrl: string, sql: string): Promise<T[]> {
  const response = await fetch(new URL("/query", adminUrl), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: sql }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`SQL failed (HTTP ${response.status}): ${text}`);
  return (JSON.parse(text) as { rows: T[] }).rows;
}
