import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { EventEmitter } from "node:events";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createKeyboard } from "../cli/keyboard.js";
import { expandMentions } from "../cli/mentions.js";
import { completeInput, parseSlashCommand, unknownCommandText } from "../cli/slash-commands.js";
import { removeDir, tempDir } from "./fixtures/cli-harness.js";

describe("slash commands, completion and @path mentions", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  it("a line is a command only when it starts with /word; a path stays a message", () => {
    expect(parseSlashCommand("/cost")).toEqual({ name: "/cost", rest: "" });
    expect(parseSlashCommand("  /Visualize now ")).toEqual({ name: "/visualize", rest: "now" });
    expect(parseSlashCommand("/usr/lib is empty")).toBeUndefined();
    expect(parseSlashCommand("/ 2")).toBeUndefined();
    expect(unknownCommandText("/cst")).toBe("Unknown command /cst (did you mean /cost?): /help lists them");
  });

  it("Tab completes a command and an @path of the workspace, never outside it", () => {
    dir = tempDir();
    mkdirSync(path.join(dir, "src"));
    writeFileSync(path.join(dir, "src", "math.js"), "");
    writeFileSync(path.join(dir, "src", "main.js"), "");
    writeFileSync(path.join(dir, "notes.txt"), "");
    expect(completeInput("/vis", dir)).toBe("/visualize ");
    expect(completeInput("/q", dir)).toBe("/quit ");
    expect(completeInput("/zzz", dir)).toBeUndefined();
    expect(completeInput("read @no", dir)).toBe("read @notes.txt ");
    expect(completeInput("read @sr", dir)).toBe("read @src/");
    expect(completeInput("read @src/m", dir)).toBe("read @src/ma"); // the common start of math.js, main.js
    expect(completeInput("read @src/mat", dir)).toBe("read @src/math.js ");
    expect(completeInput("read @../", dir)).toBeUndefined();
    expect(completeInput("no mention", dir)).toBeUndefined();
  });

  it("Tab completes (also when it arrives with the keys before it); a tab inside a paste stays a space", () => {
    const input = Object.assign(new EventEmitter(), {
      isTTY: true,
      setRawMode() {},
      setEncoding() {},
      resume() {},
      pause() {},
    });
    const changes: string[] = [];
    createKeyboard(input, {
      onLine() {},
      onInterrupt() {},
      onEof() {},
      onChange: (text) => changes.push(text),
      onTab: (text) => (text === "/vis" ? "/visualize " : undefined),
    });
    input.emit("data", "/vis\t");
    expect(changes.at(-1)).toBe("/visualize ");
    input.emit("data", "a\tb");
    expect(changes.at(-1)).toBe("/visualize a b");
  });

  it("@path attaches a workspace file after the line; other @words stay text; outside files are refused", () => {
    dir = tempDir();
    const ws = path.join(dir, "ws");
    mkdirSync(path.join(ws, "src"), { recursive: true });
    writeFileSync(path.join(ws, "src", "math.js"), "export const one = 1;\n");
    writeFileSync(path.join(dir, "secret.txt"), "secret\n");
    symlinkSync(path.join(dir, "secret.txt"), path.join(ws, "link.txt"));
    const expanded = expandMentions("why is @src/math.js wrong? ask @ana about @types/node", ws);
    expect(expanded.text).toBe(
      'why is @src/math.js wrong? ask @ana about @types/node\n\n<file path="src/math.js">\nexport const one = 1;\n</file>',
    );
    expect(expanded.attached).toEqual([{ path: "src/math.js", bytes: 22, lines: 1 }]);
    const outside = expandMentions("see @../secret.txt and @link.txt and @src", ws);
    expect(outside.text).toBe("see @../secret.txt and @link.txt and @src");
    expect(outside.skipped).toEqual([
      { path: "../secret.txt", why: "outside the workspace" },
      { path: "link.txt", why: "outside the workspace" },
      { path: "src", why: "not a file" },
    ]);
  });
});
