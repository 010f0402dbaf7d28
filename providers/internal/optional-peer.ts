/**
 * Loads an optional peer dependency (an SDK only the users of one provider install) on first use,
 * once. Importing agent-machine never loads it, so a user of another provider needs none of them.
 *
 * The specifier is a variable, not a literal, and marked for webpack and Vite: a bundler must not
 * try to resolve it. A literal `import("@google/genai")` makes esbuild, Vite, webpack and Rollup
 * fail to bundle the browser entry in an app that has not installed the SDK ("Could not resolve"),
 * though the app never calls `gemini()`. Node resolves the name at run time, as any import.
 *
 * @example
 * ```ts
 * const genai = await loadOptionalPeer<typeof import("@google/genai")>("@google/genai");
 * ```
 */
export async function loadOptionalPeer<T>(name: string): Promise<T> {
  try {
    return (await importByName(name)) as T;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new MissingPeerError(`This provider needs the package ${name}: npm install ${name}`);
    throw error;
  }
}

/** `import(name)` that no bundler follows (the magic comments are webpack's and Vite's). */
function importByName(name: string): Promise<unknown> {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ name);
}

/** Thrown by {@link loadOptionalPeer} when the package is not installed. */
export class MissingPeerError extends Error {
  override name = "MissingPeerError";
}
