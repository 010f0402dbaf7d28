import type { Token, Tokens } from "marked";
import { createStyle, type Style, type Theme } from "./style.js";
import { displayWidth } from "./terminal-text.js";

/**
 * Markdown for the terminal: `marked` reads it, `marked-terminal` renders it (headings, lists,
 * code blocks highlighted by `cli-highlight`, tables by `cli-table3`). What this file adds is the
 * part those libraries leave to their caller: the width of the moment (tables are fitted to it,
 * long lines are wrapped by the screen, which measures wide text by its columns), links written
 * as text (no OSC 8 sequence the screen cannot measure), and the split of a stream into finished
 * blocks and the one still growing ({@link createMarkdownStream}).
 */
export interface MarkdownRenderer {
  /** The top-level blocks of `source` (marked's tokens: `raw` holds each one's source). */
  blocks(source: string): Token[];
  /** Renders blocks, or source, as lines for a terminal `columns` wide (lines may be wider: the caller wraps them). */
  render(blocks: Token[] | string, columns: number): string[];
  /** Renders the inline markdown of one line of a paragraph (bold, italics, code, links); what is not closed in it stays as written. */
  inline(line: string): string;
}

/** cli-table3's room per cell: a space either side of the text. */
const CELL_PADDING = 2;
/** A column is never narrowed below this (text plus padding). */
const MIN_CELL = 5;

/**
 * Column widths that fit a table in `columns`: each column as wide as its widest cell, then the
 * widest ones narrowed in turn until the table (its borders included) fits; `undefined` when it
 * fits as it is.
 *
 * @example
 * ```ts
 * tableWidths([["name", "notes"], ["a", "a long note"]], 16); // [6, 7]
 * ```
 */
export function tableWidths(rows: readonly (readonly string[])[], columns: number): number[] | undefined {
  const count = Math.max(0, ...rows.map((row) => row.length));
  if (count === 0) return undefined;
  const widths = Array.from(
    { length: count },
    (_, j) => Math.max(0, ...rows.map((row) => displayWidth(row[j] ?? ""))) + CELL_PADDING,
  );
  const room = columns - (count + 1);
  let total = widths.reduce((a, b) => a + b, 0);
  if (total <= room) return undefined;
  while (total > room) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= MIN_CELL) break;
    widths[widest]!--;
    total--;
  }
  return widths;
}

const loading = new Map<Theme, Promise<MarkdownRenderer>>();

/** cli-highlight's token classes: each is drawn in a role of the theme, none in its own colours. */
const CODE_TOKENS = (
  "addition attr attribute built_in builtin-name bullet class code comment default deletion doctag emphasis " +
  "formula function keyword link literal meta meta-keyword meta-string name number params quote regexp " +
  "section selector-attr selector-class selector-id selector-pseudo selector-tag string strong subst symbol " +
  "tag template-tag template-variable title type variable"
).split(" ");

/**
 * marked-terminal's styles and cli-highlight's theme in the roles of `style`: their defaults put
 * inline code and functions in yellow, headings in green and quotes in grey, which fall under
 * 3.5:1 on a light background. Keywords are bold, additions and deletions in the diff roles, the
 * rest in the default colour.
 */
function markdownColours(style: Style) {
  const code = Object.fromEntries(
    CODE_TOKENS.map((token): [string, (text: string) => string] => [
      token,
      token === "keyword" || token === "built_in" || token === "strong"
        ? style.bold
        : token === "addition"
          ? style.added
          : token === "deletion"
            ? style.removed
            : style.muted,
    ]),
  );
  return {
    options: {
      code: style.accent,
      codespan: style.accent,
      blockquote: style.muted,
      html: style.muted,
      heading: style.bold,
      firstHeading: style.bold,
      del: style.muted,
      link: style.link,
      href: style.link,
    },
    highlight: { theme: code },
  };
}

/**
 * Loads the renderer (once: `marked-terminal` brings a syntax highlighter that takes a moment to
 * load, so the command starts loading it with the session, never for `--help`, `--print` or `--json`).
 *
 * @example
 * ```ts
 * const markdown = await loadMarkdownRenderer();
 * markdown.render("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |", 80);
 * ```
 */
export function loadMarkdownRenderer(style: Style = createStyle(true, "any")): Promise<MarkdownRenderer> {
  let renderer = loading.get(style.theme);
  if (!renderer) loading.set(style.theme, (renderer = makeRenderer(style)));
  return renderer;
}

