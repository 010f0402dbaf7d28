/**
 * Converts a glob to a RegExp matched against a whole `/`-separated path.
 * `**` crosses folders, `*` and `?` do not, `{a,b}` alternates, `[abc]` is a class.
 * A pattern without `/` (like `*.ts`) matches the file name in any folder, as in `.gitignore`.
 *
 * @example
 * ```ts
 * globToRegExp("src/**\/*.ts").test("src/a/b.ts"); // true
 * ```
 */
export function globToRegExp(pattern: string, options: { matchBaseName?: boolean } = {}): RegExp {
  let glob = pattern.replace(/^\.\//, "");
  if ((options.matchBaseName ?? true) && !glob.includes("/")) glob = `**/${glob}`;
  let source = "";
  let braceDepth = 0;
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === "*") {
      if (glob[i + 1] === "*") {
        const atSegmentStart = i === 0 || glob[i - 1] === "/";
        if (atSegmentStart && glob[i + 2] === "/") {
          source += "(?:.*/)?"; // "**/": zero or more folders
          i += 2;
        } else {
          source += ".*";
          i += 1;
        }
      } else {
        source += "[^/]*";
      }
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end === -1) {
        source += "\\[";
      } else {
        const body = glob.slice(i + 1, end).replace(/\\/g, "\\\\");
        source += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else if (char === "{") {
      braceDepth++;
      source += "(?:";
    } else if (char === "}" && braceDepth > 0) {
      braceDepth--;
      source += ")";
    } else if (char === "," && braceDepth > 0) {
      source += "|";
    } else {
      source += char.replace(/[.+^${}()|\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}
