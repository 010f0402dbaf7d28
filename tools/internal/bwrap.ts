import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";

/** Mount points the sandbox replaces with an empty tmpfs: private temp, and /run's sockets hidden. */
export const PRIVATE_TMP = "/tmp";
export const HIDDEN_RUN = "/run";

/** Everything the bwrap command line is made from, with every path absolute and resolved. */
export interface BwrapPlan {
  /** The workspace: writable, and the commands' working directory. */
  root: string;
  /** Writable binds besides the root (they exist). */
  writable: string[];
  /** Paths inside writable binds that stay read-only (they exist). */
  readOnly: string[];
  /** Directories replaced by an empty, unreadable tmpfs. */
  denyDirs: string[];
  /** Files replaced by an empty, unreadable file (read from file descriptor 3). */
  denyFiles: string[];
  network: boolean;
  /** Where /etc/resolv.conf really lives when that is under /run (re-exposed when network is on). */
  resolvConf?: string;
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * The bwrap arguments (before the command) for a plan: the whole file system read-only, a fresh
 * /dev and /proc, a private /tmp, /run emptied (its sockets, e.g. docker.sock, are reachable
 * through a read-only mount otherwise), the workspace and the extra paths writable, the protected
 * paths read-only again, the denied paths unreadable; new pid, ipc, uts and (unless allowed)
 * network namespaces; no capabilities; killed with its parent.
 *
 * @example
 * ```ts
 * bwrapArgs({ root: "/home/me/app", writable: [], readOnly: [], denyDirs: [], denyFiles: [], network: false });
 * ```
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  args.push("--tmpfs", PRIVATE_TMP, "--tmpfs", HIDDEN_RUN);
  if (plan.network && plan.resolvConf) args.push("--ro-bind-try", plan.resolvConf, plan.resolvConf);
  const writable = [plan.root, ...plan.writable];
  for (const dir of writable) args.push("--bind", dir, dir);
  // bwrap creates the folders leading to a bind inside our tmpfs mounts: make them read-only, so
  // climbing out of a workspace under /tmp (`../x`) fails instead of writing into a throwaway folder.
  for (const dir of createdParents(writable)) args.push("--chmod", "0555", dir);
  for (const target of plan.readOnly) args.push("--ro-bind", target, target);
  for (const dir of plan.denyDirs) args.push("--perms", "0000", "--tmpfs", dir, "--remount-ro", dir);
  for (const file of plan.denyFiles) args.push("--perms", "0000", "--ro-bind-data", "3", file);
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (!plan.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--cap-drop", "ALL", "--setenv", "TMPDIR", PRIVATE_TMP);
  args.push("--chdir", plan.root);
  return args;
}

/** Folders strictly between one of our tmpfs mounts and a writable bind, that no writable bind covers. */
function createdParents(writable: readonly string[]): string[] {
  const created = new Set<string>();
  for (const dir of writable) {
    const mount = [PRIVATE_TMP, HIDDEN_RUN].find((m) => dir !== m && isInside(dir, m));
    if (!mount) continue;
    for (let parent = path.dirname(dir); parent !== mount && isInside(parent, mount);) {
      if (!writable.some((w) => isInside(parent, w))) created.add(parent);
      parent = path.dirname(parent);
    }
  }
  // Parents first is not needed for chmod; a stable order keeps the command line readable.
  return [...created].sort();
}

/**
 * Expands a configured path: `~` or `~/x` against the home folder, a relative path against the
 * workspace root, `*` in the last segment against the folder's entries. Returns the real paths that
 * exist (a missing path has nothing to protect).
 *
 * @example
 * ```ts
 * expandPath("~/.ssh", "/work/app"); // ["/home/me/.ssh"] when it exists
 * expandPath(".env*", "/work/app");  // [".env", ".env.local"] under /work/app
 * ```
 */
export function expandPath(input: string, root: string, home = homedir()): string[] {
  const absolute =
    input === "~"
      ? home
      : input.startsWith("~/")
        ? path.join(home, input.slice(2))
        : path.resolve(root, input);
  const base = path.basename(absolute);
  const candidates = base.includes("*")
    ? listMatching(path.dirname(absolute), base)
    : existsSync(absolute)
      ? [absolute]
      : [];
  const real: string[] = [];
  for (const candidate of candidates) {
    try {
      real.push(realpathSync(candidate));
    } catch {
      // Vanished or a dangling symlink: nothing to protect.
    }
  }
  return real;
}

function listMatching(dir: string, pattern: string): string[] {
  const regex = new RegExp(`^${pattern.split("*").map(escapeRegex).join(".*")}$`);
  try {
    return readdirSync(dir)
      .filter((name) => regex.test(name))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The configured deny and read-only paths, resolved against the file system as it is now. */
export function resolveProtectedPaths(
  root: string,
  writable: readonly string[],
  denyRead: readonly string[],
  denyWrite: readonly string[],
  home?: string,
): Pick<BwrapPlan, "denyDirs" | "denyFiles" | "readOnly"> {
  const writableAll = [root, ...writable];
  // Under our private /tmp or the emptied /run, a path outside every writable bind is hidden anyway.
  const visible = (p: string) =>
    writableAll.some((w) => isInside(p, w)) || ![PRIVATE_TMP, HIDDEN_RUN].some((m) => isInside(p, m));
  const denyDirs: string[] = [];
  const denyFiles: string[] = [];
  for (const target of new Set(denyRead.flatMap((p) => expandPath(p, root, home)))) {
    if (!visible(target)) continue;
    // Hiding a folder that holds the workspace (or another writable path) would hide that too.
    if (writableAll.some((w) => isInside(w, target))) {
      throw new Error(`Cannot deny reading ${target}: the sandbox's writable path is inside it`);
    }
    if (statSync(target).isDirectory()) denyDirs.push(target);
    else denyFiles.push(target);
  }
  const readOnly = [...new Set(denyWrite.flatMap((p) => expandPath(p, root, home)))].filter(
    (target) => writableAll.some((w) => isInside(target, w)) && !writableAll.includes(target),
  );
  return { denyDirs, denyFiles, readOnly };
}

/** The real path of /etc/resolv.conf when it lives under /run (systemd-resolved), else undefined. */
export function resolvConfUnderRun(): string | undefined {
  try {
    const real = realpathSync("/etc/resolv.conf");
    return isInside(real, HIDDEN_RUN) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The first executable `name` on `PATH`, or undefined. */
export function findOnPath(name: string, pathEnv = process.env.PATH ?? ""): string | undefined {
  if (name.includes("/")) return isExecutable(name) ? path.resolve(name) : undefined;
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Whether bubblewrap can build this kind of sandbox here: `undefined` when it can, else why not. */
export function probeBwrap(bwrap: string): string | undefined {
  // The same namespaces and mounts as a real command, around `true`.
  const plan: BwrapPlan = {
    root: "/",
    writable: [],
    readOnly: [],
    denyDirs: [],
    denyFiles: [],
    network: false,
  };
  const probe = spawnSync(bwrap, [...bwrapArgs(plan), "true"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
  });
  if (probe.error) return probe.error.message;
  if (probe.status !== 0) {
    const stderr = probe.stderr?.toString("utf8").trim();
    return stderr || `bwrap exited with status ${probe.status ?? probe.signal}`;
  }
  return undefined;
}
