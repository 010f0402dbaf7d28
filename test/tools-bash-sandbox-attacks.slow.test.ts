// Attacks on the bash sandbox (issue 35, items 1, 6 and 7): each test performs the attack through the
// bash tool, then checks the world afterwards (the repository on disk, what git run outside does, what
// the command could read, how far it could grow).
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createBashTool, DEFAULT_SANDBOX_LIMITS, type SandboxOptions, sandboxSupport } from "../index.js";
import { runTool } from "./fixtures/tools-helpers.js";

const support = sandboxSupport();
const suite = support.available || process.env.CI ? describe : describe.skip;

let base: string;
let workspace: string;
/** A home folder of our own, so the tests neither read nor depend on the real one. */
let home: string;
const previousEnv = { ...process.env };

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "am-attack-")));
  home = await realpath(await mkdtemp(path.join("/var/tmp", "am-attack-home-")));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(base, "ws-")));
  process.env.HOME = home;
});
afterEach(() => {
  process.env = { ...previousEnv };
});

const sandboxed = (options: SandboxOptions | true = true, extra: { env?: Record<string, string> } = {}) =>
  createBashTool({ workspace, sandbox: options, killGraceMs: 300, updateIntervalMs: 10, ...extra });

/** git on the host, as the user runs it after the session: no global config, the workspace's own. */
function hostGit(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      HOME: home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "User",
      GIT_AUTHOR_EMAIL: "user@example.com",
      GIT_COMMITTER_NAME: "User",
      GIT_COMMITTER_EMAIL: "user@example.com",
    },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function makeRepository(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  expect(hostGit(dir, "init", "-q", "-b", "main").status).toBe(0);
  await writeFile(path.join(dir, "README.md"), "hello\n");
  hostGit(dir, "add", "README.md");
  expect(hostGit(dir, "commit", "-q", "-m", "first").status).toBe(0);
}

/** The attack of issue 35: replace `.git` by a copy, then plant a hook, an fsmonitor and a redirect. */
const replaceGitAndPlant = (repo: string) =>
  [
    `cd ${repo}`,
    "mv .git .git-old && mkdir .git && cp -a .git-old/. .git/",
    "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch \"$PWD/pwned-hook\"\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    "git config core.fsmonitor 'touch pwned-fsmonitor; false'",
    "git config core.hooksPath evil-hooks",
    "mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes",
    "echo done",
  ].join("; ");

/** What git run outside the sandbox does in `repo` afterwards: commit (hooks) and status (fsmonitor). */
async function expectNothingPlanted(repo: string, configBefore: string): Promise<void> {
  expect(existsSync(path.join(repo, ".git-old"))).toBe(false);
  expect(existsSync(path.join(repo, ".git", "hooks", "pre-commit"))).toBe(false);
  expect(await readFile(path.join(repo, ".git", "config"), "utf8")).toBe(configBefore);
  // The sandbox creates it empty so that it can be read-only; nothing the command wrote is in it.
  const attributes = path.join(repo, ".git", "info", "attributes");
  expect(existsSync(attributes) ? await readFile(attributes, "utf8") : "").toBe("");
  expect(existsSync(path.join(repo, ".git", "commondir"))).toBe(false);
  await writeFile(path.join(repo, "later.txt"), "the user's own change\n");
  expect(hostGit(repo, "status", "--porcelain").status).toBe(0);
  hostGit(repo, "add", "later.txt");
  expect(hostGit(repo, "commit", "-q", "-m", "the user's commit").status).toBe(0);
  expect(existsSync(path.join(repo, "pwned-hook"))).toBe(false);
  expect(existsSync(path.join(repo, "pwned-fsmonitor"))).toBe(false);
}

