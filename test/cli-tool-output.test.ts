import { describe, expect, it } from "vitest";
import { ERROR_LINES, FOLDED_LINES, foldToolOutput } from "../cli/tool-output.js";

describe("a finished call's output on the screen", () => {
  it("a 10,000-line command output folds to its last lines under a marker with its size", () => {
    const text = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`).join("\n");
    const folded = foldToolOutput("bash", text, false, 80);
    expect(folded.lines).toEqual([
      `… ${10_000 - FOLDED_LINES} lines above (${(Buffer.byteLength(text) / 1024).toFixed(1)} KB in all)`,
      "line 9997",
      "line 9998",
      "line 9999",
      "line 10000",
    ]);
    expect(folded.detail).toBeUndefined();
  });

  it("a short output shows whole; an empty one shows nothing", () => {
    expect(foldToolOutput("bash", "a\nb\n", false, 80).lines).toEqual(["a", "b"]);
    expect(foldToolOutput("bash", "(no output)", false, 80).lines).toEqual([]);
    expect(foldToolOutput("bash", "", false, 80).lines).toEqual([]);
  });

  it("an error shows in full (its first line beside the call), up to a cap", () => {
    const short = foldToolOutput("bash", "Command failed\n  at x\n  at y", true, 80);
    expect(short).toEqual({ detail: "Command failed", lines: ["  at x", "  at y"] });
    const long = Array.from({ length: 101 }, (_, i) => `e${i}`).join("\n");
    const folded = foldToolOutput("bash", long, true, 80);
    expect(folded.detail).toBe("e0");
    expect(folded.lines).toHaveLength(ERROR_LINES);
    expect(folded.lines.slice(0, 2)).toEqual(["e1", "e2"]);
    expect(folded.lines.at(-1)).toMatch(/^… 61 more lines \(\d+ B in all\)$/);
  });

  it("a file's contents are the model's to read: the call shows their size only", () => {
    expect(foldToolOutput("read_file", "a\nb\nc", false, 80)).toEqual({ detail: "3 lines, 5 B", lines: [] });
    expect(foldToolOutput("write_file", "Created notes.txt (4 bytes)", false, 80)).toEqual({
      detail: "Created notes.txt (4 bytes)",
      lines: [],
    });
  });

  it("every line stays on one row and is never obeyed as a terminal command", () => {
    const folded = foldToolOutput("bash", `${"x".repeat(1_000_000)}\n\x1b[2Jcleared?\n`, false, 40);
    expect(folded.lines[0]).toBe(`${"x".repeat(39)}…`);
    expect(folded.lines[1]).not.toContain("\x1b");
  });
});
