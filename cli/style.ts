/** Colour functions; each returns its text unchanged when colours are off. */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
}

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
 * ANSI colours, or plain text when `enabled` is false.
 *
 * @example
 * ```ts
 * const style = createStyle(true);
 * console.log(style.green("✓ done"));
 * ```
 */
export function createStyle(enabled: boolean): Style {
  const code =
    (open: number, close: number) =>
    (text: string): string =>
      enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    enabled,
    bold: code(1, 22),
    dim: code(2, 22),
    red: code(31, 39),
    green: code(32, 39),
    yellow: code(33, 39),
    blue: code(34, 39),
    magenta: code(35, 39),
    cyan: code(36, 39),
  };
}

/** Removes ANSI escape sequences (for measuring what a line occupies on screen). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching escape sequences is the point
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
}
