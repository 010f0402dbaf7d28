import { readdirSync } from "node:fs";
import * as path from "node:path";
import { closestKey } from "../core/option-keys.js";

/** The commands the interactive session takes, with what `/help` says of each. */
export const SLASH_COMMANDS: Readonly<Record<string, string>> = {
  "/help": "this list",
  "/cost": "the session's tokens and cost so far",
  "/expand":
    "[n | list] the n-th latest tool call's whole output, unfolded (default: the last; Ctrl-O steps back through them)",
  "/compact": "compact the context now, summarising old turns: /compact [what the summary should keep]",
  "/clear": "start a new session (this one is kept: /resume returns to it)",
  "/resume": "pick a session of this workspace to go on with (or /resume <id>)",
  "/model": "switch the model, keeping the conversation: /model <id> (the one in use without an id)",
  "/visualize": "serve the live statechart page of this session and print its address",
  "/exit": "quit (also /quit, Ctrl-D, or Ctrl-C twice)",
  "/quit": "quit",
};

/** A typed line read as a command: `/name rest`, or `undefined` when it is a message. */
export interface SlashCommand {
  name: string;
  rest: string;
}

/**
 * Reads a line as a slash command when it starts with `/word` (a word of letters and hyphens,
 * then a space or the end): `/usr/bin/env fails` or `/ 2` stay messages to the model.
 *
 * @example
 * ```ts
 * parseSlashCommand("/cost"); // { name: "/cost", rest: "" }
 * parseSlashCommand("/usr/lib is empty"); // undefined
 * ```
 */
export function parseSlashCommand(line: string): SlashCommand | undefined {
  const match = /^(\/[a-z][a-z-]*)(?:\s+([\s\S]*))?$/i.exec(line.trim());
  return match ? { name: match[1]!.toLowerCase(), rest: (match[2] ?? "").trim() } : undefined;
}

/** What to say of a command the session does not know: the one it most likely meant. */
export function unknownCommandText(name: string): string {
  const suggestion = closestKey(name, Object.keys(SLASH_COMMANDS));
  return `Unknown command ${name}${suggestion ? ` (did you mean ${suggestion}?)` : ""}: /help lists them`;
}

/** The `/help` text: one line per command. */
export function slashHelp(): string[] {
  const width = Math.max(...Object.keys(SLASH_COMMANDS).map((name) => name.length));
  return [
    ...Object.entries(SLASH_COMMANDS).map(([name, text]) => `${name.padEnd(width)}  ${text}`),
    "Enter sends a line (it steers the agent while it works) · >> text: a follow-up · @path attaches a file or an image",
    "An image file pasted or dragged onto the terminal attaches the image; Ctrl-V, a copied screenshot",
    "Tab completes a command or a path · Ctrl-C aborts the run, again quits",
  ];
}

/** Directory entries Tab never offers: they are not what a prompt is about. */
const HIDDEN = new Set([".git", "node_modules"]);

/**
 * Completes the word being typed at the end of `text`: a slash command at the start of the line,
 * or an `@path` of the workspace (a directory completes with `/`, so Tab goes on into it). Returns
 * the new text, or `undefined` when nothing (or more than one thing, with no longer common start)
 * completes it.
 *
 * @example
 * ```ts
 * completeInput("/vis", cwd); // "/visualize "
 * completeInput("look at @src/ma", cwd); // "look at @src/math.js "
 * ```
 */
export function completeInput(text: string, cwd: string): string | undefined {
  const command = /^\/[a-z-]*$/i.exec(text);
  if (command) {
    const matches = Object.keys(SLASH_COMMANDS).filter((name) => name.startsWith(text.toLowerCase()));
    return extend(text, text, matches, " ");
  }
  const mention = /(?:^|\s)@(\S*)$/.exec(text);
  if (!mention) return undefined;
  const typed = mention[1]!;
  const slash = typed.lastIndexOf("/");
  const folder = typed.slice(0, slash + 1);
  const start = typed.slice(slash + 1);
  const absolute = path.resolve(cwd, folder);
  if (absolute !== cwd && !absolute.startsWith(`${cwd}${path.sep}`)) return undefined;
  let entries: { name: string; dir: boolean }[];
  try {
    entries = readdirSync(absolute, { withFileTypes: true })
      .filter((entry) => !HIDDEN.has(entry.name) && entry.name.startsWith(start))
      .filter((entry) => start.startsWith(".") || !entry.name.startsWith("."))
      .map((entry) => ({ name: entry.name, dir: entry.isDirectory() }));
  } catch {
    return undefined;
  }
  if (entries.length === 1) {
    const [only] = entries;
    return `${text.slice(0, text.length - start.length)}${only!.name}${only!.dir ? "/" : " "}`;
  }
  return extend(
    text,
    start,
    entries.map((entry) => entry.name),
    "",
  );
}

/** `text` with its last `typed` characters extended to what every match starts with (one match: whole, then `end`). */
function extend(text: string, typed: string, matches: string[], end: string): string | undefined {
  if (matches.length === 0) return undefined;
  if (matches.length === 1) return `${text.slice(0, text.length - typed.length)}${matches[0]}${end}`;
  let common = matches[0]!;
  for (const match of matches) while (!match.startsWith(common)) common = common.slice(0, -1);
  return common.length > typed.length ? `${text.slice(0, text.length - typed.length)}${common}` : undefined;
}
