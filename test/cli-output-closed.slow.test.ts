import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLI_BIN,
  cleanEnv,
  killMatching,
  pidsMatching,
  removeDir,
  SANDBOX_ARGS,
  sessionsDirOf,
  TEST_SCRIPT,
  tempDir,
} from "./fixtures/cli-harness.js";

/** The command with stdout read until `enough` says so, then closed, as `| head` closes it. */
function runUntilReaderLeaves(
  args: string[],
  cwd: string,
  enough: (stdout: string) => boolean,
): { child: ChildProcess; done: Promise<{ code: number | null; stderr: string; closedAt: number }> } {
  const child = spawn(process.execPath, [CLI_BIN, ...SANDBOX_ARGS, ...args], {
    cwd,
    env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let closedAt = 0;
  child.stdout!.on("data", (chunk) => {
    stdout += chunk;
    if (!closedAt && enough(stdout)) {
      closedAt = Date.now();
      child.stdout!.destroy();
    }
  });
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stderr: string; closedAt: number }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr, closedAt }));
  });
  return { child, done };
}

function onlySession(workspace: string): string {
  const root = sessionsDirOf(workspace);
  const [id] = readdirSync(root);
  return path.join(root, id!);
}

describe("agent-machine with its stdout closed by the reader (| head)", () => {
  let dir: string | undefined;
  let child: ChildProcess | undefined;
  const markers: string[] = [];
  afterEach(() => {
    child?.kill("SIGKILL");
    for (const marker of markers.splice(0)) killMatching(marker);
    removeDir(dir);
  });

  it("--json: stops the run and its command, saves the session and exits 141 without a stack trace", async () => {
    dir = tempDir();
    const marker = `am-epipe-${process.pid}-${Date.now()}`;
    markers.push(marker);
    const run = runUntilReaderLeaves(
      [
        "--json",
        "--permission-mode",
        "bypass",
        `run: echo first; sleep 1; echo second; (exec -a ${marker} sleep 300)`,
      ],
      dir,
      (stdout) => stdout.includes('"tool_execution_update"'),
    );
    child = run.child;
    const { code, stderr } = await run.done;
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.ts:\d+/);
    expect(code).toBe(141);
    // The command the model started was stopped with the run, not left behind.
    expect(pidsMatching(marker)).toEqual([]);
    // The session is saved as a finished (aborted) run: --continue can go on from it.
    const session = onlySession(dir);
    expect(JSON.parse(readFileSync(path.join(session, "meta.json"), "utf8")).status).toBe("idle");
    const events = readFileSync(path.join(session, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; reason?: string });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
  });

  it("the plain output (stdout a pipe) ends the same way when the reader goes away mid-answer", async () => {
    dir = tempDir();
    const run = runUntilReaderLeaves(["story"], dir, (stdout) => stdout.includes("s001"));
    child = run.child;
    const { code, stderr, closedAt } = await run.done;
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.ts:\d+/);
    expect(code).toBe(141);
    // The answer streams for ~3 s more: the command stopped with its reader, not at the answer's end.
    expect(Date.now() - closedAt).toBeLessThan(2_500);
  });
});

// /dev/full takes every open and fails every write with ENOSPC, as a full disk does.
describe.skipIf(!existsSync("/dev/full"))(
  "agent-machine with stdout on a full disk (skipped where there is no /dev/full to play the full disk: not Linux)",
  () => {
    let dir: string | undefined;
    afterEach(() => removeDir(dir));

    it.each([["--print"], ["--json"]])("%s says it could not write the output and exits 1", async (flag) => {
      dir = tempDir();
      const full = openSync("/dev/full", "w");
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [CLI_BIN, ...SANDBOX_ARGS, flag, "hello"], {
          cwd: dir,
          env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
          stdio: ["ignore", full, "pipe"],
        });
        let stderr = "";
        child.stderr!.on("data", (chunk) => (stderr += chunk));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stderr }));
      }).finally(() => closeSync(full));
      expect(result.stderr).toBe(
        "agent-machine: cannot write the output (ENOSPC: no space left on device, write); the run was stopped and its session saved\n",
      );
      expect(result.code).toBe(1);
    });
  },
);
