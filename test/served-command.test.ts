import { describe, expect, it } from "vitest";
import { runAcpCommand } from "../cli/acp-command.js";
import { runMcpCommand } from "../cli/mcp-command.js";

// `agent-machine acp` and `agent-machine mcp` share their set-up (cli/served-agent.ts): the same
// refusals and exit statuses, each naming its own command. The protocols themselves are covered by
// the stdio suites.

function output() {
  const lines: string[] = [];
  return { lines, write: (text: string) => lines.push(text) };
}

describe.each([
  ["acp", runAcpCommand, "the client sends prompts and picks sessions"],
  ["mcp", runMcpCommand, "each tool call is a prompt"],
] as const)("agent-machine %s", (command, run, why) => {
  it("refuses a prompt with exit status 2, saying why", async () => {
    const stderr = output();
    expect(await run(["fix the bug"], {}, stderr)).toBe(2);
    expect(stderr.lines).toEqual([
      `agent-machine ${command}: ${command} takes no prompt and no --print, --json, --continue, --resume or --recover: ${why}\n`,
    ]);
  });

  it("refuses the terminal's session flags the same way", async () => {
    for (const flag of ["--print", "--continue", "--resume"]) {
      const stderr = output();
      expect(await run([flag], {}, stderr)).toBe(2);
      expect(stderr.lines.join("")).toContain(`agent-machine ${command}: ${command} takes no prompt`);
    }
  });

  it("--help prints the command's usage on stdout and exits 0, with or without a model", async () => {
    for (const env of [{}, { ANTHROPIC_API_KEY: "sk-ant-test" }]) {
      const stdout = output();
      const stderr = output();
      expect(await run(["--help"], env, stderr, stdout)).toBe(0);
      expect(stderr.lines).toEqual([]);
      expect(stdout.lines.join("")).toMatch(new RegExp(`^Usage: agent-machine ${command} \\[options\\]\n`));
      expect(stdout.lines.join("")).toContain("--permission-mode");
    }
  });

  it("--version prints the version and exits 0", async () => {
    const stdout = output();
    expect(await run(["-v"], {}, output(), stdout)).toBe(0);
    expect(stdout.lines.join("")).toMatch(/^\d+\.\d+\.\d+.*\n$/);
  });

  it("ends with exit status 1 and the set-up help when there is no model to run with", async () => {
    const stderr = output();
    expect(await run(["--provider", "anthropic"], {}, stderr)).toBe(1);
    expect(stderr.lines.join("")).toMatch(new RegExp(`^agent-machine ${command}: No model to run with\\.`));
  });
});
