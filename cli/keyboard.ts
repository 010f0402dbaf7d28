import { editLine, type KeyEdit, keyMeaning, type LineEdit, lineAt, type LineState } from "./line-editor.js";
import type { InputHistory } from "./input-history.js";

/** What the keyboard reports. */
export interface KeyboardHandlers {
  /**
   * Enter was pressed; `text` is the line typed (several lines for a multi-line prompt; a folded
   * paste's placeholder replaced by what was pasted).
   */
  onLine(text: string): void;
  /** Ctrl-C. */
  onInterrupt(): void;
  /** Esc alone (not the start of a key's sequence). */
  onEscape?(): void;
  /** Ctrl-D on an empty line. */
  onEof(): void;
  /** The line being typed changed, or the cursor moved in it. */
  onChange(text: string, cursor: number): void;
  /** Sees each printable key first; return true to consume it (answers to a question). */
  onKey?(key: string): boolean;
  /**
   * Tab pressed (a tab ending what arrived; one inside a paste is a space): the completed line, or
   * `undefined` to leave it. Keys typed just before it may arrive with it in one chunk.
   */
  onTab?(text: string): string | undefined;
  /**
   * Text pasted in one piece (the terminal's bracketed paste): what to add to the line instead of
   * it (an image placeholder for a pasted image path), or `undefined` to take it as text (a paste
   * of several lines folded into a `[pasted 3 lines]` placeholder, sent whole on Enter).
   */
  onPaste?(text: string): string | undefined;
  /** Ctrl-V: paste what the clipboard holds that the terminal cannot paste (an image). */
  onPasteImage?(): void;
  /** Ctrl-O: show an earlier output whole (`/expand`). */
  onExpand?(): void;
}

