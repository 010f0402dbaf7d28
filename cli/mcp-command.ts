// `agent-machine mcp`: the coding agent as an MCP tool over stdio, for a client (an IDE, Claude
// Desktop, another agent) that starts it as a subprocess. Each call is a session of the command's
// store, so a call the client dropped can be resumed in the terminal (`agent-machine --resume`).
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpAgentServer } from "../mcp-server/serve-mcp.js";
import { parseArgs, UsageError } from "./args.js";
import { packageVersion } from "./early-exit.js";
import { chooseBashSetup } from "./sandbox.js";
import { servedCodingAgent } from "./served-agent.js";
import { sessionsRoot } from "./session-location.js";
import { createSessionStore } from "./session-store.js";
import { chooseModel, MODEL_SETUP_HELP, resolveWorkspace } from "./setup.js";

/** The tool's name: what a client lists and calls. */
export const MCP_TOOL_NAME = "coding_agent";

/**
 * Runs `agent-machine mcp [options]` until the client closes stdin; resolves with the exit status.
 * The workspace is `--cwd` (default: the current directory); approvals are asked of the client by
 * elicitation, and refused with a reason the model reads when it cannot be asked.
 *
 * @example
 * ```ts
 * process.exitCode = await runMcpCommand(["--cwd", "/repo"], process.env);
 * ```
 */
export async function runMcpCommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  stderr: { write(text: string): unknown } = process.stderr,
): Promise<number> {
  try {
    const args = parseArgs(argv);
    if (
      args.prompt !== undefined ||
      args.print ||
      args.json ||
      args.continue ||
      args.resume ||
      args.recover
    ) {
      throw new UsageError(
        "mcp takes no prompt and no --print, --json, --continue, --resume or --recover: each tool call is a prompt",
      );
    }
    const choice = await chooseModel({ ...args, print: true }, env);
    if (choice.kind === "none" || choice.kind === "demo") {
      throw new Error(`No model to run with. ${choice.reason}\n${MODEL_SETUP_HELP}`);
    }
    const cwd = resolveWorkspace(args.cwd);
    const bashSetup = chooseBashSetup(args, choice);
    if (bashSetup.kind !== "sandboxed") stderr.write(`agent-machine mcp: ${bashSetup.notice}\n`);
    const store = createSessionStore(cwd, sessionsRoot(cwd, env, args.sessionsDir));
    const open = new Set<{ close(): Promise<void> }>();

    const server = createMcpAgentServer(
      {
        [MCP_TOOL_NAME]: {
          description: `A coding agent working in ${cwd}: it reads, edits and runs commands there to do what the prompt asks, and answers with what it did.`,
          create: () => {
            const session = store.create({ cwd, provider: choice.provider.id, model: choice.provider.model });
            const served = servedCodingAgent(args, choice, bashSetup, cwd, session, undefined, (error) =>
              stderr.write(`agent-machine mcp: cannot save session ${session.id} (${error.message})\n`),
            );
            open.add(served);
            // The server stops the agent after the call: recording ends with it.
            served.agent.events$.subscribe({ complete: () => open.delete(served) });
            return served.agent;
          },
        },
      },
      { name: "agent-machine", version: packageVersion() },
    );
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
      process.stdin.once("end", resolve);
    });
    await server.connect(transport);
    await closed;
    // The client went away: what runs is stopped and saved, so it can be resumed.
    await Promise.all([...open].map((served) => served.close()));
    await server.close();
    return 0;
  } catch (error) {
    stderr.write(`agent-machine mcp: ${(error as Error).message}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}
