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
 * const provider = scripted(await loadScriptFile("test/fixtures/echo-script.mjs"));
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
      module = await import(pathToFileURL(absolute).href);
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
