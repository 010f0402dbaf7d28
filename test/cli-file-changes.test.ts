import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvalPreview, captureChange, diffLines } from "../cli/file-changes.js";
import { createStyle } from "../cli/style.js";
import { removeDir, tempDir } from "./fixtures/cli-harness.js";

const plain = createStyle(false);

describe("what an approval and a finished edit show of a file change", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  it("a unified diff, hunks only; coloured when colours are on", () => {
    expect(diffLines("a\nb\nc\n", "a\nB\nc\n", plain, 80)).toEqual([
      "@@ -1,3 +1,3 @@",
      " a",
      "-b",
      "+B",
      " c",
    ]);
    const coloured = diffLines("a\n", "b\n", createStyle(true, "dark"), 80);
    expect(coloured).toContain("\x1b[91m-a\x1b[39m");
    expect(coloured).toContain("\x1b[32m+b\x1b[39m");
    // On a light background added lines are blue: green is 2.2:1 on xterm's white.
    const light = diffLines("a\n", "b\n", createStyle(true, "light"), 80);
    expect(light).toContain("\x1b[31m-a\x1b[39m");
    expect(light).toContain("\x1b[34m+b\x1b[39m");
  });

  it("a long diff is folded", () => {
    const before = Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n");
    const lines = diffLines(before, "", plain, 80);
    expect(lines).toHaveLength(40);
    expect(lines.at(-1)).toBe("… 162 more diff lines");
  });

  it("an edit_file question shows the edit as the tool will make it, or why it will fail", () => {
    dir = tempDir();
    writeFileSync(path.join(dir, "f.js"), "x = 1;\ny = 1;\n");
    const edit = (args: object) => approvalPreview(dir!, "edit_file", { path: "f.js", ...args }, plain, 80);
    expect(edit({ old_string: "y = 1;", new_string: "y = 2;" })).toEqual([
      "@@ -1,2 +1,2 @@",
      " x = 1;",
      "-y = 1;",
      "+y = 2;",
    ]);
    expect(edit({ old_string: "= 1;", new_string: "= 2;" })).toEqual([
      "(old_string occurs 2 times: the edit will fail)",
    ]);
    expect(edit({ old_string: "= 1;", new_string: "= 2;", replace_all: true })).toHaveLength(5);
    expect(edit({ old_string: "zzz", new_string: "y" })).toEqual([
      "(old_string is not in the file: the edit will fail)",
    ]);
    expect(
      approvalPreview(dir, "edit_file", { path: "nope.js", old_string: "a", new_string: "b" }, plain, 80),
    ).toEqual(["(nope.js does not exist: the edit will fail)"]);
  });

  it("never reads outside the workspace to show a change, through .. or a symbolic link", () => {
    dir = tempDir();
    mkdirSync(path.join(dir, "ws"));
    writeFileSync(path.join(dir, "secret.txt"), "secret\n");
    symlinkSync(path.join(dir, "secret.txt"), path.join(dir, "ws", "link.txt"));
    const ws = path.join(dir, "ws");
    for (const file of ["../secret.txt", "link.txt"]) {
      const lines = approvalPreview(ws, "write_file", { path: file, content: "x\n" }, plain, 80);
      expect(lines).toEqual([`(${file}: outside the workspace; not shown)`]);
      expect(captureChange(ws, "write_file", { path: file })).toBeUndefined();
    }
  });

  it("the applied diff: the file before the call against the file after it", () => {
    dir = tempDir();
    const file = path.join(dir, "n.txt");
    const applied = captureChange(dir, "write_file", { path: "n.txt", content: "new\n" })!;
    writeFileSync(file, "new\n");
    expect(applied(plain, 80)).toEqual(["@@ -0,0 +1,1 @@", "+new"]);
    expect(captureChange(dir, "bash", { command: "ls" })).toBeUndefined();
  });
});
