import picomatch from "picomatch";

/**
 * Converts a glob to a RegExp matched against a whole `/`-separated path, with picomatch: `**`
 * crosses folders but never a `..` segment (so `**\/*.txt` does not match `../outside/escape.txt`),
 * `*` and `?` stay inside one folder, `{a,b}` alternates, `[abc]` is a class, and dot files match
 * (an agent's workspace has `.github/`, `.env`). A pattern without `/` (like `*.ts`) matches the
 * file name in any folder, as in `.gitignore`. With `strict`, an unclosed `[` or `{` is an error
 * (for a glob a model gave; a permission rule keeps matching nothing rather than throwing mid-check).
 *
 * @example
 * ```ts
 * globToRegExp("src/**\/*.ts").test("src/a/b.ts"); // true
 * globToRegExp("**\/*.txt").test("../outside/escape.txt"); // false
 * ```
 */
export function globToRegExp(
  pattern: string,
  options: { matchBaseName?: boolean; strict?: boolean } = {},
): RegExp {
  let glob = pattern.replace(/^\.\//, "");
  if ((options.matchBaseName ?? true) && !glob.includes("/")) glob = `**/${glob}`;
  // Our globs never had extglobs: `(`, `)` and `|` are a file name's own (`report (1).txt`), and
  // `[!a]` is a negated class, as in the shell (picomatch reads `[^a]`).
  glob = glob.replace(/[()|]/g, "\\$&").replace(/\[!/g, "[^");
  if (!options.strict) return picomatch.makeRe(glob, { dot: true });
  // A model's glob with an unclosed "[" or "{" would match nothing and read as "no files": say why.
  try {
    return picomatch.makeRe(glob, { dot: true, strictBrackets: true });
  } catch (error) {
    throw new Error(`Invalid glob ${JSON.stringify(pattern)}: ${(error as Error).message}`, { cause: error });
  }
}
