import { createKeyboard } from "./keyboard.js";

/**
 * Keeps the command alive until the user quits (Enter, `q`, Ctrl-C or Ctrl-D on the terminal), so
 * what it serves (the live visualizer page) outlives the run. Resolves at once when `stdin` is not a
 * terminal: a script or CI job must never wait for a key nobody will press.
 *
 * @example
 * ```ts
 * note(`The live page stays at ${url}: press Enter or q to quit.`);
 * await waitForQuit(process.stdin);
 * ```
 */
export function waitForQuit(
  stdin: Parameters<typeof createKeyboard>[0] & { isTTY?: boolean },
): Promise<void> {
  if (!stdin.isTTY) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const quit = () => {
      keyboard.stop();
      resolve();
    };
    const keyboard = createKeyboard(stdin, {
      onLine: quit,
      onInterrupt: quit,
      onEof: quit,
      onChange() {},
      onKey: (key) => {
        if (key === "q" || key === "Q") quit();
        // Nothing typed here is input: no line builds up.
        return true;
      },
    });
  });
}
