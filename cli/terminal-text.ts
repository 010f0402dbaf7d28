import sliceAnsi from "slice-ansi";
import stringWidth from "string-width";

/**
 * Columns a piece of text occupies on a terminal: wide (CJK) characters and emoji count 2, combining
 * marks and zero-width joiners 0, ANSI styles nothing (`string-width`, the measure Ink and most CLIs use).
 *
 * @example
 * ```ts
 * displayWidth("漢字 ok"); // 7
 * ```
 */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
// eslint-disable-next-line no-control-regex -- matching escape sequences is the point
const ANSI_AT = /^\x1b\[[0-9;?]*[A-Za-z]/;

/**
 * Splits text into a head at most `columns` wide and the rest, cutting after
 * the last space that fits (the space is dropped) or, in a word longer than the line, between two
 * characters (graphemes: an emoji or a letter with its accents is never split). ANSI styles count
 * no columns and are never cut.
 *
 * @example
 * ```ts
 * splitAtColumns("hello wide 世界", 12); // { head: "hello wide", rest: "世界" }
 * ```
 */
export function splitAtColumns(text: string, columns: number): { head: string; rest: string } {
  let width = 0;
  let end = 0;
  let lastSpace = -1;
  let skipTo = 0;
  for (const { segment, index } of segmenter.segment(text)) {
    if (index < skipTo) continue;
    // A style (ANSI SGR) takes no column and is never split.
    const escape = segment === "\x1b" ? ANSI_AT.exec(text.slice(index)) : null;
    if (escape) {
      skipTo = index + escape[0].length;
      end = skipTo;
      continue;
    }
    const w = stringWidth(segment);
    if (width + w > columns) {
      // A space just past the limit is as good a place to break as one within it.
      if (segment === " ") lastSpace = index;
      break;
    }
    width += w;
    end = index + segment.length;
    if (segment === " ") lastSpace = index;
  }
  if (end >= text.length) return { head: text, rest: "" };
  if (lastSpace > 0) return { head: text.slice(0, lastSpace), rest: text.slice(lastSpace + 1) };
  // Not even one character fits (a width-2 character in a 1-column budget): take it anyway.
  if (width === 0) {
    const first = [...segmenter.segment(text.slice(end))][0]?.segment ?? "";
    return { head: text.slice(0, end + first.length), rest: text.slice(end + first.length) };
  }
  return { head: text.slice(0, end), rest: text.slice(end) };
}

/**
 * Cuts a (possibly styled) line to at most `columns` columns, ending it with `…` when cut, so it
 * stays on one terminal row.
 *
 * @example
 * ```ts
 * fitToColumns("a very long line", 8); // "a very …"
 * ```
 */
export function fitToColumns(line: string, columns: number): string {
  if (stringWidth(line) <= columns) return line;
  let cut = Math.max(0, columns - 1);
  let head = sliceAnsi(line, 0, cut);
  // slice-ansi and string-width can disagree on rare emoji sequences: trust the measure.
  while (cut > 0 && stringWidth(head) > columns - 1) head = sliceAnsi(line, 0, --cut);
  const styled = line.includes("\x1b[");
  return `${head}${styled ? "\x1b[0m" : ""}…`;
}

/**
 * Like {@link fitToColumns}, but keeps the end of the line (after `keep`, a prefix always shown):
 * an input line shows what is being typed.
 *
 * @example
 * ```ts
 * fitEndToColumns("› a very long line being typed", 12, 2); // "› …ing typed"
 * ```
 */
export function fitEndToColumns(line: string, columns: number, keep = 0): string {
  if (stringWidth(line) <= columns) return line;
  const prefix = sliceAnsi(line, 0, keep);
  const room = Math.max(1, columns - stringWidth(prefix) - 1);
  const total = stringWidth(line);
  let start = total - room;
  let tail = sliceAnsi(line, start);
  while (stringWidth(tail) > room && start < total) tail = sliceAnsi(line, ++start);
  return `${prefix}…${tail}`;
}

// C0 and C1 controls, DEL, and lone escapes: nothing from a model or a tool may steer the terminal.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Makes untrusted text (the model's words, tool output, arguments) safe and measurable on a
 * terminal: tabs become two spaces, carriage returns go (CRLF line ends included), and every other control
 * character (above all ESC, which starts escape sequences that could move the cursor, clear the
 * screen, retitle the window or write the clipboard) is shown as `�`. Newlines stay.
 *
 * @example
 * ```ts
 * terminalSafe("ok\x1b[2J\tdone\r\n"); // "ok�[2J  done\n"
 * ```
 */
export function terminalSafe(text: string): string {
  return text.replace(/\r/g, "").replace(/\t/g, "  ").replace(CONTROL, "\uFFFD");
}

// What can make shown text differ from the text itself: controls, bidi overrides and isolates
// (U+202A–202E, U+2066–2069, U+200E/200F, U+061C), zero-width and other format characters (Cf:
// U+200B–200D, U+2060, U+FEFF, the tag characters U+E0000–E007F), line and paragraph separators,
// and spaces that are not U+0020 (a no-break space reads as a space and is part of a word to a shell).
const INVISIBLE = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}]|[^\S\n\t ]|[\u115F\u1160\u3164\uFFA0]/gu;

const codePointEscape = (char: string): string => {
  const code = char.codePointAt(0)!;
  return code > 0xffff
    ? `\\u{${code.toString(16).toUpperCase()}}`
    : `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;
};

/**
 * Text as it really is, for what a user approves: like {@link terminalSafe}, and every character that
 * is invisible or changes how the rest is shown is written out as its escape (`\u202E`, `\u200B`,
 * `\u001B`, `\u000D`), so a right-to-left override cannot show `gnp.exe` for `exe.png`, a zero-width
 * space cannot hide in a name, a carriage return cannot hide what comes before it. Tabs become two
 * spaces; newlines stay (`newlines: "keep"`, the default) or are shown as `⏎` (`"mark"`, for one line).
 *
 * @example
 * ```ts
 * visibleText("echo \u202Etxt.exe"); // "echo \\u202Etxt.exe"
 * visibleText("a\nb", { newlines: "mark" }); // "a⏎b"
 * ```
 */
export function visibleText(text: string, options: { newlines?: "keep" | "mark" } = {}): string {
  const shown = text.replace(/\t/g, "  ").replace(INVISIBLE, codePointEscape);
  return options.newlines === "mark" ? shown.replace(/\n/g, "⏎") : shown;
}

/**
 * Wraps (possibly styled) text to rows of at most `columns` columns, at spaces where it can and
 * between characters in a word longer than a row; the text's own newlines start new rows. Nothing
 * is cut: every character is on some row. `indent` starts the rows after the first of each line.
 *
 * @example
 * ```ts
 * wrapToColumns("echo one two three", 9); // ["echo one", "two three"]
 * ```
 */
export function wrapToColumns(text: string, columns: number, indent = ""): string[] {
  const width = Math.max(1, columns);
  const rows: string[] = [];
  for (const line of text.split("\n")) {
    let rest = line;
    let first = true;
    do {
      const prefix = first ? "" : indent;
      const room = Math.max(1, width - stringWidth(prefix));
      const { head, rest: after } = splitAtColumns(rest, room);
      rows.push(`${prefix}${head}`);
      rest = after;
      first = false;
    } while (rest !== "");
  }
  return rows;
}
