import type { ChildProcessByStdio } from "node:child_process";
import { isAbsolute, join } from "node:path";
import type { Readable } from "node:stream";
import {
  bwrapArgs,
  expandPath,
  findOnPath,
  homeView,
  probeBwrap,
  resolveProtectedPaths,
  resolvConfUnderRun,
} from "./internal/bwrap.js";
import {
  limitBytes,
  prlimitArgs,
  RUN_SIZE_BYTES,
  type SandboxLimits,
  sandboxLimits,
} from "./sandbox-limits.js";
import { toWorkspace, type Workspace } from "./workspace.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");

/**
 * Paths a sandboxed command may not read (replaced by an unreadable empty file or folder): `.env`
 * files at any depth of the workspace (a bare name matches at every depth), and the usual homes of
 * credentials and agent-machine's own sessions, for when `allowRead` shows them (the home folder is
 * hidden by default). `~` is the home folder; other relative paths are relative to the workspace;
 * `*` matches within the last segment.
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
  "~/.local/share/agent-machine",
  ".env",
  ".env.*",
];

/**
 * Paths inside the workspace that a sandboxed command may read but not change, because something
 * outside the sandbox executes them later (husky's hooks, at any depth). Every repository of the
 * workspace is protected besides, whatever this list says: its `.git` cannot be moved or replaced,
 * and its config, hooks and `info` are read-only.
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { denyWrite: [...DEFAULT_DENY_WRITE, "Makefile"] } });
 * ```
 */
export const DEFAULT_DENY_WRITE: readonly string[] = [".husky"];

/**
 * The environment variables a sandboxed command gets (`*` matches any run of characters,
 * case-insensitive): what shells, locales, terminals, git and the usual toolchains need, and no
 * credentials. Everything else is withheld; add names with `allowEnv`, or pass values in the bash
 * tool's `env` option.
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { allowEnv: ["DATABASE_HOST", "MYAPP_*"] } });
 * ```
 */
export const DEFAULT_ALLOW_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "HOSTNAME",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TZ",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "FORCE_COLOR",
  "CLICOLOR",
  "CLICOLOR_FORCE",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "GIT_PAGER",
  "GIT_TERMINAL_PROMPT",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "CI",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "NODE_ENV",
  "NODE_PATH",
  "NVM_DIR",
  "NVM_BIN",
  "GOPATH",
  "GOROOT",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "JAVA_HOME",
  "PYTHONPATH",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
];

/**
 * Environment variables withheld even when `allowEnv` lets them through (`*` matches any run of
 * characters, case-insensitive): keys, tokens, passwords, connection strings, the ssh agent.
 * Variables passed explicitly in the bash tool's `env` option are kept.
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { allowEnv: ["MYAPP_*"], denyEnv: [...DEFAULT_DENY_ENV, "MYAPP_DSN"] } });
 * ```
 */
export const DEFAULT_DENY_ENV: readonly string[] = [
  "*API_KEY*",
  "*APIKEY*",
  "*ACCESS_KEY*",
  "*_KEY",
  "*SECRET*",
  "*TOKEN*",
  "*PASSWORD*",
  "*PASSWD*",
  "*_PWD",
  "*CREDENTIAL*",
  "*DATABASE_URL*",
  "*_DSN",
  "*_AUTH",
  "SSH_AUTH_SOCK",
];

/**
 * Paths of the home folder a sandboxed command may read (the rest of the home is hidden behind an
 * empty, throwaway folder): git's own configuration and the usual places of toolchains. The
 * entries of `PATH` that lie in the home are shown too. Add paths with `allowRead`; `"~"` shows
 * the whole home (read-only, `denyRead` still applies).
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { allowRead: ["~/.m2", "~/.gradle"] } });
 * ```
 */
export const DEFAULT_ALLOW_READ: readonly string[] = [
  "~/.gitconfig",
  "~/.config/git",
  "~/.nvm",
  "~/.volta",
  "~/.fnm",
  "~/.local/share/fnm",
  "~/.bun/bin",
  "~/.deno/bin",
  "~/.cargo/bin",
  "~/.rustup",
  "~/.pyenv",
  "~/.rbenv",
  "~/.asdf",
  "~/.local/bin",
  "~/go/bin",
  "~/.sdkman/candidates",
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
  /** Environment variable names passed to commands besides {@link DEFAULT_ALLOW_ENV} (`*` patterns). */
  allowEnv?: string[];
  /** Environment variable names withheld even when allowed. Default {@link DEFAULT_DENY_ENV}. */
  denyEnv?: string[];
  /** Paths of the home folder shown read-only besides {@link DEFAULT_ALLOW_READ}; `"~"` shows all of it. */
  allowRead?: string[];
  /** Bounds of each command: tmpfs sizes, memory, processes, file size. Default {@link DEFAULT_SANDBOX_LIMITS}. */
  limits?: Partial<SandboxLimits>;
  /** The bubblewrap executable. Default `bwrap` on `PATH`. */
  bwrapPath?: string;
}

