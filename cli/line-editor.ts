/**
 * The line being typed and where the cursor is in it (an index into `text`, between code points).
 * `text` may hold newlines: a prompt of several lines.
 */
export interface LineState {
  text: string;
  cursor: number;
}

/** What a key does to the line. */
export type LineEdit =
  | { kind: "insert"; text: string }
  | { kind: "left" }
  | { kind: "right" }
  | { kind: "word-left" }
  | { kind: "word-right" }
  | { kind: "home" }
  | { kind: "end" }
  | { kind: "backspace" }
  | { kind: "delete" }
  | { kind: "delete-word-back" }
  | { kind: "kill-to-start" }
  | { kind: "kill-to-end" }
  | { kind: "line-up" }
  | { kind: "line-down" };

/** An empty line, or `text` with the cursor at its end. */
export function lineAt(text = ""): LineState {
  return { text, cursor: text.length };
}

/** The index one code point before `i` (a surrogate pair is one step). */
function before(text: string, i: number): number {
  if (i <= 0) return 0;
  const low = text.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && i >= 2 ? i - 2 : i - 1;
}

/** The index one code point after `i`. */
function after(text: string, i: number): number {
  if (i >= text.length) return text.length;
  const high = text.charCodeAt(i);
  return high >= 0xd800 && high <= 0xdbff && i + 1 < text.length ? i + 2 : i + 1;
}

const isWordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}_]/u.test(char);

/** Where a word jump to the left lands: the start of the word at or before the cursor (readline's Alt-B). */
function wordStart(text: string, i: number): number {
  let at = i;
  while (at > 0 && !isWordChar(text[at - 1])) at--;
  while (at > 0 && isWordChar(text[at - 1])) at--;
  return at;
}

/** Where a word jump to the right lands: the end of the word at or after the cursor (readline's Alt-F). */
function wordEnd(text: string, i: number): number {
  let at = i;
  while (at < text.length && !isWordChar(text[at])) at++;
  while (at < text.length && isWordChar(text[at])) at++;
  return at;
}

/** The start and end of the row (between newlines) holding `i`. */
function rowAround(text: string, i: number): { start: number; end: number } {
  const start = text.lastIndexOf("\n", i - 1) + 1;
  const newline = text.indexOf("\n", i);
  return { start, end: newline < 0 ? text.length : newline };
}

/**
 * Applies one edit to the line, as readline and the shells do: Home / End go to the start / end of
 * the row the cursor is on, Ctrl-U / Ctrl-K kill to its start / end, a word is letters, digits and
 * `_`. `line-up` / `line-down` move to the row above / below (same column, or its end); at the
 * first / last row they change nothing (the caller then walks the history).
 *
 * @example
 * ```ts
 * editLine(editLine(lineAt("helo"), { kind: "left" }), { kind: "insert", text: "l" }); // { text: "hello", cursor: 4 }
 * ```
 */
export function editLine(state: LineState, edit: LineEdit): LineState {
  const { text, cursor } = state;
  const row = rowAround(text, cursor);
  switch (edit.kind) {
    case "insert":
      return {
        text: text.slice(0, cursor) + edit.text + text.slice(cursor),
        cursor: cursor + edit.text.length,
      };
    case "left":
      return { text, cursor: before(text, cursor) };
    case "right":
      return { text, cursor: after(text, cursor) };
    case "word-left":
      return { text, cursor: wordStart(text, cursor) };
    case "word-right":
      return { text, cursor: wordEnd(text, cursor) };
    case "home":
      return { text, cursor: row.start };
    case "end":
      return { text, cursor: row.end };
    case "backspace": {
      const from = before(text, cursor);
      return { text: text.slice(0, from) + text.slice(cursor), cursor: from };
    }
    case "delete":
      return { text: text.slice(0, cursor) + text.slice(after(text, cursor)), cursor };
    case "delete-word-back": {
      // As Ctrl-W in a shell: back over spaces, then over everything up to the previous space.
      let from = cursor;
      while (from > row.start && /\s/.test(text[from - 1]!)) from--;
      while (from > row.start && !/\s/.test(text[from - 1]!)) from--;
      return { text: text.slice(0, from) + text.slice(cursor), cursor: from };
    }
    case "kill-to-start": {
      // At a row's start, the newline before it goes: Ctrl-U again keeps erasing upwards.
      const from = cursor === row.start ? Math.max(0, row.start - 1) : row.start;
      return { text: text.slice(0, from) + text.slice(cursor), cursor: from };
    }
    case "kill-to-end": {
      const to = cursor === row.end ? Math.min(text.length, row.end + 1) : row.end;
      return { text: text.slice(0, cursor) + text.slice(to), cursor };
    }
    case "line-up": {
      if (row.start === 0) return state;
      const above = rowAround(text, row.start - 1);
      return { text, cursor: Math.min(above.start + (cursor - row.start), above.end) };
    }
    case "line-down": {
      if (row.end === text.length) return state;
      const below = rowAround(text, row.end + 1);
      return { text, cursor: Math.min(below.start + (cursor - row.start), below.end) };
    }
  }
}

