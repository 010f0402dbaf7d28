// What the bash sandbox protects, computed without running bubblewrap: repositories, nested
// secrets, the parents that must not move, the home folder's view, and the limits' checks.
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { homeView, resolveProtectedPaths } from "../tools/internal/bwrap.js";
import { configuredPaths, protectRepository } from "../tools/internal/git-protection.js";
import { prlimitArgs, sandboxLimits } from "../tools/sandbox-limits.js";
import { DEFAULT_DENY_READ, DEFAULT_DENY_WRITE, DEFAULT_SANDBOX_LIMITS } from "../index.js";
import { tempDir } from "./fixtures/tools-helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir("am-sandbox-paths-")));
afterEach(() => cleanup());

async function fakeRepository(gitDir: string): Promise<void> {
  await mkdir(path.join(gitDir, "objects"), { recursive: true });
  await writeFile(path.join(gitDir, "HEAD"), "ref: refs/heads/main\n");
  await writeFile(path.join(gitDir, "config"), "[core]\n");
}

describe("resolveProtectedPaths", () => {
  it("finds .env files and repositories at any depth, and pins the folders above them", async () => {
    await mkdir(path.join(dir, "app", "api"), { recursive: true });
    await writeFile(path.join(dir, ".env"), "");
    await writeFile(path.join(dir, "app", "api", ".env.local"), "");
    await fakeRepository(path.join(dir, "vendor", "lib", ".git"));
    await mkdir(path.join(dir, "node_modules", "x"), { recursive: true });
    await writeFile(path.join(dir, "node_modules", "x", ".env"), ""); // not looked into

    const found = resolveProtectedPaths(dir, [], DEFAULT_DENY_READ, DEFAULT_DENY_WRITE, "/nonexistent-home");
    expect(found.denyFiles.sort()).toEqual([
      path.join(dir, ".env"),
      path.join(dir, "app", "api", ".env.local"),
    ]);
    const lib = path.join(dir, "vendor", "lib");
    expect(found.pinned).toEqual(
      expect.arrayContaining([
        path.join(lib, ".git"),
        lib,
        path.join(dir, "vendor"),
        path.join(dir, "app", "api"),
      ]),
    );
    expect(found.readOnly).toEqual(
      expect.arrayContaining([path.join(lib, ".git", "config"), path.join(lib, ".git", "hooks")]),
    );
    expect(found.removeIfPlanted).toEqual(
      expect.arrayContaining([
        path.join(lib, ".git", "commondir"),
        path.join(lib, ".git", "config.worktree"),
      ]),
    );
    expect(found.pinned).not.toContain(dir);
  });
});

describe("protectRepository", () => {
  it("covers the git directories of submodules and linked worktrees, and a .git file as a whole", async () => {
    const git = path.join(dir, ".git");
    await fakeRepository(git);
    await fakeRepository(path.join(git, "modules", "libs", "one"));
    await mkdir(path.join(git, "worktrees", "feature"), { recursive: true });
    await writeFile(path.join(git, "worktrees", "feature", "HEAD"), "ref: refs/heads/feature\n");
    await writeFile(path.join(git, "worktrees", "feature", "commondir"), "../..\n");
    const protection = protectRepository(git);
    expect(protection.pinned).toEqual(
      expect.arrayContaining([
        git,
        path.join(git, "modules", "libs", "one"),
        path.join(git, "worktrees", "feature"),
      ]),
    );
    expect(protection.readOnly).toEqual(
      expect.arrayContaining([
        path.join(git, "modules", "libs", "one", "config"),
        path.join(git, "worktrees", "feature", "commondir"),
      ]),
    );

    await writeFile(path.join(dir, "sub.git"), "gitdir: ../.git/modules/sub\n");
    expect(protectRepository(path.join(dir, "sub.git"))).toEqual({
      pinned: [],
      readOnly: [path.join(dir, "sub.git")],
      removeIfPlanted: [],
    });
  });

  it("reads core.hooksPath and include paths from the config", async () => {
    const config = path.join(dir, "config");
    await writeFile(
      config,
      '[core]\n\tbare = false\n\thooksPath = .githooks ; a comment\n[include]\n\tpath = "../shared.gitconfig"\n[includeIf "gitdir:~/work/"]\n\tpath = work.gitconfig\n',
    );
    expect(configuredPaths(config, "/repo")).toEqual([
      "/repo/.githooks",
      path.resolve(dir, "../shared.gitconfig"),
      path.join(dir, "work.gitconfig"),
    ]);
  });
});

describe("homeView", () => {
  it("shows the allowed paths and the PATH entries in the home, and hides nothing when the workspace holds the home", async () => {
    const home = path.join(dir, "home");
    await mkdir(path.join(home, ".nvm", "versions"), { recursive: true });
    await mkdir(path.join(home, "bin"), { recursive: true });
    await writeFile(path.join(home, ".gitconfig"), "");
    const view = homeView(
      path.join(home, "ws"),
      ["~/.gitconfig", "~/.nvm", "~/missing"],
      `/usr/bin:${home}/bin:${home}`,
      home,
    );
    expect(view?.path).toBe(home);
    expect(view?.readable.map((r) => r.target).sort()).toEqual(
      [path.join(home, ".gitconfig"), path.join(home, ".nvm"), path.join(home, "bin")].sort(),
    );
    expect(homeView(dir, [], "", home)).toBeUndefined();
    expect(homeView(path.join(home, "ws"), ["~"], "", home)).toBeUndefined();
  });
});

describe("sandbox limits", () => {
  it("keeps the defaults for what is not given and refuses what is not a positive number", () => {
    expect(sandboxLimits({ processes: 64 })).toEqual({ ...DEFAULT_SANDBOX_LIMITS, processes: 64 });
    expect(sandboxLimits({ memoryMiB: Infinity }).memoryMiB).toBe(Infinity);
    expect(() => sandboxLimits({ processes: -1 })).toThrow(/limits\.processes: expected a positive number/);
    expect(() => sandboxLimits({ memory: 1 } as never)).toThrow(/limits\.memory: unknown limit/);
  });

  it("sets soft and hard limits alike, 'unlimited' for Infinity", () => {
    const args = prlimitArgs({ ...DEFAULT_SANDBOX_LIMITS, processes: 64, fileSizeMiB: Infinity });
    expect(args).toContain("--nproc=64:64");
    expect(args).toContain(`--data=${4096 * 1024 * 1024}:${4096 * 1024 * 1024}`);
    expect(args.find((a) => a.startsWith("--fsize="))).toMatch(/^--fsize=(unlimited:unlimited|\d+:\d+)$/);
  });
});
