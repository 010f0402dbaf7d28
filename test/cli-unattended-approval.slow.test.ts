import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../index.js";
import {
  cleanEnv,
  removeDir,
  runCliProcess,
  sessionsDirOf,
  startTerminalCli,
  TEST_SCRIPT,
  type TerminalCli,
  tempDir,
  waitUntil,
} from "./fixtures/cli-harness.js";

/** The single session of a workspace: its events and meta. */
function onlySession(workspace: string) {
  const root = sessionsDirOf(workspace);
  const ids = readdirSync(root);
  expect(ids).toHaveLength(1);
  const dir = path.join(root, ids[0]!);
  const events = readFileSync(path.join(dir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as AgentEvent);
  const meta = JSON.parse(readFileSync(path.join(dir, "meta.json"), "utf8")) as { status: string };
  return { id: ids[0]!, events, meta };
}

/** Every tool call of the saved transcript has its result (the session is consistent). */
function expectEveryCallAnswered(events: AgentEvent[]): void {
  const messages = events.flatMap((e) => (e.type === "message_end" ? [e.message] : []));
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.filter((p) => p.type === "toolCall").map((p) => p.id) : [],
  );
  const answered = messages.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
  expect(calls.length).toBeGreaterThan(0);
  expect(answered.sort()).toEqual([...calls].sort());
}

// A call that would ask for approval, with nobody to ask: the command must end, say which call and
// how to allow it, with an exit status of its own, and leave a session that resumes. Before, the
// run waited for an answer nobody could give and Node ended it with status 13 and no message.
describe("agent-machine: a call that needs approval with no one to ask", () => {
  let dir: string | undefined;
  let cli: TerminalCli | undefined;
  afterEach(async () => {
    await cli?.kill();
    cli = undefined;
    removeDir(dir);
  });
  const env = () => cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });

  it("--print --permission-mode acceptEdits: ends with status 4, names the call and how to allow it; the session resumes", async () => {
    dir = tempDir();
    const result = await runCliProcess(
      ["--print", "--permission-mode", "acceptEdits", "run: echo fix && touch ran"],
      { cwd: dir, env: env() },
    );
    expect(result.code).toBe(4);
    expect(result.stderr).toContain("bash needs approval and there is no terminal to ask");
    expect(result.stderr).toContain("bash: echo fix && touch ran");
    expect(result.stderr).toContain("--permission-mode bypass");
    expect(existsSync(path.join(dir, "ran"))).toBe(false);

    const session = onlySession(dir);
    expect(result.stderr).toContain(`--resume ${session.id}`);
    expect(session.meta.status).toBe("idle");
    expectEveryCallAnswered(session.events);

    // It resumes: the model reads why the call did not run.
    const resumed = await runCliProcess(["--print", "--continue", "what happened?"], {
      cwd: dir,
      env: env(),
    });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("heard: what happened?\n");
  });

  it("--json: the events up to agent_end on stdout, the refusal on stderr, status 4", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--json", "--permission-mode", "acceptEdits", "run: npm test"], {
      cwd: dir,
      env: env(),
    });
    expect(result.code).toBe(4);
    const events = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AgentEvent);
    expect(events.map((e) => e.type)).toContain("approval_requested");
    expect(events.at(-1)!.type).toBe("agent_end");
    expect(result.stderr).toContain("bash: npm test");
    expectEveryCallAnswered(onlySession(dir).events);
  });

  it("a prompt on piped stdin with --permission-mode default: status 4, and the rule it suggests lets the call run", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--permission-mode", "default"], {
      cwd: dir,
      env: env(),
      input: "run: echo suggested-rule-ran",
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain("--allow 'bash(echo suggested-rule-ran)'");

    const again = await runCliProcess(["--print", "--allow", "bash(echo suggested-rule-ran)"], {
      cwd: dir,
      env: env(),
      input: "run: echo suggested-rule-ran",
    });
    expect(again.stderr).toBe("");
    expect(again.stdout).toBe("tool results: suggested-rule-ran | users: run: echo suggested-rule-ran\n");
    expect(again.code).toBe(0);
  });

  it("--allow with a rule the permissions refuse is a usage error (status 2)", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--print", "--allow", "bash(npm test", "hi"], {
      cwd: dir,
      env: env(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--allow: Invalid permission rule");
    // Refused before a session is made: none is left for --continue to pick up.
    const root = sessionsDirOf(dir);
    expect(existsSync(root) ? readdirSync(root) : []).toEqual([]);
  });

  it("--allow naming no tool of the command is a usage error with the closest name (status 2)", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--print", "--allow", "Bash(npm test)", "hi"], {
      cwd: dir,
      env: env(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--allow: the allow rule "Bash(npm test)" names the tool "Bash", which this agent does not have (did you mean "bash"?)',
    );
    const root = sessionsDirOf(dir);
    expect(existsSync(root) ? readdirSync(root) : []).toEqual([]);
  });

  it("in a real terminal with --print: the same end, status 4, the message on the screen", async () => {
    dir = tempDir();
    cli = startTerminalCli(
      ["--print", "--permission-mode", "acceptEdits", "run: echo in-a-tty && touch ran"],
      {
        cwd: dir,
        env: env(),
      },
    );
    const screen = await cli.waitFor("there is no terminal to ask");
    await waitUntil(() => cli!.exitCode() !== undefined, "the command to exit", 15_000);
    expect(cli.exitCode()).toBe(4);
    expect(screen).toContain("bash: echo in-a-tty && touch ran");
    expect(existsSync(path.join(dir, "ran"))).toBe(false);
    expectEveryCallAnswered(onlySession(dir).events);
  });

  it("--resume's list answered with Ctrl-D ends with a message and status 2, never Node's silent 13", async () => {
    dir = tempDir();
    expect((await runCliProcess(["--print", "hi"], { cwd: dir, env: env() })).code).toBe(0);
    cli = startTerminalCli(["--resume"], { cwd: dir, env: env() });
    await cli.waitFor("Resume which session?");
    cli.keys("C-d");
    await waitUntil(() => cli!.exitCode() !== undefined, "the command to exit", 15_000);
    expect(cli.exitCode()).toBe(2);
    expect(cli.screen()).toContain("No session chosen");
  });
});
