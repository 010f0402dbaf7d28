// The coding agent as `agent-machine acp` and `agent-machine mcp` serve it: what both commands
// set up the same way (their options, the model, the sandbox, the session store, the exit status)
// and the agent itself (the command's model, tools, sandbox and permissions, one session of the
// store recorded as it goes). Each command adds only its protocol.
import { type Agent, createAgent } from "../agent/create-agent.js";
import { withLearnedWindow } from "../context/context-window.js";
import type { Tool } from "../tools/define-tool.js";
import { createPermissions } from "../tools/permissions.js";
import { type CliArgs, parseArgs, UsageError } from "./args.js";
import { packageVersion } from "./early-exit.js";
import type { ResumePlan } from "./resume.js";
import type { BashSetup } from "./sandbox.js";
import { chooseBashSetup, codingToolsFor } from "./sandbox.js";
import { recordSession } from "./session-recorder.js";
import { sessionsRoot } from "./session-location.js";
import { createSessionStore, type Session, type SessionStore } from "./session-store.js";
import { chooseModel, codingSystemPrompt, MODEL_SETUP_HELP, type ModelChoice } from "./setup.js";

/** Where a served command writes its notices and errors. */
export interface ServedOutput {
  write(text: string): unknown;
}

/** What a served command has set up before it speaks its protocol. */
export interface ServedSetup {
  args: CliArgs;
  choice: Extract<ModelChoice, { provider: unknown }>;
  /** The session store of a workspace (`--sessions-dir`, else the default location for `cwd`). */
  storeFor(cwd: string): SessionStore;
  /**
   * The coding agent of `session` in `cwd` (resumed from `plan` when given), recorded into it;
   * `tools` reshapes the command's tools (ACP: the client's file system and terminal).
   */
  open(
    cwd: string,
    session: Session,
    plan?: ResumePlan,
    tools?: (tools: Tool[], bashSetup: BashSetup) => Tool[],
  ): ServedCodingAgent;
}

/**
 * Runs a served command (`agent-machine acp`, `agent-machine mcp`): parses its options, refuses a
 * prompt and the terminal's session flags (the client sends prompts: `refusal` says how), picks
 * the model (a served agent has no demo), says on `stderr` when bash runs unsandboxed, then awaits
 * `serve`. Resolves with the exit status: 0 when `serve` ends, 2 for a usage error, 1 for another
 * (its message on `stderr`, prefixed by the command).
 *
 * @example
 * ```ts
 * const status = await runServedCommand("acp", argv, env, process.stderr, "the client sends prompts", async (setup) => {
 *   const cwd = process.cwd();
 *   const { provider } = setup.choice;
 *   const session = setup.storeFor(cwd).create({ cwd, provider: provider.id, model: provider.model });
 *   const { agent, close } = setup.open(cwd, session);
 *   await agent.prompt("Hello");
 *   await close();
 * });
 * ```
 */
export async function runServedCommand(
  command: "acp" | "mcp",
  argv: readonly string[],
  env: Record<string, string | undefined>,
  stderr: ServedOutput,
  refusal: string,
  serve: (setup: ServedSetup) => Promise<void>,
  stdout: ServedOutput = process.stdout,
): Promise<number> {
  try {
    const args = parseArgs(argv);
    // Answered before a model is looked for: `agent-machine acp --help` in a shell with a key set
    // would otherwise start serving and wait on stdin for an editor that is not there.
    if (args.help) {
      stdout.write(`${servedUsage(command)}\n`);
      return 0;
    }
    if (args.version) {
      stdout.write(`${packageVersion()}\n`);
      return 0;
    }
    if (
      args.prompt !== undefined ||
      args.print ||
      args.json ||
      args.continue ||
      args.resume ||
      args.recover
    ) {
      throw new UsageError(
        `${command} takes no prompt and no --print, --json, --continue, --resume or --recover: ${refusal}`,
      );
    }
    const choice = await chooseModel({ ...args, print: true }, env);
    if (choice.kind === "none" || choice.kind === "demo") {
      throw new Error(`No model to run with. ${choice.reason}\n${MODEL_SETUP_HELP}`);
    }
    const bashSetup = chooseBashSetup(args, choice);
    if (bashSetup.kind !== "sandboxed") stderr.write(`agent-machine ${command}: ${bashSetup.notice}\n`);
    await serve({
      args,
      choice,
      storeFor: (cwd) => createSessionStore(cwd, sessionsRoot(cwd, env, args.sessionsDir)),
      open: (cwd, session, plan, tools) =>
        servedCodingAgent(
          args,
          choice,
          bashSetup,
          cwd,
          session,
          plan,
          (error) =>
            stderr.write(`agent-machine ${command}: cannot save session ${session.id} (${error.message})\n`),
          tools,
        ),
    });
    return 0;
  } catch (error) {
    stderr.write(`agent-machine ${command}: ${(error as Error).message}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

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

/** A served agent and how to close it (abort what runs, stop recording, save, stop). */
export interface ServedCodingAgent {
  agent: Agent;
  close(): Promise<void>;
}

/**
 * The coding agent of `session` in `cwd` (resumed from `plan` when given), recorded into the session.
 * The permission mode is `default` unless `--permission-mode` says otherwise: the client answers.
 *
 * @example
 * ```ts
 * const { agent, close } = servedCodingAgent(args, choice, bashSetup, cwd, session, undefined, onError);
 * ```
 */
export function servedCodingAgent(
  args: CliArgs,
  choice: Extract<ModelChoice, { provider: unknown }>,
  bashSetup: BashSetup,
  cwd: string,
  session: Session,
  plan: ResumePlan | undefined,
  onSaveError: (error: Error) => void,
  reshapeTools: (tools: Tool[], bashSetup: BashSetup) => Tool[] = (tools) => tools,
): ServedCodingAgent {
  const agent = createAgent({
    provider: choice.provider,
    systemPrompt: codingSystemPrompt(cwd),
    tools: reshapeTools(codingToolsFor(cwd, bashSetup), bashSetup),
    messages: plan?.messages,
    toolExecution: args.strategy,
    limits: args.maxTurns ? { maxTurns: args.maxTurns } : undefined,
    context: withLearnedWindow(choice.context, plan?.learnedMaxContextTokens),
    permissions: createPermissions({
      mode: args.permissionMode ?? "default",
      cwd,
      rules: { allow: args.allow },
    }),
    id: `session-${session.id}`,
  });
  const stopRecording = recordSession(agent, session, onSaveError);
  return {
    agent,
    async close() {
      // A run the client left is aborted and ends as runs do (agent_end recorded, the session idle).
      if (agent.state !== "idle") {
        agent.abort();
        await Promise.race([agent.waitForIdle(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
      }
      stopRecording();
      session.saveSnapshot(agent.getPersistedSnapshot());
      agent.stop();
    },
  };
}