suite("attack: replace or reconfigure a repository from the sandbox (issue 35, item 1)", () => {
  it("cannot move .git aside and put a copy with a hook and an fsmonitor in its place", async () => {
    await makeRepository(workspace);
    const configBefore = await readFile(path.join(workspace, ".git", "config"), "utf8");
    const run = await runTool(sandboxed(), { command: replaceGitAndPlant(".") });
    expect(run.text).toMatch(/mv: cannot move '\.git' to '\.git-old': Device or resource busy/);
    expect(run.text).toMatch(/could not lock config file|Read-only file system/);
    await expectNothingPlanted(workspace, configBefore);
  });

  it("protects a nested repository and the one a submodule keeps under .git/modules the same way", async () => {
    await makeRepository(workspace);
    const nested = path.join(workspace, "vendor", "lib");
    await makeRepository(nested);
    const nestedConfig = await readFile(path.join(nested, ".git", "config"), "utf8");
    const run = await runTool(sandboxed(), { command: replaceGitAndPlant("vendor/lib") });
    expect(run.text).toMatch(/Device or resource busy/);
    await expectNothingPlanted(nested, nestedConfig);

    // Moving the folder that holds it, to put a fake repository at the path the user knows, fails too.
    const moved = await runTool(sandboxed(), {
      command: "mv vendor/lib vendor/lib-old || mv vendor vendor-old",
    });
    expect(moved.text).toMatch(/Device or resource busy/);
    expect(existsSync(path.join(nested, ".git", "HEAD"))).toBe(true);

    const submoduleDir = path.join(workspace, ".git", "modules", "lib");
    await mkdir(path.join(submoduleDir, "hooks"), { recursive: true });
    await writeFile(path.join(submoduleDir, "HEAD"), "ref: refs/heads/main\n");
    await mkdir(path.join(submoduleDir, "objects"));
    await mkdir(path.join(submoduleDir, "refs"));
    await writeFile(path.join(submoduleDir, "config"), "[core]\n\tbare = false\n");
    const planted = await runTool(sandboxed(), {
      command:
        "echo '#!/bin/sh' > .git/modules/lib/hooks/post-checkout; echo '[core] fsmonitor = evil' >> .git/modules/lib/config; mv .git/modules/lib .git/modules/lib2",
    });
    expect(planted.text).toMatch(/post-checkout: Read-only file system/);
    expect(planted.text).toMatch(/config: Read-only file system/);
    expect(planted.text).toMatch(/Device or resource busy/);
    expect(await readFile(path.join(submoduleDir, "config"), "utf8")).toBe("[core]\n\tbare = false\n");
    expect(existsSync(path.join(submoduleDir, "hooks", "post-checkout"))).toBe(false);
  });

  it("cannot redirect git to a repository of its own with .git/commondir", async () => {
    await makeRepository(workspace);
    const run = await runTool(sandboxed(), {
      command: [
        "git init -q evil && git -C evil config core.fsmonitor 'touch pwned-fsmonitor; false'",
        `echo ${workspace}/evil/.git > .git/commondir`,
        "echo planted",
      ].join("; "),
    });
    expect(run.text).toMatch(/planted/);
    expect(existsSync(path.join(workspace, ".git", "commondir"))).toBe(false);
    expect(hostGit(workspace, "status", "--porcelain").status).toBe(0);
    expect(existsSync(path.join(workspace, "pwned-fsmonitor"))).toBe(false);
  });

  it("keeps the hooks folder the config names (core.hooksPath) read-only", async () => {
    await makeRepository(workspace);
    await mkdir(path.join(workspace, ".githooks"));
    hostGit(workspace, "config", "core.hooksPath", ".githooks");
    const run = await runTool(sandboxed(), {
      command:
        "printf '#!/bin/sh\\ntouch pwned-hook\\n' > .githooks/pre-commit; chmod +x .githooks/pre-commit; mv .githooks x",
    });
    expect(run.text).toMatch(/pre-commit: Read-only file system/);
    expect(existsSync(path.join(workspace, ".githooks", "pre-commit"))).toBe(false);
    hostGit(workspace, "commit", "-q", "--allow-empty", "-m", "later");
    expect(existsSync(path.join(workspace, "pwned-hook"))).toBe(false);

    // An included config file that does not exist yet cannot be planted either.
    hostGit(workspace, "config", "include.path", "../local.gitconfig");
    await runTool(sandboxed(), {
      command: "printf '[core]\\n\\tfsmonitor = touch pwned-fsmonitor; false\\n' > local.gitconfig; echo x",
    });
    expect(existsSync(path.join(workspace, "local.gitconfig"))).toBe(false);
    hostGit(workspace, "status", "--porcelain");
    expect(existsSync(path.join(workspace, "pwned-fsmonitor"))).toBe(false);
  });

  it("still lets git add and git commit work inside the sandbox", async () => {
    await makeRepository(workspace);
    const run = await runTool(sandboxed(), {
      command: [
        "echo change > change.txt",
        "git add change.txt",
        "git -c user.name=Agent -c user.email=agent@example.com commit -q -m 'made in the sandbox'",
        "git log --format=%s",
      ].join(" && "),
    });
    expect(run.text).toBe("made in the sandbox\nfirst\n");
    expect(hostGit(workspace, "log", "--format=%s").stdout).toBe("made in the sandbox\nfirst\n");
    expect(hostGit(workspace, "status", "--porcelain").stdout).toBe("");
  });
});

