import xterm from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { createEventView } from "../cli/event-view.js";
import { createScreen, type ScreenOutput } from "../cli/screen.js";
import { createStyle } from "../cli/style.js";
import { displayWidth, fitToColumns, splitAtColumns, terminalSafe } from "../cli/terminal-text.js";
import type { AssistantMessage } from "../index.js";

// The screen against a terminal emulator (xterm.js, headless), which re-wraps lines on resize as
// real terminals do. The terminal is resized between frames, and the screen only learns the new
// width a frame later (as a process learns it from SIGWINCH, after the terminal has re-wrapped):
// every streamed word must still end up exactly once, nothing duplicated, nothing lost.

const { Terminal } = xterm;

function virtualTerminal(cols: number, rows = 30) {
  // convertEol: a newline also returns the carriage, as a tty does for a program (ONLCR).
  const terminal = new Terminal({ cols, rows, scrollback: 5000, allowProposedApi: true, convertEol: true });
  let queue = Promise.resolve();
  const out: ScreenOutput & { columns: number; rows: number } = {
    isTTY: true,
    columns: cols,
    rows,
    write(text: string) {
      queue = queue.then(() => new Promise<void>((resolve) => terminal.write(text, resolve)));
      return true;
    },
  };
  return {
    out,
    terminal,
    settled: () => queue,
    /** Every row, scrollback included, with rows the terminal wrapped joined back into lines. */
    async text(): Promise<string> {
      await queue;
      const buffer = terminal.buffer.active;
      const lines: string[] = [];
      for (let i = 0; i < buffer.length; i++) {
        const line = buffer.getLine(i)!;
        const text = line.translateToString(true);
        if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
        else lines.push(text);
      }
      return lines.join("\n");
    },
  };
}

const words = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i + 1).padStart(4, "0")}`);

/** Streams `text` in 5-character pieces with a spinner below, resizing along `widths`. */
async function streamWhileResizing(text: string, widths: number[], startColumns = 100): Promise<string> {
  const vt = virtualTerminal(startColumns);
  const screen = createScreen(vt.out);
  let frame = 0;
  for (let i = 0; i < text.length; i += 5) {
    screen.write(text.slice(i, i + 5));
    screen.setLive([`⠋ model is answering ${frame}s`, "› typed while it streams"]);
    screen.flush();
    await vt.settled();
    if (frame % 4 === 3) {
      const width = widths[Math.floor(frame / 4) % widths.length]!;
      vt.terminal.resize(width, 30); // the terminal re-wraps now…
      await vt.settled();
      screen.write(""); // …and a frame is drawn before the process hears of it
      screen.setLive([`⠙ model is answering ${frame}s`, "› typed while it streams"]);
      screen.flush();
      vt.out.columns = width;
    }
    frame++;
  }
  screen.endLine();
  screen.setLive([]);
  screen.close();
  return vt.text();
}

const WIDTHS = [60, 110, 34, 80, 25, 120, 47];

describe("the screen on a terminal that re-wraps on resize", () => {
  it.each([
    ["ASCII words", "w"],
    ["CJK (two columns a character)", "漢字"],
    ["emoji", "🚀"],
  ])("leaves every word of %s exactly once while the window is resized", async (_name, prefix) => {
    const all = words(prefix, 150);
    const history = await streamWhileResizing(all.join(" "), WIDTHS);
    const counts = all.map((word) => history.split(word).length - 1);
    expect(counts.filter((count) => count !== 1)).toEqual([]);
    // The live lines are gone at the end, not left behind in the scrollback.
    expect(history).not.toContain("model is answering");
    expect(history).not.toContain("typed while it streams");
  });

  it("cuts a word longer than the window into rows and keeps every character", async () => {
    const long = "abcdefghij".repeat(70);
    const history = await streamWhileResizing(long, WIDTHS);
    const letters = history.replace(/[^a-j]/g, "");
    expect(letters).toBe(long);
  });

  it("keeps a line of wide characters within the width, so it never wraps by itself", async () => {
    const vt = virtualTerminal(30);
    const screen = createScreen(vt.out);
    screen.write(`${"漢".repeat(40)}\n`);
    screen.close();
    const rows = (await vt.text()).split("\n").filter((row) => row.includes("漢"));
    expect(rows.map((row) => displayWidth(row))).toEqual([28, 28, 24]);
  });
});

describe("the input line", () => {
  it("shows the end of what is being typed when it is wider than the terminal", async () => {
    const vt = virtualTerminal(40);
    const screen = createScreen(vt.out);
    screen.setLive(["⠋ running tools", { text: `› ${"typed words ".repeat(10)}and the end`, keep: 2 }]);
    screen.flush();
    const rows = (await vt.text()).split("\n");
    expect(rows).toContain("⠋ running tools");
    const input = rows.find((row) => row.startsWith("›"))!;
    expect(input).toMatch(/^› ….*and the end$/);
    expect(displayWidth(input)).toBeLessThanOrEqual(39);
  });
});

describe("text from the model never steers the terminal", () => {
  it("escape sequences in streamed text are shown, not obeyed", async () => {
    const vt = virtualTerminal(80);
    const screen = createScreen(vt.out);
    const view = createEventView(screen, createStyle(false), { now: () => 0 });
    const message: AssistantMessage = {
      role: "assistant",
      content: [],
      stopReason: "stop",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      timestamp: 0,
    };
    view.handle({ type: "agent_start" });
    view.handle({ type: "message_start", message });
    // Clear the screen, set the window title, write the clipboard (OSC 52), move the cursor home.
    const hostile = "before\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[Hafter\r\n";
    view.handle({ type: "message_update", message, delta: hostile, kind: "text_delta" });
    view.handle({ type: "message_end", message });
    view.handle({
      type: "agent_end",
      messages: [],
      reason: "stop",
      usage: message.usage,
    });
    view.dispose();
    screen.close();
    const text = await vt.text();
    expect(text).toContain("before�[2J�]0;pwned��]52;c;ZWNobyBoaQ==��[Hafter");
  });

  it("terminalSafe keeps newlines, turns tabs into spaces and every other control into �", () => {
    expect(terminalSafe("a\tb\r\nc\x1b[31md\x07\x9b")).toBe("a  b\nc�[31md��");
  });
});

describe("measuring by columns", () => {
  it("splits at the last space that fits, or between characters, never inside one", () => {
    expect(splitAtColumns("hello wide 世界 here", 13)).toEqual({ head: "hello wide", rest: "世界 here" });
    expect(splitAtColumns("hello world", 5)).toEqual({ head: "hello", rest: "world" });
    expect(splitAtColumns("世界世界", 5)).toEqual({ head: "世界", rest: "世界" });
    expect(splitAtColumns("👩‍👩‍👧x", 1)).toEqual({ head: "👩‍👩‍👧", rest: "x" });
  });

  it("fits a styled line to the columns with an ellipsis", () => {
    const fitted = fitToColumns("\x1b[36m漢字漢字漢字\x1b[39m", 7);
    expect(displayWidth(fitted)).toBeLessThanOrEqual(7);
    expect(fitted.endsWith("…")).toBe(true);
  });
});
