import {
  displayWidth,
  fitEndToColumns,
  fitToColumns,
  splitAtColumns,
  wrapToColumns,
} from "./terminal-text.js";

/**
 * A live line that, when too wide, keeps its end rather than its start (the input line: what is
 * being typed), after a prefix of `keep` columns that always shows.
 */
export interface TailLine {
  text: string;
  keep: number;
}

/**
 * A live line that, when too wide, is wrapped onto as many rows as it needs at the width of each
 * frame, never cut (an approval question: every option must show at any width).
 */
export interface WrappedLine {
  text: string;
  wrap: true;
}

/** A line of the live region: cut to one row with `…`, or a {@link TailLine}, or a {@link WrappedLine}. */
export type LiveLine = string | TailLine | WrappedLine;

/** Where the screen writes: stdout, or anything with `write` (tests). */
export interface ScreenOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
  /** The size now, asked of the terminal itself (a TTY stream's `getWindowSize`): fresher than `columns`. */
  getWindowSize?(): [number, number];
  on?(event: "resize", listener: () => void): unknown;
  off?(event: "resize", listener: () => void): unknown;
}

/**
 * The terminal as two parts: output, which scrolls up and never changes, and a live region at the
 * bottom (the line being streamed, running tool calls, the spinner, the input line) that is redrawn
 * in place. On a non-terminal only the output is written, as it arrives.
 *
 * Output is written in whole rows and never redrawn, so nothing of it can be left behind twice.
 * The live region hangs below it: the cursor rests at the start of the row after the output (saved
 * with ESC 7 before the region is drawn, restored with ESC 8 after), and each frame erases
 * everything below that point (ESC [J) before drawing again. No row is counted, so a terminal that
 * re-wraps lines when it is made narrower (tmux, iTerm2, VTE, Windows Terminal) cannot make a
 * redraw miss one. Widths are measured in columns (`string-width`: CJK and emoji count 2); the
 * streamed line is word-wrapped to the width of the moment, live lines are cut to one row. See
 * docs/cli.md, "The screen".
 */
export interface Screen {
  readonly tty: boolean;
  /** The terminal's width now (80 when the output is not a terminal). */
  readonly columns: number;
  /** Appends text (may end mid-line: the unfinished line stays live until its newline comes). */
  write(text: string, style?: (line: string) => string): void;
  /** Ends the unfinished line, if any. */
  endLine(): void;
  /** Replaces the live lines below the unfinished one. */
  setLive(lines: LiveLine[]): void;
  /**
   * Sets what the live region shows first, above its lines: a block still being written (a
   * markdown table as its rows arrive), rendered by `draft` at each frame for the width of that
   * moment and the rows the region has, so a resize re-fits it. `undefined` removes it. A frame is
   * drawn after every call (calling it again with the same function says the draft grew).
   */
  setDraft(draft: ((columns: number, rows: number) => string[]) | undefined): void;
  /** Draws now instead of at the next frame. */
  flush(): void;
  /** Draws the final state and leaves the cursor on a fresh line. */
  close(): void;
}