suite("attack: read secrets the sandbox still shows (issue 35, item 6)", () => {
  it("hides nested .env files, not only the root's", async () => {
    await mkdir(path.join(workspace, "app", "deep"), { recursive: true });
    await writeFile(path.join(workspace, "app", ".env"), "API_KEY=nested-secret\n");
    await writeFile(path.join(workspace, "app", ".env.local"), "TOKEN=nested-local-secret\n");
    await writeFile(path.join(workspace, "app", "deep", ".env.production"), "PASS=deep-secret\n");
    const run = await runTool(sandboxed(), {
      command: "cat app/.env app/.env.local app/deep/.env.production; mv app app2; cat app2/.env",
    });
    expect(run.text).not.toMatch(/secret/);
    expect(run.text).toMatch(/app\/\.env: Permission denied/);
    expect(run.text).toMatch(/app\/\.env\.local: Permission denied/);
    expect(run.text).toMatch(/deep\/\.env\.production: Permission denied/);
  });

  it("a denied path cannot be moved out from under its protection (mv config config2)", async () => {
    await mkdir(path.join(workspace, "config"));
    await writeFile(path.join(workspace, "config", "secrets.json"), '{"password":"hunter2"}\n');
    const options = { denyRead: ["config/secrets.json"] };
    const first = await runTool(sandboxed(options), {
      command: "mv config config2; mv config/secrets.json leaked.json; cp -r config copy",
    });
    expect(first.text).toMatch(/Device or resource busy/);
    const second = await runTool(sandboxed(options), {
      command: "cat config2/secrets.json leaked.json copy/secrets.json config/secrets.json",
    });
    expect(second.text).not.toContain("hunter2");
    expect(await readFile(path.join(workspace, "config", "secrets.json"), "utf8")).toContain("hunter2");
  });

  it("passes only an allowlist of the environment, and what the user adds", async () => {
    const secrets = {
      API_KEY: "s1",
      SECRET_KEY: "s2",
      PGPASSWORD: "s3",
      MYSQL_PWD: "s4",
      DATABASE_URL: "postgres://u:s5@db/x",
      OPENAI_KEY: "s6",
      STRIPE_LIVE: "s7",
    };
    Object.assign(process.env, secrets, { LANG: "C.UTF-8", AM_SETTING: "wanted" });
    const names = [...Object.keys(secrets), "AM_SETTING"];
    const command = `for n in ${names.join(" ")}; do printf '%s=%s\\n' "$n" "\${!n}"; done; echo "HOME=$HOME LANG=$LANG"; test -n "$PATH" && echo path-ok`;
    const run = await runTool(sandboxed(), { command });
    for (const name of names) expect(run.text).toContain(`${name}=\n`);
    expect(run.text).toContain(`HOME=${home} LANG=C.UTF-8`);
    expect(run.text).toContain("path-ok");

    const allowed = await runTool(sandboxed({ allowEnv: ["AM_*"] }), { command });
    expect(allowed.text).toContain("AM_SETTING=wanted\n");
    expect(allowed.text).toContain("API_KEY=\n");
  });

  it("hides the user's home: other sessions and other tools' credentials; shows ~/.gitconfig", async () => {
    const files: Record<string, string> = {
      ".local/share/agent-machine/sessions/other-project/events.jsonl": "session-secret",
      ".config/gh/hosts.yml": "gh-secret",
      ".docker/config.json": "docker-secret",
      ".npmrc": "npm-secret",
      ".netrc": "netrc-secret",
      ".kube/config": "kube-secret",
      ".config/gcloud/credentials.db": "gcloud-secret",
      ".terraform.d/credentials.tfrc.json": "terraform-secret",
      ".vault-token": "vault-secret",
      "other-project/.env": "other-workspace-secret",
      ".gitconfig": "[user]\n\tname = Shown\n",
    };
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(home, name)), { recursive: true });
      await writeFile(path.join(home, name), text);
    }
    const command = `cd ${home} && cat ${Object.keys(files).join(" ")} 2>/dev/null; find . -type f 2>/dev/null | sort`;
    const plain = await runTool(createBashTool({ workspace }), { command });
    expect(plain.text).toContain("session-secret");
    const run = await runTool(sandboxed(), { command });
    expect(run.text).not.toMatch(/secret/);
    expect(run.text).toContain("name = Shown");

    // What the user shows is readable; a credential folder stays denied even when shown.
    await mkdir(path.join(home, ".m2"));
    await writeFile(path.join(home, ".m2", "settings.xml"), "<settings/>\n");
    const configured = await runTool(sandboxed({ allowRead: ["~/.m2", "~/.kube"] }), {
      command: `cat ${home}/.m2/settings.xml ${home}/.kube/config`,
    });
    expect(configured.text).toContain("<settings/>");
    expect(configured.text).toMatch(/\.kube\/config: Permission denied/);
  });
});

