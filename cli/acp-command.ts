// `agent-machine acp`: the coding agent served over ACP on stdin/stdout, for an editor or a harness
// that starts it as a subprocess. Its sessions are the command's sessions (the session store), so a
// session begun in the editor can be loaded again there, or resumed in the terminal.
import { type AcpClientAccess, withAcpClient } from "../acp/client-tools.js";
import { createPlanTool } from "../acp/plan-tool.js";
import { serveAcp, type AcpSession } from "../acp/serve-acp.js";
import { packageVersion } from "./early-exit.js";
import { planResume } from "./resume.js";
import { runServedCommand, type ServedOutput, type ServedSetup } from "./served-agent.js";
import type { Session } from "./session-store.js";

/**
 * Runs `agent-machine acp [options]` until the client closes stdin; resolves with the exit status.
 * Options are the command's (`--provider`, `--model`, `--permission-mode`, `--allow`,
 * `--sessions-dir`, `--no-sandbox`, ...); a prompt is a usage error. Every tool call that needs an
 * approval is asked to the editor (`session/request_permission`).
 *
 * @example
 * ```ts
 * process.exitCode = await runAcpCommand(["--model", "claude-sonnet-4-5"], process.env);
 * ```
 */
export async function runAcpCommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  stderr: ServedOutput = process.stderr,
  stdout: ServedOutput = process.stdout,
): Promise<number> {
  return runServedCommand(
    "acp",
    argv,
    env,
    stderr,
    "the client sends prompts and picks sessions",
    serveOverAcp,
    stdout,
  );
}

/** Serves the set-up agent over ACP on stdin/stdout until the client closes it. */
async function serveOverAcp({ choice, storeFor, open }: ServedSetup): Promise<void> {
  const session = (
    cwd: string,
    client: AcpClientAccess,
    stored: Session,
    plan?: ReturnType<typeof planResume>,
  ): AcpSession => {
    // Files through the editor where it offers them; bash in its terminal only where ours would run
    // unsandboxed anyway (--no-sandbox): a command there runs with the editor's rights.
    // The plan tool too: its calls are the session's plan in the editor.
    const served = open(cwd, stored, plan, (tools, bash) => [
      ...withAcpClient(tools, client, { cwd, bashInTerminal: bash.kind === "unsandboxed" }),
      createPlanTool(),
    ]);
    return { id: stored.id, agent: served.agent, cwd, close: served.close };
  };
  const connection = serveAcp(
    {
      newSession: ({ cwd, client }) =>
        session(
          cwd,
          client,
          storeFor(cwd).create({ cwd, provider: choice.provider.id, model: choice.provider.model }),
        ),
      loadSession: ({ sessionId, cwd, client }) => {
        const store = storeFor(cwd);
        if (!store.list().some((s) => s.id === sessionId)) return undefined;
        const stored = store.open(sessionId);
        const plan = planResume(stored.loadSnapshot(), stored.loadEvents());
        stored.appendEvent({
          type: "session_resumed",
          at: Date.now(),
          interrupted: plan.interrupted.map((c) => c.id),
          recovered: plan.recovered.map((c) => c.id),
          added: plan.added,
        });
        return session(cwd, client, stored, plan);
      },
    },
    { name: "agent-machine", version: packageVersion() },
  );
  await connection.closed;
}
