import { type ChildProcessByStdio, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import type { Readable } from "node:stream";
import {
  bwrapArgs,
  expandPath,
  findOnPath,
  probeBwrap,
  resolveProtectedPaths,
  resolvConfUnderRun,
} from "./internal/bwrap.js";
import { toWorkspace, type Workspace } from "./workspace.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";

/**
 * Paths a sandboxed command may not read (replaced by an unreadable empty file or folder): the
 * usual homes of credentials, and `.env` files at the workspace root. `~` is the home folder;
 * relative paths are relative to the workspace; `*` matches within the last segment.
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { denyRead: [...DEFAULT_DENY_READ, "secrets/"] } });
 * ```
 */
export const DEFAULT_DENY_READ: readonly string[] = [
  "~/.ssh",
  "~/.gnupg",
  "~/.aws",
  "~/.azure",
  "~/.config/gcloud",
  "~/.config/gh",
  "~/.kube",
  "~/.docker",
  "~/.netrc",
  "~/.git-credentials",
  "~/.npmrc",
  "~/.pypirc",
  ".env",
  ".env.*",
];

/**
 * Paths inside the workspace that a sandboxed command may read but not change, because something
 * outside the sandbox executes them later (git hooks, git's config, husky's hooks).
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { denyWrite: [...DEFAULT_DENY_WRITE, "Makefile"] } });
 * ```
 */
export const DEFAULT_DENY_WRITE: readonly string[] = [".git/hooks", ".git/config", ".husky"];

/**
 * Environment variables a sandboxed command does not get (`*` matches any run of characters,
 * case-insensitive): API keys, tokens, passwords, the ssh agent. Variables passed explicitly in
 * the bash tool's `env` option are kept.
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { denyEnv: [...DEFAULT_DENY_ENV, "DATABASE_URL"] } });
 * ```
 */
export const DEFAULT_DENY_ENV: readonly string[] = [
  "*_API_KEY",
  "*_APIKEY",
  "*_ACCESS_KEY",
  "*_SECRET",
  "*_SECRET_KEY",
  "*_TOKEN",
  "*_PASSWORD",
  "*_CREDENTIALS",
  "SSH_AUTH_SOCK",
];

/** How a command is confined. Every field has a safe default. */
export interface SandboxOptions {
  /** Let commands reach the network. Default `false` (only a private loopback). */
  network?: boolean;
  /** Folders writable besides the workspace and the private /tmp (absolute, `~/…` or workspace-relative; they must exist). */
  allowWrite?: string[];
  /** Paths commands may not read. Default {@link DEFAULT_DENY_READ} (give a list to replace it). */
  denyRead?: string[];
  /** Paths inside writable folders that stay read-only. Default {@link DEFAULT_DENY_WRITE}. */
  denyWrite?: string[];
  /** Environment variable names withheld from commands. Default {@link DEFAULT_DENY_ENV}. */
  denyEnv?: string[];
  /** The bubblewrap executable. Default `bwrap` on `PATH`. */
  bwrapPath?: string;
}

const SANDBOX_KEYS: OptionKeys<SandboxOptions & { workspace: unknown }> = {
  workspace: true,
  network: true,
  allowWrite: true,
  denyRead: true,
  denyWrite: true,
  denyEnv: true,
  bwrapPath: true,
};

/** A sandbox for one workspace: runs commands confined by bubblewrap. */
export interface Sandbox {
  /** The workspace root (writable, and where commands start). */
  readonly root: string;
  readonly network: boolean;
  /** The bubblewrap executable in use. */
  readonly bwrap: string;
  /** One sentence for the model: what commands can and cannot do. */
  readonly description: string;
  /**
   * Starts `file args…` inside the sandbox in its own process group (so the caller can signal the
   * whole group), stdout and stderr piped. `env` is filtered by `denyEnv` except the names in
   * `keepEnv`.
   */
  spawn(
    file: string,
    args: readonly string[],
    options: { env: NodeJS.ProcessEnv; keepEnv?: readonly string[] },
  ): ChildProcessByStdio<null, Readable, Readable>;
}

/** Whether the sandbox can run here, and if not, why not. */
export type SandboxSupport = { available: true; bwrap: string } | { available: false; reason: string };

/**
 * Thrown when a sandbox is asked for and cannot be had (no bubblewrap, not Linux, namespaces not
 * allowed). Nothing runs unsandboxed instead.
 *
 * @example
 * ```ts
 * try { createBashTool({ workspace, sandbox: true }); }
 * catch (e) { if (e instanceof SandboxUnavailableError) console.error(e.message); }
 * ```
 */
export class SandboxUnavailableError extends Error {
  override name = "SandboxUnavailableError";
}

const supportCache = new Map<string, SandboxSupport>();

/**
 * Checks, once per executable, whether bubblewrap is installed and can create the sandbox's
 * namespaces here (it runs `true` inside one). Linux only.
 *
 * @example
 * ```ts
 * const support = sandboxSupport();
 * if (!support.available) console.warn(support.reason);
 * ```
 */
export function sandboxSupport(options: { bwrapPath?: string } = {}): SandboxSupport {
  const wanted = options.bwrapPath ?? "bwrap";
  const cached = supportCache.get(wanted);
  if (cached) return cached;
  const support = checkSupport(wanted);
  supportCache.set(wanted, support);
  return support;
}

function checkSupport(wanted: string): SandboxSupport {
  if (process.platform !== "linux") {
    return {
      available: false,
      reason: `The bash sandbox uses bubblewrap, which runs on Linux only (this is ${process.platform}).`,
    };
  }
  const bwrap = findOnPath(wanted);
  if (!bwrap) {
    return {
      available: false,
      reason:
        `bubblewrap (${wanted}) was not found${wanted.includes("/") ? "" : " on PATH"}. ` +
        "Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap).",
    };
  }
  const failure = probeBwrap(bwrap);
  if (failure) {
    return {
      available: false,
      reason: `bubblewrap (${bwrap}) is installed but cannot create a sandbox here: ${failure}`,
    };
  }
  return { available: true, bwrap };
}

/**
 * A bubblewrap sandbox for a workspace: the whole file system read-only, the workspace (and
 * `allowWrite`) writable, a private empty /tmp, /run emptied (no host sockets), `denyRead` paths
 * unreadable, `denyWrite` paths read-only, no network unless `network: true`, new pid namespace
 * (every process of a command dies with it), no capabilities, secrets withheld from the
 * environment. Throws {@link SandboxUnavailableError} when bubblewrap cannot run here.
 *
 * @example
 * ```ts
 * const sandbox = createSandbox({ workspace: process.cwd(), network: false });
 * const child = sandbox.spawn("bash", ["-c", "make test"], { env: process.env });
 * ```
 */
export function createSandbox(options: SandboxOptions & { workspace: string | Workspace }): Sandbox {
  checkOptionKeys("createSandbox", options, SANDBOX_KEYS);
  const support = sandboxSupport({ bwrapPath: options.bwrapPath });
  if (!support.available) {
    throw new SandboxUnavailableError(
      `Cannot sandbox bash: ${support.reason} Without a sandbox, pass sandbox: false (commands then run with all of your rights).`,
    );
  }
  const root = toWorkspace(options.workspace).root;
  if (root === "/") throw new SandboxUnavailableError("Cannot sandbox bash with the workspace at /");
  const network = options.network ?? false;
  const writable = (options.allowWrite ?? []).map((p) => {
    const [real] = expandPath(p, root);
    if (!real) throw new Error(`Sandbox allowWrite path "${p}" does not exist`);
    return real;
  });
  const denyRead = options.denyRead ?? DEFAULT_DENY_READ;
  const denyWrite = options.denyWrite ?? DEFAULT_DENY_WRITE;
  const denyEnv = compileNamePatterns(options.denyEnv ?? DEFAULT_DENY_ENV);
  const resolvConf = network ? resolvConfUnderRun() : undefined;
  // Fail now, not at the first command, when the configuration cannot work.
  resolveProtectedPaths(root, writable, denyRead, denyWrite);

  const description = [
    "Commands run in a sandbox: they can write only inside the workspace and /tmp",
    `(/tmp is private and empty for each command)${network ? "" : ", and have no network access"}.`,
  ].join(" ");

  return {
    root,
    network,
    bwrap: support.bwrap,
    description,
    spawn(file, args, { env, keepEnv = [] }) {
      // Paths are resolved per command: a `.env` created since the last one is hidden too.
      const protectedPaths = resolveProtectedPaths(root, writable, denyRead, denyWrite);
      const plan = { root, writable, network, resolvConf, ...protectedPaths };
      const kept = new Set(keepEnv);
      const childEnv = Object.fromEntries(
        Object.entries(env).filter(([name]) => kept.has(name) || !denyEnv.some((re) => re.test(name))),
      );
      // Denied files are bound from an empty stream on fd 3.
      const devNull = plan.denyFiles.length ? openSync("/dev/null", "r") : undefined;
      try {
        return spawn(support.bwrap, [...bwrapArgs(plan), "--", file, ...args], {
          cwd: root,
          detached: true,
          stdio: devNull === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", "pipe", "pipe", devNull],
          env: childEnv,
        }) as ChildProcessByStdio<null, Readable, Readable>;
      } finally {
        if (devNull !== undefined) closeSync(devNull);
      }
    },
  };
}

/** Case-insensitive regexes for `*` name patterns. */
function compileNamePatterns(patterns: readonly string[]): RegExp[] {
  return patterns.map(
    (pattern) =>
      new RegExp(
        `^${pattern
          .split("*")
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
          .join(".*")}$`,
        "i",
      ),
  );
}
