import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";

/** The file names read as rules, in this order, in each folder: pi / Codex's first, then Claude Code's. */
export const RULES_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;

/** Bytes read of one rules file at most: a larger one is cut (and the notice says so). */
export const RULES_FILE_MAX_BYTES = 64 * 1024;

/** One rules file read. */
export interface RulesFile {
  /** Where it was read. */
  path: string;
  /** How the screen names it: relative to the workspace, or under `~`. */
  shown: string;
  text: string;
  /** It was longer than {@link RULES_FILE_MAX_BYTES}: only its start is kept. */
  cut: boolean;
}

/**
 * The user's config folder for agent-machine: `$XDG_CONFIG_HOME/agent-machine` (default
 * `~/.config/agent-machine`), `%APPDATA%\agent-machine` on Windows.
 *
 * @example
 * ```ts
 * configDir(process.env); // "/home/ada/.config/agent-machine"
 * ```
 */
export function configDir(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
  home: string = env.HOME || homedir(),
): string {
  if (platform === "win32")
    return path.join(env.APPDATA || path.join(home, "AppData", "Roaming"), "agent-machine");
  return path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "agent-machine");
}

/**
 * The project rules for a session in `cwd`, in the order they go into the system prompt: the
 * user's own (`AGENTS.md`, then `CLAUDE.md`, in {@link configDir}), then the workspace's
 * (`AGENTS.md`, then `CLAUDE.md`). Later ones are closer to the work, so they come last and win
 * where they disagree. A missing, unreadable or empty file is skipped.
 *
 * @example
 * ```ts
 * const rules = findProjectRules("/repo", process.env);
 * rules.map((r) => r.shown); // ["~/.config/agent-machine/AGENTS.md", "AGENTS.md"]
 * ```
 */
export function findProjectRules(cwd: string, env: Record<string, string | undefined>): RulesFile[] {
  const home = env.HOME || homedir();
  const user = configDir(env, process.platform, home);
  const folders = path.resolve(user) === path.resolve(cwd) ? [cwd] : [user, cwd];
  const found: RulesFile[] = [];
  for (const folder of folders) {
    for (const name of RULES_FILE_NAMES) {
      const file = path.join(folder, name);
      const read = readRulesFile(file);
      if (!read) continue;
      const shown =
        folder === cwd
          ? name
          : file.startsWith(`${home}${path.sep}`)
            ? `~${path.sep}${path.relative(home, file)}`
            : file;
      found.push({ path: file, shown, ...read });
    }
  }
  return found;
}

/** A rules file's text, cut to the maximum; `undefined` when it is missing, unreadable or empty. */
function readRulesFile(file: string): { text: string; cut: boolean } | undefined {
  try {
    if (!statSync(file).isFile()) return undefined;
    const bytes = readFileSync(file);
    const cut = bytes.length > RULES_FILE_MAX_BYTES;
    const text = bytes.subarray(0, RULES_FILE_MAX_BYTES).toString("utf8").trim();
    return text ? { text, cut } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The system prompt with the rules after it, each in a block naming its file.
 *
 * @example
 * ```ts
 * withProjectRules("You are a coding agent.", findProjectRules(cwd, process.env));
 * ```
 */
export function withProjectRules(systemPrompt: string, rules: readonly RulesFile[]): string {
  if (rules.length === 0) return systemPrompt;
  const blocks = rules.map(
    (rule) =>
      `<rules file="${rule.path}">\n${rule.text}${rule.cut ? "\n[… cut: the file is longer than this]" : ""}\n</rules>`,
  );
  return [
    systemPrompt,
    "",
    "The user keeps rules for this work in the files below (their own first, then the workspace's, which win where they disagree). Follow them.",
    ...blocks,
  ].join("\n");
}

/**
 * What the screen says of the rules loaded.
 *
 * @example
 * ```ts
 * rulesNotice(rules); // "Project rules: ~/.config/agent-machine/AGENTS.md, AGENTS.md"
 * ```
 */
export function rulesNotice(rules: readonly RulesFile[]): string | undefined {
  if (rules.length === 0) return undefined;
  const names = rules.map(
    (rule) => `${rule.shown}${rule.cut ? ` (cut to ${RULES_FILE_MAX_BYTES / 1024} KB)` : ""}`,
  );
  return `Project rules: ${names.join(", ")}`;
}
