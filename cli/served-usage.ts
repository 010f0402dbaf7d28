import { type CliArgs, parseArgs } from "./args.js";
import { packageVersion } from "./early-exit.js";

/**
 * What `agent-machine acp --help` and `agent-machine mcp --help` print.
 *
 * @example
 * ```ts
 * process.stdout.write(`${servedUsage("mcp")}\n`);
 * ```
 */
export function servedUsage(command: "acp" | "mcp"): string {
  const what =
    command === "acp"
      ? "Serves the coding agent to an editor over ACP (the Agent Client Protocol) on stdin/stdout:\nthe editor sends the prompts, picks the sessions and answers every approval (docs/acp.md)."
      : "Serves the coding agent as one MCP tool, coding_agent, on stdin/stdout: each call is a prompt,\nin a new session; approvals are asked of the client (docs/mcp-server.md).";
  return `Usage: agent-machine ${command} [options]

${what}
It is started by its client, not typed: it waits for the client's messages on stdin until stdin closes.

Options (as for agent-machine; a prompt, --print, --json, --continue, --resume and --recover are refused):
      --provider <name>       anthropic | openai | openai-responses | openai-compatible | gemini | bedrock
      --model <id>            model id (default per provider); <provider>:<id> names both
      --permission-mode <m>   default | acceptEdits | plan | bypass | deny (default: "default", the client answers)
      --allow <rule>          let matching calls run without asking (repeatable): bash(npm test), read_file
      --strategy <s>          tool execution: parallel | sequential | auto | batched:N
      --max-turns <n>         end a run after n model calls
      --context-window <n>    the model's context window in tokens${command === "mcp" ? "\n      --cwd <dir>             workspace directory (default: the current one)" : ""}
      --sessions-dir <dir>    keep the sessions in <dir> (default: the user's data folder)
      --no-sandbox            run bash without the OS sandbox (bubblewrap)
      --allow-network         let sandboxed bash commands use the network
  -h, --help                  show this help
  -v, --version               print the version

Models: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, or OPENAI_BASE_URL with --model; with none
it ends with status 1 (never the demo).`;
}

/**
 * Answers `--help` and `--version` of `agent-machine acp` / `mcp` (on `stdout`) and returns the
 * exit status, or `undefined` when the command must run. Kept apart from the served commands (and
 * the agent they load) so their help starts as fast as the command's own.
 *
 * @example
 * ```ts
 * const status = answerServedHelp("acp", parseArgs(["--help"]), process.stdout); // 0, usage printed
 * ```
 */
export function answerServedHelp(
  command: "acp" | "mcp",
  args: Pick<CliArgs, "help" | "version">,
  stdout: { write(text: string): unknown },
): number | undefined {
  if (args.help) {
    stdout.write(`${servedUsage(command)}\n`);
    return 0;
  }
  if (args.version) {
    stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  return undefined;
}

/**
 * {@link answerServedHelp} for the command line of `agent-machine acp|mcp` (without the command's
 * name); `undefined` when the command must run, a malformed line included (the command says what
 * is wrong).
 *
 * @example
 * ```ts
 * const early = servedEarlyExit("mcp", ["-h"], process); // { status: 0 }
 * ```
 */
export function servedEarlyExit(
  command: "acp" | "mcp",
  argv: readonly string[],
  io: { stdout: { write(text: string): unknown } },
): { status: number } | undefined {
  let args: CliArgs;
  try {
    args = parseArgs(argv);
  } catch {
    return undefined;
  }
  const status = answerServedHelp(command, args, io.stdout);
  return status === undefined ? undefined : { status };
}