suite("a workspace inside the hidden home folder", () => {
  it("is shown and writable, while the rest of the home stays hidden and cannot be written", async () => {
    const inHome = path.join(home, "projects", "app");
    await mkdir(inHome, { recursive: true });
    await mkdir(path.join(home, "projects", "other"), { recursive: true });
    await writeFile(path.join(home, "projects", "other", "notes.txt"), "other-workspace-secret\n");
    const bash = createBashTool({ workspace: inHome, sandbox: true });
    const run = await runTool(bash, {
      command: "echo ok > made.txt && cat made.txt; cat ../other/notes.txt; echo x > ../escape.txt; ls ~",
    });
    expect(run.text).toMatch(/^ok$/m);
    expect(run.text).not.toContain("other-workspace-secret");
    expect(run.text).toMatch(/escape\.txt: Permission denied/);
    expect(await readFile(path.join(inHome, "made.txt"), "utf8")).toBe("ok\n");
    expect(existsSync(path.join(home, "projects", "escape.txt"))).toBe(false);
  });
});

suite("attack: starve the host from the sandbox (issue 35, item 7)", () => {
  const limitsOf = async (options: SandboxOptions | true = true) =>
    (
      await runTool(sandboxed(options), {
        command: "cat /proc/self/limits; df -B1 --output=target,size /tmp /dev/shm /run",
      })
    ).text;

  it("bounds /tmp, /dev/shm and /run by default, and the user can raise them", async () => {
    const text = await limitsOf();
    const size = (target: string) => Number(new RegExp(`^${target}\\s+(\\d+)$`, "m").exec(text)?.[1]);
    expect(size("/tmp")).toBe(DEFAULT_SANDBOX_LIMITS.tmpMiB * 1024 * 1024);
    expect(size("/dev/shm")).toBe(DEFAULT_SANDBOX_LIMITS.shmMiB * 1024 * 1024);
    expect(size("/run")).toBeLessThanOrEqual(1024 * 1024);

    const full = await runTool(sandboxed({ limits: { tmpMiB: 4 } }), {
      command: "head -c 8M /dev/zero > /tmp/fill; echo status $?; stat -c %s /tmp/fill",
    });
    expect(full.text).toMatch(/No space left on device/);
    expect(Number(/^(\d+)$/m.exec(full.text)?.[1])).toBeLessThanOrEqual(4 * 1024 * 1024);
    // bwrap's own /dev is a tmpfs too: it is read-only.
    const dev = await runTool(sandboxed(), { command: "head -c 1M /dev/zero > /dev/fill; ls /dev" });
    expect(dev.text).toMatch(/\/dev\/fill: Read-only file system/);
    expect(dev.text).not.toMatch(/^fill$/m);
    const raised = await limitsOf({ limits: { tmpMiB: 2048 } });
    expect(raised).toMatch(/^\/tmp\s+2147483648$/m);
  });

  it("bounds each process's memory, the number of processes and the size of a file", async () => {
    const text = await limitsOf();
    const limit = (name: string) => new RegExp(`^${name}\\s+(\\S+)\\s+(\\S+)`, "m").exec(text)?.slice(1, 3);
    expect(limit("Max data size")).toEqual(
      Array(2).fill(String(DEFAULT_SANDBOX_LIMITS.memoryMiB * 1024 * 1024)),
    );
    expect(limit("Max processes")).toEqual(Array(2).fill(String(DEFAULT_SANDBOX_LIMITS.processes)));
    expect(limit("Max file size")).toEqual(
      Array(2).fill(String(DEFAULT_SANDBOX_LIMITS.fileSizeMiB * 1024 * 1024)),
    );

    // 1 GiB: Node 24 needs more than 256 MiB of data segment just to start (it dies in its set-up).
    const memory = await runTool(sandboxed({ limits: { memoryMiB: 1024 } }), {
      command: `node -e 'const a = []; try { for (;;) a.push(Buffer.alloc(32 << 20, 1)); } catch (e) { console.log("stopped at", a.length * 32, "MiB") }'`,
    });
    expect(Number(/stopped at (\d+) MiB/.exec(memory.text)?.[1])).toBeLessThanOrEqual(1024);

    const file = await runTool(sandboxed({ limits: { fileSizeMiB: 1 } }), {
      command: "head -c 4M /dev/zero > big.bin; stat -c %s big.bin",
    });
    expect(statSync(path.join(workspace, "big.bin")).size).toBeLessThanOrEqual(1024 * 1024);
    expect(file.text).toMatch(/File size limit exceeded|\[Exit code/);
  });

  // Root is exempt from RLIMIT_NPROC, so the fork bomb is bounded only for an ordinary user (as in CI).
  const asRoot = process.getuid?.() === 0;
  it.skipIf(asRoot)(
    `a fork bomb stops at the process limit${asRoot ? " (skipped: root is exempt from RLIMIT_NPROC; run as another user)" : ""}`,
    async () => {
      const bomb = `node -e 'const { spawn } = require("child_process"); let started = 0, refused = 0; for (let i = 0; i < 300; i++) { const c = spawn("sleep", ["3"]); c.on("spawn", () => started++); c.on("error", () => refused++); } setTimeout(() => { console.log("started", started, "refused", refused); process.exit(0); }, 1500)'`;
      const run = await runTool(sandboxed({ limits: { processes: 64 } }), {
        command: bomb,
        timeout_seconds: 30,
      });
      const [, started, refused] = /started (\d+) refused (\d+)/.exec(run.text) ?? [];
      expect(Number(started)).toBeLessThan(64);
      expect(Number(refused)).toBeGreaterThan(200);
    },
  );

  it("rejects a limit that is not a positive number, naming it", () => {
    expect(() => sandboxed({ limits: { processes: 0 } })).toThrow(/limits\.processes/);
    expect(() => sandboxed({ limits: { tmpMiB: "1G" as unknown as number } })).toThrow(/limits\.tmpMiB/);
  });
});
