import * as path from "node:path";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeOs = () => process.getBuiltinModule("node:os");

/** How one repository is protected inside the sandbox. */
export interface GitProtection {
  /** Folders bound onto themselves (writable): a mount point cannot be renamed, removed or replaced. */
  pinned: string[];
  /** Paths bound read-only: what git outside the sandbox would execute or follow. */
  readOnly: string[];
  /**
   * Paths that must not exist after a command, because git outside would follow them, and that
   * cannot be guarded by a mount while absent (an empty `commondir` breaks git): removed if planted.
   */
  removeIfPlanted: string[];
}

/**
 * Files of a git directory that redirect git elsewhere or configure what it runs. `commondir` sends
 * every git command to another repository's config and hooks; `config.worktree` is read when the
 * config enables it; `gitdir` ties a linked worktree to its checkout. (Only the first two are read
 * in a main repository, so only they are removed when planted there.)
 */
const REDIRECTS = ["commondir", "config.worktree", "gitdir"] as const;

/** Whether `dir` looks like a git directory (a bare repository, a `.git` folder, a submodule's). */
function isGitDir(dir: string): boolean {
  return (
    nodeFs().existsSync(path.join(dir, "HEAD")) &&
    (nodeFs().existsSync(path.join(dir, "objects")) || nodeFs().existsSync(path.join(dir, "commondir")))
  );
}

function isDirectory(p: string): boolean {
  try {
    return nodeFs().lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The mounts that protect a repository whose `.git` entry is `gitEntry`, so a sandboxed command can
 * commit but cannot make git outside the sandbox run anything: `.git` is pinned (it cannot be moved
 * aside and replaced by a copy), its `config`, `hooks` and `info/attributes` are read-only (created
 * empty when missing, so they cannot be planted; `info` itself is pinned), redirects (`commondir`,
 * `config.worktree`) are read-only when present and removed after the command when planted, the
 * same for every submodule's git directory under `modules/` and every linked worktree's under
 * `worktrees/`, and the hooks folder and included config files the config names (read-only when
 * present, removed after the command when planted; outside the workspace they are read-only anyway). A `.git` file (a submodule's or a worktree's pointer) is read-only as a whole.
 *
 * @example
 * ```ts
 * protectRepository("/work/app/.git", "/work/app"); // { pinned: ["/work/app/.git"], readOnly: [".../config", ...], ... }
 * ```
 */
export function protectRepository(gitEntry: string, worktree = path.dirname(gitEntry)): GitProtection {
  const protection: GitProtection = { pinned: [], readOnly: [], removeIfPlanted: [] };
  if (!isDirectory(gitEntry)) {
    protection.readOnly.push(gitEntry);
    return protection;
  }
  protectGitDir(gitEntry, worktree, protection, 0);
  return protection;
}

function protectGitDir(
  gitDir: string,
  worktree: string | undefined,
  into: GitProtection,
  depth: number,
): void {
  into.pinned.push(gitDir);
  const linkedWorktree = nodeFs().existsSync(path.join(gitDir, "commondir"));
  if (!linkedWorktree) {
    // An empty folder or file is inert; a missing one could be created with a hook or a filter in it.
    for (const folder of ["hooks", "info"]) {
      const target = path.join(gitDir, folder);
      if (!nodeFs().existsSync(target)) tryMkdir(target);
    }
    for (const file of ["config", "info/attributes"]) {
      const target = path.join(gitDir, file);
      if (!nodeFs().existsSync(target)) tryCreateEmpty(target);
    }
  }
  // `info` stays writable (repack writes info/refs there) but cannot be swapped for another folder.
  if (isDirectory(path.join(gitDir, "info"))) into.pinned.push(path.join(gitDir, "info"));
  for (const name of ["config", "hooks", "info/attributes", ...REDIRECTS]) {
    const target = path.join(gitDir, name);
    if (nodeFs().existsSync(target)) into.readOnly.push(target);
    else if (name === "commondir" || name === "config.worktree") into.removeIfPlanted.push(target);
  }
  for (const target of configuredPaths(path.join(gitDir, "config"), worktree)) {
    // A hooks folder or an included config the command creates would run or be read outside.
    if (nodeFs().existsSync(target)) into.readOnly.push(target);
    else into.removeIfPlanted.push(target);
  }
  if (depth > 4) return; // submodules of submodules of ...: deep enough for any real project
  for (const sub of gitDirsBelow(path.join(gitDir, "modules"), 3))
    protectGitDir(sub, undefined, into, depth + 1);
  for (const linked of gitDirsBelow(path.join(gitDir, "worktrees"), 1))
    protectGitDir(linked, undefined, into, depth + 1);
}

/** Git directories under `dir`, up to `levels` folders deep (submodule names may contain `/`). */
function gitDirsBelow(dir: string, levels: number): string[] {
  if (levels === 0 || !isDirectory(dir)) return [];
  const found: string[] = [];
  let names: string[];
  try {
    names = nodeFs().readdirSync(dir);
  } catch {
    return [];
  }
  for (const name of names) {
    const child = path.join(dir, name);
    if (!isDirectory(child)) continue;
    if (isGitDir(child)) found.push(child);
    else found.push(...gitDirsBelow(child, levels - 1));
  }
  return found;
}

/**
 * Paths a repository's config points at that git executes or reads as config: `core.hooksPath` and
 * `include.path` / `includeIf.*.path`. Relative hooks paths are relative to the worktree, relative
 * includes to the config file.
 */
export function configuredPaths(configFile: string, worktree: string | undefined): string[] {
  let text: string;
  try {
    text = nodeFs().readFileSync(configFile, "utf8");
  } catch {
    return [];
  }
  const found: string[] = [];
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.replace(/(^|\s)[#;].*$/, "").trim();
    const header = /^\[\s*([^\]\s"]+)(?:\s+"[^"]*")?\s*\]/.exec(line);
    if (header) {
      section = header[1]!.toLowerCase();
      continue;
    }
    const entry = /^([A-Za-z][\w-]*)\s*=\s*(.*)$/.exec(line);
    if (!entry) continue;
    const key = entry[1]!.toLowerCase();
    const value = unquote(entry[2]!);
    if (!value) continue;
    if (section === "core" && key === "hookspath" && worktree) found.push(resolveAgainst(value, worktree));
    if ((section === "include" || section === "includeif") && key === "path") {
      found.push(resolveAgainst(value, path.dirname(configFile)));
    }
  }
  return found;
}

function unquote(value: string): string {
  const trimmed = value.trim();
  return trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
}

function resolveAgainst(value: string, base: string): string {
  if (value === "~" || value.startsWith("~/")) return path.join(nodeOs().homedir(), value.slice(2));
  return path.resolve(base, value);
}

function tryMkdir(target: string): void {
  try {
    nodeFs().mkdirSync(target);
  } catch {
    // Not ours to create (a read-only repository): nothing can be planted there either.
  }
}

function tryCreateEmpty(target: string): void {
  try {
    nodeFs().writeFileSync(target, "", { flag: "wx" });
  } catch {
    // As above.
  }
}
