import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  REPO,
  removeDir,
  runCliProcess,
  startTerminalCli,
  type TerminalCli,
  tempDir,
  waitUntil,
} from "./fixtures/cli-harness.js";

// What `npm start` does on a fresh machine: no API key, stdin not a terminal.
describe("agent-machine with no API key (the demo)", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  it("runs the scripted demo to the end by itself, says it is a demo, and exits 0", async () => {
    dir = tempDir();
    const result = await runCliProcess([], { cwd: dir, env: cleanEnv() });
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain("agent-machine demo");
    expect(out).toContain("No provider configured");
    expect(out).toContain("To use a real model: export ANTHROPIC_API_KEY=");
    // No ANSI colours when stdout is not a terminal.
    expect(out).not.toContain("\x1b[");

    // A parallel tool turn: four calls, all done, the slow test run last.
    for (const line of [
      "✓ list_files .",
      "✓ read_file README.md",
      "✓ read_file src/math.js",
      "✓ bash node test.js",
    ]) {
      expect(out).toContain(line);
    }
    // The failing test's output, folded under its call: why it failed, not only that it ran.
    const testRun = out.slice(out.indexOf("✓ bash node test.js"));
    expect(testRun).toMatch(
      /^✓ bash node test\.js {2}done [\d.]+s\n {4}│ … \d+ lines above \([\d.]+ KB in all\)\n(?: {4}│ .*\n)* {4}│ not ok 61 - add\(2, 2\) is 4 \(got 5\)\n {4}│ 1 failed\n {4}│\n {4}│ \[Exit code: 1\]\n/,
    );
    // The live page: its address comes first, before anything runs; not a terminal, so not kept.
    const page = out.indexOf("Visualizer: open http://127.0.0.1:");
    expect(page).toBeGreaterThan(-1);
    expect(page).toBeLessThan(out.indexOf("✓ list_files ."));
    expect(out).not.toContain("The live page stays open");
    // The steering message is typed while the test run is going, and the model answers it.
    const typed = out.indexOf("(demo) you type while the tests run");
    expect(typed).toBeGreaterThan(-1);
    expect(typed).toBeLessThan(out.indexOf("✓ bash node test.js"));
    expect(out).toContain('You said: "Also add a line about the fix to CHANGELOG.md, please."');
    // Compaction, then the final answer and the run summary.
    expect(out).toMatch(/⟳ context compacted \(level \d/);
    expect(out).toContain("All tests pass now.");
    expect(out).toMatch(/— done · 4 turns/);

    // The demo's temporary workspace is gone, and nothing was written where it was started.
    const workspace = /\n {2}(\/\S+agent-machine-demo-\S+)\n/.exec(out)?.[1];
    expect(workspace).toBeDefined();
    expect(existsSync(workspace!)).toBe(false);
    expect(existsSync(`${dir}/.agent-machine`)).toBe(false);
  });

  let term: TerminalCli | undefined;
  afterEach(async () => {
    await term?.kill();
    term = undefined;
  });

  // In a terminal, the demo's live page outlives the run until the user quits (`npm start`, and
  // `agent-machine --demo --visualize` for an installed package).
  for (const [args, quitKey] of [
    [[], "Enter"],
    [["--demo", "--visualize"], "q"],
  ] as const) {
    it(`in a terminal (${args.join(" ") || "no options"}): the page's address first, the page kept until ${quitKey}`, async () => {
      dir = tempDir();
      term = startTerminalCli([...args], { cwd: dir, env: cleanEnv() });
      const first = await term.waitFor(/Visualizer: open (http:\/\/127\.0\.0\.1:\d+\/\S*)/);
      const url = /Visualizer: open (http:\/\/127\.0\.0\.1:\d+\/\S*)/.exec(first)![1]!;
      await term.waitFor("— done · 4 turns");
      // Printed before the run starts, right under the banner: the user can watch the whole run.
      const history = term.history();
      expect(history.indexOf("Visualizer: open")).toBeGreaterThan(history.indexOf("agent-machine demo"));
      expect(history.indexOf("Visualizer: open")).toBeLessThan(history.indexOf("This is a demo"));
      expect(history.indexOf("This is a demo")).toBeLessThan(history.indexOf("› The tests fail"));
      await term.waitFor(`The live page stays open until you quit (Enter or q):\n  ${url}\n`);
      // Still served after the run, and the command still waits.
      const page = await fetch(url);
      expect(page.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(term.exitCode()).toBeUndefined();
      if (quitKey === "q") term.type("q");
      else term.keys("Enter");
      await waitUntil(() => term!.exitCode() !== undefined, "the command to quit");
      expect(term.exitCode()).toBe(0);
      await expect(fetch(url)).rejects.toThrow();
    });
  }

  it("is what `npm start` runs", async () => {
    const pkg = await import("../package.json", { with: { type: "json" } });
    expect(pkg.default.scripts.start).toBe("tsx cli/main.ts");
    expect(pkg.default.bin["agent-machine"]).toBe("./bin/agent-machine.js");
    expect(existsSync(`${REPO}/cli/main.ts`)).toBe(true);
  });
});
