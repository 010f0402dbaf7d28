import { mkdir, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGrepTool, findRipgrep } from "../index.js";
import { findNestedQuantifier } from "../tools/internal/nested-quantifier.js";
import { runTool, tempDir } from "./fixtures/tools-helpers.js";

let root: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir("am-grep-"));
  await mkdir(path.join(root, "src/lib"), { recursive: true });
  await mkdir(path.join(root, "node_modules/dep"), { recursive: true });
  await mkdir(path.join(root, ".git"), { recursive: true });
  await writeFile(
    path.join(root, "src/a.ts"),
    "import x from 'y';\nexport function alpha() {}\nconst TODO = 1;\n",
  );
  await writeFile(path.join(root, "src/lib/b.ts"), "// todo: refactor\nexport function beta() {}\n");
  await writeFile(path.join(root, "src/lib/c.js"), "function gamma() {}\r\nexport { gamma };\r\n");
  await writeFile(path.join(root, "notes.md"), "TODO list\n- export docs\n");
  await writeFile(path.join(root, ".hidden.ts"), "export const hidden = 1;\n");
  await writeFile(path.join(root, "node_modules/dep/index.ts"), "export function dep() {}\n");
  await writeFile(path.join(root, ".git/HEAD"), "export ref: refs/heads/main\n");
  await writeFile(path.join(root, "blob.bin"), Buffer.from([0x65, 0x78, 0x70, 0x6f, 0x72, 0x74, 0, 0, 1]));
  await writeFile(path.join(root, "long.txt"), `export ${"z".repeat(2000)}\n`);
});
afterAll(() => cleanup());

const cases: { name: string; args: Record<string, unknown>; expected: string }[] = [
  {
    name: "a regex over the whole workspace, sorted by path and line, skipping .git, node_modules and binaries",
    args: { pattern: "^export (function|const)" },
    expected: [
      ".hidden.ts:1:export const hidden = 1;",
      "src/a.ts:2:export function alpha() {}",
      "src/lib/b.ts:2:export function beta() {}",
    ].join("\n"),
  },
  {
    name: "case-insensitive",
    args: { pattern: "todo", ignore_case: true },
    expected: ["notes.md:1:TODO list", "src/a.ts:3:const TODO = 1;", "src/lib/b.ts:1:// todo: refactor"].join(
      "\n",
    ),
  },
  {
    name: "a glob filter and a sub-folder",
    args: { pattern: "function", path: "src", glob: "*.js" },
    expected: "src/lib/c.js:1:function gamma() {}",
  },
  {
    name: "a glob anchored at the workspace root by a leading /, also when searching a sub-folder",
    args: { pattern: "function", path: "src", glob: "/src/lib/*.ts" },
    expected: "src/lib/b.ts:2:export function beta() {}",
  },
  {
    name: "one file",
    args: { pattern: "export", path: "src/lib/c.js" },
    expected: "src/lib/c.js:2:export { gamma };",
  },
  {
    name: "files only",
    args: { pattern: "export", files_only: true, glob: "*.ts" },
    expected: [".hidden.ts", "src/a.ts", "src/lib/b.ts"].join("\n"),
  },
  {
    name: "a limit with the truncation notice",
    args: { pattern: "export", limit: 2 },
    expected: [
      ".hidden.ts:1:export const hidden = 1;",
      `long.txt:1:export ${"z".repeat(493)} [... line cut ...]`,
      "[... results cut at 2 matches; narrow the pattern, path or glob ...]",
    ].join("\n"),
  },
  {
    name: "no match",
    args: { pattern: "nothing-here-at-all" },
    expected: 'No matches for "nothing-here-at-all"',
  },
];

const rg = findRipgrep();
const engines = [
  { engine: "javascript" as const, ripgrep: false as const },
  ...(rg ? [{ engine: "ripgrep" as const, ripgrep: true as const }] : []),
];