/** Where the keyboard tells the terminal to mark pastes (`ESC [ ? 2004 h`); a terminal's stdout. */
export interface KeyboardOutput {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * A line editor over a raw-mode terminal: typing, the cursor keys, word jumps, Home / End, the
 * readline keys (Ctrl-A/E/B/F/K/U/W), history (Up / Down), multi-line prompts (Shift-Enter, or `\`
 * then Enter), folded pastes, Enter.
 */
export interface Keyboard {
  readonly text: string;
  /** Where the cursor is in {@link text}. */
  readonly cursor: number;
  /** Replaces the line being typed, the cursor at its end (a refused line given back to edit). */
  set(text: string): void;
  stop(): void;
}

/** What the keyboard may be given besides its handlers. */
export interface KeyboardOptions {
  /** The lines typed before, walked with Up / Down (Ctrl-P / Ctrl-N); each line sent is added. */
  history?: InputHistory;
}

interface RawInput {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  setEncoding(encoding: BufferEncoding): unknown;
  on(event: "data", listener: (chunk: string) => void): unknown;
  off(event: "data", listener: (chunk: string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
const PASTE_MODE_ON = "\x1b[?2004h";
const PASTE_MODE_OFF = "\x1b[?2004l";

// eslint-disable-next-line no-control-regex -- escape sequences are control characters
const ESCAPE_SEQUENCE = /^\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|[\s\S])?/;
// Controls a paste may not carry into the line (a pasted ESC or Ctrl-C is text, never a key).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const PASTE_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * The placeholder a paste of several lines shows as in the line: `[pasted 3 lines]`, then
 * `[pasted 3 lines #2]` for the next one of the same size.
 *
 * @example
 * ```ts
 * pastePlaceholder("a\nb\nc", new Set()); // "[pasted 3 lines]"
 * ```
 */
export function pastePlaceholder(text: string, taken: ReadonlySet<string>): string {
  const lines = text.split("\n").length;
  const base = `[pasted ${lines} lines`;
  let placeholder = `${base}]`;
  for (let n = 2; taken.has(placeholder); n++) placeholder = `${base} #${n}]`;
  return placeholder;
}

/**
 * Puts the terminal in raw mode and edits one line at a time, so the CLI keeps drawing while the
 * user types and gets Ctrl-C as a key (not a signal). The keys are readline's (see
 * {@link keyMeaning}); an escape sequence it does not know is ignored.
 *
 * @example
 * ```ts
 * const keyboard = createKeyboard(process.stdin, { onLine: (t) => agent.steer(t), ... });
 * ```
 */
export function createKeyboard(
  input: RawInput,
  handlers: KeyboardHandlers,
  output?: KeyboardOutput,
  options: KeyboardOptions = {},
): Keyboard {
  let line: LineState = lineAt();
  const show = (next: LineState) => {
    line = next;
    handlers.onChange(line.text, line.cursor);
  };
  const set = (text: string) => show(lineAt(text));
  const edit = (change: LineEdit) => show(editLine(line, change));
  /** Pastes of several lines shown folded in the line, by their placeholder. */
  const pastes = new Map<string, string>();
  /** The paste being received, between `ESC [200~` and `ESC [201~` (it may come in several chunks). */
  let pasting: string | undefined;

  const onData = (chunk: string) => {
    let rest = chunk;
    if (pasting !== undefined) {
      pasting += rest;
      const end = pasting.indexOf(PASTE_END);
      if (end < 0) return;
      const pasted = pasting.slice(0, end);
      rest = pasting.slice(end + PASTE_END.length);
      pasting = undefined;
      paste(pasted);
    }
    const start = rest.indexOf(PASTE_START);
    if (start >= 0) {
      keys(rest.slice(0, start));
      pasting = "";
      onData(rest.slice(start + PASTE_START.length));
      return;
    }
    keys(rest);
  };

  /** A paste: an image path's placeholder, the text itself, or (several lines) folded. */
  const paste = (pasted: string) => {
    const replaced = handlers.onPaste?.(pasted);
    if (replaced !== undefined) return edit({ kind: "insert", text: replaced });
    const text = pasted.replace(/\r\n?/g, "\n").replace(/\n+$/, "").replace(PASTE_CONTROLS, "");
    if (!text.includes("\n")) return edit({ kind: "insert", text: text.replace(/\t/g, " ") });
    const placeholder = pastePlaceholder(text, new Set(pastes.keys()));
    pastes.set(placeholder, text);
    edit({ kind: "insert", text: placeholder });
  };

  /** The line as it is sent: each folded paste still in it replaced by what was pasted. */
  const unfolded = (text: string) => {
    let result = text;
    for (const [placeholder, pasted] of pastes) result = result.split(placeholder).join(pasted);
    pastes.clear();
    return result;
  };

  const enter = () => {
    // A backslash just before the cursor, as in a shell: the line goes on below.
    if (line.text[line.cursor - 1] === "\\") {
      show(editLine({ text: line.text, cursor: line.cursor }, { kind: "backspace" }));
      return edit({ kind: "insert", text: "\n" });
    }
    const text = unfolded(line.text);
    set("");
    options.history?.add(text);
    handlers.onLine(text);
  };

  const history = (direction: "up" | "down") => {
    const recalled = direction === "up" ? options.history?.up(line.text) : options.history?.down();
    if (recalled !== undefined) set(recalled);
  };

  const keys = (chunk: string) => {
    let rest = chunk;
    while (rest.length > 0) {
      const char = rest[0]!;
      let key = char;
      if (char === "\x1b") {
        key = ESCAPE_SEQUENCE.exec(rest)?.[0] || char;
        rest = rest.slice(key.length);
        if (key === "\x1b") {
          // Esc alone: a key of its own, not the start of a sequence (those come in one piece).
          if (rest === "") handlers.onEscape?.();
          continue;
        }
      } else rest = rest.slice(1);
      const meaning = keyMeaning(key);
      if (meaning === "newline") edit({ kind: "insert", text: "\n" });
      else if (meaning === "history-up") history("up");
      else if (meaning === "history-down") history("down");
      else if (meaning === "line-up" || meaning === "line-down") {
        // Up / Down move between the rows of a multi-line prompt; past its first / last, the history.
        const moved = editLine(line, { kind: meaning });
        if (moved !== line) show(moved);
        else history(meaning === "line-up" ? "up" : "down");
      } else if (meaning) edit({ kind: meaning } as KeyEdit);
      else if (key === "\x03") handlers.onInterrupt();
      else if (key === "\x04") {
        if (line.text === "") handlers.onEof();
        else edit({ kind: "delete" });
      } else if (key === "\r" || key === "\n") {
        // A "\r\n" is one line end.
        if (key === "\r" && rest[0] === "\n") rest = rest.slice(1);
        enter();
      } else if (key === "\x7f" || key === "\b") edit({ kind: "backspace" });
      else if (key === "\x16") handlers.onPasteImage?.();
      else if (key === "\x0f") handlers.onExpand?.();
      else if (key === "\t" && rest === "" && handlers.onTab) {
        const completed = handlers.onTab(line.text);
        if (completed !== undefined) set(completed);
      } else if (key.length === 1 && (key >= " " || key === "\t")) {
        if (handlers.onKey?.(key)) continue;
        edit({ kind: "insert", text: key === "\t" ? " " : key });
      }
    }
  };

  const marksPastes = Boolean(output?.isTTY && handlers.onPaste);
  input.setRawMode?.(true);
  input.setEncoding("utf8");
  input.on("data", onData);
  input.resume();
  if (marksPastes) output!.write(PASTE_MODE_ON);
  return {
    get text() {
      return line.text;
    },
    get cursor() {
      return line.cursor;
    },
    set(next) {
      set(next);
    },
    stop() {
      if (marksPastes) output!.write(PASTE_MODE_OFF);
      input.off("data", onData);
      input.setRawMode?.(false);
      input.pause();
    },
  };
}
