import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  killMatching,
  pidsMatching,
  removeDir,
  sessionsDirOf,
  startTerminalCli,
  TEST_SCRIPT,
  type TerminalCli,
  tempDir,
  waitUntil,
} from "./fixtures/cli-harness.js";

// The real binary in a pseudo-terminal (node-pty, read through xterm.js): what a user types reaches the agent.
describe("agent-machine in a terminal", () => {
  let cli: TerminalCli | undefined;
  let dir: string | undefined;
  const markers: string[] = [];

  afterEach(async () => {
    await cli?.kill();
    for (const marker of markers.splice(0)) killMatching(marker);
    removeDir(dir);
    cli = undefined;
    dir = undefined;
  });

  const start = (args: string[] = []) => {
    dir = tempDir();
    cli = startTerminalCli(args, { cwd: dir, env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }) });
    return cli;
  };

  it("takes a line typed while a tool runs as a steering message the model then receives", async () => {
    const term = start(["--permission-mode", "bypass"]);
    await term.waitFor(/^›/m);
    term.type("run: sleep 3; echo slow-step-done");
    term.keys("Enter");
    await term.waitFor(/bash sleep 3; echo slow-step-done\s+running/);
    term.type("please also check the docs");
    term.keys("Enter");
    await term.waitFor("steering queued");
    // The script answers a user message with "heard: <text>": the steering text reached the model.
    const screen = await term.waitFor("heard: please also check the docs");
    expect(screen).toMatch(/✓ bash sleep 3; echo slow-step-done\s+done/);
    expect(screen).toContain("— done · 2 turns");

    // The model's second request held the tool result, then the steering message.
    const [session] = readdirSync(sessionsDirOf(dir!));
    const events = readFileSync(path.join(sessionsDirOf(dir!), session!, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const ends = events.filter((e) => e.type === "message_end").map((e) => e.message.role);
    expect(ends).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
  });

  it("aborts a running bash command on Ctrl-C, leaves no process behind, and quits on a second Ctrl-C", async () => {
    const marker = `am-marker-${process.pid}-${Date.now()}`;
    markers.push(marker);
    const term = start(["--permission-mode", "bypass"]);
    await term.waitFor(/^›/m);
    term.type(`run: (exec -a ${marker} sleep 300); echo after`);
    term.keys("Enter");
    await term.waitFor(/running \d/);
    await waitUntil(() => pidsMatching(marker).length >= 1, "the command to start");

    term.keys("C-c");
    const screen = await term.waitFor("— aborted");
    expect(screen).toMatch(/✗ bash .* failed/);
    expect(screen).toContain("Ctrl-C again to quit");
    await waitUntil(() => pidsMatching(marker).length === 0, "the command's processes to end");

    // The transcript is kept: the next prompt sees the aborted call's result.
    term.type("and now?");
    term.keys("Enter");
    await term.waitFor("heard: and now?");

    // At rest, the first Ctrl-C says the second quits (issue 43).
    term.keys("C-c");
    await term.waitFor("Ctrl-C again to quit");
    term.keys("C-c");
    await waitUntil(() => term.exitCode() !== undefined, "the CLI to quit");
    expect(term.exitCode()).toBe(0);
  });

  it("asks before a write: n denies one call, a allows the tool for the rest of the session", async () => {
    const term = start();
    await term.waitFor(/^›/m);
    term.type("write: notes.txt");
    term.keys("Enter");
    // The two calls run in parallel and both ask; answer whichever question comes first with "n".
    const first = /\? Allow write_file (notes\.txt(?:\.2)?) /.exec(
      await term.waitFor(/\? Allow write_file notes/),
    )![1]!;
    const second = first === "notes.txt" ? "notes.txt.2" : "notes.txt";
    term.type("n");
    await term.waitFor(`? Allow write_file ${second} `);
    term.type("a");
    await term.waitFor("— done");
    expect(existsSync(path.join(dir!, first))).toBe(false);
    expect(existsSync(path.join(dir!, second))).toBe(true);
    expect(term.screen()).toContain("✓ allowed write_file (always, this session)");

    // "always" holds: the next writes run without a question.
    term.type("write: more.txt");
    term.keys("Enter");
    await waitUntil(
      () => existsSync(path.join(dir!, "more.txt.2")) && existsSync(path.join(dir!, "more.txt")),
      "the writes",
    );
    expect(term.screen()).not.toContain("? Allow write_file more.txt");
  });

  it("while a call waits for approval its line says so (not running); once allowed, the status shows it running", async () => {
    const term = start();
    await term.waitFor(/^›/m);
    term.type("run: sleep 2; echo approved-run");
    term.keys("Enter");
    let screen = await term.waitFor("? Allow bash");
    expect(screen).toMatch(/\? bash sleep 2; echo approved-run +waiting for your approval/);
    expect(screen).toMatch(/waiting for your approval of bash \d/);
    expect(screen).not.toMatch(/approved-run +running/);
    term.type("y");
    screen = await term.waitFor(/bash sleep 2; echo approved-run +running \d/);
    expect(screen).toContain("✓ allowed bash");
    expect(screen).toMatch(/running 1 tool \d/);
    expect(screen).not.toContain("waiting for your approval");
    await term.waitFor("tool results: approved-run");
  });

  it("shows an edit's diff before the question; allowed, the edit runs and its line shows the applied diff", async () => {
    const term = start();
    writeFileSync(path.join(dir!, "math.js"), "export function add(a, b) {\n  return a + b + 1;\n}\n");
    await term.waitFor(/^›/m);
    term.type("edit: math.js :: return a + b + 1; :: return a + b;");
    term.keys("Enter");
    const asked = await term.waitFor("? Allow edit_file math.js");
    // The diff comes before the question, and nothing was changed yet.
    expect(asked).toContain("Approval needed: edit_file math.js");
    expect(asked).toMatch(
      /@@ -1,3 \+1,3 @@\n +export function add\(a, b\) \{\n +- {2}return a \+ b \+ 1;\n +\+ {2}return a \+ b;\n/,
    );
    expect(asked.indexOf("-  return a + b + 1;")).toBeLessThan(asked.indexOf("? Allow edit_file"));
    expect(readFileSync(path.join(dir!, "math.js"), "utf8")).toContain("a + b + 1");
    term.type("y");
    const done = await term.waitFor("tool results: Edited math.js");
    expect(readFileSync(path.join(dir!, "math.js"), "utf8")).toContain("return a + b;\n");
    // After it ran: the diff it applied, under its line.
    expect(done).toMatch(
      /✓ edit_file math\.js +done [\d.]+s · Edited math\.js[^\n]*\n +│ @@ -1,3 \+1,3 @@\n(?: +│ .*\n)*? +│ - {2}return a \+ b \+ 1;\n +│ \+ {2}return a \+ b;/,
    );
  });

  it("shows a write's new content and a command in full; r denies with a reason the model reads", async () => {
    const term = start();
    await term.waitFor(/^›/m);
    term.type("run: echo first line; echo second-line-of-the-command");
    term.keys("Enter");
    const asked = await term.waitFor("? Allow bash");
    expect(asked).toContain("$ echo first line; echo second-line-of-the-command");
    expect(asked).toContain("[r] no, say why");
    term.type("r");
    await term.waitFor("? Why not bash");
    term.type("use printf instead");
    term.keys("Enter");
    const told = await term.waitFor("tool results: The user denied this tool call: use printf instead");
    expect(told).toContain("✗ denied bash: use printf instead");

    term.type("write: fresh.txt");
    term.keys("Enter");
    const write = await term.waitFor(/\? Allow write_file fresh\.txt/);
    expect(write).toMatch(/new file, 1 line, 4 bytes\n +\+one\n/);
  });

  it("a status line under the input: model, context % moving as the session grows, tokens, state, queued", async () => {
    const term = start(["--permission-mode", "bypass", "--context-window", "20000"]);
    const status = /cli-script\.mjs · context ([\d.]+)% of 16k · ([\d.]+k?) tokens · (.+)$/m;
    const percentOf = (screen: string) => Number(status.exec(screen)![1]);
    let screen = await term.waitFor(status);
    expect(status.exec(screen)![3]).toBe("idle");
    expect(percentOf(screen)).toBe(0);

    /** The screen once the n-th run has ended and the status line says so. */
    const afterRun = async (n: number) => {
      await waitUntil(() => (term.history().match(/— done/g)?.length ?? 0) >= n, `run ${n} to end`);
      return term.waitFor(/· idle$/m);
    };
    term.type("hello");
    term.keys("Enter");
    screen = await afterRun(1);
    const first = percentOf(screen);
    expect(first).toBeGreaterThan(0);

    // A long message: the context grows by about 1,000 tokens of the 16,000.
    term.type(`remember ${"lorem ipsum ".repeat(340)}`);
    term.keys("Enter");
    screen = await afterRun(2);
    expect(percentOf(screen)).toBeGreaterThan(first + 4);

    // While a tool runs the state says so; a message typed meanwhile is counted until it is taken.
    term.type("run: sleep 2; echo status-done");
    term.keys("Enter");
    await term.waitFor(
      /running 1 tool [\d.]+s · cli-script\.mjs · context [\d.]+% of 16k · [\d.]+k? tokens$/m,
    );
    term.type("and then this");
    term.keys("Enter");
    await term.waitFor(/running 1 tool [\d.]+s · cli-script\.mjs · .* tokens · 1 queued$/m);
    screen = await afterRun(3);
    expect(screen).toContain("heard: and then this");
    expect(screen).not.toMatch(/queued$/m);
  });

  it("/compact [focus] summarises old turns now: the status line's context % goes down", async () => {
    const term = start(["--permission-mode", "bypass", "--context-window", "20000"]);
    const status = /cli-script\.mjs · context ([\d.]+)% of 16k · ([\d.]+k?) tokens · (.+)$/m;
    const percentOf = (screen: string) => Number(status.exec(screen)![1]);
    await term.waitFor(status);
    const lines = ["hello", `remember ${"lorem ipsum ".repeat(340)}`, "one", "two", "three"];
    for (const [i, line] of lines.entries()) {
      term.type(line);
      term.keys("Enter");
      await waitUntil(() => (term.history().match(/— done/g)?.length ?? 0) > i, `run ${i + 1} to end`);
    }
    let screen = await term.waitFor(/· idle$/m);
    const before = percentOf(screen);
    expect(before).toBeGreaterThan(5);

    term.type("/compact the lorem ipsum");
    term.keys("Enter");
    screen = await term.waitFor(/⟳ context compacted \(level 2: old turns summarised\) \d+ → \d+ tokens/);
    expect(screen).toContain("Compacting the context (focus: the lorem ipsum)");
    screen = await term.waitFor(/· idle$/m);
    expect(percentOf(screen)).toBeLessThan(before - 4);

    // The session goes on from the compacted context.
    term.type("after");
    term.keys("Enter");
    await term.waitFor("heard: after");
  });

  it("slash commands (/help, /cost, /visualize, a typo answered), Tab completion, and @path attaching a file", async () => {
    const term = start();
    writeFileSync(path.join(dir!, "notes.txt"), "hello-from-the-file\n");
    await term.waitFor(/^›/m);
    term.type("/help");
    term.keys("Enter");
    await term.waitFor(/\/cost +the session's tokens and cost so far/);
    await term.waitFor(/\/compact +compact the context now/);
    term.type("/cst");
    term.keys("Enter");
    await term.waitFor("Unknown command /cst (did you mean /cost?)");
    term.type("/vis");
    term.keys("Tab");
    await term.waitFor(/^› \/visualize$/m);
    term.keys("Enter");
    const page = await term.waitFor(/Visualizer: open (http:\/\/127\.0\.0\.1:\d+\/\S*)/);
    const url = /Visualizer: open (http:\/\/127\.0\.0\.1:\d+\/\S*)/.exec(page)![1]!;
    expect((await fetch(url)).status).toBe(200);

    term.type("what is in @no");
    term.keys("Tab");
    await term.waitFor(/^› what is in @notes\.txt$/m);
    term.keys("Enter");
    const screen = await term.waitFor("— done");
    expect(screen).toContain("+ notes.txt attached (1 lines, 20 bytes)");
    // The echo names the file; the model got its content (the script repeats what it heard).
    expect(screen).toContain("› what is in @notes.txt (attached: notes.txt)");
    expect(term.history()).toContain(
      'heard: what is in @notes.txt\n\n<file path="notes.txt">\nhello-from-the-file\n</file>',
    );
    term.type("/cost");
    term.keys("Enter");
    await term.waitFor(
      /This session: [\d,]+ tokens · no cost reported by the provider · context [\d,]+ tokens/,
    );
    // Nothing of the commands reached the model.
    expect(term.history()).not.toContain("heard: /");
  });

  it("a 10,000-line output is folded to its last lines with its size; /expand unfolds it on request", async () => {
    const term = start(["--permission-mode", "bypass"]);
    await term.waitFor(/^›/m);
    term.type("run: seq 1 10000");
    term.keys("Enter");
    const screen = await term.waitFor("— done");
    expect(screen).toMatch(
      /✓ bash seq 1 10000 +done [\d.]+s\n +│ … \d+ lines above \([\d.]+ KB in all\)\n(?: +│ .*\n){4}/,
    );
    expect(screen).toMatch(/│ 10000\n/);
    // The scrollback holds the fold, not the output.
    const before = term.history();
    expect(before).not.toMatch(/^ +│ 5000$/m);
    expect(before.split("\n").length).toBeLessThan(100);
    term.type("/expand");
    term.keys("Enter");
    await waitUntil(() => /^bash seq 1 10000: \d+ lines$/m.test(term.history()), "the unfolded output");
    await term.waitFor(/^›/m);
    expect(term.history().split("\n").length).toBeGreaterThan(1000);
  });

  it("takes a >> line as a follow-up, delivered when the agent would otherwise stop", async () => {
    const term = start(["--permission-mode", "bypass"]);
    await term.waitFor(/^›/m);
    term.type("run: sleep 2; echo first-done");
    term.keys("Enter");
    await term.waitFor(/running \d/);
    term.type(">> then summarise");
    term.keys("Enter");
    await term.waitFor("follow-up queued: then summarise");
    const screen = await term.waitFor("heard: then summarise");
    // The tool result reached the model first (its answer), then the follow-up.
    expect(screen.indexOf("tool results: first-done")).toBeGreaterThan(-1);
    expect(screen.indexOf("tool results: first-done")).toBeLessThan(screen.indexOf("heard: then summarise"));
  });

  it("--visualize serves the live page on 127.0.0.1 while the session is open", async () => {
    const term = start(["--visualize"]);
    const screen = await term.waitFor(/Visualizer: open (http:\/\/127\.0\.0\.1:\d+\/\S*)/);
    const url = /Visualizer: open (http:\/\/127\.0\.0\.1:\d+\/\S*)/.exec(screen)![1]!;
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
  });

  it("/clear starts a new session, /resume picks the second one of the list, /model switches keeping the conversation", async () => {
    const term = start();
    const sessionIds = () => [...term.history().matchAll(/^Session (\S+) \(resume with/gm)].map((m) => m[1]!);
    await term.waitFor(/^›/m);
    term.type("remember alpha-one");
    term.keys("Enter");
    await term.waitFor("heard: remember alpha-one");
    const [first] = sessionIds();

    term.type("/clear");
    term.keys("Enter");
    const second = await waitUntil(() => sessionIds()[1], "a new session");
    expect(second).not.toBe(first);
    await term.waitFor(/^›$/m);
    term.type("now beta-two");
    term.keys("Enter");
    await term.waitFor("heard: now beta-two");

    // The list: newest first, each with its date, first prompt, messages and model.
    term.type("/resume");
    term.keys("Enter");
    const list = await term.waitFor("Resume which session? [1]");
    expect(list).toMatch(
      new RegExp(
        ` 1\\. ${second}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  now beta-two · 2 messages · cli-script\\.mjs`,
      ),
    );
    expect(list).toMatch(new RegExp(` 2\\. ${first}  .*remember alpha-one · 2 messages`));
    term.type("2");
    term.keys("Enter");
    await term.waitFor(`Resumed session ${first}: 2 messages`);

    term.type("/model other-model");
    term.keys("Enter");
    // The same session on the other model: the status line names it, the conversation goes on.
    await waitUntil(
      () => term.history().split(`Resumed session ${first}: 2 messages`).length === 3,
      "the switch",
    );
    await term.waitFor(/^other-model · context/m);
    term.type("and gamma");
    term.keys("Enter");
    await term.waitFor("heard: and gamma");
    const events = readFileSync(path.join(sessionsDirOf(dir!), first!, "events.jsonl"), "utf8");
    const users = events
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((e) => e.type === "message_end" && e.message.role === "user")
      .map((e) => e.message.content);
    expect(users).toEqual(["remember alpha-one", "and gamma"]);
    // The session is stored as running on the model it was switched to.
    const meta = JSON.parse(readFileSync(path.join(sessionsDirOf(dir!), first!, "meta.json"), "utf8"));
    expect(meta.model).toBe("other-model");
  });
  it("a /resume of a session that is not there says so and the session the user was in goes on", async () => {
    const term = start();
    await term.waitFor(/^›/m);
    term.type("remember delta-four");
    term.keys("Enter");
    await term.waitFor("heard: remember delta-four");
    const [, id] = /^Session (\S+) \(resume with/m.exec(term.history())!;

    term.type("/resume 20200101-000000000-nosuch");
    term.keys("Enter");
    await term.waitFor('No session "20200101-000000000-nosuch"');
    await term.waitFor(`Resumed session ${id}: 2 messages`);
    // Still running, in the same conversation.
    expect(term.exitCode()).toBeUndefined();
    term.type("what did you say");
    term.keys("Enter");
    await term.waitFor("earlier: 3 words, last remember delta-four");
  });
});
