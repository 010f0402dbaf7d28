// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeUrl = () => process.getBuiltinModule("node:url");

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
    const path = nodeUrl().fileURLToPath(candidate);
    if (nodeFs().existsSync(`${path}index.html`)) return path;
  }
  throw new Error(
    `The visualizer page is missing (looked in ${candidates.map((c) => nodeUrl().fileURLToPath(c)).join(", ")})`,
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
  return (await import(nodeUrl().pathToFileURL(`${pageDirectory()}${name}`).href)) as T;
}
