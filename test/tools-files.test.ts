import { createWriteStream } from "node:fs";
import { link, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  codingTools,
  createEditFileTool,
  createGlobTool,
  createListFilesTool,
  createReadFileTool,
  createWriteFileTool,
} from "../index.js";
import { runTool, tempDir } from "./fixtures/tools-helpers.js";

let root: string;
let outside: string;
let cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  const a = await tempDir("am-files-");
  const b = await tempDir("am-outside-");
  root = a.dir;
  outside = b.dir;
  cleanups = [a.cleanup, b.cleanup];
});
afterEach(async () => {
  for (const cleanup of cleanups) await cleanup();
});

// A 1x1 transparent PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);

describe("read_file", () => {
  it("returns numbered lines and pages with offset / limit", async () => {
    await writeFile(path.join(root, "a.txt"), "one\ntwo\nthree\nfour\nfive\n");
    const read = createReadFileTool({ workspace: root });
    const all = await runTool(read, { path: "a.txt" });
    expect(all.isError).toBe(false);
    expect(all.text).toBe("     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive");

    const page = await runTool(read, { path: "a.txt", offset: 2, limit: 2 });
    expect(page.text).toBe("     2\ttwo\n     3\tthree\n\n[More lines follow. Read on with offset=4.]");
    expect(page.result.details).toMatchObject({ offset: 2, linesShown: 2, hasMore: true });

    const last = await runTool(read, { path: "a.txt", offset: 5, limit: 2 });
    expect(last.text).toBe("     5\tfive");

    const past = await runTool(read, { path: "a.txt", offset: 9 });
    expect(past.isError).toBe(true);
    expect(past.text).toMatch(/fewer than 9 lines/);
  });

  it("keeps a file without a trailing newline and CRLF lines intact", async () => {
    await writeFile(path.join(root, "crlf.txt"), "a\r\nb\r\nc");
    const read = await runTool(createReadFileTool({ workspace: root }), { path: "crlf.txt" });
    expect(read.text).toBe("     1\ta\n     2\tb\n     3\tc");
  });

  it("returns a PNG as image content", async () => {
    await writeFile(path.join(root, "dot.png"), PNG);
    const run = await runTool(createReadFileTool({ workspace: root }), { path: "dot.png" });
    expect(run.isError).toBe(false);
    expect(run.result.content).toEqual([
      { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
    ]);
  });

  it.each([
    ["photo.jpg", Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0]), "image/jpeg"],
    ["anim.gif", Buffer.concat([Buffer.from("GIF89a"), Buffer.from([1, 0, 1, 0, 0, 0, 0])]), "image/gif"],
    [
      "pic.webp",
      Buffer.concat([
        Buffer.from("RIFF"),
        Buffer.from([4, 0, 0, 0]),
        Buffer.from("WEBPVP8 "),
        Buffer.from([0]),
      ]),
      "image/webp",
    ],
    // Detected by content, not by the name.
    ["misnamed.txt", PNG, "image/png"],
  ])("returns %s as image content", async (name, bytes, mimeType) => {
    await writeFile(path.join(root, name), bytes);
    const run = await runTool(createReadFileTool({ workspace: root }), { path: name });
    expect(run.result.content).toEqual([{ type: "image", data: bytes.toString("base64"), mimeType }]);
  });

  it("refuses a binary file clearly", async () => {
    await writeFile(path.join(root, "blob.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0]));
    const run = await runTool(createReadFileTool({ workspace: root }), { path: "blob.bin" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/blob\.bin is a binary file \(10 bytes\)/);
  });

  it("pages a 50 MB file without reading it into memory", async () => {
    const file = path.join(root, "big.log");
    const line = `${"x".repeat(90)}\n`;
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(file);
      out.on("error", reject);
      const block = line.repeat(10_000); // ~910 KB
      for (let i = 0; i < 55; i++) out.write(`${block}`);
      out.end(resolve);
    });
    const read = createReadFileTool({ workspace: root });
    const before = process.memoryUsage();
    const first = await runTool(read, { path: "big.log", limit: 3 });
    const middle = await runTool(read, { path: "big.log", offset: 250_000, limit: 2 });
    const after = process.memoryUsage();
    expect(first.text.split("\n").slice(0, 3)).toEqual([1, 2, 3].map((n) => `     ${n}\t${"x".repeat(90)}`));
    expect(first.text).toMatch(/More lines follow\. Read on with offset=4\./);
    expect(middle.text).toMatch(/^250000\tx{90}\n250001\tx{90}\n\n\[More lines follow/);
    // Reading the whole file would cost > 50 MB of buffers plus a 100 MB string.
    const grown = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    expect(grown).toBeLessThan(30 * 1024 * 1024);
  });

  it("cuts a huge single line instead of holding it", async () => {
    await writeFile(path.join(root, "one-line.txt"), "y".repeat(5_000_000));
    const run = await runTool(createReadFileTool({ workspace: root, maxLineLength: 100 }), {
      path: "one-line.txt",
    });
    expect(run.text).toBe(`     1\t${"y".repeat(100)} [... line cut: 4999900 more bytes]`);
  });

  it("cuts a long line of non-ASCII text between characters, never inside one", async () => {
    // 3 000 "é" (2 bytes each) and a 4-byte emoji; a cut at 101 bytes lands inside the 51st "é".
    await writeFile(path.join(root, "accents.txt"), `${"é".repeat(3000)}\n${"😀".repeat(50)}\n`);
    const read = createReadFileTool({ workspace: root, maxLineLength: 101 });
    const run = await runTool(read, { path: "accents.txt" });
    expect(run.text).toBe(
      `     1\t${"é".repeat(50)} [... line cut: 5900 more bytes]\n     2\t${"😀".repeat(25)} [... line cut: 100 more bytes]`,
    );
    expect(run.text).not.toContain("\uFFFD");
  });

  it("refuses paths outside the workspace and explains directories and missing files", async () => {
    await writeFile(path.join(outside, "secret.txt"), "secret");
    await symlink(outside, path.join(root, "out"));
    await mkdir(path.join(root, "dir"));
    const read = createReadFileTool({ workspace: root });
    expect((await runTool(read, { path: "../secret.txt" })).text).toMatch(/outside the workspace/);
    expect((await runTool(read, { path: path.join(outside, "secret.txt") })).text).toMatch(
      /outside the workspace/,
    );
    const viaLink = await runTool(read, { path: "out/secret.txt" });
    expect(viaLink.isError).toBe(true);
    expect(viaLink.text).not.toContain("secret\n");
    expect((await runTool(read, { path: "dir" })).text).toMatch(/is a directory; use list_files/);
    expect((await runTool(read, { path: "nope.txt" })).text).toBe("File not found: nope.txt");
  });
});

describe("write_file", () => {
  it("creates parents, overwrites, and reports which it did", async () => {
    const write = createWriteFileTool({ workspace: root });
    const created = await runTool(write, { path: "deep/new/file.txt", content: "héllo" });
    expect(created.text).toBe("Created deep/new/file.txt (6 bytes)");
    expect(await readFile(path.join(root, "deep/new/file.txt"), "utf8")).toBe("héllo");
    const again = await runTool(write, { path: "deep/new/file.txt", content: "bye" });
    expect(again.text).toBe("Overwrote deep/new/file.txt (3 bytes)");
  });

  it("refuses a path ending in a slash instead of creating a file named like the folder", async () => {
    const write = createWriteFileTool({ workspace: root });
    const run = await runTool(write, { path: "docs/notes/", content: "x" });
    expect(run.isError).toBe(true);
    expect(run.text).toBe(
      "docs/notes/ ends with a slash, so it names a folder; write_file writes a file: give the file's path (folders on the way are created)",
    );
    expect(await readdir(root)).toEqual([]);
  });

  it("says a folder on the path is a file, for write_file, edit_file and read_file alike", async () => {
    await writeFile(path.join(root, "notes.txt"), "x\n");
    const write = await runTool(createWriteFileTool({ workspace: root }), {
      path: "notes.txt/a/b.md",
      content: "y",
    });
    expect(write.isError).toBe(true);
    expect(write.text).toBe(
      '"notes.txt" is a file, not a folder, so nothing can be written inside it. Write to another path, or remove or rename the file first',
    );
    const edit = await runTool(createEditFileTool({ workspace: root }), {
      path: "notes.txt/b.md",
      old_string: "x",
      new_string: "y",
    });
    expect(edit.text).toBe("File not found: notes.txt/b.md (a part of its path is a file, not a folder)");
    const read = await runTool(createReadFileTool({ workspace: root }), { path: "notes.txt/b.md" });
    expect(read.text).toBe("File not found: notes.txt/b.md (a part of its path is a file, not a folder)");
    expect(await readFile(path.join(root, "notes.txt"), "utf8")).toBe("x\n");
  });

  it("refuses a write into .git/ and outside the workspace, leaving nothing behind", async () => {
    await mkdir(path.join(root, ".git"));
    await symlink(outside, path.join(root, "out"));
    const write = createWriteFileTool({ workspace: root });
    const git = await runTool(write, { path: ".git/hooks/pre-commit", content: "evil" });
    expect(git.isError).toBe(true);
    expect(git.text).toMatch(/Writing into \.git\/ is not allowed/);
    const escaped = await runTool(write, { path: "out/planted.txt", content: "evil" });
    expect(escaped.isError).toBe(true);
    await expect(readFile(path.join(outside, "planted.txt"))).rejects.toThrow(/ENOENT/);
    expect((await runTool(write, { path: "../x.txt", content: "evil" })).text).toMatch(
      /outside the workspace/,
    );
  });
});

describe("writes replace the file, never write through it", () => {
  it("keep the file's permission bits, leave no temporary file, and write a symlinked file's target", async () => {
    await writeFile(path.join(root, "run.sh"), "echo 1\n", { mode: 0o750 });
    await writeFile(path.join(root, "target.txt"), "old\n");
    await symlink(path.join(root, "target.txt"), path.join(root, "alias.txt"));
    await runTool(createWriteFileTool({ workspace: root }), { path: "run.sh", content: "echo 2\n" });
    await runTool(createEditFileTool({ workspace: root }), {
      path: "run.sh",
      old_string: "2",
      new_string: "3",
    });
    expect((await stat(path.join(root, "run.sh"))).mode & 0o777).toBe(0o750);
    expect(await readFile(path.join(root, "run.sh"), "utf8")).toBe("echo 3\n");
    // A symlink inside the workspace to a file inside: the target is written, the link stays.
    const viaLink = await runTool(createWriteFileTool({ workspace: root }), {
      path: "alias.txt",
      content: "new\n",
    });
    expect(viaLink.text).toBe("Overwrote target.txt (4 bytes)");
    expect((await lstat(path.join(root, "alias.txt"))).isSymbolicLink()).toBe(true);
    expect(await readFile(path.join(root, "alias.txt"), "utf8")).toBe("new\n");
    expect((await readdir(root)).sort()).toEqual(["alias.txt", "run.sh", "target.txt"]);
  });

  it("do not change a file outside that is hard-linked into the workspace", async () => {
    await writeFile(path.join(outside, "shared.txt"), "outside content\n");
    await link(path.join(outside, "shared.txt"), path.join(root, "shared.txt"));
    await runTool(createEditFileTool({ workspace: root }), {
      path: "shared.txt",
      old_string: "outside",
      new_string: "inside",
    });
    await runTool(createWriteFileTool({ workspace: root }), { path: "shared.txt", content: "rewritten\n" });
    expect(await readFile(path.join(outside, "shared.txt"), "utf8")).toBe("outside content\n");
    expect(await readFile(path.join(root, "shared.txt"), "utf8")).toBe("rewritten\n");
  });
});

describe("edit_file", () => {
  beforeEach(async () => {
    await writeFile(path.join(root, "code.ts"), "let a = 1;\nlet b = 1;\nlet c = 1;\nconst d = 2;\n");
  });

  it("replaces a unique match and reports the line", async () => {
    const run = await runTool(createEditFileTool({ workspace: root }), {
      path: "code.ts",
      old_string: "const d = 2;",
      new_string: "const d = $&;",
    });
    expect(run.text).toBe("Edited code.ts: 1 replacement (first at line 4)");
    expect(await readFile(path.join(root, "code.ts"), "utf8")).toBe(
      "let a = 1;\nlet b = 1;\nlet c = 1;\nconst d = $&;\n",
    );
  });

  it("points at the line an edit would match but for its indentation (spaces for the file's tabs)", async () => {
    const source = "function f() {\n\tif (x) {\n\t\treturn 1;\n\t}\n}\n";
    await writeFile(path.join(root, "tabs.ts"), source);
    const edit = createEditFileTool({ workspace: root });
    const run = await runTool(edit, {
      path: "tabs.ts",
      old_string: "    if (x) {\n        return 1;",
      new_string: "    if (x) {\n        return 2;",
    });
    expect(run.isError).toBe(true);
    expect(run.text).toBe(
      "old_string was not found in tabs.ts (0 matches). It must match exactly, including whitespace and indentation; it does match at line 2 if each line's leading and trailing whitespace is ignored, so the indentation (tabs or spaces?) or line ends differ: read the file again there and copy the lines exactly.",
    );
    expect(await readFile(path.join(root, "tabs.ts"), "utf8")).toBe(source);
    // Nothing near: the plain advice.
    const none = await runTool(edit, { path: "tabs.ts", old_string: "return 3;", new_string: "x" });
    expect(none.text).toMatch(/0 matches\).*; read the file again to copy the current text\.$/);
  });

  it("refuses 0 matches and leaves the file unchanged", async () => {
    const run = await runTool(createEditFileTool({ workspace: root }), {
      path: "code.ts",
      old_string: "let z = 1;",
      new_string: "x",
    });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/old_string was not found in code\.ts \(0 matches\)/);
    expect(await readFile(path.join(root, "code.ts"), "utf8")).toBe(
      "let a = 1;\nlet b = 1;\nlet c = 1;\nconst d = 2;\n",
    );
  });

  it("refuses 3 matches with the count, and replaces all 3 with replace_all", async () => {
    const edit = createEditFileTool({ workspace: root });
    const ambiguous = await runTool(edit, { path: "code.ts", old_string: " = 1;", new_string: " = 9;" });
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.text).toMatch(/old_string matches 3 times in code\.ts; it must be unique/);
    expect(await readFile(path.join(root, "code.ts"), "utf8")).toContain("let a = 1;");

    const all = await runTool(edit, {
      path: "code.ts",
      old_string: " = 1;",
      new_string: " = 9;",
      replace_all: true,
    });
    expect(all.text).toBe("Edited code.ts: 3 replacements (first at line 1)");
    expect(await readFile(path.join(root, "code.ts"), "utf8")).toBe(
      "let a = 9;\nlet b = 9;\nlet c = 9;\nconst d = 2;\n",
    );
  });

  it("matches a multi-line old_string written with \\n in a CRLF file, keeping CRLF", async () => {
    await writeFile(path.join(root, "win.txt"), "first\r\nsecond\r\nthird\r\n");
    const run = await runTool(createEditFileTool({ workspace: root }), {
      path: "win.txt",
      old_string: "first\nsecond",
      new_string: "one\ntwo",
    });
    expect(run.text).toBe("Edited win.txt: 1 replacement (first at line 1)");
    expect(await readFile(path.join(root, "win.txt"), "utf8")).toBe("one\r\ntwo\r\nthird\r\n");
  });

  it("refuses edits in node_modules/ and of missing files", async () => {
    await mkdir(path.join(root, "node_modules/pkg"), { recursive: true });
    await writeFile(path.join(root, "node_modules/pkg/index.js"), "x");
    const edit = createEditFileTool({ workspace: root });
    expect(
      (await runTool(edit, { path: "node_modules/pkg/index.js", old_string: "x", new_string: "y" })).text,
    ).toMatch(/node_modules\/ is not allowed|Writing into node_modules/);
    expect((await runTool(edit, { path: "missing.ts", old_string: "x", new_string: "y" })).text).toMatch(
      /File not found: missing\.ts/,
    );
  });
});

