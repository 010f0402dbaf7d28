import { describe, expect, it } from "vitest";
import { blockKind, createMarkdownStream, loadMarkdownRenderer, tableWidths } from "../cli/markdown.js";
import { displayWidth } from "../cli/terminal-text.js";
import { stripAnsi } from "../cli/style.js";

const markdown = await loadMarkdownRenderer();

/** Streams `source` in pieces of `size` characters; returns what reached the screen, in order. */
function stream(source: string, size: number, columns = 60) {
  const out: { kind: "paragraph" | "block"; text: string }[] = [];
  const drafts: string[][] = [];
  const answer = createMarkdownStream(() => markdown, {
    paragraph: (text, style) => out.push({ kind: "paragraph", text: text.split("\n").map(style).join("\n") }),
    block: (lines) => out.push({ kind: "block", text: lines.join("\n") }),
    columns: () => columns,
  });
  for (let i = 0; i < source.length; i += size) {
    answer.push(source.slice(i, i + size));
    drafts.push(answer.draft(columns, 10).map(stripAnsi));
  }
  answer.finish();
  return { out, drafts, plain: stripAnsi(out.map((part) => part.text).join("")) };
}

describe("markdown while it streams", () => {
  it("tells a block from a paragraph by the start of its line, waiting when it cannot tell yet", () => {
    expect(blockKind("| a", false)).toBe("block");
    expect(blockKind("- item", false)).toBe("block");
    expect(blockKind("```js", false)).toBe("block");
    expect(blockKind("## Title", false)).toBe("block");
    expect(blockKind("1. first", false)).toBe("block");
    expect(blockKind("1", false)).toBeUndefined();
    expect(blockKind("1999 was", false)).toBe("paragraph");
    expect(blockKind("**bold** start", false)).toBe("paragraph");
    expect(blockKind("--", false)).toBeUndefined();
    expect(blockKind("---", true)).toBe("block");
    expect(blockKind("The answer", false)).toBe("paragraph");
  });

  it("fits a table to the width by narrowing its widest columns", () => {
    expect(tableWidths([["a", "b"]], 80)).toBeUndefined();
    const widths = tableWidths(
      [
        ["name", "a rather long note about it"],
        ["x", "y"],
      ],
      24,
    )!;
    expect(widths.reduce((a, b) => a + b, 0) + 3).toBeLessThanOrEqual(24);
    expect(widths[0]).toBe(6); // the narrow column keeps its width
  });

  it("renders a table once, whole, when the text after it starts; the draft shows it growing", () => {
    const source = "Rows:\n\n| n | 名前 |\n|---|---|\n| 1 | 漢字 |\n| 2 | two |\n\nAfter the table.";
    const { out, drafts, plain } = stream(source, 4);
    const blocks = out.filter((part) => part.kind === "block");
    expect(blocks).toHaveLength(1);
    const table = stripAnsi(blocks[0]!.text);
    expect(table).toMatch(/^┌/);
    expect(table).toContain("│ 1 │ 漢字 │");
    expect(table).not.toContain("|---|");
    // Before it was complete the table was a draft with the rows so far, rendered.
    expect(
      drafts.some((draft) => draft.some((line) => line.includes("│ 1 ")) && !draft.join("").includes("two")),
    ).toBe(true);
    expect(plain.indexOf("Rows:")).toBeLessThan(plain.indexOf("┌"));
    expect(plain.indexOf("└")).toBeLessThan(plain.indexOf("After the table."));
    expect(plain.match(/After the table\./g)).toHaveLength(1);
  });

  it("streams a paragraph as it comes, each line's inline markdown rendered; a code block is rendered whole", () => {
    const written: string[] = [];
    let style: (line: string) => string = (line) => line;
    const answer = createMarkdownStream(() => markdown, {
      paragraph(text, lineStyle) {
        written.push(text);
        style = lineStyle;
      },
      block: (lines) => written.push(`[${stripAnsi(lines.join("\n"))}]`),
      columns: () => 60,
    });
    const source = "Use **bold** and `code`.\n\n```js\nconst a = 1;\n```\n\nEnd.";
    for (let i = 0; i < source.length; i += 3) answer.push(source.slice(i, i + 3));
    answer.finish();
    // The paragraph went out piece by piece, as it came (the screen styles each whole line).
    expect(written.slice(0, 3)).toEqual(["Use", " **", "bol"]);
    expect(stripAnsi(style("Use **bold** and `code`."))).toBe("Use bold and code.");
    expect(stripAnsi(style("an **open span"))).toBe("an **open span");
    const all = written.join("");
    expect(all).toContain("[  const a = 1;]");
    expect(all).not.toContain("```");
    expect(all.indexOf("[  const a")).toBeLessThan(all.indexOf("End."));
  });

  it("keeps every word once when a block is cut by the message end, and a table wider than the screen is fitted", () => {
    const wide = `| a | b |\n|---|---|\n| ${"word ".repeat(30)}| ${"漢字".repeat(20)} |`;
    const { plain } = stream(wide, 7, 40);
    for (const line of plain.split("\n")) expect(displayWidth(line)).toBeLessThanOrEqual(40);
    expect(plain.match(/word/g)).toHaveLength(30);
  });

  it("without a renderer (not loaded) the text goes out as it came", () => {
    const parts: string[] = [];
    const answer = createMarkdownStream(() => undefined, {
      paragraph: (text) => parts.push(text),
      block: () => parts.push("BLOCK"),
      columns: () => 80,
    });
    answer.push("| a |\n");
    answer.push("|---|\n");
    answer.finish();
    expect(parts.join("")).toBe("| a |\n|---|\n");
  });
});
