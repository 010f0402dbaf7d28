import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, REPO, removeDir, runCliProcess, tempDir } from "./fixtures/cli-harness.js";

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

  it("is what `npm start` runs", async () => {
    const pkg = await import("../package.json", { with: { type: "json" } });
    expect(pkg.default.scripts.start).toBe("tsx cli/main.ts");
    expect(pkg.default.bin["agent-machine"]).toBe("./bin/agent-machine.js");
    expect(existsSync(`${REPO}/cli/main.ts`)).toBe(true);
  });
});
