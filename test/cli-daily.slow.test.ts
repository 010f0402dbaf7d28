import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  runCliProcess,
  removeDir,
  sessionsDirOf,
  startTerminalCli,
  TEST_SCRIPT,
  type TerminalCli,
  tempDir,
  waitUntil,
} from "./fixtures/cli-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicMessage } from "./fixtures/provider-wire.js";

/** The user messages of the workspace's newest session, as its event log holds them. */
function userMessages(cwd: string): string[] {
  const root = sessionsDirOf(cwd);
  const [session] = readdirSync(root).sort().reverse();
  return readFileSync(path.join(root, session!, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((e) => e.type === "message_end" && e.message.role === "user")
    .map((e) => (typeof e.message.content === "string" ? e.message.content : e.message.content[0].text));
}

// Issue 43: what a daily user of Claude Code or pi reaches for in the first week, in a real terminal.
describe("agent-machine every day", () => {
  let cli: TerminalCli | undefined;
  let server: ProviderFixtureServer | undefined;
  const dirs: string[] = [];

  afterEach(async () => {
    await cli?.kill();
    await server?.close();
    cli = undefined;
    server = undefined;
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

  it("edits the line: Left inserts where the cursor is, Up recalls earlier lines (also of the last session), Shift-Enter and \\ + Enter make a multi-line prompt, Esc stops a run", async () => {
    const first = start();
    let term = first.term;
    await term.waitFor(/^›/m);
    term.type("helo");
    term.keys("Left");
    term.type("l");
    term.keys("Enter");
    await term.waitFor("heard: hello");
    term.type("one");
    term.type("\x1b[13;2u");
    term.type("two\\");
    term.keys("Enter");
    term.type("three");
    await term.waitFor(/^ {2}three/m);
    term.keys("Enter");
    await waitUntil(() => userMessages(first.cwd).length === 2, "the multi-line prompt to be sent");
    expect(userMessages(first.cwd)).toEqual(["hello", "one\ntwo\nthree"]);

    term.type("story");
    term.keys("Enter");
    await term.waitFor(/s005/);
    term.keys("Escape");
    await term.waitFor("— aborted");
    await term.kill();

    // The next session in the workspace: Up recalls what was typed in the last one, newest first.
    cli = startTerminalCli([], {
      cwd: first.cwd,
      env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT, XDG_CONFIG_HOME: first.config }),
    });
    term = cli;
    await term.waitFor(/^›/m);
    term.keys("Up", "Up");
    await term.waitFor(/^› one\n {2}two\n {2}three/m);
    // Up goes through the rows of a multi-line prompt, then on to the entry before it.
    term.keys("Up", "Up", "Up");
    await term.waitFor(/^› hello/m);
    term.keys("Enter");
    await term.waitFor("heard: hello");
  });

  it("a bracketed paste of several lines is one message, shown folded until Enter", async () => {
    const { term, cwd } = start();
    await term.waitFor(/^›/m);
    term.type("\x1b[200~Error: boom\r\n    at a (a.js:1:1)\r\n    at b (b.js:2:2)\x1b[201~");
    await term.waitFor(/^› \[pasted 3 lines\]/m);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(term.history()).not.toContain("heard:");
    term.type(" why?");
    term.keys("Enter");
    await term.waitFor("heard: Error: boom");
    expect(userMessages(cwd)).toEqual(["Error: boom\n    at a (a.js:1:1)\n    at b (b.js:2:2) why?"]);
  });

  it("Ctrl-C at rest clears the line first; on an empty line it says a second one quits, which does within a moment", async () => {
    const { term } = start();
    await term.waitFor(/^›/m);
    term.type("half typed");
    await term.waitFor(/^› half typed/m);
    term.keys("C-c");
    await term.waitFor(/^›\s*$/m);
    expect(term.exitCode()).toBeUndefined();
    term.keys("C-c");
    await term.waitFor("Ctrl-C again to quit");
    // Later than the moment, a Ctrl-C only says it again.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(term.screen()).not.toContain("Ctrl-C again to quit");
    term.keys("C-c");
    await term.waitFor("Ctrl-C again to quit");
    expect(term.exitCode()).toBeUndefined();
    term.keys("C-c");
    await waitUntil(() => term.exitCode() !== undefined, "the CLI to quit");
    expect(term.exitCode()).toBe(0);
  });

  it("the words on screen before Ctrl-C stay in the transcript, marked interrupted: the model sees them next, also after --continue", async () => {
    const first = start();
    let term = first.term;
    await term.waitFor(/^›/m);
    term.type("story");
    term.keys("Enter");
    await term.waitFor(/s012/);
    term.keys("C-c");
    await term.waitFor("— aborted");
    const shown = Number(/s(\d{3})\s*$/m.exec(term.history().split("— aborted")[0]!)?.[1] ?? "0");
    expect(shown).toBeGreaterThanOrEqual(12);
    term.type("what did you say");
    term.keys("Enter");
    const said = /earlier: (\d+) words, last (\S+) (\S+)/.exec(await term.waitFor(/earlier: \d+ words/))!;
    // Every word shown reached the model, and the marker after them.
    expect(Number(said[1])).toBeGreaterThanOrEqual(shown);
    expect(said[3]).toBe("[interrupted]");
    await term.kill();

    cli = startTerminalCli(["--continue"], {
      cwd: first.cwd,
      env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT, XDG_CONFIG_HOME: first.config }),
    });
    term = cli;
    await term.waitFor(/^›/m);
    term.type("story");
    term.keys("Enter");
    await term.waitFor(/s008/);
    term.keys("C-c");
    await term.waitFor("— aborted");
    await term.kill();
    cli = startTerminalCli(["--continue"], {
      cwd: first.cwd,
      env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT, XDG_CONFIG_HOME: first.config }),
    });
    term = cli;
    await term.waitFor(/^›/m);
    term.type("what did you say");
    term.keys("Enter");
    const again = /earlier: (\d+) words, last (\S+) (\S+)/.exec(await term.waitFor(/earlier: \d+ words/))!;
    expect(Number(again[1])).toBeGreaterThanOrEqual(8);
    expect(again[2]).toMatch(/^s\d{3}$/);
    expect(again[3]).toBe("[interrupted]");
  });

  it("over a real wire (Anthropic's): the next request holds the interrupted words and the mark", async () => {
    server = await startProviderServer();
    const frames = anthropicMessage({ blocks: [{ type: "text", text: ["Part one of it, ", "part two, "] }] });
    // The answer's first words arrive, then the stream stalls mid-answer: the user presses Ctrl-C.
    server.reply(
      { type: "sse", frames, stallAfter: 4 },
      {
        type: "sse",
        frames: anthropicMessage({ blocks: [{ type: "text", text: ["I had said: part one."] }] }),
      },
    );
    const cwd = tempDir();
    dirs.push(cwd);
    cli = startTerminalCli(["--model", "claude-fixture-1"], {
      cwd,
      env: cleanEnv({ ANTHROPIC_API_KEY: "sk-ant-test-daily", ANTHROPIC_BASE_URL: server.url }),
    });
    const term = cli;
    await term.waitFor(/^›/m);
    term.type("tell me");
    term.keys("Enter");
    await term.waitFor("Part one of it");
    term.keys("C-c");
    await term.waitFor("— aborted");
    term.type("what did you say");
    term.keys("Enter");
    await term.waitFor("I had said: part one.");
    const messages = server.requests[1]!.body.messages as { role: string; content: unknown }[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const said = JSON.stringify(messages[1]!.content);
    expect(said).toContain("Part one of it, ");
    expect(said).toContain("[interrupted]");
  });

  it("the session's tokens add up across /model and --continue, and the context % shows at once after either", async () => {
    const status = /cli-script\.mjs · context ([\d.]+)% of 16k · (\d+) tokens · idle$/m;
    const first = start(["--context-window", "20000"]);
    let term = first.term;
    await term.waitFor(status);
    await term.waitFor(/^›/m);
    term.type("hello");
    term.keys("Enter");
    await term.waitFor("heard: hello");
    let screen = await term.waitFor(/context (?!0%)[\d.]+% of 16k · \d+ tokens · idle$/m);
    const spent = Number(status.exec(screen)![2]);
    expect(spent).toBeGreaterThan(0);

    // On another model, the same session: what it spent before still counts, the context still shows.
    term.type("/model other-model");
    term.keys("Enter");
    screen = await term.waitFor(/other-model · context [\d.]+% of 16k · \d+ tokens · idle$/m);
    const afterSwitch = /other-model · context ([\d.]+)% of 16k · (\d+) tokens/.exec(screen)!;
    expect(Number(afterSwitch[1])).toBeGreaterThan(0);
    expect(Number(afterSwitch[2])).toBe(spent);
    await term.kill();

    cli = startTerminalCli(["--continue", "--context-window", "20000"], {
      cwd: first.cwd,
      env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT, XDG_CONFIG_HOME: first.config }),
    });
    term = cli;
    // From the first line that says the session was resumed, before any call.
    screen = await term.waitFor(/Resumed session/);
    expect(Number(status.exec(screen)![1])).toBeGreaterThan(0);
    expect(Number(status.exec(screen)![2])).toBe(spent);
    term.type("again");
    term.keys("Enter");
    await term.waitFor("heard: again");
    await waitUntil(() => Number(status.exec(term.screen())?.[2] ?? 0) > spent, "the totals to grow");
  });

  it("small ones: /compact without a window says what to do in the command's terms; --help names AGENT_MACHINE_SCRIPT", async () => {
    const { term, cwd } = start();
    await term.waitFor(/^›/m);
    term.type("hello");
    term.keys("Enter");
    await term.waitFor("heard: hello");
    term.type("/compact");
    term.keys("Enter");
    const screen = await term.waitFor("Cannot compact");
    expect(screen).toContain(
      "Cannot compact: this session has no context window to compact against: start it with --context-window <tokens>",
    );
    expect(screen).not.toContain("createAgent");

    const help = await runCliProcess(["--help"], { cwd, env: cleanEnv() });
    expect(help.stdout).toContain("AGENT_MACHINE_SCRIPT=<file>");
    expect(help.stdout).toContain("AGENTS.md and CLAUDE.md");
  });

  it("/expand n and Ctrl-O unfold any earlier output, not only the last", async () => {
    const { term } = start(["--permission-mode", "bypass"]);
    await term.waitFor(/^›/m);
    term.type("run: seq 1001 1030");
    term.keys("Enter");
    await term.waitFor(/tool results: 1001/);
    term.type("run: seq 2001 2041");
    term.keys("Enter");
    await term.waitFor(/tool results: 2001/);
    // Folded: the first output's early lines are not on the screen.
    expect(term.history()).not.toMatch(/^1005$/m);
    term.type("/expand 2");
    term.keys("Enter");
    await term.waitFor(/^bash seq 1001 1030: 30 lines$/m);
    expect(term.history()).toMatch(/^1005$/m);
    term.type("/expand list");
    term.keys("Enter");
    await term.waitFor(/^ {2}2 {2}bash seq 1001 1030 {2}\(30 lines\)$/m);
    // Ctrl-O: the last, then the one before.
    term.keys("C-o");
    await waitUntil(
      () => /^bash seq 2001 2041: 41 lines$/m.test(term.history()),
      "Ctrl-O to show the last output",
    );
    expect(term.history()).toMatch(/^2005$/m);
    term.keys("C-o");
    await waitUntil(
      () => (term.history().match(/^bash seq 1001 1030: 30 lines$/gm)?.length ?? 0) === 2,
      "Ctrl-O to show the earlier output",
    );
  });
});
