import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createKeyboard, pastePlaceholder } from "../cli/keyboard.js";
import { createInputHistory } from "../cli/input-history.js";
import { editLine, inputRows, lineAt } from "../cli/line-editor.js";

class FakeTerminal extends EventEmitter {
  isTTY = true;
  raw = false;
  setRawMode(mode: boolean) {
    this.raw = mode;
  }
  setEncoding() {}
  resume() {}
  pause() {}
}

function setup(onKey?: (key: string) => boolean, history = createInputHistory()) {
  const input = new FakeTerminal();
  const seen: string[] = [];
  const keyboard = createKeyboard(
    input,
    {
      onLine: (text) => seen.push(`line:${text}`),
      onInterrupt: () => seen.push("interrupt"),
      onEscape: () => seen.push("escape"),
      onEof: () => seen.push("eof"),
      onChange: () => {},
      onKey,
      onPaste: () => undefined,
    },
    undefined,
    { history },
  );
  return { input, seen, keyboard };
}

describe("the interactive line editor", () => {
  it("edits a line (Backspace, Ctrl-W, Ctrl-U), ignores unknown sequences, and submits on Enter", () => {
    const { input, seen, keyboard } = setup();
    expect(input.raw).toBe(true);
    input.emit("data", "helo\x7flo wor\x1b[99zld");
    expect(keyboard.text).toBe("hello world");
    input.emit("data", "\x17");
    expect(keyboard.text).toBe("hello ");
    input.emit("data", "there\r");
    input.emit("data", "junk\x15again\r\n");
    expect(seen).toEqual(["line:hello there", "line:again"]);
    keyboard.stop();
    expect(input.raw).toBe(false);
  });

  it("reports Ctrl-C always, Ctrl-D only on an empty line, and splits pasted lines", () => {
    const { input, seen } = setup();
    input.emit("data", "a\x04\x03");
    input.emit("data", "\r\x04");
    input.emit("data", "one\ntwo\n");
    expect(seen).toEqual(["interrupt", "line:a", "eof", "line:one", "line:two"]);
  });

  it("lets a question consume keys before they reach the line", () => {
    const answers: string[] = [];
    const { input, keyboard } = setup((key) => {
      if (key !== "y") return false;
      answers.push(key);
      return true;
    });
    input.emit("data", "yes");
    expect(answers).toEqual(["y"]);
    expect(keyboard.text).toBe("es");
  });

  it("moves the cursor: Left, Right, Home, End, word jumps; types and deletes where it is", () => {
    const { input, keyboard } = setup();
    input.emit("data", "helo\x1b[Dl");
    expect(keyboard.text).toBe("hello");
    expect(keyboard.cursor).toBe(4);
    input.emit("data", "\x1b[H>\x1b[F!\x01\x1b[3~");
    expect(keyboard.text).toBe("hello!");
    input.emit("data", "\x05 big world\x1b[1;5D\x1b[1;5D\x1bb");
    expect(keyboard.cursor).toBe(0);
    input.emit("data", "\x1bf\x1b[1;5C\x0b");
    expect(keyboard.text).toBe("hello! big");
    input.emit("data", "\x1b[1;3D\x1b\x7f");
    expect(keyboard.text).toBe("big");
    input.emit("data", "\x1b[C\x04");
    expect(keyboard.text).toBe("bg");
  });

  it("walks the history with Up / Down, keeping the line being typed as a draft", () => {
    const history = createInputHistory();
    const { input, seen, keyboard } = setup(undefined, history);
    input.emit("data", "first\rsecond\rdraft");
    input.emit("data", "\x1b[A");
    expect(keyboard.text).toBe("second");
    input.emit("data", "\x1b[A\x1b[A");
    expect(keyboard.text).toBe("first");
    input.emit("data", "\x1b[B\x1b[B");
    expect(keyboard.text).toBe("draft");
    input.emit("data", "\x15\x10!\r");
    expect(seen).toEqual(["line:first", "line:second", "line:second!"]);
    expect(history.entries).toEqual(["first", "second", "second!"]);
  });

  it("keeps the history of a workspace in a file, read by the next session, private to the user", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "am-history-"));
    try {
      const file = path.join(dir, "history", "w.jsonl");
      const one = createInputHistory(file);
      one.add("npm test");
      one.add("two\nlines");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const two = createInputHistory(file);
      expect(two.up("")).toBe("two\nlines");
      expect(two.up("")).toBe("npm test");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a multi-line prompt: Shift-Enter (as terminals send it) or a backslash before Enter", () => {
    const { input, seen, keyboard } = setup();
    input.emit("data", "one\x1b[13;2utwo\x1b\rthree\\\rfour");
    expect(keyboard.text).toBe("one\ntwo\nthree\nfour");
    // Up moves within the prompt's rows before it walks the history.
    input.emit("data", "\x1b[A\x1b[HX");
    expect(keyboard.text).toBe("one\ntwo\nXthree\nfour");
    input.emit("data", "\r");
    expect(seen).toEqual(["line:one\ntwo\nXthree\nfour"]);
  });

  it("reports Esc alone, not the start of a key's sequence", () => {
    const { input, seen } = setup();
    input.emit("data", "\x1b[D");
    input.emit("data", "\x1b");
    expect(seen).toEqual(["escape"]);
  });

  it("a paste of several lines is one folded block in the line, sent whole on Enter", () => {
    const { input, seen, keyboard } = setup();
    input.emit("data", "see \x1b[200~Error: boom\r\n  at a (x.js:1)\r\n  at b (y.js:2)\r\n\x1b[201~");
    expect(keyboard.text).toBe("see [pasted 3 lines]");
    expect(seen).toEqual([]);
    input.emit("data", " and \x1b[200~single\tline\x03\x1b[201~");
    expect(keyboard.text).toBe("see [pasted 3 lines] and single line");
    input.emit("data", "\r");
    expect(seen).toEqual(["line:see Error: boom\n  at a (x.js:1)\n  at b (y.js:2) and single line"]);
    expect(pastePlaceholder("a\nb\nc", new Set(["[pasted 3 lines]"]))).toBe("[pasted 3 lines #2]");
  });

  it("draws the cursor as the character under it in inverse video, in view on a long row", () => {
    const safe = (t: string) => t;
    expect(inputRows({ text: "helo", cursor: 3 }, { prompt: "> ", columns: 80, safe })).toEqual([
      "> hel\x1b[7mo\x1b[27m",
    ]);
    expect(inputRows({ text: "a\nbc", cursor: 4 }, { prompt: "> ", columns: 80, safe })).toEqual([
      "> a",
      "  bc\x1b[7m \x1b[27m",
    ]);
    const [row] = inputRows({ text: "x".repeat(100), cursor: 5 }, { prompt: "> ", columns: 40, safe });
    expect(row).toBe(`> xxxxx\x1b[7mx\x1b[27m${"x".repeat(30)}…`);
    expect(editLine(lineAt("a 😀"), { kind: "backspace" })).toEqual({ text: "a ", cursor: 2 });
  });
});
