import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvalHeading, approvalQuestion } from "../cli/approval-question.js";
import { summarizeArgs } from "../cli/event-view.js";
import { approvalPreview } from "../cli/file-changes.js";
import { createScreen } from "../cli/screen.js";
import { createStyle } from "../cli/style.js";
import { displayWidth, visibleText, wrapToColumns } from "../cli/terminal-text.js";
import { removeDir, tempDir } from "./fixtures/cli-harness.js";

const plain = createStyle(false);
const segments = Array.from({ length: 30 }, (_, i) => `segment${String(i + 1).padStart(2, "0")}`).join(" ");
const LONG_COMMAND = `echo ${segments} && touch ran && echo TAIL`;

/** The rows joined back into the text they show (a wrapped row starts with its indent). */
const words = (rows: string[]) => rows.join(" ").replace(/\s+/g, " ").trim();

describe("what an approval shows: the whole call, wrapped, with nothing hidden", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  it("a bash command is shown whole, wrapped to the width, never cut", () => {
    const rows = approvalPreview("/tmp", "bash", { command: LONG_COMMAND }, plain, 55);
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) expect(displayWidth(row)).toBeLessThanOrEqual(55);
    expect(rows.join("\n")).not.toContain("…");
    expect(words(rows)).toBe(`$ ${LONG_COMMAND}`);
    // A wrapped row is indented; a new line of the command starts with "> ", as a shell shows it.
    expect(rows[1]!.startsWith("  ")).toBe(true);
    const twoLines = approvalPreview("/tmp", "bash", { command: "cd /tmp\nrm -rf x" }, plain, 55);
    expect(twoLines).toEqual(["$ cd /tmp", "> rm -rf x"]);
  });

  it("a command of more than 40 lines is shown whole (it scrolls), not folded", () => {
    const command = Array.from({ length: 60 }, (_, i) => `echo line-${i}`).join("\n");
    const rows = approvalPreview("/tmp", "bash", { command }, plain, 80);
    expect(rows).toHaveLength(60);
    expect(rows.at(-1)).toBe("> echo line-59");
  });

  it("any other tool's arguments and a file's content are shown whole, wrapped", () => {
    const url = `https://example.com/${"a".repeat(150)}?then=${"b".repeat(30)}`;
    const rows = approvalPreview("/tmp", "fetch", { url, note: "x" }, plain, 50);
    for (const row of rows) expect(displayWidth(row)).toBeLessThanOrEqual(50);
    expect(rows.join("").replace(/\s+/g, "")).toContain(url);
    dir = tempDir();
    const content = Array.from({ length: 30 }, (_, i) => `line ${i} ${"x".repeat(70)}`).join("\n");
    const write = approvalPreview(dir, "write_file", { path: "new.txt", content }, plain, 50);
    expect(write.join("\n")).toContain("line 29");
    expect(write.join("\n")).not.toContain("…");
    writeFileSync(path.join(dir, "old.txt"), "keep\n");
    const edit = approvalPreview(
      dir,
      "edit_file",
      { path: "old.txt", old_string: "keep", new_string: `keep ${"y".repeat(120)} END` },
      plain,
      50,
    );
    expect(edit.join("")).toContain("END");
  });

  it("a right-to-left override, zero-width and control characters are shown as escapes: what is shown is what runs", () => {
    // Shown by a bidi terminal as `touch exe.txt`-like text, this runs `touch ` + RLO + `txt.exe`.
    const command = "touch \u202Etxt.exe && echo \u200Bhidden\u2066x\u2069 \x1b[2J\r done";
    const rows = approvalPreview("/tmp", "bash", { command }, plain, 80);
    const shown = rows.join("\n");
    expect(shown).toBe("$ touch \\u202Etxt.exe && echo \\u200Bhidden\\u2066x\\u2069 \\u001B[2J\\u000D done");
    for (const hidden of ["\u202E", "\u200B", "\u2066", "\u2069", "\x1b", "\r"])
      expect(shown).not.toContain(hidden);
    // The tool line and the question say the same, on one row: a newline shows as ⏎.
    expect(summarizeArgs("bash", { command: "echo ok\nrm -rf \u202Ex" })).toBe("echo ok⏎rm -rf \\u202Ex");
    expect(approvalHeading("write_file", { path: "a\u202Eb.txt", content: "" })).toBe(
      "Approval needed: write_file a\\u202Eb.txt",
    );
    expect(visibleText("tab\there\u00A0nbsp")).toBe("tab  here\\u00A0nbsp");
    expect(visibleText("tag\u{E0041}")).toBe("tag\\u{E0041}");
  });

  it("the question names the call once and lists every answer; at 60 columns the screen wraps it, nothing cut", () => {
    const question = approvalQuestion("bash", { command: LONG_COMMAND });
    expect(question).toBe("? Allow bash  [y]es / [n]o / [r] no, say why / [a]lways for bash");
    expect(approvalQuestion("write_file", { path: "notes.txt" })).toContain(
      "? Allow write_file notes.txt  [y]es",
    );
    expect(approvalHeading("bash", { command: LONG_COMMAND })).toBe("Approval needed: bash");

    let written = "";
    const screen = createScreen({ isTTY: true, columns: 60, rows: 30, write: (t: string) => (written += t) });
    screen.setLive([{ text: question, wrap: true }]);
    screen.flush();
    screen.close();
    // eslint-disable-next-line no-control-regex -- the screen's own escape sequences are taken out
    const shown = written.replace(/\x1b(?:\[[0-9;?]*[A-Za-z]|[78D])/g, "");
    expect(shown).toContain("[a]lways for");
    expect(shown).toMatch(/\bbash\s*$/);
    expect(shown).not.toContain("…");
  });

  it("wrapToColumns keeps every character", () => {
    const text = `${"x".repeat(25)} ${segments}`;
    const rows = wrapToColumns(text, 20, "  ");
    for (const row of rows) expect(displayWidth(row)).toBeLessThanOrEqual(20);
    expect(words(rows).replace(/ /g, "")).toBe(text.replace(/ /g, ""));
  });
});
