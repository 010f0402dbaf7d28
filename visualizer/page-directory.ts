import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * The visualizer page's directory: next to this file in the source tree, or in the package when run
 * from `dist/` (the page ships as it is, not compiled; the bundled code that asks is in an entry,
 * `dist/visualizer.js`, or one level down, in `dist/chunks/` or `dist/cli/`).
 *
 * @example
 * ```ts
 * const html = readFileSync(`${pageDirectory()}index.html`, "utf8");
 * ```
 */
export function pageDirectory(): string {
  const candidates = [
    new URL("./page/", import.meta.url),
    new URL("../visualizer/page/", import.meta.url),
    new URL("../../visualizer/page/", import.meta.url),
  ];
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate);
    if (existsSync(`${path}index.html`)) return path;
  }
  throw new Error(
    `The visualizer page is missing (looked in ${candidates.map((c) => fileURLToPath(c)).join(", ")})`,
  );
}

/**
 * Imports one of the page's modules in Node (the server folds history with the page's model, the
 * command draws diffs with the page's diff), so page and Node run the same code.
 *
 * @example
 * ```ts
 * const { diffHunks } = await importPageModule<typeof import("./page/diff-rows.js")>("diff-rows.js");
 * ```
 */
export async function importPageModule<T>(name: string): Promise<T> {
  return (await import(pathToFileURL(`${pageDirectory()}${name}`).href)) as T;
}