describe("list_files and glob", () => {
  beforeEach(async () => {
    await mkdir(path.join(root, "src/util"), { recursive: true });
    await mkdir(path.join(root, "node_modules/dep"), { recursive: true });
    await mkdir(path.join(root, ".git"));
    await writeFile(path.join(root, "README.md"), "");
    await writeFile(path.join(root, "src/index.ts"), "");
    await writeFile(path.join(root, "src/util/str.ts"), "");
    await writeFile(path.join(root, "src/util/str.test.js"), "");
    await writeFile(path.join(root, "node_modules/dep/index.ts"), "");
  });

  it("lists one folder, or recursively without .git and node_modules", async () => {
    const list = createListFilesTool({ workspace: root });
    expect((await runTool(list, {})).text).toBe("README.md\nsrc/");
    expect((await runTool(list, { path: "src" })).text).toBe("src/index.ts\nsrc/util/");
    expect((await runTool(list, { recursive: true })).text).toBe(
      "README.md\nsrc/\nsrc/index.ts\nsrc/util/\nsrc/util/str.test.js\nsrc/util/str.ts",
    );
    expect((await runTool(list, { path: ".." })).text).toMatch(/outside the workspace/);
    const cut = await runTool(list, { recursive: true, limit: 2 });
    expect(cut.text).toMatch(/listing cut at 2 entries/);
  });

  it("globs with **, braces and a base path", async () => {
    const glob = createGlobTool({ workspace: root });
    expect((await runTool(glob, { pattern: "**/*.ts" })).text).toBe("src/index.ts\nsrc/util/str.ts");
    expect((await runTool(glob, { pattern: "*.{ts,md}" })).text).toBe(
      "README.md\nsrc/index.ts\nsrc/util/str.ts",
    );
    expect((await runTool(glob, { pattern: "util/*.js", path: "src" })).text).toBe("src/util/str.test.js");
    expect((await runTool(glob, { pattern: "*.py" })).text).toBe("No files match *.py");
    expect((await runTool(glob, { pattern: "*", path: "/etc" })).text).toMatch(/outside the workspace/);
  });

  it("takes the absolute pattern a model copies from the workspace, and says when one climbs out", async () => {
    const glob = createGlobTool({ workspace: root });
    expect((await runTool(glob, { pattern: `${root}/src/**/*.ts` })).text).toBe(
      "src/index.ts\nsrc/util/str.ts",
    );
    // Anchored where it points, not a file name anywhere.
    expect((await runTool(glob, { pattern: `${root}/*.md` })).text).toBe("README.md");
    expect((await runTool(glob, { pattern: `${root}/src/*.ts`, path: "src" })).text).toBe("src/index.ts");
    for (const pattern of ["../*", "../**/*.txt", `${outside}/*`, "/etc/*"]) {
      const run = await runTool(glob, { pattern });
      expect(run.isError).toBe(true);
      expect(run.text).toContain(`Pattern "${pattern}" points outside the workspace`);
    }
    const unclosed = await runTool(glob, { pattern: "src/**/*.{ts,js" });
    expect(unclosed.isError).toBe(true);
    expect(unclosed.text).toMatch(/^Invalid glob "src\/\*\*\/\*\.\{ts,js": Missing closing: "\}"/);
    const fromSrc = await runTool(glob, { pattern: "../*.md", path: "src" });
    expect(fromSrc.text).toMatch(/points outside the search folder .*or a different path/);
  });
});

describe("codingTools", () => {
  it("returns the seven tools with their flags", () => {
    const tools = codingTools({ cwd: root });
    expect(tools.map((t) => [t.name, t.readOnly, t.concurrencySafe])).toEqual([
      ["bash", false, false],
      ["read_file", true, true],
      ["write_file", false, false],
      ["edit_file", false, false],
      ["list_files", true, true],
      ["grep", true, true],
      ["glob", true, true],
    ]);
    for (const tool of tools) expect(tool.jsonSchema).toMatchObject({ type: "object" });
  });
});
