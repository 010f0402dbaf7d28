import { stripAnsi } from "./style.js";

/** Where the screen writes: stdout, or anything with `write` (tests). */
export interface ScreenOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
  on?(event: "resize", listener: () => void): unknown;
  off?(event: "resize", listener: () => void): unknown;
}

/**
 * The terminal as two parts: committed output, which scrolls up and never changes, and a live
 * region at the bottom (the line being streamed, running tool calls, the spinner, the input line)
 * that is redrawn in place. On a non-terminal only committed output is written, as it arrives.
 */
export interface Screen {
  readonly tty: boolean;
  /** Appends text (may end mid-line: the unfinished line stays live until its newline comes). */
  write(text: string, style?: (line: string) => string): void;
  /** Ends the unfinished line, if any. */
  endLine(): void;
  /** Replaces the live lines below the unfinished one. */
  setLive(lines: string[]): void;
  /** Draws now instead of at the next frame. */
  flush(): void;
  /** Draws the final state and leaves the cursor on a fresh line. */
  close(): void;
}

const FRAME_MS = 16;

/**
 * Creates the screen for one output stream.
 *
 * @example
 * ```ts
 * const screen = createScreen(process.stdout);
 * screen.write("Hello, ");
 * screen.setLive(["⠋ thinking 1.2s"]);
 * screen.write("world\n");
 * ```
 */
export function createScreen(out: ScreenOutput): Screen {
  const tty = out.isTTY === true;
  let committed = "";
  let partial = "";
  let partialStyle: (line: string) => string = (line) => line;
  let live: string[] = [];
  let drawnRows = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** Non-terminal: whether everything written so far ends with a newline. */
  let atLineStart = true;

  const columns = () => Math.max(20, out.columns ?? 80);
  const fit = (line: string) => {
    // Every live line must stay on one row, or moving the cursor back up would miss.
    const max = columns() - 1;
    const plain = stripAnsi(line);
    if (plain.length <= max) return line;
    return `${plain.slice(0, max - 1)}…`;
  };

  /** Moves finished lines (and over-long unfinished ones, word-wrapped) from `partial` to `committed`. */
  const settle = () => {
    let newline = partial.indexOf("\n");
    while (newline >= 0) {
      committed += `${partialStyle(partial.slice(0, newline))}\n`;
      partial = partial.slice(newline + 1);
      newline = partial.indexOf("\n");
    }
    if (!tty) return;
    const max = columns() - 1;
    while (partial.length > max) {
      const space = partial.lastIndexOf(" ", max);
      const cut = space > 0 ? space : max;
      committed += `${partialStyle(partial.slice(0, cut))}\n`;
      partial = partial.slice(space > 0 ? cut + 1 : cut);
    }
  };

  const draw = () => {
    timer = undefined;
    if (!tty) {
      if (committed) {
        out.write(committed);
        atLineStart = committed.endsWith("\n");
      }
      committed = "";
      return;
    }
    let text = "";
    if (drawnRows > 0) text += `\r${drawnRows > 1 ? `\x1b[${drawnRows - 1}A` : ""}\x1b[J`;
    text += committed;
    committed = "";
    const lines = closed ? [] : [...(partial ? [partialStyle(partial)] : []), ...live.map(fit)];
    text += lines.join("\n");
    drawnRows = lines.length;
    if (text) out.write(text);
  };

  const schedule = () => {
    if (!timer && !closed) timer = setTimeout(draw, FRAME_MS);
  };

  const onResize = () => schedule();
  out.on?.("resize", onResize);

  return {
    tty,
    write(text, style) {
      if (!text) return;
      if (style && style !== partialStyle && partial) {
        // A different kind of text (thinking → answer) starts on its own line.
        committed += `${partialStyle(partial)}\n`;
        partial = "";
      }
      partialStyle = style ?? ((line) => line);
      if (!tty) {
        committed += text.split("\n").map(partialStyle).join("\n");
        schedule();
        return;
      }
      partial += text;
      settle();
      schedule();
    },
    endLine() {
      if (!tty) {
        // The text went out as it came; only a missing newline is left to add.
        if (committed ? !committed.endsWith("\n") : !atLineStart) committed += "\n";
        schedule();
        return;
      }
      if (partial) {
        committed += `${partialStyle(partial)}\n`;
        partial = "";
        schedule();
      }
    },
    setLive(lines) {
      if (!tty) return;
      live = lines;
      schedule();
    },
    flush() {
      if (timer) clearTimeout(timer);
      draw();
    },
    close() {
      if (!tty && (committed ? !committed.endsWith("\n") : !atLineStart)) committed += "\n";
      if (partial) {
        committed += `${partialStyle(partial)}\n`;
        partial = "";
      }
      live = [];
      if (timer) clearTimeout(timer);
      draw();
      closed = true;
      out.off?.("resize", onResize);
    },
  };
}
