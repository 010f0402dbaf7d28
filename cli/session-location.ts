import { createHash } from "node:crypto";
import { lstatSync, readdirSync } from "node:fs";
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

/** Sessions an earlier version may have left in a workspace, found by {@link findLegacySessions}. */
export interface LegacySessions {
  /** The workspace's old `.agent-machine/sessions/` folder. */
  from: string;
  /** Where the command keeps this workspace's sessions now. */
  to: string;
  /** The session folders in `from` (symbolic links and files aside). */
  ids: string[];
}

/**
 * Finds session folders in a workspace's old `.agent-machine/sessions/`, without moving or reading
 * them. They are never adopted on their own: a repository can ship that folder (a session dated
 * 2099 with a forged user turn would be the one `--continue` resumes), and nothing on disk tells
 * the user's own old sessions from planted ones. The command names them and says how to use them
 * (`--sessions-dir`, or moving them by hand), so adopting them is the user's choice.
 *
 * @example
 * ```ts
 * const legacy = findLegacySessions(cwd, sessionsRoot(cwd, process.env));
 * if (legacy) console.log(`${legacy.ids.length} old sessions in ${legacy.from} were left where they are`);
 * ```
 */
export function findLegacySessions(cwd: string, root: string): LegacySessions | undefined {
  const from = legacySessionsDir(cwd);
  if (path.resolve(from) === path.resolve(root)) return undefined;
  try {
    if (!lstatSync(from).isDirectory()) return undefined;
    const ids = readdirSync(from).filter((id) => lstatSync(path.join(from, id)).isDirectory());
    return ids.length ? { from, to: root, ids: ids.sort() } : undefined;
  } catch {
    return undefined;
  }
}
