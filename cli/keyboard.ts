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
}

/** A minimal line editor over a raw-mode terminal: typing, Backspace, Ctrl-U, Ctrl-W, Enter. */
export interface Keyboard {
  readonly text: string;
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
export function createKeyboard(input: RawInput, handlers: KeyboardHandlers): Keyboard {
  let text = "";
  const set = (next: string) => {
    text = next;
    handlers.onChange(text);
  };

  const onData = (chunk: string) => {
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

  input.setRawMode?.(true);
  input.setEncoding("utf8");
  input.on("data", onData);
  input.resume();
  return {
    get text() {
      return text;
    },
    stop() {
      input.off("data", onData);
      input.setRawMode?.(false);
      input.pause();
    },
  };
}
