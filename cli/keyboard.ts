/** What the keyboard reports. */
export interface KeyboardHandlers {
  /** Enter was pressed; `text` is the line typed. */
  onLine(text: string): void;
  /** Ctrl-C. */
  onInterrupt(): void;
  /** Ctrl-D on an empty line. */
  onEof(): void;
  /** The line being typed changed. */
  onChange(text: string): void;
  /** Sees each printable key first; return true to consume it (answers to a question). */
  onKey?(key: string): boolean;
  /**
   * Tab pressed (a tab ending what arrived; one inside a paste is a space): the completed line, or
   * `undefined` to leave it. Keys typed just before it may arrive with it in one chunk.
   */
  onTab?(text: string): string | undefined;
  /**
   * Text pasted in one piece (the terminal's bracketed paste): what to add to the line instead of
   * it (an image placeholder for a pasted image path), or `undefined` to take it as typed keys.
   */
  onPaste?(text: string): string | undefined;
  /** Ctrl-V: paste what the clipboard holds that the terminal cannot paste (an image). */
  onPasteImage?(): void;
}

/** Where the keyboard tells the terminal to mark pastes (`ESC [ ? 2004 h`); a terminal's stdout. */
export interface KeyboardOutput {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** A minimal line editor over a raw-mode terminal: typing, Backspace, Ctrl-U, Ctrl-W, Enter. */
export interface Keyboard {
  readonly text: string;
  /** Replaces the line being typed (a refused line given back to edit). */
  set(text: string): void;
  stop(): void;
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
const ESCAPE_SEQUENCE = /^\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?/;

/**
 * Puts the terminal in raw mode and edits one line at a time, so the CLI keeps drawing while the
 * user types and gets Ctrl-C as a key (not a signal). Cursor keys and other escape sequences are
 * ignored.
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
): Keyboard {
  let text = "";
  const set = (next: string) => {
    text = next;
    handlers.onChange(text);
  };
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
      const replaced = handlers.onPaste?.(pasted);
      if (replaced !== undefined) set(text + replaced);
      else keys(pasted);
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

  const keys = (chunk: string) => {
    let rest = chunk;
    while (rest.length > 0) {
      const char = rest[0]!;
      if (char === "\x1b") {
        const match = ESCAPE_SEQUENCE.exec(rest);
        rest = rest.slice(match?.[0].length || 1);
        continue;
      }
      rest = rest.slice(1);
      if (char === "\x03") handlers.onInterrupt();
      else if (char === "\x04") {
        if (text === "") handlers.onEof();
      } else if (char === "\r" || char === "\n") {
        // A pasted "\r\n" is one line end.
        if (char === "\r" && rest[0] === "\n") rest = rest.slice(1);
        const line = text;
        set("");
        handlers.onLine(line);
      } else if (char === "\x7f" || char === "\b") set([...text].slice(0, -1).join(""));
      else if (char === "\x15") set("");
      else if (char === "\x16") handlers.onPasteImage?.();
      else if (char === "\x17") set(text.replace(/\S*\s*$/, ""));
      else if (char === "\t" && rest === "" && handlers.onTab) {
        const completed = handlers.onTab(text);
        if (completed !== undefined) set(completed);
      } else if (char >= " " || char === "\t") {
        if (handlers.onKey?.(char)) continue;
        set(text + (char === "\t" ? " " : char));
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
      return text;
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
