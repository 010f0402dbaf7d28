// One diff for the page and the command (issue 41, item 4): the visualizer's approval cards and the
// terminal's approval questions and applied edits draw their rows from visualizer/page/diff-rows.js.
import { describe, expect, it } from "vitest";
import { diffLines } from "../cli/file-changes.js";
import { createStyle } from "../cli/style.js";
import { approvalPreview } from "../visualizer/page/approval-preview.js";
import { diffHunks, diffRows } from "../visualizer/page/diff-rows.js";

const plain = createStyle(false);
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

describe("the shared line diff", () => {
  it("rows hold both sides: the unchanged and removed rows are the old text, the unchanged and added the new", () => {
    const before = "a\nb\nc\nd\ne\n";
    const after = "a\nc\nX\nd\ne\nf\n";
    const rows = diffRows(before, after);
    expect(rows.filter((r) => r.sign !== "+").map((r) => r.text)).toEqual(["a", "b", "c", "d", "e"]);
    expect(rows.filter((r) => r.sign !== "-").map((r) => r.text)).toEqual(["a", "c", "X", "d", "e", "f"]);
    expect(rows.filter((r) => r.sign === " ")).toHaveLength(4);
  });

  it("hunks with three lines of context and their line numbers; far changes in separate hunks", () => {
    const lines = numbered(20);
    const after = lines.map((l, i) => (i === 1 || i === 17 ? `${l}!` : l));
    const hunks = diffHunks(`${lines.join("\n")}\n`, `${after.join("\n")}\n`);
    expect(
      hunks.map(({ oldStart, oldLines, newStart, newLines }) => [oldStart, oldLines, newStart, newLines]),
    ).toEqual([
      [1, 5, 1, 5],
      [15, 6, 15, 6],
    ]);
    expect(hunks[1]!.rows.map((r) => `${r.sign}${r.text}`)).toEqual([
      " line 15",
      " line 16",
      " line 17",
      "-line 18",
      "+line 18!",
      " line 19",
      " line 20",
    ]);
  });

  it("tells a last line without a newline from the same line with one", () => {
    expect(diffRows("a\nb", "a\nb\n")).toEqual([
      { sign: " ", text: "a" },
      { sign: "-", text: "b" },
      { sign: "+", text: "b" },
    ]);
    expect(diffHunks("same\n", "same\n")).toEqual([]);
  });

  it("an edit in a large file costs its changed part: one line of 50,000 gives one small hunk at once", () => {
    const lines = numbered(50_000);
    const after = [...lines];
    after[25_000] = "changed";
    const started = performance.now();
    const hunks = diffHunks(lines.join("\n"), after.join("\n"));
    expect(performance.now() - started).toBeLessThan(3_000); // loose: the machine may be busy
    expect(hunks).toHaveLength(1);
    expect(hunks[0]).toMatchObject({ oldStart: 24_998, oldLines: 7, newStart: 24_998, newLines: 7 });
  });

  it("the page's edit card and the terminal's question show the same rows for the same edit", () => {
    const old_string = "const a = 1;\nkeep();\nconst b = [1, 2];\nreturn a;";
    const new_string = "const a = 2;\nkeep();\nconst b = [1, 2, 3];\nreturn a;";
    const page = approvalPreview("edit_file", { path: "src/a.ts", old_string, new_string });
    expect(page.kind).toBe("diff");
    const pageRows = page.kind === "diff" ? page.rows.map((r) => `${r.sign}${r.text}`) : [];
    const terminal = diffLines(old_string, new_string, plain, 200, { whole: true });
    expect(terminal[0]).toBe("@@ -1,4 +1,4 @@");
    expect(terminal.slice(1)).toEqual(pageRows);
  });
});
