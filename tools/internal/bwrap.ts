import * as path from "node:path";
import { protectRepository } from "./git-protection.js";
import { scanWorkspace } from "./workspace-scan.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeOs = () => process.getBuiltinModule("node:os");

/** Mount points the sandbox replaces with an empty tmpfs: private temp, and /run's sockets hidden. */
export const PRIVATE_TMP = "/tmp";
export const HIDDEN_RUN = "/run";

/** Everything the bwrap command line is made from, with every path absolute and resolved. */
export interface BwrapPlan {
  /** The workspace: writable, and the commands' working directory. */
  root: string;
  /** Writable binds besides the root (they exist). */
  writable: string[];
  /**
   * Folders inside writable binds bound onto themselves, so they cannot be renamed, removed or
   * replaced: repositories' `.git` folders and the folders that hold a protected path.
   */
  pinned?: string[];
  /** Paths inside writable binds that stay read-only (they exist). */
  readOnly: string[];
  /** Directories replaced by an empty, unreadable tmpfs. */
  denyDirs: string[];
  /** Files replaced by an empty, unreadable file (read from file descriptor 3). */
  denyFiles: string[];
  network: boolean;
  /** Where /etc/resolv.conf really lives when that is under /run (re-exposed when network is on). */
  resolvConf?: string;
  /** The user's home folder, replaced by an empty tmpfs, and what of it is shown read-only. */
  hiddenHome?: { path: string; readable: { source: string; target: string }[] };
  /** Sizes in bytes of the tmpfs mounts; a missing size is the kernel's default (half the RAM). */
  sizes?: { tmp?: number; shm?: number; run?: number; home?: number };
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** `--size N` before a `--tmpfs`, when a size is set. */
function sized(bytes: number | undefined): string[] {
  return bytes === undefined ? [] : ["--size", String(Math.floor(bytes))];
}

/** Parents before children, so a later mount is never hidden by an earlier one above it. */
function byDepth(paths: Iterable<string>): string[] {
  return [...new Set(paths)].sort(
    (a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : a > b ? 1 : 0),
  );
}

/**
 * The bwrap arguments (before the command) for a plan: the whole file system read-only, a fresh
 * /dev and /proc, a private /tmp and /dev/shm, /run emptied (its sockets, e.g. docker.sock, are
 * reachable through a read-only mount otherwise), each tmpfs of a bounded size, the home folder
 * hidden but for what is shown, the workspace and the extra paths writable, repositories and the
 * folders holding protected paths pinned, the protected paths read-only again, the denied paths
 * unreadable; new pid, ipc, uts and (unless allowed) network namespaces; no capabilities; killed
 * with its parent.
 *
 * @example
 * ```ts
 * bwrapArgs({ root: "/home/me/app", writable: [], readOnly: [], denyDirs: [], denyFiles: [], network: false });
 * ```
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const sizes = plan.sizes ?? {};
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  // bwrap's /dev is a writable tmpfs of half the RAM: read-only, with a bounded /dev/shm of its own
  // (the device nodes, bound from the host, still read and write).
  args.push("--remount-ro", "/dev", ...sized(sizes.shm), "--tmpfs", "/dev/shm");
  args.push(...sized(sizes.tmp), "--tmpfs", PRIVATE_TMP, ...sized(sizes.run), "--tmpfs", HIDDEN_RUN);
  if (plan.network && plan.resolvConf) args.push("--ro-bind-try", plan.resolvConf, plan.resolvConf);
  const mounts = [PRIVATE_TMP, HIDDEN_RUN];
  if (plan.hiddenHome) {
    mounts.push(plan.hiddenHome.path);
    args.push(...sized(sizes.home), "--tmpfs", plan.hiddenHome.path);
    for (const { source, target } of plan.hiddenHome.readable) args.push("--ro-bind", source, target);
  }
  const writable = [plan.root, ...plan.writable];
  for (const dir of writable) args.push("--bind", dir, dir);
  // bwrap creates the folders leading to a bind inside our tmpfs mounts: make them read-only, so
  // climbing out of a workspace under /tmp (`../x`) fails instead of writing into a throwaway folder.
  const shown = [...writable, ...(plan.hiddenHome?.readable.map((r) => r.target) ?? [])];
  for (const dir of createdParents(writable, mounts, shown)) args.push("--chmod", "0555", dir);
  for (const dir of byDepth(plan.pinned ?? [])) args.push("--bind", dir, dir);
  for (const target of byDepth(plan.readOnly)) args.push("--ro-bind", target, target);
  for (const dir of plan.denyDirs) args.push("--perms", "0000", "--tmpfs", dir, "--remount-ro", dir);
  for (const file of plan.denyFiles) args.push("--perms", "0000", "--ro-bind-data", "3", file);
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (!plan.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--cap-drop", "ALL", "--setenv", "TMPDIR", PRIVATE_TMP);
  args.push("--chdir", plan.root);
  return args;
}

/** Folders strictly between one of our tmpfs mounts and a writable bind, that no bind (`shown`) covers. */
function createdParents(
  writable: readonly string[],
  mounts: readonly string[],
  shown: readonly string[],
): string[] {
  const created = new Set<string>();
  for (const dir of writable) {
    const mount = mounts.find((m) => dir !== m && isInside(dir, m));
    if (!mount) continue;
    for (let parent = path.dirname(dir); parent !== mount && isInside(parent, mount);) {
      if (!shown.some((w) => isInside(parent, w))) created.add(parent);
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
export function expandPath(input: string, root: string, home = nodeOs().homedir()): string[] {
  const absolute =
    input === "~"
      ? home
      : input.startsWith("~/")
        ? path.join(home, input.slice(2))
        : path.resolve(root, input);
  const base = path.basename(absolute);
  const candidates = base.includes("*")
    ? listMatching(path.dirname(absolute), base)
    : nodeFs().existsSync(absolute)
      ? [absolute]
      : [];
  const real: string[] = [];
  for (const candidate of candidates) {
    try {
      real.push(nodeFs().realpathSync(candidate));
    } catch {
      // Vanished or a dangling symlink: nothing to protect.
    }
  }
  return real;
}

function listMatching(dir: string, pattern: string): string[] {
  const regex = new RegExp(`^${pattern.split("*").map(escapeRegex).join(".*")}$`);
  try {
    return nodeFs()
      .readdirSync(dir)
      .filter((name) => regex.test(name))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A configured name with no `/` and no `~` (`.env`, `.env.*`): it matches at any depth of the workspace. */
export function isBareName(pattern: string): boolean {
  return !pattern.includes("/") && !pattern.startsWith("~");
}

function nameRegex(pattern: string): RegExp {
  return new RegExp(`^${pattern.split("*").map(escapeRegex).join(".*")}$`);
}

/** What the sandbox protects for one command, resolved against the file system as it is now. */
export type ProtectedPaths = Pick<BwrapPlan, "denyDirs" | "denyFiles" | "readOnly"> & {
  pinned: string[];
  /** Paths that did not exist and must not exist after the command (see `protectRepository`). */
  removeIfPlanted: string[];
};

/**
 * The configured deny and read-only paths, resolved against the file system as it is now: bare
 * names (`.env`) at any depth of the workspace, other paths as {@link expandPath} reads them; every
 * repository of the workspace protected as a whole (`protectRepository`); and every folder between
 * a writable root and a protected path pinned, so that renaming a parent (`mv config config2`)
 * cannot carry a protected path out from under its name.
 *
 * @example
 * ```ts
 * resolveProtectedPaths("/work/app", [], [".env"], [".husky"]).denyFiles; // ["/work/app/api/.env", ...]
 * ```
 */
export function resolveProtectedPaths(
  root: string,
  writable: readonly string[],
  denyRead: readonly string[],
  denyWrite: readonly string[],
  home?: string,
): ProtectedPaths {
  const writableAll = [root, ...writable];
  const bareRead = denyRead.filter(isBareName).map(nameRegex);
  const bareWrite = denyWrite.filter(isBareName).map(nameRegex);
  const scan = scanWorkspace(root, [...bareRead, ...bareWrite]);
  const realOf = (p: string) => {
    try {
      return [nodeFs().realpathSync(p)];
    } catch {
      return [];
    }
  };
  const scanned = (res: RegExp[]) =>
    scan.matches.filter((m) => res.some((re) => re.test(path.basename(m)))).flatMap(realOf);

  // Under our private /tmp or the emptied /run, a path outside every writable bind is hidden anyway.
  const visible = (p: string) =>
    writableAll.some((w) => isInside(p, w)) || ![PRIVATE_TMP, HIDDEN_RUN].some((m) => isInside(p, m));
  const denyDirs: string[] = [];
  const denyFiles: string[] = [];
  const readTargets = [
    ...denyRead.filter((p) => !isBareName(p)).flatMap((p) => expandPath(p, root, home)),
    ...scanned(bareRead),
  ];
  for (const target of new Set(readTargets)) {
    if (!visible(target)) continue;
    // Hiding a folder that holds the workspace (or another writable path) would hide that too.
    if (writableAll.some((w) => isInside(w, target))) {
      throw new Error(`Cannot deny reading ${target}: the sandbox's writable path is inside it`);
    }
    if (nodeFs().statSync(target).isDirectory()) denyDirs.push(target);
    else denyFiles.push(target);
  }

  const pinned: string[] = [];
  const removeIfPlanted: string[] = [];
  const writeTargets = [
    ...denyWrite.filter((p) => !isBareName(p)).flatMap((p) => expandPath(p, root, home)),
    ...scanned(bareWrite),
  ];
  for (const gitEntry of scan.repositories) {
    const protection = protectRepository(gitEntry);
    pinned.push(...protection.pinned);
    writeTargets.push(...protection.readOnly);
    removeIfPlanted.push(...protection.removeIfPlanted);
  }
  const inWritable = (target: string) =>
    writableAll.some((w) => isInside(target, w)) && !writableAll.includes(target);
  const readOnly = [...new Set(writeTargets)].filter(inWritable);
  for (const target of [...denyDirs, ...denyFiles, ...readOnly, ...pinned]) {
    const within = writableAll.filter((w) => isInside(target, w)).sort((a, b) => b.length - a.length)[0];
    if (!within) continue;
    for (
      let parent = path.dirname(target);
      parent !== within && isInside(parent, within);
      parent = path.dirname(parent)
    ) {
      pinned.push(parent);
    }
  }
  return {
    denyDirs,
    denyFiles,
    readOnly,
    pinned: [...new Set(pinned)].filter(inWritable),
    // Only a command could have created these, and only where it may write.
    removeIfPlanted: [...new Set(removeIfPlanted)].filter(inWritable),
  };
}

/**
 * What of the home folder a command sees when the home is hidden: each `allowRead` path that
 * exists, bound from its real path to where it is named (so a `~/.gitconfig` symlinked into a
 * dotfiles folder still reads), and the `PATH` entries inside the home (the user's own tools).
 * Undefined when the home is not hidden: there is none, it is `/`, it is the workspace or inside
 * it, or `allowRead` names `~` itself.
 *
 * @example
 * ```ts
 * homeView("/home/me/app", ["~/.gitconfig"], process.env.PATH ?? "");
 * // { path: "/home/me", readable: [{ source: "/home/me/.gitconfig", target: "/home/me/.gitconfig" }, ...] }
 * ```
 */
export function homeView(
  root: string,
  allowRead: readonly string[],
  pathEnv: string,
  home = nodeOs().homedir(),
): BwrapPlan["hiddenHome"] {
  let realHome: string;
  try {
    realHome = nodeFs().realpathSync(home);
  } catch {
    return undefined; // no home folder: nothing to hide
  }
  if (realHome === "/" || isInside(realHome, root)) return undefined;
  const named = (p: string): string | undefined => {
    const expanded =
      p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : path.resolve(root, p);
    for (const prefix of [home, realHome]) {
      if (isInside(expanded, prefix)) return path.join(realHome, path.relative(prefix, expanded));
    }
    return undefined; // outside the home: visible anyway
  };
  const wanted = [
    ...allowRead.map(named),
    ...pathEnv
      .split(path.delimiter)
      .filter((dir) => path.isAbsolute(dir))
      .map(named)
      .filter((dir) => dir !== realHome),
  ].filter((p): p is string => p !== undefined);
  if (wanted.includes(realHome)) return undefined;
  const readable: { source: string; target: string }[] = [];
  for (const target of byDepth(wanted)) {
    if (readable.some((r) => isInside(target, r.target))) continue; // shown with its parent
    try {
      readable.push({ source: nodeFs().realpathSync(target), target });
    } catch {
      // Missing: nothing to show.
    }
  }
  return { path: realHome, readable };
}

/** The real path of /etc/resolv.conf when it lives under /run (systemd-resolved), else undefined. */
export function resolvConfUnderRun(): string | undefined {
  try {
    const real = nodeFs().realpathSync("/etc/resolv.conf");
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
    nodeFs().accessSync(file, nodeFs().constants.X_OK);
    return nodeFs().statSync(file).isFile();
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
    // A bubblewrap too old to size a tmpfs fails here, with its own message, rather than at a command.
    sizes: { tmp: 1 << 20, shm: 1 << 20, run: 1 << 20 },
  };
  const { spawnSync } = process.getBuiltinModule("node:child_process"); // on first use (issue 44)
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
