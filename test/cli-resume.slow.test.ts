import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentMessage } from "../index.js";
import {
  CLI_BIN,
  SANDBOX_ARGS,
  cleanEnv,
  killMatching,
  pidsMatching,
  removeDir,
  runCliProcess,
  sessionsDirOf,
  TEST_SCRIPT,
  tempDir,
  waitUntil,
} from "./fixtures/cli-harness.js";

function sessionDir(cwd: string): string | undefined {
  const root = sessionsDirOf(cwd);
  if (!existsSync(root)) return undefined;
  const [id] = readdirSync(root);
  return id ? path.join(root, id) : undefined;
}

function loggedEvents(dir: string): { type: string; toolCallId?: string }[] {
  const file = path.join(dir, "events.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

describe("agent-machine sessions survive SIGKILL", () => {
  let dir: string | undefined;
  let child: ChildProcess | undefined;
  const markers: string[] = [];
  afterEach(() => {
    child?.kill("SIGKILL");
    // A SIGKILLed CLI cannot end its command's process group: the test ends what it started.
    for (const marker of markers.splice(0)) killMatching(marker);
    removeDir(dir);
  });

  it("resumes with --continue: the finished call's result is kept, the killed one answered as interrupted", async () => {
    dir = tempDir();
    const marker = `am-resume-${process.pid}-${Date.now()}`;
    markers.push(marker);
    const env = cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });
    const prompt = `run2: echo fast-result ;; (exec -a ${marker} sleep 300)`;
    child = spawn(
      process.execPath,
      [CLI_BIN, ...SANDBOX_ARGS, "--print", "--permission-mode", "bypass", prompt],
      {
        cwd: dir,
        env,
        stdio: "ignore",
      },
    );

    // Wait until the fast call has finished and the slow one runs, then kill the CLI outright.
    const session = await waitUntil(() => {
      const found = sessionDir(dir!);
      const events = found ? loggedEvents(found) : [];
      return events.some((e) => e.type === "tool_execution_end") && pidsMatching(marker).length > 0 && found;
    }, "the first call to finish while the second runs");
    child.kill("SIGKILL");
    await new Promise((resolve) => child!.once("exit", resolve));
    killMatching(marker);
    const snapshotBefore = JSON.parse(readFileSync(path.join(session, "snapshot.json"), "utf8"));
    expect(snapshotBefore.value).not.toBe("idle");

    const resumed = await runCliProcess(["--continue", "--print", "--permission-mode", "bypass"], {
      cwd: dir,
      env,
    });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain("1 finished call(s) recovered from the event log");
    expect(resumed.stderr).toContain("interrupted: bash");
    // The model's answer quotes both results it was sent: the real one and the interruption notice.
    expect(resumed.stdout).toMatch(
      /^tool results: fast-result \/ Tool bash was interrupted: the agent process stopped/,
    );

    // Nothing lost: the transcript holds the prompt, the call, both results and the answer.
    const snapshot = JSON.parse(readFileSync(path.join(session, "snapshot.json"), "utf8"));
    expect(snapshot.value).toBe("idle");
    const messages = snapshot.context.messages as AgentMessage[];
    expect(messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
    ]);
    expect(messages[0]).toMatchObject({ role: "user", content: prompt });
    const [fast, slow] = messages.slice(2) as Extract<AgentMessage, { role: "toolResult" }>[];
    expect(fast).toMatchObject({ isError: false, content: [{ type: "text", text: "fast-result\n" }] });
    expect(slow).toMatchObject({ isError: true, details: { interrupted: true } });
    expect(loggedEvents(session).some((e) => e.type === "session_resumed")).toBe(true);
  });

  it("--resume <id> picks a session by id and goes on with a new prompt", async () => {
    dir = tempDir();
    const env = cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });
    await runCliProcess(["--print", "first question"], { cwd: dir, env });
    const id = path.basename(sessionDir(dir)!);
    const result = await runCliProcess(["--resume", id, "--print", "run: echo second"], {
      cwd: dir,
      env,
    });
    // Not approved in --print mode, but the transcript carried over: both user messages are there.
    expect(result.stdout).toContain("users: first question / run: echo second");
    const missing = await runCliProcess(["--resume", "20990101-000000-abcdef", "--print"], { cwd: dir, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`No session "20990101-000000-abcdef"`);
    expect(missing.stderr).toContain(id);
  });
});
