// Issue 41 item 9: the command on a light terminal. The key screens (a bash approval, an edit
// approval, another tool's approval, a denial, a model error, the status line) are rendered at 60
// columns by the real interactive loop, and every styled span is measured against the RGB values
// of the 16 ANSI colours of a light and a dark palette (xterm's and VS Code's defaults).
import { EventEmitter } from "node:events";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createEventView } from "../cli/event-view.js";
import { runInteractive } from "../cli/interactive.js";
import { loadMarkdownRenderer } from "../cli/markdown.js";
import { createScreen } from "../cli/screen.js";
import { createSessionMeter } from "../cli/status-line.js";
import { colorEnabled, createStyle, type Style, THEME_CODES, type Theme, themeFrom } from "../cli/style.js";
import { displayWidth } from "../cli/terminal-text.js";
import { type AgentEvent, createAgent, defineTool, scripted } from "../index.js";
import { removeDir, tempDir } from "./fixtures/cli-harness.js";

/** A terminal's colours: its default text and background, and its 16 ANSI colours (0–15). */
interface Palette {
  fg: string;
  bg: string;
  ansi: string[];
}

const XTERM = [
  "000000", "cd0000", "00cd00", "cdcd00", "0000ee", "cd00cd", "00cdcd", "e5e5e5",
  "7f7f7f", "ff0000", "00ff00", "ffff00", "5c5cff", "ff00ff", "00ffff", "ffffff",
]; // prettier-ignore

const PALETTES: Record<"light" | "dark", Record<string, Palette>> = {
  light: {
    "xterm on white": { fg: "000000", bg: "ffffff", ansi: XTERM },
    "VS Code Light+": {
      fg: "333333",
      bg: "ffffff",
      ansi: [
        "000000", "cd3131", "107c10", "949800", "0451a5", "bc05bc", "0598bc", "555555",
        "666666", "cd3131", "14ce14", "b5ba00", "0451a5", "bc05bc", "0598bc", "a5a5a5",
      ], // prettier-ignore
    },
  },
  dark: {
    "xterm on black": { fg: "e5e5e5", bg: "000000", ansi: XTERM },
    "VS Code Dark+": {
      fg: "cccccc",
      bg: "1e1e1e",
      ansi: [
        "000000", "cd3131", "0dbc79", "e5e510", "2472c8", "bc3fbc", "11a8cd", "e5e5e5",
        "666666", "f14c4c", "23d18b", "f5f543", "3b8eea", "d670d6", "29b8db", "e5e5e5",
      ], // prettier-ignore
    },
  },
};

/** The palettes a theme must hold on: `any` on all of them. */
const palettesOf = (theme: Theme): [string, Palette][] =>
  Object.entries(theme === "any" ? { ...PALETTES.light, ...PALETTES.dark } : PALETTES[theme]);

const rgb = (hex: string) => [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
const luminance = (hex: string) => {
  const [r, g, b] = rgb(hex).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
};
/** WCAG's contrast ratio of two colours. */
const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
};
/** Faint text, as terminals draw it: the colour halfway to the background. */
const halfway = (a: string, b: string) =>
  rgb(a)
    .map((c, i) =>
      Math.round((c + rgb(b)[i]!) / 2)
        .toString(16)
        .padStart(2, "0"),
    )
    .join("");

/** A run of text with the SGR state it is drawn in. */
interface Span {
  text: string;
  fg?: number;
  bg?: number;
  bold: boolean;
  dim: boolean;
  inverse: boolean;
  underline: boolean;
}

