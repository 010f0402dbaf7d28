import { existsSync, statSync } from "node:fs";
import * as path from "node:path";
import { type ContextConfig, contextConfigForModel } from "../context/config.js";
import { redactText } from "../core/redact.js";
import { summarizerFromProvider } from "../context/summarizer.js";
import type { Provider } from "../providers/provider.js";
import { scripted } from "../providers/scripted.js";
import type { CliArgs } from "./args.js";
import { DEMO_CONTEXT, demoScript } from "./demo.js";
import { loadScriptFile, SCRIPT_ENV } from "./script-file.js";

/** Which model the CLI talks to, and why. */
export type ModelChoice =
  | { kind: "real"; provider: Provider; reason: string; context: ContextConfig }
  | { kind: "script"; provider: Provider; reason: string; context?: ContextConfig }
  | { kind: "demo"; provider: Provider; reason: string; context: ContextConfig }
  | { kind: "none"; reason: string };

/**
 * What to set for a real model: the end of every "no model" error.
 */
export const MODEL_SETUP_HELP =
  "Set ANTHROPIC_API_KEY (Anthropic), OPENAI_API_KEY (OpenAI) or GEMINI_API_KEY (Gemini), or OPENAI_BASE_URL " +
  "with --model <id> (an OpenAI-compatible server such as Ollama or vLLM); Bedrock takes AWS credentials " +
  "and --model bedrock:<id>; `agent-machine --demo` runs the scripted demo.";

/**
 * Whether the command may run the scripted demo when no model is configured: only the bare command
 * (no prompt, no `--print`, no `--json`) may offer it, or an explicit `--demo`. A prompt must never
 * get the demo's canned answer with exit 0: a script or CI job would take it for success.
 */
export function mayOfferDemo(args: Pick<CliArgs, "prompt" | "print" | "json" | "demo">): boolean {
  return args.demo || (args.prompt === undefined && !args.print && !args.json);
}

/**
 * Chooses the model: `AGENT_MACHINE_SCRIPT` (a script file) first, then `--demo`, then the
 * environment (`providerFromEnv`). With nothing usable configured, the demo when the command may
 * offer it ({@link mayOfferDemo}: the bare command, no explicit `--provider`), else `none` and the
 * reason.
 *
 * @example
 * ```ts
 * const choice = await chooseModel(args, process.env);
 * if (choice.kind === "none") throw new Error(choice.reason);
 * ```
 */
export async function chooseModel(
  args: Pick<CliArgs, "provider" | "model" | "demo" | "prompt" | "print" | "json" | "contextWindow">,
  env: Record<string, string | undefined>,
): Promise<ModelChoice> {
  const scriptFile = env[SCRIPT_ENV];
  if (scriptFile) {
    const script = await loadScriptFile(scriptFile);
    return {
      kind: "script",
      // `--model` (and `/model`) names it, so a test can see the switch.
      provider: scripted(script, { model: args.model ?? path.basename(scriptFile) }),
      reason: `Using the scripted model from ${SCRIPT_ENV}=${scriptFile}.`,
      ...(args.contextWindow && { context: contextConfigForModel(args.contextWindow) }),
    };
  }
  if (args.demo) return demo("Demo requested (--demo).");
  const demoAllowed = mayOfferDemo(args);
  // `--model bedrock:<id>` names the provider as --provider does.
  const namesProvider = /^(anthropic|openai|openai-responses|openai-compatible|gemini|bedrock):/.test(
    args.model ?? "",
  );
  const configured =
    env.ANTHROPIC_API_KEY ||
    env.OPENAI_API_KEY ||
    env.OPENAI_BASE_URL ||
    env.GEMINI_API_KEY ||
    env.GOOGLE_API_KEY ||
    env.GOOGLE_GENAI_USE_VERTEXAI ||
    namesProvider;
  if (args.provider === undefined && !configured) {
    // Nothing configured: skip loading the SDKs (a second of start-up on a slow machine).
    const reason =
      "No provider configured: none of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (GOOGLE_API_KEY) or OPENAI_BASE_URL is set.";
    return demoAllowed ? demo(reason) : { kind: "none", reason };
  }
  const { providerFromEnv } = await import("../providers/from-env.js");
  const found = providerFromEnv({ provider: args.provider, model: args.model, env });
  // The reason names OPENAI_BASE_URL, whose URL may carry a password (`http://user:pass@host`):
  // it is shown on every start and in errors, so it is shown without it.
  const shownReason = redactText(found.reason);
  if (found.provider) {
    const window =
      args.contextWindow ??
      (found.provider.id.startsWith("anthropic") || /claude/.test(found.provider.model)
        ? 200_000
        : found.provider.id.startsWith("gemini")
          ? 1_000_000
          : 128_000);
    return {
      kind: "real",
      provider: found.provider,
      reason: shownReason,
      // Old turns are summarised by the same model (what `/compact <focus>` asks it to keep, too).
      context: { ...contextConfigForModel(window), summarizer: summarizerFromProvider(found.provider) },
    };
  }
  if (
    !demoAllowed ||
    args.provider !== undefined ||
    namesProvider ||
    (args.model !== undefined && env.OPENAI_BASE_URL)
  ) {
    return { kind: "none", reason: shownReason };
  }
  return demo(shownReason);
}

function demo(reason: string): ModelChoice {
  return {
    kind: "demo",
    provider: scripted(demoScript, { id: "scripted", model: "demo" }),
    reason,
    context: DEMO_CONTEXT,
  };
}

/** The system prompt of the coding agent. */
export function codingSystemPrompt(cwd: string, now = new Date()): string {
  return [
    `You are agent-machine, a coding agent working in the directory ${cwd}.`,
    "Use the tools to look at files, change them and run commands there. Read before you edit;",
    "prefer small, targeted edits; run the project's tests when you change code.",
    "Calls that do not depend on each other can go in one message: they run in parallel.",
    "The user may send you messages while you work: follow the latest one.",
    "Answer briefly, and say what you changed.",
    `Today is ${now.toISOString().slice(0, 10)}.`,
  ].join("\n");
}

/** Resolves `--cwd` and checks it is a directory. */
export function resolveWorkspace(cwd: string | undefined, base?: string): string {
  const dir =
    cwd !== undefined && path.isAbsolute(cwd)
      ? path.resolve(cwd)
      : path.resolve(base ?? currentDirectory(), cwd ?? ".");
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`--cwd ${dir} is not a directory`);
  return dir;
}

/** The process's current directory, or a usage message when it was deleted under the shell. */
function currentDirectory(): string {
  try {
    return process.cwd();
  } catch {
    // Node's own message is "ENOENT: no such file or directory, uv_cwd".
    throw new Error(
      "The current directory no longer exists (it was deleted or moved): cd to one that does, or pass --cwd <dir>",
    );
  }
}
