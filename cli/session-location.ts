import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
} from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";

/**
 * The user's data folder for agent-machine: `$XDG_DATA_HOME/agent-machine` (default
 * `~/.local/share/agent-machine`) on Linux and the other Unixes, `~/Library/Application
 * Support/agent-machine` on macOS, `%LOCALAPPDATA%\agent-machine` on Windows.
 *
 * @example
 * ```ts
 * userDataDir(process.env); // "/home/ana/.local/share/agent-machine"
 * ```
 */
export function userDataDir(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
  home: string = env.HOME || homedir(),
): string {
  if (platform === "win32")
    return path.join(env.LOCALAPPDATA || path.join(home, "AppData", "Local"), "agent-machine");
  if (platform === "darwin") return path.join(home, "Library", "Application Support", "agent-machine");
  return path.join(env.XDG_DATA_HOME || path.join(home, ".local", "share"), "agent-machine");
}

/**
 * The folder name that keys a workspace's sessions: its path made into one readable word, and a
 * short hash of the full path so two paths that read alike never share sessions.
 *
 * @example
 * ```ts
 * workspaceKey("/home/ana/src/app"); // "home-ana-src-app-3f2a9c1d"
 * ```
 */
export function workspaceKey(cwd: string): string {
  const slug = cwd
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[-.]+|-+$/g, "")
    .slice(-60)
    .replace(/^[-.]+/, "");
  const hash = createHash("sha256").update(cwd).digest("hex").slice(0, 8);
  return `${slug || "root"}-${hash}`;
}

/** Where sessions were kept before they moved to the user's data folder: inside the workspace. */
export function legacySessionsDir(cwd: string): string {
  return path.join(cwd, ".agent-machine", "sessions");
}

/**
 * The folder holding a workspace's sessions: `--sessions-dir` when given (relative to the
 * workspace), else `<user data folder>/sessions/<workspace key>/`, out of the repository, where
 * they would get committed.
 *
 * @example
 * ```ts
 * sessionsRoot("/home/ana/src/app", process.env); // ".../agent-machine/sessions/home-ana-src-app-3f2a9c1d"
 * ```
 */
export function sessionsRoot(
  cwd: string,
  env: Record<string, string | undefined>,
  sessionsDir?: string,
): string {
  if (sessionsDir !== undefined) return path.resolve(cwd, sessionsDir);
  return path.join(userDataDir(env), "sessions", workspaceKey(cwd));
}

/** What {@link moveLegacySessions} did. */
export interface SessionMove {
  from: string;
  to: string;
  /** Session ids moved. */
  moved: string[];
  /** Entries left where they were: the id exists at the new place already, or the move failed. */
  left: { id: string; why: string }[];
}

/**
 * Moves the sessions of a workspace's old `.agent-machine/sessions/` folder to `root`, once: each
 * session folder is renamed (copied then removed across file systems), one already at `root` is
 * left where it is (never overwritten), and the old folder is removed when it is left empty.
 * Symbolic links are not followed or moved. Returns `undefined` when there is nothing to move.
 *
 * @example
 * ```ts
 * const move = moveLegacySessions(cwd, sessionsRoot(cwd, process.env));
 * if (move) console.log(`Moved ${move.moved.length} sessions to ${move.to}`);
 * ```
 */
export function moveLegacySessions(cwd: string, root: string): SessionMove | undefined {
  const from = legacySessionsDir(cwd);
  if (path.resolve(from) === path.resolve(root)) return undefined;
  let entries: string[];
  try {
    if (!lstatSync(from).isDirectory()) return undefined;
    entries = readdirSync(from);
  } catch {
    return undefined;
  }
  const move: SessionMove = { from, to: root, moved: [], left: [] };
  for (const id of entries) {
    const source = path.join(from, id);
    const target = path.join(root, id);
    try {
      if (!lstatSync(source).isDirectory()) {
        move.left.push({ id, why: "not a session folder" });
        continue;
      }
      if (existsSync(target)) {
        move.left.push({ id, why: `${target} exists already` });
        continue;
      }
      mkdirSync(root, { recursive: true });
      try {
        renameSync(source, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
        // Another file system: copy it whole, then remove the original.
        cpSync(source, target, {
          recursive: true,
          errorOnExist: true,
          force: false,
          preserveTimestamps: true,
        });
        rmSync(source, { recursive: true, force: true });
      }
      move.moved.push(id);
    } catch (error) {
      move.left.push({ id, why: (error as Error).message });
    }
  }
  for (const dir of [from, path.dirname(from)]) {
    try {
      rmdirSync(dir); // only when empty
    } catch {
      break;
    }
  }
  return move.moved.length || move.left.length ? move : undefined;
}
