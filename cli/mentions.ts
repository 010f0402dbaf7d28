import { readFileSync, realpathSync, statSync } from "node:fs";
import * as path from "node:path";

/** Largest file an `@path` mention attaches. */
export const MAX_MENTION_BYTES = 256 * 1024;

/** What {@link expandMentions} made of a typed line. */
export interface ExpandedMentions {
  /** The line, with each attached file's content after it. */
  text: string;
  attached: { path: string; bytes: number; lines: number }[];
  /** Mentions that name a file but were not attached, and why. */
  skipped: { path: string; why: string }[];
}

/**
 * Attaches the workspace files a line mentions as `@path` (a word starting with `@`): each one's
 * content follows the line in a `<file path="…">` block, so the model reads it without a tool
 * call. A mention of a path that is not a file of the workspace (a user name, an `@scope/package`)
 * stays plain text; a file outside the workspace, a folder or one over {@link MAX_MENTION_BYTES}
 * is not attached, and said so.
 *
 * @example
 * ```ts
 * expandMentions("why does @src/math.js fail?", cwd).text;
 * // 'why does @src/math.js fail?\n\n<file path="src/math.js">\n…\n</file>'
 * ```
 */
export function expandMentions(line: string, cwd: string): ExpandedMentions {
  const result: ExpandedMentions = { text: line, attached: [], skipped: [] };
  const blocks: string[] = [];
  const seen = new Set<string>();
  let root: string;
  try {
    root = realpathSync(cwd);
  } catch {
    return result;
  }
  for (const match of line.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
    // A sentence's full stop or comma after the path is not part of it.
    const mentioned = match[1]!.replace(/[.,;:!?)]+$/, "");
    if (!mentioned || seen.has(mentioned)) continue;
    seen.add(mentioned);
    let real: string;
    try {
      real = realpathSync(path.resolve(cwd, mentioned));
    } catch {
      continue; // not a path: plain text
    }
    if (real !== root && !real.startsWith(`${root}${path.sep}`)) {
      result.skipped.push({ path: mentioned, why: "outside the workspace" });
      continue;
    }
    const info = statSync(real);
    if (!info.isFile()) {
      result.skipped.push({ path: mentioned, why: "not a file" });
      continue;
    }
    if (info.size > MAX_MENTION_BYTES) {
      result.skipped.push({ path: mentioned, why: `${info.size} bytes, over ${MAX_MENTION_BYTES}` });
      continue;
    }
    const content = readFileSync(real, "utf8");
    const relative = path.relative(root, real) || mentioned;
    blocks.push(`<file path="${relative}">\n${content.replace(/\n$/, "")}\n</file>`);
    result.attached.push({
      path: relative,
      bytes: info.size,
      lines: content.replace(/\n$/, "").split("\n").length,
    });
  }
  if (blocks.length) result.text = `${line}\n\n${blocks.join("\n\n")}`;
  return result;
}
