import { statSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The words of a pasted text as a shell would split them: quotes ('…', "…") and backslash escapes
 * (`My\ Shot.png`) keep spaces inside a word. That is how terminals paste files dragged onto them.
 */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === "\\" && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** A pasted word as a path: `file://` URLs and `~/` read as the file they name. */
function asPath(word: string, cwd: string): string | undefined {
  if (word.startsWith("file://")) {
    try {
      return fileURLToPath(word);
    } catch {
      return undefined;
    }
  }
  if (word === "~" || word.startsWith("~/")) return path.join(homedir(), word.slice(1));
  return path.resolve(cwd, word);
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The files a pasted text names, when the whole paste is file paths (a file dragged onto the
 * terminal, or several): absolute, relative to `cwd`, `~/…`, `file://…`, quoted or with escaped
 * spaces. `undefined` when any word of it is not an existing file: then the paste is text.
 *
 * @example
 * ```ts
 * pastedFiles("'/home/ana/Screen Shot.png' ", cwd); // ["/home/ana/Screen Shot.png"]
 * pastedFiles("fix the bug", cwd); // undefined
 * ```
 */
export function pastedFiles(text: string, cwd: string): string[] | undefined {
  const trimmed = text.trim();
  // A long paste is text (a log, code), not a handful of dragged files.
  if (!trimmed || trimmed.length > 4096 || trimmed.includes("\n")) return undefined;
  const whole = asPath(trimmed, cwd);
  if (whole && isFile(whole)) return [whole];
  const files: string[] = [];
  for (const word of shellWords(trimmed)) {
    const file = asPath(word, cwd);
    if (!file || !isFile(file)) return undefined;
    files.push(file);
  }
  return files.length ? files : undefined;
}
