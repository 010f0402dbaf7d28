import { mkdir, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWorkspace, WorkspaceError } from "../index.js";
import { tempDir } from "./fixtures/tools-helpers.js";

let root: string;
let outside: string;
let cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  const a = await tempDir("am-ws-");
  const b = await tempDir("am-outside-");
  root = a.dir;
  outside = b.dir;
  cleanups = [a.cleanup, b.cleanup];
  await mkdir(path.join(root, "src"));
  await writeFile(path.join(root, "src", "a.ts"), "export const a = 1;\n");
  await writeFile(path.join(outside, "secret.txt"), "secret\n");
});
afterEach(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe("workspace sandbox", () => {
  it("resolves relative and inside-absolute paths to workspace-relative ones", async () => {
    const ws = createWorkspace(root);
    expect(await ws.resolve("src/a.ts")).toEqual({
      absolute: path.join(root, "src/a.ts"),
      relative: "src/a.ts",
    });
    expect((await ws.resolve(path.join(root, "src"))).relative).toBe("src");
    expect((await ws.resolve("./src/../src/a.ts")).relative).toBe("src/a.ts");
    expect((await ws.resolve(".")).relative).toBe(".");
  });

  it("refuses paths that climb out with ..", async () => {
    const ws = createWorkspace(root);
    await expect(ws.resolve("../secret.txt")).rejects.toThrow(/outside the workspace/);
    await expect(ws.resolve("src/../../x")).rejects.toThrow(WorkspaceError);
  });

  it("refuses absolute paths elsewhere", async () => {
    const ws = createWorkspace(root);
    await expect(ws.resolve("/etc/passwd")).rejects.toThrow(/"\/etc\/passwd" is outside the workspace/);
    await expect(ws.resolve(path.join(outside, "secret.txt"))).rejects.toThrow(/outside the workspace/);
  });

  it("refuses a symlink pointing out, for reading and for writing through it", async () => {
    await symlink(outside, path.join(root, "escape"));
    await symlink(path.join(outside, "secret.txt"), path.join(root, "secret-link"));
    const ws = createWorkspace(root);
    await expect(ws.resolve("escape/secret.txt")).rejects.toThrow(/symlink.*outside the workspace/);
    await expect(ws.resolve("secret-link")).rejects.toThrow(/symlink/);
    // A file that does not exist yet below the link: the nearest existing parent is checked.
    await expect(ws.resolveForWrite("escape/new/deep/file.txt")).rejects.toThrow(/outside the workspace/);
  });

  it("refuses a dangling symlink whose target would be created outside", async () => {
    await symlink(path.join(outside, "not-yet.txt"), path.join(root, "dangling"));
    const ws = createWorkspace(root);
    await expect(ws.resolveForWrite("dangling")).rejects.toThrow(/outside the workspace/);
  });

  it("accepts a symlink that stays inside", async () => {
    await symlink(path.join(root, "src"), path.join(root, "src-link"));
    const ws = createWorkspace(root);
    expect((await ws.resolve("src-link/a.ts")).relative).toBe("src/a.ts");
  });

  it("refuses writes into .git/, .husky/ and node_modules/, also nested", async () => {
    const ws = createWorkspace(root);
    await expect(ws.resolveForWrite(".git/config")).rejects.toThrow(/Writing into \.git\/ is not allowed/);
    await expect(ws.resolveForWrite(".husky/pre-commit")).rejects.toThrow(/\.husky\//);
    await expect(ws.resolveForWrite("packages/x/node_modules/y.js")).rejects.toThrow(/node_modules\//);
    await expect(ws.resolveForWrite(".git")).rejects.toThrow(/\.git\//);
    // Reading them is fine.
    expect((await ws.resolve(".git/config")).relative).toBe(".git/config");
    // A name that merely starts the same is not protected.
    expect((await ws.resolveForWrite(".github/workflows/ci.yml")).relative).toBe(".github/workflows/ci.yml");
  });

  it("refuses .git/, .husky/ and node_modules/ spelled as macOS and Windows read them (case, trailing dots and spaces)", async () => {
    const ws = createWorkspace(root);
    // On a case-insensitive file system .GIT/hooks/pre-commit is .git/hooks/pre-commit: a hook runs code.
    await expect(ws.resolveForWrite(".GIT/hooks/pre-commit")).rejects.toThrow(
      /Writing into \.git\/ is not allowed/,
    );
    await expect(ws.resolveForWrite(".Husky/pre-commit")).rejects.toThrow(/\.husky\//);
    await expect(ws.resolveForWrite("packages/x/Node_Modules/y.js")).rejects.toThrow(/node_modules\//);
    await expect(ws.resolveForWrite(".git./config")).rejects.toThrow(/\.git\//);
    await expect(ws.resolveForWrite(".git ./config")).rejects.toThrow(/\.git\//);
    expect((await ws.resolveForWrite(".gitignore")).relative).toBe(".gitignore");
    expect((await ws.resolveForWrite("src/.git-notes.md")).relative).toBe("src/.git-notes.md");
  });

  it("says ~ is not expanded instead of making a folder named ~ in the workspace", async () => {
    const ws = createWorkspace(root);
    await expect(ws.resolveForWrite("~/notes.txt")).rejects.toThrow(
      /starts with ~, which file tools do not expand/,
    );
    await expect(ws.resolve("~")).rejects.toThrow(/starts with ~/);
    // A name that merely starts with ~ is a file like any other.
    expect((await ws.resolveForWrite("~backup.txt")).relative).toBe("~backup.txt");
    expect((await ws.resolveForWrite("./~/x.txt")).relative).toBe("~/x.txt");
  });

  it("refuses empty paths and NUL bytes with a clear message", async () => {
    const ws = createWorkspace(root);
    await expect(ws.resolve("")).rejects.toThrow(/Path is empty/);
    await expect(ws.resolve("a\0b")).rejects.toThrow(/NUL/);
  });
});
