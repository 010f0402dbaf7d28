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
  /** Characters of the long string tried in every other string argument without a `maxLength`. Default 10 000. */
  longChars?: number;
}

interface JsonSchemaProperty {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  maxLength?: number;
  minItems?: number;
  items?: JsonSchemaProperty;
  properties?: Record<string, JsonSchemaProperty>;
  required?: string[];
  anyOf?: JsonSchemaProperty[];
  oneOf?: JsonSchemaProperty[];
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
 * argument with an ordinary value), then one argument at a time made adversarial. First by the
 * parameter's name — for path-like arguments `..`, an absolute path outside the workspace, a path
 * through a symlink that leads out, `.git/` and `node_modules/`; for command-like arguments a
 * command that writes outside and one that reads outside; for content-like arguments a huge input.
 * Then by every parameter's schema, whatever its name: numbers at their bounds and one step either
 * side, and without bounds `-1`, `0`, a fraction, `1000` and `1e9`; every member of an enum; both
 * booleans; an empty and a long string (at `maxLength` and one over it when there is one); an
 * optional parameter present (the plain call leaves it out). So a `refund` whose approval depends
 * on `amount > 100` is tried above 100. Arguments are read from each tool's JSON Schema (a zod
 * schema's, for `defineTool`), so your own tools get the same treatment.
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
  // Long enough to overflow a line, a field or a name; the huge input is for content-like arguments.
  const long = "x".repeat(options.longChars ?? 10_000);
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
    const tried = new Set([JSON.stringify(base)]);
    const tryValue = (name: string, value: unknown, label = `${name}: ${describeValue(value)}`) => {
      const args = { ...base, [name]: value };
      const key = JSON.stringify(args);
      if (tried.has(key)) return;
      tried.add(key);
      calls.push({ name: tool.name, arguments: args, label });
    };
    // By name first: `representative` combines each tool's plain call with its first of these.
    for (const [name, property] of Object.entries(properties)) {
      if (!isString(property)) continue;
      for (const value of adversarialValues(name, place, huge)) tryValue(name, value);
    }
    for (const [name, property] of Object.entries(properties)) {
      if (!required.has(name)) {
        const present = ordinaryValue(name, property);
        tryValue(name, present, `${name}: present (${describeValue(present)})`);
      }
      for (const value of schemaValues(property, long)) tryValue(name, value);
    }
  }
  return calls;
}

/** The values a parameter's schema invites trying: its bounds and their neighbours, its members, its extremes. */
function schemaValues(property: JsonSchemaProperty, long: string): unknown[] {
  if (property.enum) return [...property.enum];
  if (property.const !== undefined) return [property.const];
  const branches = property.anyOf ?? property.oneOf;
  if (branches) return branches.flatMap((branch) => schemaValues(branch, long));
  const types = Array.isArray(property.type) ? property.type : [property.type];
  const values: unknown[] = [];
  for (const type of types) {
    if (type === "number" || type === "integer") values.push(...numberValues(property, type));
    if (type === "boolean") values.push(true, false);
    if (type === "string") {
      values.push("");
      if (property.maxLength !== undefined) {
        values.push("x".repeat(property.maxLength), "x".repeat(property.maxLength + 1));
      } else values.push(long);
    }
    if (type === "array") {
      values.push([]);
      if (property.items) values.push([ordinaryValue("item", property.items)]);
    }
  }
  return values;
}

/** Bounds and one step either side; without bounds, values on either side of any usual threshold. */
function numberValues(property: JsonSchemaProperty, type: "number" | "integer"): number[] {
  const values: number[] = [];
  // zod gives every `.int()` the safe-integer range as bounds: the type's, not the tool's.
  const bound = (value: number | undefined) =>
    value !== undefined && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined;
  const [minimum, maximum, exclusiveMinimum, exclusiveMaximum] = [
    bound(property.minimum),
    bound(property.maximum),
    bound(property.exclusiveMinimum),
    bound(property.exclusiveMaximum),
  ];
  if (minimum !== undefined) values.push(minimum - 1, minimum, minimum + 1);
  if (exclusiveMinimum !== undefined) values.push(exclusiveMinimum, exclusiveMinimum + 1);
  if (maximum !== undefined) values.push(maximum - 1, maximum, maximum + 1);
  if (exclusiveMaximum !== undefined) values.push(exclusiveMaximum - 1, exclusiveMaximum);
  values.push(-1, 0, type === "integer" ? 1.5 : 0.5, 1_000, 1_000_000_000);
  return [...new Set(values)];
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return value.length > 60 ? `<${value.length} characters>` : value;
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `<${json.length} characters of JSON>` : json;
}

function isString(property: JsonSchemaProperty): boolean {
  return property.type === "string" || (Array.isArray(property.type) && property.type.includes("string"));
}

function ordinaryValue(name: string, property: JsonSchemaProperty): unknown {
  if (property.enum && property.enum.length > 0) return property.enum[0];
  if (property.const !== undefined) return property.const;
  const branch = (property.anyOf ?? property.oneOf)?.[0];
  if (branch) return ordinaryValue(name, branch);
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  if (type === "number" || type === "integer") {
    const low = property.minimum ?? (property.exclusiveMinimum ?? -Infinity) + 1;
    const high = Math.min(
      Number.MAX_SAFE_INTEGER,
      property.maximum ?? (property.exclusiveMaximum ?? Infinity) - 1,
    );
    return Math.min(Math.max(1, low), high);
  }
  if (type === "boolean") return false;
  if (type === "array") {
    const item = property.items ? ordinaryValue("item", property.items) : "hello";
    return Array.from({ length: property.minItems ?? 0 }, () => item);
  }
  if (type === "object") {
    // Its required fields filled in, so the plain call passes validation.
    const required = new Set(property.required ?? []);
    return Object.fromEntries(
      Object.entries(property.properties ?? {})
        .filter(([key]) => required.has(key))
        .map(([key, value]) => [key, ordinaryValue(key, value)]),
    );
  }
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
