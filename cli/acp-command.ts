// `agent-machine acp`: the coding agent served over ACP on stdin/stdout, for an editor or a harness
// that starts it as a subprocess. Its sessions are the command's sessions (the session store), so a
// session begun in the editor can be loaded again there, or resumed in the terminal.
import { serveAcp, type AcpSession } from "../acp/serve-acp.js";
import { parseArgs, UsageError } from "./args.js";
import { packageVersion } from "./early-exit.js";
import { planResume } from "./resume.js";
import { chooseBashSetup } from "./sandbox.js";
import { servedCodingAgent } from "./served-agent.js";
import { sessionsRoot } from "./session-location.js";
import { createSessionStore, type Session } from "./session-store.js";
import { chooseModel, MODEL_SETUP_HELP } from "./setup.js";

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
        "acp takes no prompt and no --print, --json, --continue, --resume or --recover: the client sends prompts and picks sessions",
      );
    }
    const choice = await chooseModel({ ...args, print: true }, env);
    if (choice.kind === "none" || choice.kind === "demo") {
      throw new Error(`No model to run with. ${choice.reason}\n${MODEL_SETUP_HELP}`);
    }
    const bashSetup = chooseBashSetup(args, choice);
    if (bashSetup.kind !== "sandboxed") stderr.write(`agent-machine acp: ${bashSetup.notice}\n`);

    const open = (cwd: string, session: Session, plan?: ReturnType<typeof planResume>): AcpSession => {
      const served = servedCodingAgent(args, choice, bashSetup, cwd, session, plan, (error) =>
        stderr.write(`agent-machine acp: cannot save session ${session.id} (${error.message})\n`),
      );
      return { id: session.id, agent: served.agent, cwd, close: served.close };
    };
    const storeFor = (cwd: string) => createSessionStore(cwd, sessionsRoot(cwd, env, args.sessionsDir));

    const connection = serveAcp(
      {
        newSession: ({ cwd }) =>
          open(
            cwd,
            storeFor(cwd).create({ cwd, provider: choice.provider.id, model: choice.provider.model }),
          ),
        loadSession: ({ sessionId, cwd }) => {
          const store = storeFor(cwd);
          if (!store.list().some((s) => s.id === sessionId)) return undefined;
          const session = store.open(sessionId);
          const plan = planResume(session.loadSnapshot(), session.loadEvents());
          session.appendEvent({
            type: "session_resumed",
            at: Date.now(),
            interrupted: plan.interrupted.map((c) => c.id),
            recovered: plan.recovered.map((c) => c.id),
            added: plan.added,
          });
          return open(cwd, session, plan);
        },
      },
      { name: "agent-machine", version: packageVersion() },
    );
    await connection.closed;
    return 0;
  } catch (error) {
    stderr.write(`agent-machine acp: ${(error as Error).message}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}
