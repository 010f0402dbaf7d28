import { z } from "zod";
import { codingTools } from "../tools/coding-tools.js";
import { defineTool, type Tool } from "../tools/define-tool.js";
import { type SandboxSupport, sandboxSupport } from "../tools/sandbox.js";
import type { CliArgs } from "./args.js";
import type { ModelChoice } from "./setup.js";

/** How the command runs `bash`, and the line that tells the user. */
export type BashSetup =
  | { kind: "sandboxed"; network: boolean; notice: string }
  /** `warn`: say so even in `--print` / `--json` runs (the user did not ask for it). */
  | { kind: "unsandboxed"; notice: string; warn: boolean }
  | { kind: "refused"; reason: string; notice: string };

/**
 * Decides how the command runs `bash`: in the bubblewrap sandbox by default; without it only with
 * `--no-sandbox`. Where bubblewrap cannot run, bash calls are refused (the user and the model are
 * told why), except in the demo, whose own fixed commands run in its throwaway workspace.
 *
 * @example
 * ```ts
 * const setup = chooseBashSetup(args, choice);
 * const tools = codingToolsFor(cwd, setup);
 * ```
 */
export function chooseBashSetup(
  args: Pick<CliArgs, "sandbox" | "allowNetwork">,
  model: Pick<ModelChoice, "kind">,
  support: SandboxSupport = args.sandbox ? sandboxSupport() : { available: false, reason: "" },
): BashSetup {
  if (!args.sandbox) {
    return {
      kind: "unsandboxed",
      warn: false,
      notice: "bash runs WITHOUT a sandbox (--no-sandbox): commands can do anything you can.",
    };
  }
  if (support.available) {
    return {
      kind: "sandboxed",
      network: args.allowNetwork,
      notice: `bash runs in a sandbox (bubblewrap): writes only in the workspace and a private /tmp, ${
        args.allowNetwork ? "network allowed (--allow-network)" : "no network (--allow-network to allow it)"
      }.`,
    };
  }
  const fix = "Install bubblewrap (apt-get install bubblewrap) or pass --no-sandbox.";
  if (model.kind === "demo") {
    return {
      kind: "unsandboxed",
      warn: true,
      notice: `No bash sandbox: ${support.reason} The demo's own scripted commands run unsandboxed in its throwaway workspace; with a real model, bash commands would be refused. ${fix}`,
    };
  }
  return {
    kind: "refused",
    reason: support.reason,
    notice: `No bash sandbox, so bash commands are refused: ${support.reason} ${fix}`,
  };
}

/**
 * The coding tools for the command, with bash as {@link chooseBashSetup} decided.
 *
 * @example
 * ```ts
 * createAgent({ provider, tools: codingToolsFor(cwd, chooseBashSetup(args, choice)) });
 * ```
 */
export function codingToolsFor(cwd: string, setup: BashSetup): Tool[] {
  if (setup.kind === "sandboxed") return codingTools({ cwd, sandbox: { network: setup.network } });
  const tools = codingTools({ cwd });
  if (setup.kind === "unsandboxed") return tools;
  return tools.map((tool) => (tool.name === "bash" ? refusedBash(setup.reason) : tool));
}

/** A bash tool that runs nothing and says why: the model learns it cannot run commands here. */
function refusedBash(reason: string): Tool {
  const text = `bash is unavailable: commands run only in an OS sandbox, and it cannot run here (${reason}). Ask the user to install bubblewrap or to restart agent-machine with --no-sandbox.`;
  return defineTool({
    name: "bash",
    description: `Unavailable in this session: ${text}`,
    parameters: z.object({ command: z.string().describe("The shell command (it will not run)") }),
    readOnly: true,
    execute: () => ({ content: [{ type: "text", text }], isError: true }),
  });
}
