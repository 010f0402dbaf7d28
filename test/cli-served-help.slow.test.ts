import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLI_BIN,
  cleanEnv,
  removeDir,
  startTerminalCli,
  type TerminalCli,
  TEST_SCRIPT,
  tempDir,
  waitUntil,
} from "./fixtures/cli-harness.js";

// `agent-machine acp --help` typed in a shell where a key is set: before, the command started
// serving and waited on stdin for an editor that was not there.
describe.each(["acp", "mcp"])("agent-machine %s --help", (command) => {
  it("prints its usage and exits 0 at once, with a model configured and stdin left open", async () => {
    const dir = tempDir();
    try {
      const child = spawn(process.execPath, [CLI_BIN, command, "--help"], {
        cwd: dir,
        env: cleanEnv({ ANTHROPIC_API_KEY: "sk-ant-api03-not-a-real-key-0123456789" }),
        stdio: ["pipe", "pipe", "pipe"], // stdin never ended, as a terminal's is not
      });
      let stdout = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          resolve(null);
        }, 15_000);
        child.on("exit", (status) => {
          clearTimeout(timer);
          resolve(status);
        });
      });
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`^Usage: agent-machine ${command} \\[options\\]`));
    } finally {
      removeDir(dir);
    }
  });
});

// Typed in a terminal, the served command waited for protocol messages without a word.
describe.each(["acp", "mcp"])("agent-machine %s typed in a terminal", (command) => {
  let term: TerminalCli | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await term?.kill();
    removeDir(dir);
  });

  it("says what it waits for and how to end it; Ctrl-D ends it", async () => {
    dir = tempDir();
    term = startTerminalCli([command], { cwd: dir, env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }) });
    await term.waitFor(`agent-machine ${command}: waiting for`);
    expect(term.history()).toContain(
      `it is started by its client, not typed (agent-machine ${command} --help)`,
    );
    term.keys("C-d");
    await waitUntil(() => term!.exitCode() !== undefined, "the command to end on Ctrl-D");
    expect(term.exitCode()).toBe(0);
  });
});