describe.each(engines)("grep with the $engine engine", ({ engine, ripgrep }) => {
  const grep = () => createGrepTool({ workspace: root, ripgrep });

  it.each(cases)("$name", async ({ args, expected }) => {
    const run = await runTool(grep(), args);
    expect(run.isError).toBe(false);
    expect(run.text).toBe(expected);
    expect(run.result.details).toMatchObject({ engine });
  });

  it("refuses a path outside the workspace", async () => {
    const run = await runTool(grep(), { pattern: "x", path: "../" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/outside the workspace/);
  });
});

describe("grep engines", () => {
  it("reports an invalid regular expression clearly", async () => {
    const run = await runTool(createGrepTool({ workspace: root, ripgrep: false }), { pattern: "(unclosed" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/^Invalid regular expression "\(unclosed"/);
  });

  it("refuses a nested repetition the JavaScript search could spend minutes on, and says how to write it", async () => {
    const own = await tempDir("am-redos-");
    await writeFile(path.join(own.dir, "redos.txt"), `${"a".repeat(22)}!\n`);
    const started = Date.now();
    const run = await runTool(createGrepTool({ workspace: own.dir, ripgrep: false }), { pattern: "(a+)+$" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/^Pattern "\(a\+\)\+\$" repeats a group that itself repeats \(\(a\+\)\+\)/);
    expect(Date.now() - started).toBeLessThan(500);
    // A group with a fixed part splits one way only: still searched.
    const fixed = await runTool(createGrepTool({ workspace: own.dir, ripgrep: false }), {
      pattern: "(?:a+!)+",
    });
    expect(fixed.text).toMatch(/^redos\.txt:1:/);
    await own.cleanup();
  });

  it("tells nested repetitions from the patterns models write every day", () => {
    for (const slow of [
      "(a+)+$",
      "(\\w+\\s?)*x",
      "(?:x*){2,}",
      "([a-z]+)*",
      "(a+|b)+",
      "(.*)*",
      "(?<n>a+)+",
    ]) {
      expect(findNestedQuantifier(slow), slow).toBeDefined();
    }
    for (const fine of [
      "(a+){2}",
      "foo(bar)",
      "[(+]+",
      "\\(a+\\)+",
      "(a|b)*",
      "(?:\\d+\\.)+\\d+",
      "import .* from",
      "\\d{1,3}(\\.\\d{1,3}){3}",
      "[a-z]+(_[a-z]+)*",
    ]) {
      expect(findNestedQuantifier(fine), fine).toBeUndefined();
    }
  });

  it("reports an unclosed glob the same way with either engine, instead of no matches", async () => {
    for (const ripgrep of rg ? [false, true] : [false]) {
      for (const glob of ["*.{ts,js", "src/[ab.ts"]) {
        const run = await runTool(createGrepTool({ workspace: root, ripgrep }), { pattern: "x", glob });
        expect(run.isError).toBe(true);
        expect(run.text).toMatch(
          new RegExp(`^Invalid glob ${JSON.stringify(glob).replace(/[[{.*]/g, "\\$&")}: Missing closing`),
        );
      }
    }
  });

  it.runIf(rg)("give byte-identical output for every case (rg on PATH)", async () => {
    for (const { args } of cases) {
      const js = await runTool(createGrepTool({ workspace: root, ripgrep: false }), args);
      const native = await runTool(createGrepTool({ workspace: root, ripgrep: true }), args);
      expect(native.text).toBe(js.text);
    }
  });

  it("falls back to JavaScript when rg is not on PATH", async () => {
    const savedPath = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      const grep = createGrepTool({ workspace: root });
      const run = await runTool(grep, { pattern: "beta" });
      expect(run.text).toBe("src/lib/b.ts:2:export function beta() {}");
      expect(run.result.details).toMatchObject({ engine: "javascript" });
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

describe.each(engines)(
  "grep with the $engine engine never shows a file outside the workspace",
  ({ ripgrep }) => {
    let ws: string;
    let outside: string;
    const cleanups: (() => Promise<void>)[] = [];
    beforeAll(async () => {
      const a = await tempDir("am-grep-links-");
      const b = await tempDir("am-grep-outside-");
      ws = a.dir;
      outside = b.dir;
      cleanups.push(a.cleanup, b.cleanup);
      await writeFile(path.join(outside, "secret.txt"), "SECRET token=abc\n");
      await mkdir(path.join(ws, "src"));
      await writeFile(path.join(ws, "src/a.ts"), "const SECRET_NAME = 'x';\n");
      await symlink(path.join(outside, "secret.txt"), path.join(ws, "link.txt"));
      await symlink(outside, path.join(ws, "outside-dir"));
      await symlink(path.join(ws, "src/a.ts"), path.join(ws, "inside-link.ts"));
    });
    afterAll(async () => {
      for (const cleanup of cleanups) await cleanup();
    });

    it("does not follow a symlink to a file or a folder outside while it walks", async () => {
      const grep = createGrepTool({ workspace: ws, ripgrep });
      expect((await runTool(grep, { pattern: "SECRET" })).text).toBe("src/a.ts:1:const SECRET_NAME = 'x';");
      expect((await runTool(grep, { pattern: "token", files_only: true })).text).toBe(
        'No matches for "token"',
      );
    });

    it("does not follow a symlink inside the workspace either (as rg does not), so both engines agree", async () => {
      const run = await runTool(createGrepTool({ workspace: ws, ripgrep }), {
        pattern: "SECRET_NAME",
        files_only: true,
      });
      expect(run.text).toBe("src/a.ts");
    });

    it("refuses a symlink to outside named as the path", async () => {
      for (const target of ["link.txt", "outside-dir"]) {
        const run = await runTool(createGrepTool({ workspace: ws, ripgrep }), {
          pattern: "SECRET",
          path: target,
        });
        expect(run.isError).toBe(true);
        expect(run.text).toMatch(/resolves through a symlink to .* outside the workspace/);
      }
    });
  },
);
