import * as path from "node:path";
import stringWidth from "string-width";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  removeDir,
  startTmuxCli,
  type TerminalCli,
  tempDir,
  tmuxAvailable,
  waitUntil,
} from "./fixtures/cli-harness.js";

// The command's screen in a real terminal (tmux, which re-wraps lines on resize as most terminals
// do): text streamed while the window is resized, wide characters, emoji and over-long lines must
// each end up in the scrollback exactly once — no stale copies of redrawn lines, nothing lost.

const STREAM_SCRIPT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "fixtures",
  "cli-stream-script.mjs",
);

/** Widths a user might drag the window through, narrower and wider than the start (120). */
const WIDTHS = [70, 104, 48, 90, 36, 120, 57, 83, 41, 110];

// tmux is a system package (CI installs it, .ci/run): elsewhere without it this suite is skipped,
// except under CI=true where a missing tmux must fail loudly.
const hasTmux = tmuxAvailable();
const suite = hasTmux || process.env.CI ? describe : describe.skip;
if (!hasTmux) console.warn("screen-in-tmux tests: tmux was not found on PATH (apt-get install tmux)");

suite("the screen in a real terminal (tmux)", () => {
  let cli: TerminalCli | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await cli?.kill();
    removeDir(dir);
    cli = undefined;
    dir = undefined;
  });

  /** Runs one prompt, resizing the window every 150 ms while the answer streams; returns the history. */
  async function streamWhileResizing(prompt: string, resize: boolean): Promise<string> {
    dir = tempDir();
    cli = startTmuxCli([prompt], { cwd: dir, env: cleanEnv({ AGENT_MACHINE_SCRIPT: STREAM_SCRIPT }) });
    await cli.waitFor(/model is answering|— done/);
    for (let i = 0; resize && !/— done/.test(cli.screen()); i++) {
      cli.resize(WIDTHS[i % WIDTHS.length]!);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await cli.waitFor("— done", 60_000);
    return cli.history();
  }

  /** How often each of the numbered words appears in the text. */
  function counts(text: string, prefix: string, n: number): number[] {
    return Array.from({ length: n }, (_, i) => {
      const word = `${prefix}${String(i + 1).padStart(4, "0")}`;
      return text.split(word).length - 1;
    });
  }

  it("leaves every word of an answer exactly once in the scrollback when the window is resized while it streams", async () => {
    const history = await streamWhileResizing("words 150", true);
    const seen = counts(history, "w", 150);
    expect(seen.filter((count) => count !== 1)).toEqual([]);
  });

  it("measures wide characters by their columns: a CJK answer leaves no stale copies, resized or not", async () => {
    const steady = counts(await streamWhileResizing("cjk 80", false), "漢字", 80);
    expect(steady.filter((count) => count !== 1)).toEqual([]);
    await cli?.kill();
    removeDir(dir);
    const resized = counts(await streamWhileResizing("cjk 80", true), "漢字", 80);
    expect(resized.filter((count) => count !== 1)).toEqual([]);
  });

  it("emoji too", async () => {
    const seen = counts(await streamWhileResizing("emoji 80", true), "🚀", 80);
    expect(seen.filter((count) => count !== 1)).toEqual([]);
  });

  it("a line longer than the window, with no space to wrap at, is cut into rows and kept whole", async () => {
    const history = await streamWhileResizing("long 700", true);
    // The answer is "abcdefghij" repeated: all 700 of its letters are there, once.
    const letters = history
      .split("\n")
      .filter((line) => /^[a-j]+$/.test(line.trim()))
      .join("")
      .replace(/\s/g, "");
    expect(letters).toBe("abcdefghij".repeat(70));
  });

  it("renders a markdown table as it streams, re-fits it when the window narrows mid-table, and leaves it once in the scrollback", async () => {
    dir = tempDir();
    cli = startTmuxCli(["table 30"], { cwd: dir, env: cleanEnv({ AGENT_MACHINE_SCRIPT: STREAM_SCRIPT }) });
    // Mid-stream: the rows so far are drawn as a table, not as the source's pipes.
    // (Rows 5 to 19 in view: the draft shows its last rows, and a busy machine polls seldom.)
    const screen = await cli.waitFor(/│ r00(0[5-9]|1\d) │/);
    expect(screen).not.toMatch(/\| r000\d \|/);
    expect(screen).toMatch(/^├─+┼/m);
    cli.resize(36);
    // The block still growing is drawn again for the new width: its rows fit 36 columns.
    const tableRows = (text: string) => text.split("\n").filter((line) => /^[│├┌└]/.test(line));
    await waitUntil(
      () =>
        tableRows(cli!.screen()).every((line) => stringWidth(line) <= 35) &&
        tableRows(cli!.screen()).length > 0,
      "the table to be re-fitted to 36 columns",
    );
    await cli.waitFor("— done", 60_000);
    const history = cli.history();
    const seen = counts(history, "r", 30);
    expect(seen.filter((count) => count !== 1)).toEqual([]);
    // Drawn once, whole, at the width it ended at; the markdown around it rendered too.
    expect(history.match(/^┌/gm)).toHaveLength(1);
    expect(tableRows(history).every((line) => stringWidth(line) <= 35)).toBe(true);
    expect(history).not.toMatch(/\|-----\|/);
    expect(history).toMatch(/^Results$/m);
    expect(history).not.toContain("## Results");
    expect(history).toMatch(/^The 30 rows below:$/m);
    expect(history.match(/All 30 rows shown\./g)).toHaveLength(1);
  });
});
