import { existsSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  removeDir,
  startTmuxCli,
  TEST_SCRIPT,
  type TerminalCli,
  tempDir,
  tmuxAvailable,
} from "./fixtures/cli-harness.js";

const suite = tmuxAvailable() || process.env.CI ? describe : describe.skip;

const segments = Array.from({ length: 30 }, (_, i) => `segment${String(i + 1).padStart(2, "0")}`).join(" ");

// The real binary in tmux, 60 columns wide: an approval shows the whole command it asks about and
// every answer. Before, the command was cut to one row (`segment…`: the `&& touch ran` being
// approved never showed) and the question lost `[a]lways` past the 60th column.
suite("agent-machine: an approval in a 60-column terminal", () => {
  let cli: TerminalCli | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await cli?.kill();
    cli = undefined;
    removeDir(dir);
  });

  const start = () => {
    dir = tempDir();
    cli = startTmuxCli([], { cwd: dir, env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }) });
    cli.resize(60, 40);
    return cli;
  };

  it("shows the whole command, wrapped, and every answer of the question", async () => {
    const term = start();
    await term.waitFor(/^›/m);
    term.type(`run: echo ${segments} && touch ran && echo TAIL`);
    term.keys("Enter");
    const screen = await term.waitFor("? Allow bash");
    // The block from "Approval needed" to the question: the command's rows, then every answer.
    const block = screen.slice(screen.indexOf("Approval needed: bash"));
    for (let i = 1; i <= 30; i++) expect(block).toContain(`segment${String(i).padStart(2, "0")}`);
    expect(block).toContain("&& touch ran && echo TAIL");
    const question = block.slice(block.indexOf("? Allow bash"));
    expect(question.replace(/\s+/g, " ")).toContain(
      "? Allow bash [y]es / [n]o / [r] no, say why / [a]lways for bash",
    );
    // No row of it is wider than the terminal, and the command is not cut with "…".
    for (const row of screen.split("\n")) expect(row.length).toBeLessThanOrEqual(60);
    expect(block.slice(0, block.indexOf("? bash"))).not.toContain("…");
    term.type("n");
    await term.waitFor("— done");
    expect(existsSync(path.join(dir!, "ran"))).toBe(false);
  });

  it("a right-to-left override in a command is shown as \\u202E: the displayed text is what runs", async () => {
    const term = start();
    await term.waitFor(/^›/m);
    // A bidi terminal would show `touch exe.txt`-looking text; the file created is named RLO + "txt.exe".
    term.type("run: touch \u202Etxt.exe");
    term.keys("Enter");
    const screen = await term.waitFor("? Allow bash");
    // From the approval on (the line typed above it is the user's own): no override character left.
    const approval = screen.slice(screen.indexOf("Approval needed: bash"));
    expect(approval).toContain("$ touch \\u202Etxt.exe");
    expect(approval).toMatch(/\? bash touch \\u202Etxt\.exe +waiting for your approval/);
    expect(approval).not.toContain("\u202E");
    term.type("n");
    await term.waitFor("— done");
  });
});