const SANDBOX_KEYS: OptionKeys<SandboxOptions & { workspace: unknown }> = {
  workspace: true,
  network: true,
  allowWrite: true,
  denyRead: true,
  denyWrite: true,
  allowEnv: true,
  denyEnv: true,
  allowRead: true,
  limits: true,
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
   * whole group), stdout and stderr piped, under the sandbox's limits. Of `env`, only the names
   * `allowEnv` allows and `denyEnv` does not deny pass, and the names in `keepEnv`. Redirects a
   * command planted in a repository are removed when it exits.
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
 * `allowWrite`) writable, the home folder hidden but for `allowRead`, a private empty /tmp and
 * /dev/shm, /run emptied (no host sockets), every repository's `.git` pinned with its config and
 * hooks read-only, `denyRead` paths unreadable, `denyWrite` paths read-only, no network unless
 * `network: true`, new pid namespace (every process of a command dies with it), no capabilities,
 * only an allowlist of the environment, and bounds on memory, processes, file and tmpfs sizes.
 * Throws {@link SandboxUnavailableError} when bubblewrap (or `prlimit`) cannot run here.
 *
 * @example
 * ```ts
 * const sandbox = createSandbox({ workspace: process.cwd(), network: false });
 * const child = sandbox.spawn("bash", ["-c", "make test"], { env: process.env });
 * ```
 */
export function createSandbox(options: SandboxOptions & { workspace: string | Workspace }): Sandbox {
  checkOptionKeys("createSandbox", options, SANDBOX_KEYS);
  const limits = sandboxLimits(options.limits);
  const support = sandboxSupport({ bwrapPath: options.bwrapPath });
  if (!support.available) {
    throw new SandboxUnavailableError(
      `Cannot sandbox bash: ${support.reason} Without a sandbox, pass sandbox: false (commands then run with all of your rights).`,
    );
  }
  const prlimit = findOnPath("prlimit");
  if (!prlimit) {
    throw new SandboxUnavailableError(
      "Cannot sandbox bash: prlimit (util-linux), which bounds each command's memory and processes, was not found on PATH. Install util-linux, or pass sandbox: false (commands then run with all of your rights).",
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
  const denyRead = [...(options.denyRead ?? DEFAULT_DENY_READ), ...dataFolderOutsideHome()];
  const denyWrite = options.denyWrite ?? DEFAULT_DENY_WRITE;
  const allowEnv = compileNamePatterns([...DEFAULT_ALLOW_ENV, ...(options.allowEnv ?? [])]);
  const denyEnv = compileNamePatterns(options.denyEnv ?? DEFAULT_DENY_ENV);
  const resolvConf = network ? resolvConfUnderRun() : undefined;
  const hiddenHome = homeView(
    root,
    [...DEFAULT_ALLOW_READ, ...(options.allowRead ?? [])],
    process.env.PATH ?? "",
  );
  const sizes = {
    tmp: limitBytes(limits.tmpMiB),
    shm: limitBytes(limits.shmMiB),
    home: limitBytes(limits.homeMiB),
    run: RUN_SIZE_BYTES,
  };
  const limitArgs = prlimitArgs(limits);
  // Fail now, not at the first command, when the configuration cannot work.
  resolveProtectedPaths(root, writable, denyRead, denyWrite);

  const description = [
    "Commands run in a sandbox: they can write only inside the workspace and /tmp",
    `(/tmp is private and empty for each command)${network ? "" : ", and have no network access"}.`,
    "The home folder is hidden (an empty throwaway folder), most environment variables are withheld,",
    "`.git` folders cannot be moved and their config and hooks are read-only,",
    `and each command is limited (/tmp ${mib(limits.tmpMiB)}, ${mib(limits.memoryMiB)} of memory per process, ${Number.isFinite(limits.processes) ? limits.processes : "unlimited"} processes).`,
  ].join(" ");

  return {
    root,
    network,
    bwrap: support.bwrap,
    description,
    spawn(file, args, { env, keepEnv = [] }) {
      // Paths are resolved per command: a `.env` or a repository created since the last one is covered too.
      const { removeIfPlanted, ...protectedPaths } = resolveProtectedPaths(
        root,
        writable,
        denyRead,
        denyWrite,
      );
      const plan = { root, writable, network, resolvConf, hiddenHome, sizes, ...protectedPaths };
      const kept = new Set(keepEnv);
      const childEnv = Object.fromEntries(
        Object.entries(env).filter(
          ([name]) =>
            kept.has(name) || (allowEnv.some((re) => re.test(name)) && !denyEnv.some((re) => re.test(name))),
        ),
      );
      // Denied files are bound from an empty stream on fd 3.
      const devNull = plan.denyFiles.length ? nodeFs().openSync("/dev/null", "r") : undefined;
      try {
        const { spawn } = process.getBuiltinModule("node:child_process"); // on first use (issue 44)
        const child = spawn(
          support.bwrap,
          [...bwrapArgs(plan), "--", prlimit, ...limitArgs, "--", file, ...args],
          {
            cwd: root,
            detached: true,
            stdio: devNull === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", "pipe", "pipe", devNull],
            env: childEnv,
          },
        ) as ChildProcessByStdio<null, Readable, Readable>;
        // Every process of the command is gone when bwrap exits (its pid namespace died with it):
        // undo what no mount could prevent before anyone outside reads the repository again.
        child.once("exit", () => removePlanted(removeIfPlanted));
        return child;
      } finally {
        if (devNull !== undefined) nodeFs().closeSync(devNull);
      }
    },
  };
}

function mib(value: number): string {
  return Number.isFinite(value) ? `${value} MiB` : "unlimited";
}

/** Removes redirects a command planted in a repository (they did not exist when it started). */
function removePlanted(paths: readonly string[]): void {
  for (const planted of paths) {
    try {
      if (nodeFs().existsSync(planted)) nodeFs().rmSync(planted, { recursive: true, force: true });
    } catch {
      // Not ours to remove (its folder became unwritable): nothing more the sandbox can do.
    }
  }
}

/** agent-machine's sessions when `XDG_DATA_HOME` puts them outside the (hidden) home folder. */
function dataFolderOutsideHome(): string[] {
  const data = process.env.XDG_DATA_HOME;
  return data && isAbsolute(data) ? [join(data, "agent-machine")] : [];
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
