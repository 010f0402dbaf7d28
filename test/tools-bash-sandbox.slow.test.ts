import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createBashTool,
  DEFAULT_DENY_READ,
  type SandboxOptions,
  SandboxUnavailableError,
  sandboxSupport,
} from "../index.js";
import { runTool } from "./fixtures/tools-helpers.js";

// These tests run bubblewrap for real. CI installs it (.ci/run); elsewhere without it they are
// skipped, except under CI=true where a missing bwrap must fail loudly.
const support = sandboxSupport();
const suite = support.available || process.env.CI ? describe : describe.skip;
if (!support.available) console.warn(`bash sandbox tests: ${support.reason}`);

/**
 * A process name to find a command's processes by: `shell` is what goes in the command (bash
 * computes the name), `name` what the process is then called, so the command lines of bwrap and
 * bash, which hold `shell`, do not match.
 */
function marker(prefix: string): { shell: string; name: string } {
  const id = randomUUID();
  return { shell: `${prefix}-$((6 * 7))-${id}`, name: `${prefix}-42-${id}` };
}

/** Live (non-zombie) processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      if (cmdline.includes(marker) && state !== "Z") found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

async function until(condition: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

// The workspace is two levels below the temp root, so `..` is a folder bwrap creates, not /tmp
// itself (which is the sandbox's private, writable temp). `outsideDir` is outside /tmp, so the
// sandbox sees it read-only rather than hidden.
let base: string;
let workspace: string;
let outsideDir: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "am-sandbox-")));
  workspace = path.join(base, "project", "ws");
  await mkdir(workspace, { recursive: true });
  outsideDir = await realpath(await mkdtemp(path.join("/var/tmp", "am-sandbox-outside-")));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
  await rm(outsideDir, { recursive: true, force: true });
});

const sandboxed = (options: SandboxOptions | true = true, extra: { env?: Record<string, string> } = {}) =>
  createBashTool({ workspace, sandbox: options, killGraceMs: 300, updateIntervalMs: 10, ...extra });

suite("bash in the bubblewrap sandbox", () => {
  it("runs an ordinary command in the workspace, and its writes land there", async () => {
    const run = await runTool(sandboxed(), {
      command: "pwd; echo built > out.txt && cat out.txt; node -e 'console.log(6 * 7)'",
    });
    expect(run.isError).toBe(false);
    expect(run.text).toBe(`${workspace}\nbuilt\n42\n`);
    expect(await readFile(path.join(workspace, "out.txt"), "utf8")).toBe("built\n");
  });

  it("cannot write outside the workspace: `echo x > ../outside` fails and nothing appears", async () => {
    const run = await runTool(sandboxed(), { command: "echo x > ../outside" });
    expect(run.text).toMatch(/\.\.\/outside: Permission denied/);
    expect(run.text).toMatch(/\[Exit code: 1\]/);
    expect(existsSync(path.join(base, "project", "outside"))).toBe(false);

    const target = path.join(outsideDir, "written");
    const elsewhere = await runTool(sandboxed(), { command: `echo x > ${target}` });
    expect(elsewhere.text).toMatch(/Read-only file system/);
    expect(existsSync(target)).toBe(false);

    // The same command without the sandbox does write: the refusal is the sandbox's doing.
    const plain = await runTool(createBashTool({ workspace }), { command: `echo x > ${target}` });
    expect(plain.isError).toBe(false);
    expect(existsSync(target)).toBe(true);
    unlinkSync(target);
  });

  it("writes to /tmp go to a private temp that the host never sees", async () => {
    const name = `am-sandbox-${randomUUID()}`;
    const run = await runTool(sandboxed(), {
      command: `echo t > /tmp/${name} && cat /tmp/${name}; echo "$TMPDIR"; ls /tmp | sort`,
    });
    // /tmp holds only the file and the folder bwrap made on the way to the workspace.
    expect(run.text).toBe(`t\n/tmp\n${[base.split("/")[2], name].sort().join("\n")}\n`);
    expect(existsSync(path.join(tmpdir(), name))).toBe(false);
  });

  it("denies reading ~/.ssh and .env with the default list, which a plain command can read", async () => {
    const home = await realpath(await mkdtemp(path.join("/var/tmp", "am-sandbox-home-")));
    const previousHome = process.env.HOME;
    try {
      await mkdir(path.join(home, ".ssh"));
      await writeFile(path.join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
      await writeFile(path.join(workspace, ".env"), "API_KEY=very-secret\n");
      await writeFile(path.join(workspace, ".env.local"), "TOKEN=also-secret\n");
      const command = `cat ${home}/.ssh/id_ed25519; ls ${home}/.ssh; cat .env .env.local`;

      const plain = await runTool(createBashTool({ workspace }), { command });
      expect(plain.text).toContain("PRIVATE KEY");
      expect(plain.text).toContain("very-secret");

      process.env.HOME = home; // the default list's `~` is the home folder
      expect(DEFAULT_DENY_READ).toContain("~/.ssh");
      const run = await runTool(sandboxed(), { command });
      expect(run.text).not.toContain("PRIVATE KEY");
      expect(run.text).not.toContain("secret");
      expect(run.text).toMatch(/id_ed25519: Permission denied/);
      expect(run.text).toMatch(/cannot open directory '.*\.ssh': Permission denied/);
      expect(run.text).toMatch(/\.env: Permission denied/);
      expect(run.text).toMatch(/\.env\.local: Permission denied/);
      // Nor can the command remove or replace them.
      const tamper = await runTool(sandboxed(), { command: "rm -f .env; echo x > .env; cat .env" });
      expect(tamper.text).not.toContain("secret");
      expect(await readFile(path.join(workspace, ".env"), "utf8")).toBe("API_KEY=very-secret\n");
    } finally {
      process.env.HOME = previousHome;
      await rm(home, { recursive: true, force: true });
      await rm(path.join(workspace, ".env"), { force: true });
      await rm(path.join(workspace, ".env.local"), { force: true });
    }
  });

  it("keeps git hooks and git config read-only inside a writable workspace", async () => {
    await mkdir(path.join(workspace, ".git", "hooks"), { recursive: true });
    await writeFile(path.join(workspace, ".git", "config"), "[core]\n");
    try {
      const run = await runTool(sandboxed(), {
        command:
          "echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo ok > .git/HEAD && cat .git/HEAD",
      });
      expect(run.text).toMatch(/pre-commit: Read-only file system/);
      expect(run.text).toMatch(/\.git\/config: Read-only file system/);
      expect(run.text).toMatch(/^ok$/m);
      expect(existsSync(path.join(workspace, ".git", "hooks", "pre-commit"))).toBe(false);
      expect(await readFile(path.join(workspace, ".git", "config"), "utf8")).toBe("[core]\n");
    } finally {
      await rm(path.join(workspace, ".git"), { recursive: true, force: true });
    }
  });

  describe("network", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((socket) => socket.end("hello from the host\n"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const connect = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;

    it("is off by default: a connection to the host fails", async () => {
      const run = await runTool(sandboxed(), { command: connect() });
      expect(run.text).toMatch(/Connection refused|Network is unreachable/);
      expect(run.text).not.toContain("hello from the host");
      expect(run.text).toMatch(/\[Exit code: 1\]/);
    });

    it("is on with network: true", async () => {
      const run = await runTool(sandboxed({ network: true }), { command: connect() });
      expect(run.text).toBe("hello from the host\n");
    });

    it("hides the host's sockets under /run even with network on", async () => {
      const socketPath = `/run/am-sandbox-${process.pid}.sock`;
      const unix = createServer((socket) => socket.end("unix hello\n"));
      await new Promise<void>((resolve) => unix.listen(socketPath, resolve));
      try {
        const command = `node -e 'require("net").connect(process.argv[1]).on("data", (d) => process.stdout.write(d)).on("error", (e) => console.log(e.code))' ${socketPath}`;
        const plain = await runTool(createBashTool({ workspace }), { command });
        expect(plain.text).toBe("unix hello\n");
        const run = await runTool(sandboxed({ network: true }), { command });
        expect(run.text).toBe("ENOENT\n");
      } finally {
        await new Promise<void>((resolve) => unix.close(() => resolve()));
        rmSync(socketPath, { force: true });
      }
    });
  });

  it("withholds API keys and tokens from the environment, but keeps what the tool's env sets", async () => {
    const previous = { ...process.env };
    process.env.ANTHROPIC_API_KEY = "sk-ant-test-secret";
    process.env.GITHUB_TOKEN = "ghp_test_secret";
    process.env.AM_VISIBLE = "visible";
    try {
      // Only an allowlist passes (issue 35): AM_VISIBLE is named, the keys never are.
      const bash = sandboxed({ allowEnv: ["AM_VISIBLE"] }, { env: { NPM_TOKEN: "explicitly-given" } });
      const run = await runTool(bash, {
        command: 'echo "[$ANTHROPIC_API_KEY][$GITHUB_TOKEN][$AM_VISIBLE][$NPM_TOKEN]"',
      });
      expect(run.text).toBe("[][][visible][explicitly-given]\n");
    } finally {
      process.env = previous;
    }
  });

  it("ends every process of the command on abort, a child that ignores SIGTERM too", async () => {
    const sleeper = marker("am-abort");
    const controller = new AbortController();
    const started = new Promise<void>((resolve) => {
      const running = runTool(
        sandboxed(),
        { command: `(trap '' TERM; exec -a "${sleeper.shell}" sleep 1000) & sleep 0.1; echo started; wait` },
        {
          signal: controller.signal,
          onUpdate: (partial) => {
            if (partial.content.some((c) => c.type === "text" && c.text.includes("started"))) resolve();
          },
        },
      );
      void running.then((run) => results.push(run));
    });
    const results: Awaited<ReturnType<typeof runTool>>[] = [];
    await started;
    expect(processesWith(sleeper.name).length).toBe(1);
    controller.abort();
    expect(await until(() => results.length === 1)).toBe(true);
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.text).toMatch(/aborted/);
    expect(processesWith(sleeper.name)).toEqual([]);
  });

  it("ends every process of the command on timeout and after it finishes", async () => {
    const stubborn = marker("am-timeout");
    const run = await runTool(sandboxed(), {
      command: `(trap '' TERM; exec -a "${stubborn.shell}" sleep 1000) & sleep 0.1; ps -eo args | grep -c '^am-timeout-42'; wait`,
      timeout_seconds: 0.5,
    });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/timed out after 0\.5 s/);
    // It was running (counted from inside), and is gone now.
    expect(run.text).toMatch(/^1\n/);
    expect(processesWith(stubborn.name)).toEqual([]);

    const background = marker("am-background");
    const finished = await runTool(sandboxed(), {
      command: `(exec -a "${background.shell}" sleep 1000) & sleep 0.1; ps -eo args | grep -c '^am-background-42'`,
    });
    expect(finished.text).toBe("1\n");
    expect(processesWith(background.name)).toEqual([]);
  });
});

suite("an agent process killed with SIGKILL", () => {
  it("takes its sandboxed commands with it (the pid namespace dies with bubblewrap)", async () => {
    const sleeper = marker("am-sigkill");
    const fixture = path.join(import.meta.dirname, "fixtures", "sandboxed-command.ts");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", fixture, workspace, `(exec -a "${sleeper.shell}" sleep 1000) & echo up; wait`],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => chunk.includes("started") && resolve());
      child.once("exit", () => reject(new Error("the fixture exited before its command ran")));
    });
    expect(await until(() => processesWith(sleeper.name).length === 1)).toBe(true);
    child.kill("SIGKILL");
    expect(await until(() => processesWith(sleeper.name).length === 0)).toBe(true);
  });
});

describe("when the sandbox cannot run", () => {
  it("refuses to create a sandboxed bash tool, with the reason", async () => {
    const create = () => createBashTool({ workspace: tmpdir(), sandbox: { bwrapPath: "/nowhere/bwrap" } });
    expect(create).toThrow(SandboxUnavailableError);
    expect(create).toThrow(/Cannot sandbox bash: bubblewrap \(\/nowhere\/bwrap\) was not found/);
    expect(create).toThrow(/apt-get install bubblewrap/);
  });

  it("refuses when bubblewrap is there but cannot create namespaces", async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), "am-fake-bwrap-")));
    try {
      const fake = path.join(dir, "bwrap");
      await writeFile(fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
      chmodSync(fake, 0o755);
      expect(() => createBashTool({ workspace: dir, sandbox: { bwrapPath: fake } })).toThrow(
        /installed but cannot create a sandbox here: bwrap: No permissions to create new namespace/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  suite("never runs a command unsandboxed", () => {
    it("fails the call when bubblewrap disappears after the tool was created", async () => {
      const dir = await realpath(await mkdtemp(path.join("/var/tmp", "am-gone-bwrap-")));
      try {
        const copy = path.join(dir, "bwrap");
        copyFileSync(support.available ? support.bwrap : "/usr/bin/bwrap", copy);
        chmodSync(copy, 0o755);
        const bash = createBashTool({ workspace: dir, sandbox: { bwrapPath: copy } });
        unlinkSync(copy);
        const run = await runTool(bash, { command: "touch ran-anyway" });
        expect(run.isError).toBe(true);
        expect(run.text).toMatch(/ENOENT/);
        expect(existsSync(path.join(dir, "ran-anyway"))).toBe(false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