const FRAME_MS = 16;
/** Rows of a draft shown at most (its last ones). */
const DRAFT_ROWS = 6;
const SAVE_CURSOR = "\x1b7";
const RESTORE_CURSOR = "\x1b8";
const ERASE_BELOW = "\x1b[J";
/** Index: one row down in the same column, scrolling the screen when at its bottom. */
const INDEX = "\x1bD";

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
  /** Whole rows of output not written yet (styled). */
  let committed = "";
  /** The unfinished line (plain text; styled when drawn or committed). */
  let partial = "";
  let partialStyle: (line: string) => string = (line) => line;
  let live: LiveLine[] = [];
  let draft: ((columns: number, rows: number) => string[]) | undefined;
  /** The live region is on the screen, below the resting cursor. */
  let liveShown = false;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** Non-terminal: whether everything written so far ends with a newline. */
  let atLineStart = true;

  /** The size a frame is drawn for, asked of the terminal when each frame starts. */
  let size: { columns?: number; rows?: number } = {};
  const measure = () => {
    try {
      const [c, r] = out.getWindowSize?.() ?? [];
      size = c && r ? { columns: c, rows: r } : {};
    } catch {
      size = {};
    }
  };
  // A frame drawn for a width the terminal no longer has wraps its rows where they were not
  // counted: the size is asked of the terminal (an ioctl) at each frame, not waited for from
  // SIGWINCH, which comes late when the process is busy.
  const columns = () => Math.max(20, size.columns ?? out.columns ?? 80);
  /** Columns a row may use: one less than the terminal's, so the cursor never waits at its edge. */
  const lineColumns = () => columns() - 1;
  /** Live lines at most: the region must stay well inside the screen. */
  const maxLiveLines = () => Math.max(3, Math.floor(((size.rows ?? out.rows ?? 24) - 1) / 2));

  /** Moves finished lines (and over-long unfinished ones, word-wrapped) from `partial` to `committed`. */
  const settle = () => {
    const max = lineColumns();
    let newline = partial.indexOf("\n");
    while (newline >= 0) {
      let line = partial.slice(0, newline);
      // Whole rows, word-wrapped here rather than by the terminal, so that they read well.
      while (tty && displayWidth(line) > max) {
        const { head, rest } = splitAtColumns(line, max);
        committed += `${partialStyle(head)}\n`;
        line = rest;
      }
      committed += `${partialStyle(line)}\n`;
      partial = partial.slice(newline + 1);
      newline = partial.indexOf("\n");
    }
    if (!tty) return;
    while (displayWidth(partial) > max) {
      const { head, rest } = splitAtColumns(partial, max);
      committed += `${partialStyle(head)}\n`;
      partial = rest;
    }
  };

  const liveLines = (): string[] => {
    if (closed) return [];
    const max = lineColumns();
    let lines = live.flatMap((line) =>
      typeof line === "string"
        ? [fitToColumns(line, max)]
        : "wrap" in line
          ? wrapToColumns(line.text, max)
          : [fitEndToColumns(line.text, max, line.keep)],
    );
    const room = maxLiveLines() - (partial ? 1 : 0);
    if (draft) {
      // The draft's lines are wrapped, not cut: it is text being written. Its last ones show, a
      // quarter of the screen at most: a taller region re-wrapped by a terminal made narrower
      // can be pushed past the screen's top, where no frame can erase it.
      const draftRows = Math.max(
        3,
        Math.min(DRAFT_ROWS, Math.floor(((size.rows ?? out.rows ?? 24) - 1) / 4)),
      );
      const rows: string[] = [];
      for (let line of draft(max, draftRows)) {
        while (displayWidth(line) > max) {
          const { head, rest } = splitAtColumns(line, max);
          rows.push(head);
          line = rest;
        }
        rows.push(line);
      }
      lines = [...rows.slice(-draftRows), ...lines];
    }
    if (lines.length > room) {
      const hidden = lines.length - room + 1;
      lines = [`… ${hidden} more line${hidden === 1 ? "" : "s"}`, ...lines.slice(hidden)];
    }
    return [...(partial ? [partialStyle(partial)] : []), ...lines];
  };

  const draw = () => {
    timer = undefined;
    measure();
    if (!tty) {
      if (committed) {
        out.write(committed);
        atLineStart = committed.endsWith("\n");
      }
      committed = "";
      return;
    }
    // The width may have changed since the last frame: re-fit the unfinished line first.
    settle();
    // The cursor rests at the start of the row after the output: erasing below it removes the whole
    // live region, however many rows the terminal has re-wrapped it onto since.
    let text = liveShown ? ERASE_BELOW : "";
    text += committed;
    committed = "";
    const lines = liveLines();
    liveShown = lines.length > 0;
    if (liveShown) {
      // Room first, so that drawing the region cannot scroll the screen under the saved cursor
      // (twice the rows it needs, in case a line wraps on a terminal narrower than we know yet).
      const room = lines.length * 2;
      text += `${INDEX.repeat(room)}\x1b[${room}A`;
      text += `${SAVE_CURSOR}${lines.join("\r\n")}${RESTORE_CURSOR}`;
    }
    if (text) out.write(text);
  };
  const schedule = () => {
    if (!timer && !closed) timer = setTimeout(draw, FRAME_MS);
  };

  const onResize = () => schedule();
  out.on?.("resize", onResize);

  return {
    tty,
    get columns() {
      return columns();
    },
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
    setDraft(render) {
      if (!tty) return;
      draft = render;
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
      draft = undefined;
      if (timer) clearTimeout(timer);
      draw();
      closed = true;
      out.off?.("resize", onResize);
    },
  };
}