async function makeRenderer(style: Style): Promise<MarkdownRenderer> {
  const [{ Marked }, { markedTerminal }] = await Promise.all([import("marked"), import("marked-terminal")]);
  /** The width the block being rendered is fitted to. */
  let width = 80;
  // marked-terminal reads this object whenever it draws a table: the widths are set per table.
  const tableOptions: { colWidths?: number[]; wordWrap?: boolean } = {};
  const marked = new Marked();
  const colours = markdownColours(style);
  marked.use(
    markedTerminal(
      { tab: 2, showSectionPrefix: false, emoji: false, tableOptions, ...colours.options },
      colours.highlight,
    ),
  );
  marked.use({
    renderer: {
      table(token: Tokens.Table) {
        const text = (cell: Tokens.TableCell) => cell.text;
        const widths = tableWidths(
          [token.header.map(text), ...token.rows.map((row) => row.map(text))],
          width,
        );
        if (widths) {
          tableOptions.colWidths = widths;
          tableOptions.wordWrap = true;
        } else {
          delete tableOptions.colWidths;
          delete tableOptions.wordWrap;
        }
        return false; // marked-terminal draws it
      },
      hr() {
        return `${style.decor("─".repeat(Math.max(3, Math.min(width, 60))))}\n\n`;
      },
      link(token: Tokens.Link) {
        const text = this.parser.parseInline(token.tokens);
        const plain = text.replace(/\x1b\[[0-9;]*m/g, ""); // eslint-disable-line no-control-regex
        return plain === token.href ? style.link(text) : `${text} ${style.link(`(${token.href})`)}`;
      },
    },
  });
  return {
    inline: (line) => unescapeEntities(marked.parseInline(line, { async: false }).replace(/\n/g, " ")),
    blocks: (source) => marked.lexer(source),
    render(blocks, columns) {
      width = columns;
      const out = typeof blocks === "string" ? marked.parse(blocks, { async: false }) : marked.parser(blocks);
      return out.replace(/\n+$/, "").split("\n");
    },
  };
}

function unescapeEntities(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

/** One message's answer, rendered as it streams. */
export interface MarkdownStream {
  /** Adds streamed text. */
  push(text: string): void;
  /** The block still growing (a table, a list, a code block), rendered for `columns`, its last `rows` lines; `[]` in a paragraph. */
  draft(columns: number, rows: number): string[];
  /** Whether a block is held that is not committed yet. */
  readonly pending: boolean;
  /** Ends the message: what is held is rendered and committed. */
  finish(): void;
}

/** Where a {@link MarkdownStream} puts what it has rendered. */
export interface MarkdownOutput {
  /** Text of a paragraph, as it streams: written as it comes, each row styled by `style` when shown. */
  paragraph(text: string, style: (line: string) => string): void;
  /** A finished block, rendered: committed whole. */
  block(lines: string[]): void;
  /** The terminal's width now. */
  columns(): number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const TABLE_RULE = /^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/**
 * Whether a line starting with `start` opens a block that is rendered whole (heading, list, table,
 * code block, quote, rule) or a paragraph; `undefined` while too little of it has come to tell.
 * `complete`: the whole line is there.
 *
 * @example
 * ```ts
 * blockKind("| a |", false); // "block"
 * blockKind("The", false); // "paragraph"
 * blockKind("1", false); // undefined: "1. item" or "1999 was…"
 * ```
 */
export function blockKind(start: string, complete: boolean): "block" | "paragraph" | undefined {
  const line = start.replace(/^ {1,3}/, "");
  if (/^(#{1,6}(\s|$)|`{3}|~{3}|[-*+]\s|\d{1,9}[.)](\s|$)|>|\|)/.test(line)) return "block";
  if (/^(-{3,}|\*{3,}|_{3,})\s*$/.test(line)) return complete ? "block" : undefined;
  if (complete) return "paragraph";
  if (line === "" || /^(#{1,6}|`{1,2}|~{1,2}|[-*+_]{1,2}|\d{1,9})$/.test(line)) return undefined;
  return "paragraph";
}

/**
 * Renders streamed markdown on a screen without redrawing what has scrolled: a paragraph streams
 * as it comes (its rows committed as they fill, as plain text does, each row's inline markdown
 * rendered); a block that must be seen whole to be drawn (a table's columns are sized by all its
 * rows, a code block is highlighted, a list is indented) is held as a draft, re-rendered at each
 * frame for the width of that moment, and committed once the text after it starts something else.
 * A delta without a line end in a block costs an append. Without a renderer (`renderer()`
 * returns `undefined`: still loading, or failed) everything streams as plain text.
 *
 * @example
 * ```ts
 * const stream = createMarkdownStream(() => markdown, output);
 * stream.push("| a | b |\n|---|---|\n| 1 | 2 |\n\nDone.");
 * stream.finish();
 * ```
 */
export function createMarkdownStream(
  renderer: () => MarkdownRenderer | undefined,
  output: MarkdownOutput,
): MarkdownStream {
  /** What the text being streamed is: undecided until a line's start tells. */
  let mode: "start" | "paragraph" | "block" = "start";
  /** Undecided text (the start of a line), or the block's source. */
  let held = "";
  /** Something was written in this message (blank lines before it are not kept). */
  let wrote = false;
  /** The held block is a fenced code block still open: its fence. */
  let openFence: string | undefined;
  let cache: { source: string; columns: number; rows: number; lines: string[] } | undefined;
  const inline = (line: string) => renderer()?.inline(line) ?? line;

  const commitBlocks = (blocks: Token[]) => {
    const markdown = renderer()!;
    const lines = markdown.render(blocks, output.columns());
    if (lines.length === 0) return;
    output.block(lines);
    wrote = true;
  };

  /** Feeds text in the current mode; returns what is left to feed after a mode change. */
  const feed = (text: string): string => {
    if (mode === "paragraph") {
      const newline = text.indexOf("\n");
      if (newline < 0) {
        output.paragraph(text, inline);
        return "";
      }
      output.paragraph(text.slice(0, newline + 1), inline);
      wrote = true;
      mode = "start";
      return text.slice(newline + 1);
    }
    if (mode === "start") {
      held += text;
      // Blank lines between blocks: one is kept.
      const blank = /^(\s*\n)+/.exec(held);
      if (blank) {
        if (wrote) output.paragraph("\n", inline);
        held = held.slice(blank[0].length);
      }
      if (!held) return "";
      const newline = held.indexOf("\n");
      const kind = blockKind(newline < 0 ? held : held.slice(0, newline), newline >= 0);
      if (!kind) return "";
      const rest = held;
      held = "";
      mode = kind;
      if (kind === "block") {
        const fence = FENCE.exec(rest);
        openFence = fence ? fence[1] : undefined;
      }
      return rest;
    }
    held += text;
    settleBlock(text);
    return "";
  };

  /** In a block: commits it once the text after it starts another, and feeds that on. */
  const settleBlock = (added: string) => {
    const markdown = renderer()!;
    if (openFence !== undefined) {
      if (!added.includes("\n")) return;
      const fence = openFence;
      if (
        !held
          .split("\n")
          .slice(1, -1)
          .some((line) => closesFence(line, fence))
      )
        return;
      openFence = undefined;
    } else if (!added.includes("\n") && !/\n[ \t]*\n[ \t]*\S/.test(held)) return;
    const blocks = markdown.blocks(held);
    let last = blocks.length - 1;
    while (last >= 0 && blocks[last]!.type === "space") last--;
    if (last <= 0) return;
    const done = blocks.slice(0, last);
    const raw = done.map((block) => block.raw).join("");
    // The blocks' sources make up the start of the text (marked keeps them as given).
    if (!held.startsWith(raw)) return;
    commitBlocks(done);
    // A blank line after the block (marked counts it in the block's source) is kept.
    if (/\n[ \t]*\n$/.test(raw)) output.paragraph("\n", inline);
    const rest = held.slice(raw.length);
    held = "";
    mode = "start";
    openFence = undefined;
    cache = undefined;
    push(rest);
  };

  const push = (text: string) => {
    let rest = text;
    while (rest) rest = feed(rest);
  };

  return {
    push(text) {
      if (!renderer()) {
        output.paragraph(text, (line) => line);
        return;
      }
      push(text);
    },
    draft(width, rows) {
      if (mode !== "block" || !held) return [];
      if (cache && cache.source === held && cache.columns === width && cache.rows === rows)
        return cache.lines;
      const lines = renderer()!.render(tailOf(held, rows), width);
      cache = { source: held, columns: width, rows, lines: lines.slice(-rows) };
      return cache.lines;
    },
    get pending() {
      return mode === "block" || held !== "";
    },
    finish() {
      const text = held.replace(/\s+$/, "");
      const wasBlock = mode === "block";
      held = "";
      wrote = false;
      mode = "start";
      openFence = undefined;
      cache = undefined;
      if (!text || !renderer()) return;
      if (wasBlock) commitBlocks(renderer()!.blocks(text));
      else output.paragraph(text, inline);
    },
  };
}

/** Whether `line` closes a code block opened by `fence` (the same character, at least as many). */
function closesFence(line: string, fence: string): boolean {
  const match = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return match !== null && match[1]![0] === fence[0] && match[1]!.length >= fence.length;
}

/**
 * A long block cut to what the draft can show: its last lines, after the lines that say what it
 * is (a code block's opening fence, a table's header and rule), so it renders the same way.
 */
function tailOf(source: string, rows: number): string {
  const lines = source.split("\n");
  if (lines.length <= rows + 2) return source;
  const keep = FENCE.test(lines[0]!) ? 1 : lines[1] !== undefined && TABLE_RULE.test(lines[1]) ? 2 : 0;
  return [...lines.slice(0, keep), ...lines.slice(-rows)].join("\n");
}
