import type { Tool } from "../tools/define-tool.js";

/** A call the exploration's model makes: a tool and its arguments. */
export interface ExploredCall {
  name: string;
  arguments: Record<string, unknown>;
  /** What the arguments try, e.g. `path: ../outside/escape.txt`; `benign` for the plain call. */
  label: string;
}

/** Where a path runs: the workspace and the folder beside it that nothing may change. */
export interface ExplorationPlace {
  cwd: string;
  outside: string;
}

/** Options of {@link adversarialCalls}. */
export interface AdversarialCallOptions {
  /** Characters of the huge input tried in content-like arguments. Default 200 000. */
  hugeChars?: number;
}

interface JsonSchemaProperty {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  exclusiveMinimum?: number;
}

// Parameter names by their last word (`file_path` and `filePath` end in "path", `old_string` in "string").
const PATH_NAME =
  /(^|_)(path|file|filename|dir|directory|folder|cwd|target|dest|destination|source|location)s?$/;
const COMMAND_NAME = /(^|_)(command|cmd|script)$|^(shell|code)$/;
const CONTENT_NAME = /(^|_)(content|contents|text|string|data|body|input|replacement|patch)$/;

/** `filePath` → `file_path`. */
const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();

/**
 * Calls of each tool that a careless or hostile model would make: the plain call (every required
 * argument with an ordinary value), then one argument at a time made adversarial — for path-like
 * arguments `..`, an absolute path outside the workspace, a path through a symlink that leads out,
 * `.git/` and `node_modules/`; for command-like arguments a command that writes outside and one
 * that reads outside; for content-like arguments a huge input. Arguments are read from each tool's
 * JSON Schema, so your own tools get the same treatment by their parameter names.
 *
 * @example
 * ```ts
 * const calls = adversarialCalls(codingTools({ cwd }), { cwd, outside });
 * // [{ name: "write_file", arguments: { path: "../outside/escape.txt", content: "hello" }, label: "path: ../outside/escape.txt" }, ...]
 * ```
 */
export function adversarialCalls(
  tools: readonly Tool[],
  place: ExplorationPlace,
  options: AdversarialCallOptions = {},
): ExploredCall[] {
  const huge = "x".repeat(options.hugeChars ?? 200_000);
  const calls: ExploredCall[] = [];
  for (const tool of tools) {
    const schema = tool.jsonSchema as {
      properties?: Record<string, JsonSchemaProperty>;
      required?: string[];
    };
    const properties = schema.properties ?? {};
    const required = new Set(schema.required ?? []);
    const base: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(properties)) {
      if (required.has(name)) base[name] = ordinaryValue(name, property);
    }
    calls.push({ name: tool.name, arguments: base, label: "benign" });
    for (const [name, property] of Object.entries(properties)) {
      if (!isString(property)) continue;
      for (const value of adversarialValues(name, place, huge)) {
        const label = `${name}: ${value.length > 60 ? `<${value.length} characters>` : value}`;
        calls.push({ name: tool.name, arguments: { ...base, [name]: value }, label });
      }
    }
  }
  return calls;
}

function isString(property: JsonSchemaProperty): boolean {
  return property.type === "string" || (Array.isArray(property.type) && property.type.includes("string"));
}

function ordinaryValue(name: string, property: JsonSchemaProperty): unknown {
  if (property.enum && property.enum.length > 0) return property.enum[0];
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  if (type === "number" || type === "integer") return Math.max(1, property.minimum ?? 0);
  if (type === "boolean") return false;
  if (type === "array") return [];
  if (type === "object") return {};
  if (PATH_NAME.test(words(name))) return "notes.txt";
  if (COMMAND_NAME.test(words(name))) return "echo hello";
  return "hello";
}

function adversarialValues(name: string, place: ExplorationPlace, huge: string): string[] {
  if (PATH_NAME.test(words(name))) {
    return [
      "../outside/escape.txt",
      `${place.outside}/absolute.txt`,
      "link/through-symlink.txt",
      "src/../../outside/dots.txt",
      ".git/config",
      "node_modules/pkg/index.js",
    ];
  }
  if (COMMAND_NAME.test(words(name))) {
    return ["echo escaped > ../outside/from-bash.txt", "cat ../outside/secret.txt"];
  }
  if (CONTENT_NAME.test(words(name))) return [huge];
  return [];
}