/** An edit a key makes by itself (all but typing). */
export type KeyEdit = Exclude<LineEdit, { kind: "insert" }>;

/** What a key means: an edit of its own, a new row, or a step through the history. */
export type KeyMeaning = KeyEdit["kind"] | "history-up" | "history-down" | "newline";

/** What an escape sequence (or control key) means to the editor; `undefined`: nothing. */
const SEQUENCES: Record<string, KeyMeaning> = {
  "\x1b[D": "left",
  "\x1bOD": "left",
  "\x1b[C": "right",
  "\x1bOC": "right",
  "\x1b[A": "line-up",
  "\x1bOA": "line-up",
  "\x1b[B": "line-down",
  "\x1bOB": "line-down",
  "\x1b[H": "home",
  "\x1bOH": "home",
  "\x1b[1~": "home",
  "\x1b[7~": "home",
  "\x1b[F": "end",
  "\x1bOF": "end",
  "\x1b[4~": "end",
  "\x1b[8~": "end",
  "\x1b[3~": "delete",
  // Ctrl-Left / Alt-Left, Alt-B (readline); the same to the right.
  "\x1b[1;5D": "word-left",
  "\x1b[1;3D": "word-left",
  "\x1bb": "word-left",
  "\x1b[1;5C": "word-right",
  "\x1b[1;3C": "word-right",
  "\x1bf": "word-right",
  "\x1b\x7f": "delete-word-back",
  // Shift-Enter as terminals report it: the kitty keyboard protocol, xterm's modifyOtherKeys, and
  // Alt-Enter (ESC CR: what iTerm2, VS Code and others send for Shift-Enter once set up for Claude Code).
  "\x1b[13;2u": "newline",
  "\x1b[27;2;13~": "newline",
  "\x1b\r": "newline",
  "\x01": "home",
  "\x05": "end",
  "\x02": "left",
  "\x06": "right",
  "\x0b": "kill-to-end",
  "\x15": "kill-to-start",
  "\x17": "delete-word-back",
  "\x10": "history-up",
  "\x0e": "history-down",
};

/**
 * What a key means to the editor: an edit, `newline` (Shift-Enter), `history-up` / `history-down`
 * (Ctrl-P / Ctrl-N), or `undefined` for a key it does not know.
 *
 * @example
 * ```ts
 * keyMeaning("\x1b[1;5D"); // "word-left" (Ctrl-Left)
 * ```
 */
export function keyMeaning(key: string): KeyMeaning | undefined {
  return SEQUENCES[key];
}

const INVERSE = "\x1b[7m";
const INVERSE_OFF = "\x1b[27m";

/**
 * The rows the input line is drawn as: one per line of a multi-line prompt (the first after
 * `prompt`, the others indented as much), the cursor shown as the character under it in inverse
 * video (a space at the end of a row). A row too wide for `columns` keeps the cursor in view: what
 * follows the cursor is cut first, then what precedes it (the screen keeps a row's end). `safe`
 * makes typed text harmless to the terminal.
 *
 * @example
 * ```ts
 * inputRows({ text: "helo", cursor: 3 }, { prompt: "› ", columns: 80, safe: (t) => t });
 * // ["› hel\x1b[7mo\x1b[27m"]
 * ```
 */
export function inputRows(
  state: LineState,
  options: { prompt: string; promptColumns?: number; columns: number; safe: (text: string) => string },
): string[] {
  const { text, cursor } = state;
  const indent = " ".repeat(options.promptColumns ?? 2);
  const rows = text.split("\n");
  let start = 0;
  return rows.map((row, index) => {
    const head = index === 0 ? options.prompt : indent;
    const rowStart = start;
    start += row.length + 1;
    if (cursor < rowStart || cursor > rowStart + row.length) return `${head}${options.safe(row)}`;
    const at = cursor - rowStart;
    const under = at < row.length ? row.slice(at, after(row, at)) : " ";
    let rest = row.slice(at + (at < row.length ? under.length : 0));
    const before = options.safe(row.slice(0, at));
    const room = options.columns - indent.length - 2 - [...before].length;
    if ([...rest].length > room) rest = `${[...rest].slice(0, Math.max(0, room - 1)).join("")}…`;
    return `${head}${before}${INVERSE}${options.safe(under)}${INVERSE_OFF}${options.safe(rest)}`;
  });
}
