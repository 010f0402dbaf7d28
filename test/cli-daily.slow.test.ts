import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  removeDir,
  startTerminalCli,
  TEST_SCRIPT,
  type TerminalCli,
  tempDir,
} from "./fixtures/cli-harness.js";

// Issue 43: what a daily user of Claude Code or pi reaches for in the first week, in a real terminal.
describe("agent-machine every day", () => {
  let cli: TerminalCli | undefined;
  const dirs: string[] = [];

  afterEach(async () => {
    await cli?.kill();
    cli = undefined;
    for (const dir of dirs.splice(0)) removeDir(dir);
  });

  const start = (args: string[] = [], options: { cwd?: string; env?: Record<string, string> } = {}) => {
    const cwd = options.cwd ?? tempDir();
    const config = tempDir("am-cli-config-");
    dirs.push(cwd, config);
    cli = startTerminalCli(args, {
      cwd,
      env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT, XDG_CONFIG_HOME: config, ...options.env }),
    });
    return { term: cli, cwd, config };
  };

  it("reads the user's and the workspace's AGENTS.md and CLAUDE.md into the system prompt, and says which", async () => {
    const cwd = tempDir();
    const config = tempDir("am-cli-config-");
    dirs.push(config);
    writeFileSync(path.join(cwd, "AGENTS.md"), "Use tabs. RULE_workspace_agents\n");
    writeFileSync(path.join(cwd, "CLAUDE.md"), "Run the tests. RULE_workspace_claude\n");
    mkdirSync(path.join(config, "agent-machine"));
    writeFileSync(path.join(config, "agent-machine", "AGENTS.md"), "Be brief. RULE_user\n");
    const { term } = start([], { cwd, env: { XDG_CONFIG_HOME: config } });
    const screen = await term.waitFor(/^›/m);
    expect(screen).toContain(
      `Project rules: ${path.join(config, "agent-machine", "AGENTS.md")}, AGENTS.md, CLAUDE.md`,
    );
    term.type("rules?");
    term.keys("Enter");
    // The user's own first, then the workspace's: the closer rules come last and win.
    await term.waitFor("rules: RULE_user RULE_workspace_agents RULE_workspace_claude");
  });
});
