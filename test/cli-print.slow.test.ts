import { existsSync, readdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../index.js";
import {
  cleanEnv,
  removeDir,
  runCliProcess,
  sessionsDirOf,
  TEST_SCRIPT,
  tempDir,
} from "./fixtures/cli-harness.js";

describe("agent-machine --print / --json", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));
  const env = () => cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });

  it("--print prints only the final answer on stdout and exits 0", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--print", "hello there"], { cwd: dir, env: env() });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("heard: hello there\n");
    expect(result.code).toBe(0);
  });

  it("--print reads the prompt from stdin when none is given, and runs tools (bypass)", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--print", "--permission-mode", "bypass"], {
      cwd: dir,
      env: env(),
      input: "run: echo from-stdin-tool",
    });
    expect(result.stdout).toBe("tool results: from-stdin-tool | users: run: echo from-stdin-tool\n");
    expect(result.code).toBe(0);
  });

  it("--print denies calls that need approval (nobody to ask) and the model is told", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--print", "run: echo should-not-run"], { cwd: dir, env: env() });
    expect(result.stdout).toContain("Permission denied: bash needs approval");
    expect(result.stdout).not.toContain("tool results: should-not-run");
    expect(result.code).toBe(0);
  });

  it("--json prints every event as one JSON line, in order, from agent_start to agent_end", async () => {
    dir = tempDir();
    const result = await runCliProcess(
      ["--json", "--permission-mode", "bypass", "--strategy", "sequential", "run2: echo one ;; echo two"],
      { cwd: dir, env: env() },
    );
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AgentEvent);
    expect(events[0]!.type).toBe("agent_start");
    expect(events.at(-1)!.type).toBe("agent_end");
    const lifecycle = events
      .filter((e) => e.type !== "message_update" && e.type !== "tool_execution_update")
      .map((e) =>
        e.type === "message_start" || e.type === "message_end" ? `${e.type}:${e.message.role}` : e.type,
      );
    expect(lifecycle).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "message_start:assistant",
      "message_end:assistant",
      // Sequential: each call runs and its result is appended before the next starts.
      "tool_execution_start",
      "tool_execution_end",
      "message_start:toolResult",
      "message_end:toolResult",
      "tool_execution_start",
      "tool_execution_end",
      "message_start:toolResult",
      "message_end:toolResult",
      "turn_end",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.reason).toBe("stop");
    const answer = end.messages.at(-1)!;
    expect(answer.role === "assistant" && answer.content).toEqual([
      { type: "text", text: "tool results: one / two | users: run2: echo one ;; echo two" },
    ]);
  });

  it("--max-turns ends the run with a limit (exit status 3), after the model's answer", async () => {
    dir = tempDir();
    const result = await runCliProcess(
      ["--print", "--max-turns", "1", "--permission-mode", "bypass", "run: echo x"],
      {
        cwd: dir,
        env: env(),
      },
    );
    // The scripted model answers the notice it is given at the cap; no stop notice follows an answer.
    expect(result.stdout).toContain("heard: [Max turns reached (1/1). No more tool calls can run");
    expect(result.stdout).not.toContain("[Agent stopped");
    expect(result.stderr).toContain('reason "limit"');
    expect(result.code).toBe(3);
  });

  it("saves the session in the user's data folder, keyed by workspace, and nothing in the workspace", async () => {
    dir = tempDir();
    await runCliProcess(["--print", "hi"], { cwd: dir, env: env() });
    expect(readdirSync(dir)).toEqual([]);
    const root = sessionsDirOf(dir);
    expect(root.startsWith(path.join(env().XDG_DATA_HOME!, "agent-machine", "sessions"))).toBe(true);
    const [id] = readdirSync(root);
    expect(readdirSync(path.join(root, id!)).sort()).toEqual(["events.jsonl", "meta.json", "snapshot.json"]);
  });

  it("rejects bad options with a clear message and exit status 2", async () => {
    dir = tempDir();
    const bad = await runCliProcess(["--strategy", "fastest", "hi"], { cwd: dir, env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Invalid --strategy "fastest": use parallel, sequential, auto or batched:N');
    const unknown = await runCliProcess(["--frobnicate"], { cwd: dir, env: env() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option --frobnicate");
    const typo = await runCliProcess(["--modle", "gpt-4.1", "-p", "hi"], { cwd: dir, env: env() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      "agent-machine: Unknown option --modle (did you mean --model?)\nRun agent-machine --help for usage.\n",
    );
  });

  it("without a prompt: one line, exit status 2, and no empty session left behind", async () => {
    dir = tempDir();
    for (const args of [["--print"], ["--json"], []]) {
      const result = await runCliProcess(args, { cwd: dir, env: env(), input: "" });
      expect(result.stderr, args.join(" ")).toBe(
        "agent-machine: No prompt: pass one as an argument or on stdin\n",
      );
      expect(result.code).toBe(2);
    }
    expect(existsSync(sessionsDirOf(dir))).toBe(false);
    // So --continue has nothing to resume, rather than an empty session.
    const resumed = await runCliProcess(["--continue", "--print"], { cwd: dir, env: env(), input: "" });
    expect(resumed.stderr).toBe(`agent-machine: No sessions to resume in ${sessionsDirOf(dir)}\n`);
    expect(resumed.code).toBe(2);
  });

  it("--resume of a session that does not exist: one line naming it and the recent ones", async () => {
    dir = tempDir();
    await runCliProcess(["--print", "hi"], { cwd: dir, env: env() });
    const [id] = readdirSync(sessionsDirOf(dir));
    for (const missing of ["does-not-exist", "20200101-000000000-abcdef"]) {
      const result = await runCliProcess(["--resume", missing, "--print", "go on"], { cwd: dir, env: env() });
      expect(result.stderr).toBe(
        `agent-machine: No session "${missing}" in ${sessionsDirOf(dir)} (recent: ${id})\n`,
      );
      expect(result.stdout).toBe("");
      expect(result.code).not.toBe(0);
    }
  });

  it("a data folder where sessions cannot be saved: one line saying where and why, no stack trace", async () => {
    dir = tempDir();
    // A file where the data folder must go (a read-only folder would not stop root).
    const dataHome = path.join(dir, "data");
    writeFileSync(dataHome, "");
    const result = await runCliProcess(["--print", "hi"], {
      cwd: dir,
      env: { ...env(), XDG_DATA_HOME: dataHome },
    });
    expect(result.stderr).toBe(
      `agent-machine: Cannot save the session in ${sessionsDirOf(dir, { XDG_DATA_HOME: dataHome })}: not a directory (ENOTDIR); choose a folder you can write to with --sessions-dir <dir>\n`,
    );
    expect(result.stdout).toBe("");
    expect(result.code).toBe(1);
  });

  it("a prompt with no usable model is an error naming what to set, never the demo's canned answer", async () => {
    dir = tempDir();
    const cases: { args: string[]; env: Record<string, string>; reason: string }[] = [
      { args: ["-p", "what is 2+2"], env: cleanEnv(), reason: "none of ANTHROPIC_API_KEY" },
      { args: ["--json", "what is 2+2"], env: cleanEnv(), reason: "none of ANTHROPIC_API_KEY" },
      // A prompt on the command line, not a terminal and no --print: still no demo.
      { args: ["what is 2+2"], env: cleanEnv(), reason: "none of ANTHROPIC_API_KEY" },
      {
        args: ["-p", "what is 2+2"],
        env: cleanEnv({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }),
        reason: "OPENAI_BASE_URL is set (http://127.0.0.1:9/v1) but no model: pass --model",
      },
    ];
    for (const { args, env: caseEnv, reason } of cases) {
      const result = await runCliProcess(args, { cwd: dir, env: caseEnv });
      const label = `${args.join(" ")} ${caseEnv.OPENAI_BASE_URL ?? ""}`;
      expect(result.code, label).toBe(1);
      expect(result.stdout, label).toBe("");
      expect(result.stderr, label).toContain("agent-machine: No model to run with.");
      expect(result.stderr, label).toContain(reason);
      expect(result.stderr, label).toContain(
        "Set ANTHROPIC_API_KEY (Anthropic), OPENAI_API_KEY (OpenAI) or GEMINI_API_KEY (Gemini)",
      );
      expect(result.stderr, label).not.toContain("demo —");
    }
    // Nothing was started: no session for --continue to pick up.
    expect(existsSync(sessionsDirOf(dir))).toBe(false);
  });

  it("--demo with a prompt runs the demo, as asked, and says the prompt was not sent", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--demo", "-p", "what is 2+2"], { cwd: dir, env: cleanEnv() });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("Your prompt was not sent anywhere");
    expect(result.stdout).toContain("All tests pass now.");
  });

  it("says plainly when an explicit --provider has no key, without falling back to the demo", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--provider", "anthropic", "--print", "hi"], {
      cwd: dir,
      env: cleanEnv(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Provider anthropic needs ANTHROPIC_API_KEY.");
    expect(result.stdout).toBe("");
  });
});
