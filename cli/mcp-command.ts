// `agent-machine mcp`: the coding agent as an MCP tool over stdio, for a client (an IDE, Claude
// Desktop, another agent) that starts it as a subprocess. Each call is a session of the command's
// store, so a call the client dropped can be resumed in the terminal (`agent-machine --resume`).
import { serveMcpStdio } from "../mcp-server/modern-mcp.js";
import { packageVersion } from "./early-exit.js";
import { runServedCommand, type ServedOutput, type ServedSetup } from "./served-agent.js";
import { resolveWorkspace } from "./setup.js";

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
  stderr: ServedOutput = process.stderr,
  stdout: ServedOutput = process.stdout,
): Promise<number> {
  return runServedCommand("mcp", argv, env, stderr, "each tool call is a prompt", serveOverMcp, stdout);
}

/** Serves the set-up agent as an MCP tool on stdin/stdout until the client closes it. */
async function serveOverMcp({ args, choice, storeFor, open: openAgent }: ServedSetup): Promise<void> {
  const cwd = resolveWorkspace(args.cwd);
  const store = storeFor(cwd);
  const open = new Set<{ close(): Promise<void> }>();

  const server = await serveMcpStdio(
    {
      [MCP_TOOL_NAME]: {
        description: `A coding agent working in ${cwd}: it reads, edits and runs commands there to do what the prompt asks, and answers with what it did.`,
        create: () => {
          const session = store.create({ cwd, provider: choice.provider.id, model: choice.provider.model });
          const served = openAgent(cwd, session);
          open.add(served);
          // The server stops the agent after the call: recording ends with it.
          served.agent.events$.subscribe({ complete: () => open.delete(served) });
          return served.agent;
        },
      },
    },
    { name: "agent-machine", version: packageVersion() },
  );
  // 2026-07-28 to a client that asks for it, the 2025 handshake to one that does not.
  await new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  // The client went away: what runs is stopped and saved, so it can be resumed.
  await Promise.all([...open].map((served) => served.close()));
  await server.close();
}