/** Splits terminal output into styled runs (other escape sequences, the screen's, are dropped). */
function spans(output: string): Span[] {
  const out: Span[] = [];
  const state: Omit<Span, "text"> = { bold: false, dim: false, inverse: false, underline: false };
  // eslint-disable-next-line no-control-regex -- parsing escape sequences is the point
  const pattern = /\x1b\[([0-9;?]*)([A-Za-z])|\x1b[78D]|([^\x1b]+)/g;
  for (const match of output.matchAll(pattern)) {
    if (match[3] !== undefined) {
      for (const text of match[3].split(/[\r\n]+/)) if (text.trim()) out.push({ ...state, text });
      continue;
    }
    if (match[2] !== "m") continue;
    for (const code of (match[1] || "0").split(";").map(Number)) {
      if (code === 0)
        Object.assign(state, {
          fg: undefined,
          bg: undefined,
          bold: false,
          dim: false,
          inverse: false,
          underline: false,
        });
      else if (code === 1) state.bold = true;
      else if (code === 2) state.dim = true;
      else if (code === 22) Object.assign(state, { bold: false, dim: false });
      else if (code === 4) state.underline = true;
      else if (code === 24) state.underline = false;
      else if (code === 7) state.inverse = true;
      else if (code === 27) state.inverse = false;
      else if (code >= 30 && code <= 37) state.fg = code - 30;
      else if (code >= 90 && code <= 97) state.fg = code - 90 + 8;
      else if (code === 39) state.fg = undefined;
      else if (code >= 40 && code <= 47) state.bg = code - 40;
      else if (code >= 100 && code <= 107) state.bg = code - 100 + 8;
      else if (code === 49) state.bg = undefined;
      else if ([3, 23, 9, 29].includes(code))
        continue; // italic, strikethrough: no colour
      else throw new Error(`SGR ${code} is not measured by this test`);
    }
  }
  return out;
}

/** The colours a span is drawn in on a palette, and their contrast. */
function measure(span: Span, palette: Palette) {
  let fg = span.fg === undefined ? palette.fg : palette.ansi[span.fg]!;
  let bg = span.bg === undefined ? palette.bg : palette.ansi[span.bg]!;
  if (span.inverse) [fg, bg] = [bg, fg];
  if (span.dim) fg = halfway(fg, bg);
  return contrast(fg, bg);
}

/** Words and numbers: text that says something (a glyph alone, the `│` gutter or a rule, does not). */
const saysSomething = (text: string) => /[\p{L}\p{N}]/u.test(text);

/** Every span that says something, with its contrast on a palette under 4.5:1, yellow or faint. */
function problems(output: string, palette: Palette): string[] {
  const found: string[] = [];
  for (const span of spans(output)) {
    if (!saysSomething(span.text)) continue;
    const ratio = measure(span, palette);
    if (ratio < 4.5) found.push(`${ratio.toFixed(2)}:1 ${JSON.stringify(span.text)}`);
    if (span.dim) found.push(`faint ${JSON.stringify(span.text)}`);
    // Yellow only as a badge's background, behind black text.
    if (span.fg === 3 || span.fg === 11) found.push(`yellow ${JSON.stringify(span.text)}`);
  }
  return found;
}

/** What the output shows, its rows joined (a wrapped question reads as one line). */
const shownText = (output: string) =>
  spans(output)
    .map((s) => s.text)
    .join(" ")
    .replace(/\s+/g, " ");

/** The span drawing `text`, or the spans whose text contains it. */
const spansWith = (output: string, text: string) => spans(output).filter((s) => s.text.includes(text));
const emphasised = (span: Span) =>
  span.bold || span.fg !== undefined || span.bg !== undefined || span.inverse || span.underline;

const tool = (name: string, parameters: z.ZodObject<z.ZodRawShape>) =>
  defineTool({ name, description: name, parameters, needsApproval: true, execute: async () => "ok" });

let dir: string | undefined;
afterEach(() => {
  removeDir(dir);
  vi.unstubAllEnvs();
});

/**
 * An interactive session at 60 columns: a bash call approved, an edit approved, an edit of a file
 * that does not exist approved, a fetch denied, then a model error; returns all it wrote.
 */
async function session(style: Style): Promise<string> {
  dir = tempDir();
  writeFileSync(path.join(dir, "a.ts"), "const a = 1;\nexport { a };\n");
  let written = "";
  const out = { isTTY: true, columns: 60, rows: 40, write: (text: string) => void (written += text) };
  const screen = createScreen(out);
  const meter = createSessionMeter({ maxContextTokens: 200_000 });
  const view = createEventView(screen, style, { status: { model: "test-model", meter }, cwd: dir });
  const edit = z.object({ path: z.string(), old_string: z.string(), new_string: z.string() });
  const agent = createAgent({
    provider: scripted([
      {
        thinking: "The tests first.",
        toolCalls: [
          {
            id: "b1",
            name: "bash",
            arguments: {
              command: "npm test -- --reporter=verbose && git status --short",
              description: "Run the tests",
            },
          },
        ],
      },
      {
        toolCalls: [
          { id: "e1", name: "edit_file", arguments: { path: "a.ts", old_string: "= 1", new_string: "= 2" } },
        ],
      },
      {
        toolCalls: [
          { id: "e2", name: "edit_file", arguments: { path: "gone.ts", old_string: "x", new_string: "y" } },
        ],
      },
      {
        toolCalls: [
          { id: "f1", name: "fetch", arguments: { url: "https://example.com/docs", note: "read it" } },
        ],
      },
      { error: { kind: "auth", message: "401 invalid key" } },
    ]),
    tools: [
      tool("bash", z.object({ command: z.string(), description: z.string() })),
      tool("edit_file", edit),
      tool("fetch", z.object({ url: z.string(), note: z.string() })),
    ],
  });
  const stdin = Object.assign(new EventEmitter(), {
    isTTY: true,
    setRawMode() {},
    setEncoding() {},
    resume() {},
    pause() {},
  });
  const answers = ["y", "y", "y", "n"];
  agent.events$.subscribe((event: AgentEvent) => {
    view.handle(event);
    if (event.type === "approval_requested")
      setTimeout(() => {
        // The question is on the screen before it is answered.
        screen.flush();
        stdin.emit("data", answers.shift() ?? "n");
      }, 5);
  });
  const ended = new Promise<void>((resolve) =>
    agent.events$.subscribe((event: AgentEvent) => event.type === "agent_end" && resolve()),
  );
  const interactive = runInteractive({
    agent,
    view,
    style,
    stdin,
    cwd: dir,
    columns: () => 60,
    start: () => agent.prompt("Fix a.ts"),
  });
  await ended;
  screen.flush();
  stdin.emit("data", "\x04"); // Ctrl-D quits
  await interactive;
  screen.close();
  view.dispose();
  return written;
}

describe("the command's colours hold on light and dark terminals", () => {
  for (const theme of ["any", "light", "dark"] as const) {
    it(`theme ${theme}: every span that says something is ≥ 4.5:1 and neither yellow nor faint`, async () => {
      const output = await session(createStyle(true, theme));
      // The screens are all there (at 60 columns, every answer shown).
      for (const shown of [
        "The tests first.",
        "Approval needed: bash — Run the tests",
        "Approval needed: edit_file a.ts",
        "@@ -1,2 +1,2 @@",
        "-const a = 1;",
        "+const a = 2;",
        "(gone.ts does not exist: the edit will fail)",
        "Approval needed: fetch https://example.com/docs",
        "[a]lways for bash",
        "✗ denied fetch",
        "✗ model error: 401 invalid key",
        "scripted-model · context",
      ])
        expect(shownText(output), shown).toContain(shown);
      // A row ends at a newline or where the screen moves the cursor (it redraws its live rows).
      // eslint-disable-next-line no-control-regex -- the screen's escape sequences
      const rows = output.replace(/\x1b\[[0-9;]*m/g, "").split(/\r?\n|\x1b\[[0-9;?]*[A-Za-z]|\x1b[78D]/);
      for (const row of rows) expect(displayWidth(row), JSON.stringify(row)).toBeLessThanOrEqual(60);

      for (const [name, palette] of palettesOf(theme)) expect(problems(output, palette), name).toEqual([]);

      // What matters stands out without colour: bold, a badge, or a colour that holds.
      for (const important of [
        "Approval needed",
        "the edit will fail",
        "model error",
        "denied fetch",
        "Allow bash",
      ])
        for (const span of spansWith(output, important)) expect(emphasised(span), important).toBe(true);
      // An approval's heading is a badge: black on yellow, whatever the background.
      const heading = spansWith(output, "Approval needed: bash")[0]!;
      expect([heading.fg, heading.bg]).toEqual([0, 3]);
    });
  }

  it("every role of every theme holds 4.5:1 on the theme's palettes (faint only for glyphs)", () => {
    for (const theme of ["any", "light", "dark"] as const) {
      const style = createStyle(true, theme);
      for (const role of Object.keys(THEME_CODES[theme]) as (keyof typeof THEME_CODES.any)[]) {
        if (role === "decor") continue;
        for (const [name, palette] of palettesOf(theme))
          expect(problems(style[role]("words 42"), palette), `${theme} ${role} on ${name}`).toEqual([]);
      }
    }
  });

  it("an answer's markdown (heading, inline code, a code block, a link, a quote) holds too", async () => {
    const source =
      "# Plan\n\n## Steps\n\nRun `npm test`, then read [the guide](https://example.com/guide).\n\n" +
      "```js\nconst answer = await fetch('/x'); // a comment\nif (answer.ok) return 42;\n```\n\n> quoted ~~old~~ text\n";
    // marked-terminal's chalk colours only what it takes for a colour terminal, as the command's is.
    vi.stubEnv("FORCE_COLOR", "1");
    for (const theme of ["any", "light", "dark"] as const) {
      const markdown = await loadMarkdownRenderer(createStyle(true, theme));
      const output = markdown.render(source, 60).join("\n");
      expect(shownText(output)).toContain("npm test");
      for (const [name, palette] of palettesOf(theme))
        expect(problems(output, palette), `${theme} on ${name}`).toEqual([]);
    }
  });

  it("the measure is right: the plain colours the command used before fail on a light palette", () => {
    const light = PALETTES.light["xterm on white"]!;
    // Yellow, green, cyan and faint text, as issue 41 found them on light terminals.
    expect(problems("\x1b[33mretry\x1b[39m", light)).toEqual(['1.70:1 "retry"', 'yellow "retry"']);
    expect(problems("\x1b[32m✓ allowed\x1b[39m", light)).toEqual(['2.16:1 "✓ allowed"']);
    expect(problems("\x1b[36mrunning\x1b[39m", light)).toEqual(['1.98:1 "running"']);
    expect(problems("\x1b[2mstatus\x1b[22m", light)[1]).toBe('faint "status"');
    expect(problems("\x1b[2m│\x1b[22m", light)).toEqual([]); // a glyph alone says nothing
  });

  it("NO_COLOR: no colour at all, whatever the theme", async () => {
    const output = await session(createStyle(colorEnabled({ isTTY: true }, { NO_COLOR: "1" }), "dark"));
    // The input line's cursor is drawn inverted (not a colour); nothing else is styled.
    for (const span of spans(output)) {
      expect([span.fg, span.bg, span.dim, span.bold]).toEqual([undefined, undefined, false, false]);
      if (span.inverse) expect(span.text).toBe(" ");
    }
    expect(output).toContain("Approval needed: bash");
  });
});

describe("which background the colours are for", () => {
  it("AGENT_MACHINE_THEME decides; else COLORFGBG's background; else colours for any background", () => {
    expect(themeFrom({})).toEqual({ theme: "any" });
    expect(themeFrom({ COLORFGBG: "0;15" })).toEqual({ theme: "light" });
    expect(themeFrom({ COLORFGBG: "0;7" })).toEqual({ theme: "light" });
    expect(themeFrom({ COLORFGBG: "15;0" })).toEqual({ theme: "dark" });
    expect(themeFrom({ COLORFGBG: "15;default;0" })).toEqual({ theme: "dark" });
    expect(themeFrom({ COLORFGBG: "default;default" })).toEqual({ theme: "any" });
    expect(themeFrom({ COLORFGBG: "0;15", AGENT_MACHINE_THEME: "dark" })).toEqual({ theme: "dark" });
    expect(themeFrom({ COLORFGBG: "15;0", AGENT_MACHINE_THEME: "Light" })).toEqual({ theme: "light" });
    expect(themeFrom({ COLORFGBG: "15;0", AGENT_MACHINE_THEME: "auto" })).toEqual({ theme: "dark" });
    expect(themeFrom({ AGENT_MACHINE_THEME: "solarized" })).toEqual({
      theme: "any",
      problem: "AGENT_MACHINE_THEME=solarized is not light, dark or auto: colours for any background",
    });
  });
});
