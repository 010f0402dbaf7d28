// The file tree each explored path runs in: a workspace with the files a coding agent usually
// finds (a .git/ and a node_modules/ it must not write, a symlink that leads out), next to a
// folder outside it that no call may change. Everything lives in one temporary folder.
import { createHash } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";

export interface SandboxTree {
  /** The workspace root (the agent's `cwd`). */
  readonly cwd: string;
  /** A folder beside the workspace that no call may change. */
  readonly outside: string;
  /** What the guarded places hold now: path → digest. */
  snapshot(): Map<string, string>;
  /** The tree is as it was made: nothing written, created or deleted anywhere in it. */
  pristine(): boolean;
  /** Removes the tree (in the background: the returned promise settles when it is gone). */
  remove(): Promise<void>;
}

/** The files every sandbox starts with, besides the caller's. */
const BASE_FILES: Record<string, string> = {
  "notes.txt": "hello world\n",
  "src/app.ts": "export const hello = 1;\n",
  ".git/config": "[core]\n\tbare = false\n",
  ".git/HEAD": "ref: refs/heads/main\n",
  "node_modules/pkg/index.js": "module.exports = 1;\n",
};

/** Names the workspace keeps out of reach (written only by what the user approves, if at all). */
export const GUARDED_INSIDE = [".git", "node_modules"];

export function createSandboxTree(files: Record<string, string> = {}): SandboxTree {
  const root = mkdtempSync(join(tmpdir(), "agent-explore-"));
  const cwd = join(root, "workspace");
  const outside = join(root, "outside");
  for (const [path, content] of Object.entries({ ...BASE_FILES, ...files })) write(join(cwd, path), content);
  write(join(outside, "secret.txt"), "outside the workspace\n");
  symlinkSync(outside, join(cwd, "link"), "dir");
  const whole = () => {
    const found = new Map<string, string>();
    walk(root, root, found);
    return found;
  };
  const initial = whole();
  return {
    cwd,
    outside,
    snapshot: () => {
      const found = new Map<string, string>();
      walk(outside, root, found);
      for (const name of GUARDED_INSIDE) walk(join(cwd, name), root, found);
      // Anything new at the sandbox's root (beside the workspace) counts too.
      for (const name of readdirSync(root))
        if (name !== "workspace" && name !== "outside") walk(join(root, name), root, found);
      return found;
    },
    pristine: () => changesBetween(initial, whole()).length === 0,
    // Removing is the slow part of a tree (a synchronous rm costs more than a scripted run): it
    // goes on while the next path runs.
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

function write(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

function walk(path: string, root: string, found: Map<string, string>): void {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return;
  }
  const key = relative(root, path);
  if (stat.isSymbolicLink()) {
    found.set(key, `link:${readlinkSync(path)}`);
  } else if (stat.isDirectory()) {
    found.set(key, `dir:${stat.mode}`);
    for (const name of readdirSync(path)) walk(join(path, name), root, found);
  } else {
    found.set(key, `file:${stat.mode}:${createHash("sha1").update(readFileSync(path)).digest("hex")}`);
  }
}

/** What changed between two snapshots: `created x`, `changed x`, `deleted x`. */
export function changesBetween(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  const changes: string[] = [];
  for (const [path, digest] of after) {
    const old = before.get(path);
    if (old === undefined) changes.push(`created ${path}`);
    else if (old !== digest && !digest.startsWith("dir:")) changes.push(`changed ${path}`);
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push(`deleted ${path}`);
  return changes;
}
