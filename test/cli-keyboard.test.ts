import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { createKeyboard } from "../cli/keyboard.js";

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

function setup(onKey?: (key: string) => boolean) {
  const input = new FakeTerminal();
  const seen: string[] = [];
  const keyboard = createKeyboard(input, {
    onLine: (text) => seen.push(`line:${text}`),
    onInterrupt: () => seen.push("interrupt"),
    onEof: () => seen.push("eof"),
    onChange: () => {},
    onKey,
  });
  return { input, seen, keyboard };
}

describe("the interactive line editor", () => {
  it("edits a line (Backspace, Ctrl-W, Ctrl-U), ignores cursor keys, and submits on Enter", () => {
    const { input, seen, keyboard } = setup();
    expect(input.raw).toBe(true);
    input.emit("data", "helo\x7flo wor\x1b[Dld");
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
});
