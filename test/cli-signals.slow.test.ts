import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLI_BIN,
  cleanEnv,
  killMatching,
  removeDir,
  sessionsDirOf,
  TEST_SCRIPT,
  tempDir,
  waitUntil,
} from "./fixtures/cli-harness.js";

/** The command's own processes: named by the marker (`exec -a`), unlike the CLI, whose prompt holds it. */
function commandPids(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const zombie = stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
        return !zombie && readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(`${marker}\0`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

// A one-shot run stopped by a signal while a command runs (Ctrl-C in the shell that started it,
// `kill`, a CI job cancelled): the command is stopped for real, even one that ignores SIGTERM,
// the session is saved, and the status says the run was aborted.
describe.each(["SIGINT", "SIGTERM"] as const)("agent-machine --print stopped by %s mid-tool", (signal) => {
  let dir: string | undefined;
  let child: ChildProcess | undefined;
  const markers: string[] = [];
  afterEach(() => {
    child?.kill("SIGKILL");
    for (const marker of markers.splice(0)) killMatching(marker);
    removeDir(dir);
  });

  it("stops a command that ignores SIGTERM (unsandboxed), saves the session and exits 130", async () => {
    dir = tempDir();
    const marker = `am-signal-${signal}-${process.pid}-${Date.now()}`;
    markers.push(marker);
    child = spawn(
      process.execPath,
      [
        CLI_BIN,
        "--no-sandbox",
        "--print",
        "--permission-mode",
        "bypass",
        // An ignored signal stays ignored across exec: the sleep ignores SIGTERM as its shell does.
        `run: trap '' TERM INT; (exec -a ${marker} sleep 300)`,
      ],
      { cwd: dir, env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }), stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    await waitUntil(() => commandPids(marker).length > 0, "the command to start");

    child.kill(signal);
    const code = await exited;
    expect(code).toBe(130);
    expect(stderr).toContain('the run ended with reason "aborted"');
    expect(stderr).not.toMatch(/Unhandled|at .*\.ts:\d+/);
    // Gone when the command has exited: it did not leave the SIGKILL to a timer that died with it.
    expect(commandPids(marker)).toEqual([]);

    const root = sessionsDirOf(dir);
    const [id] = readdirSync(root);
    const session = path.join(root, id!);
    expect(JSON.parse(readFileSync(path.join(session, "meta.json"), "utf8")).status).toBe("idle");
    const events = readFileSync(path.join(session, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; reason?: string });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
  });
});
