import { readFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import type { Script } from "../providers/scripted.js";

/** The environment variable that replaces the model with a script (tests, offline demos). */
export const SCRIPT_ENV = "AGENT_MACHINE_SCRIPT";

/**
 * Loads a model script for the scripted provider: a `.json` file holding an array of steps (or
 * `{ "steps": [...] }`), or a `.js` / `.mjs` / `.ts` module whose default export is an array of
 * steps or a function `(request, call) => step`.
 *
 * @example
 * ```ts
 * const provider = scripted(await loadScriptFile("script.mjs"));
 * ```
 */
export async function loadScriptFile(file: string): Promise<Script> {
  const absolute = path.resolve(file);
  let script: unknown;
  if (absolute.endsWith(".json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(absolute, "utf8"));
    } catch (error) {
      throw new Error(`Cannot read the script ${file}: ${(error as Error).message}`, { cause: error });
    }
    script = Array.isArray(parsed) ? parsed : (parsed as { steps?: unknown })?.steps;
  } else {
    let module: { default?: unknown };
    try {
      module = await importScript(absolute);
    } catch (error) {
      throw new Error(`Cannot load the script ${file}: ${(error as Error).message}`, { cause: error });
    }
    script = module.default;
  }
  if (!Array.isArray(script) && typeof script !== "function") {
    throw new Error(
      `The script ${file} must be an array of steps or a function of the request (JSON: an array or { "steps": [...] }; a module: its default export)`,
    );
  }
  return script as Script;
}

/**
 * Imports a script module. TypeScript goes through tsx (a devDependency of this package, so the
 * installed command needs the app's own tsx for it; plain JavaScript needs nothing).
 */
async function importScript(absolute: string): Promise<{ default?: unknown }> {
  const url = pathToFileURL(absolute).href;
  if (!/\.[cm]?ts$/.test(absolute)) return import(url);
  const tsx = await import("tsx/esm/api").catch(() => undefined);
  if (!tsx) throw new Error("a TypeScript script needs tsx (npm install tsx), or write it as .mjs or .json");
  const module = (await tsx.tsImport(url, import.meta.url)) as { default?: { default?: unknown } };
  // A .ts file outside an ES module package is compiled as CommonJS: its exports are the default.
  const inner = module.default;
  return inner && typeof inner === "object" && "default" in inner ? inner : module;
}
