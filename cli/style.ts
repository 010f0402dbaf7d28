/**
 * The command's text styles, named by what they mean rather than by colour. Each returns its text
 * unchanged when colours are off. What a role looks like depends on the terminal's background
 * ({@link Theme}): meaning is always in the words and the glyph (✓ ✗ ?), a colour only repeats it.
 */
export interface Style {
  readonly enabled: boolean;
  /** The background the roles are drawn for. */
  readonly theme: Theme;
  /** Emphasis in the default colour (a tool's name, a command to approve). */
  bold(text: string): string;
  /** Something failed or was refused ("✗ denied", "failed 1.2s", a model error). */
  error(text: string): string;
  /** Something to notice: a retry, a loop, a limit, a file not attached, an edit that will fail. */
  warning(text: string): string;
  /** Something went as asked ("✓ allowed", the ✓ of a finished call). */
  success(text: string): string;
  /** What stands out from the answer text: your own line, the prompt, a running call, a compaction. */
  accent(text: string): string;
  /** What waits for you: the approval heading, on a badge that holds on any background. */
  attention(text: string): string;
  /** Secondary text (times, details, notes, the status line): the default colour, never faint. */
  muted(text: string): string;
  /** The model's thinking, set apart from its answer: italic, in the default colour. */
  thinking(text: string): string;
  /** Only glyphs without words (the `│` gutter, a rule): faint, as they carry no meaning. */
  decor(text: string): string;
  /** A diff's added, removed and `@@` header lines (the sign says which; the colour repeats it). */
  added(text: string): string;
  removed(text: string): string;
  hunk(text: string): string;
  /** A link's address in an answer. */
  link(text: string): string;
}

/**
 * The background the colours are chosen for: `light`, `dark`, or `any` when it is not known (then
 * only the default colour, bold, underline and a black-on-yellow badge are used: they hold on both).
 */
export type Theme = "light" | "dark" | "any";

/** A role's SGR codes: what opens it and what closes it (`[]`: the role is drawn as plain text). */
type Sgr = readonly [open: string, close: string] | readonly [];

type Role = Exclude<keyof Style, "enabled" | "theme">;

const BOLD = ["1", "22"] as const;
const PLAIN = [] as const;
const ITALIC = ["3", "23"] as const;
// Black on yellow, both set: the badge does not depend on the background, and black on the
// palettes' yellow is 6.7:1 or more on every palette the test measures.
const BADGE = ["30;43", "39;49"] as const;

/**
 * Which SGR codes each role uses on each background. No role uses yellow or faint for words: on a
 * light background yellow, green, cyan and faint text fall to 1.7–3.5:1. Every coloured role
 * holds 4.5:1 on the theme's reference palettes (xterm's and VS Code's), measured by the
 * command's contrast test; `any` holds on all four.
 */
export const THEME_CODES: Readonly<Record<Theme, Readonly<Record<Role, Sgr>>>> = {
  any: {
    bold: BOLD,
    error: BOLD,
    warning: BOLD,
    success: PLAIN,
    accent: BOLD,
    attention: BADGE,
    muted: PLAIN,
    thinking: ITALIC,
    decor: ["2", "22"],
    added: PLAIN,
    removed: PLAIN,
    hunk: BOLD,
    link: ["4", "24"],
  },
  light: {
    bold: BOLD,
    error: ["31", "39"],
    warning: ["35", "39"],
    success: PLAIN,
    accent: ["34", "39"],
    attention: BADGE,
    muted: PLAIN,
    thinking: ITALIC,
    decor: ["2", "22"],
    // Blue for added lines, as colour-blind diff themes do: green is 2.2:1 on xterm's white.
    added: ["34", "39"],
    removed: ["31", "39"],
    hunk: ["35", "39"],
    link: ["34", "39"],
  },
  dark: {
    bold: BOLD,
    error: ["91", "39"],
    warning: ["95", "39"],
    success: ["32", "39"],
    accent: ["36", "39"],
    attention: BADGE,
    muted: PLAIN,
    thinking: ITALIC,
    decor: ["2", "22"],
    added: ["32", "39"],
    removed: ["91", "39"],
    hunk: ["36", "39"],
    link: ["36", "39"],
  },
};

/**
 * Whether to colour a stream: only a terminal, and never when `NO_COLOR` is set (any value, see
 * no-color.org). `FORCE_COLOR` (not `0`) turns colours on for a non-terminal.
 *
 * @example
 * ```ts
 * const style = createStyle(colorEnabled(process.stdout));
 * ```
 */
export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Record<string, string | undefined> = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true && env.TERM !== "dumb";
}

/**
 * The terminal's background, as far as it is known: `AGENT_MACHINE_THEME` (`light`, `dark`, or
 * `auto`) decides; otherwise `COLORFGBG` (set by rxvt, Konsole, iTerm2 and others as `fg;bg`),
 * whose background index 0–6 or 8 is dark and 7 or 9–15 light; otherwise `any`. A value it does not
 * know is returned as `problem` (the command says so) and detection goes on as for `auto`.
 *
 * @example
 * ```ts
 * themeFrom({ COLORFGBG: "0;15" }); // { theme: "light" }
 * themeFrom({ AGENT_MACHINE_THEME: "dark" }); // { theme: "dark" }
 * themeFrom({}); // { theme: "any" }
 * ```
 */
export function themeFrom(env: Record<string, string | undefined> = process.env): {
  theme: Theme;
  problem?: string;
} {
  const chosen = env.AGENT_MACHINE_THEME?.trim().toLowerCase();
  if (chosen === "light" || chosen === "dark") return { theme: chosen };
  const detected = backgroundFromColorFgBg(env.COLORFGBG);
  if (!chosen || chosen === "auto") return { theme: detected };
  return {
    theme: detected,
    problem: `AGENT_MACHINE_THEME=${env.AGENT_MACHINE_THEME} is not light, dark or auto: colours for ${detected === "any" ? "any background" : `a ${detected} background`}`,
  };
}

/** The background `COLORFGBG` names (its last field), or `any` when it names none. */
function backgroundFromColorFgBg(value: string | undefined): Theme {
  const last = value?.split(";").at(-1)?.trim() ?? "";
  if (!/^\d{1,2}$/.test(last)) return "any";
  const index = Number(last);
  if (index > 15) return "any";
  return index <= 6 || index === 8 ? "dark" : "light";
}

/**
 * Text styles for a background, or plain text when `enabled` is false.
 *
 * @example
 * ```ts
 * const style = createStyle(colorEnabled(process.stdout), themeFrom().theme);
 * console.log(style.success("✓ done"));
 * ```
 */
export function createStyle(enabled: boolean, theme: Theme = "any"): Style {
  const codes = THEME_CODES[theme];
  const role =
    (name: Role) =>
    (text: string): string => {
      const sgr = codes[name];
      return enabled && sgr.length ? `\x1b[${sgr[0]}m${text}\x1b[${sgr[1]}m` : text;
    };
  return {
    enabled,
    theme,
    bold: role("bold"),
    error: role("error"),
    warning: role("warning"),
    success: role("success"),
    accent: role("accent"),
    attention: role("attention"),
    muted: role("muted"),
    thinking: role("thinking"),
    decor: role("decor"),
    added: role("added"),
    removed: role("removed"),
    hunk: role("hunk"),
    link: role("link"),
  };
}

/** Removes ANSI escape sequences (for measuring what a line occupies on screen). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching escape sequences is the point
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
}
