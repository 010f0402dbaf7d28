// The coding agent as `agent-machine acp` and `agent-machine mcp` serve it: the command's model,
// tools, sandbox and permissions, one session of the store recorded as it goes.
import { type Agent, createAgent } from "../agent/create-agent.js";
import { withLearnedWindow } from "../context/context-window.js";
import { createPermissions } from "../tools/permissions.js";
import type { CliArgs } from "./args.js";
import type { ResumePlan } from "./resume.js";
import type { BashSetup } from "./sandbox.js";
import { codingToolsFor } from "./sandbox.js";
import { recordSession } from "./session-recorder.js";
import type { Session } from "./session-store.js";
import { codingSystemPrompt, type ModelChoice } from "./setup.js";

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
): ServedCodingAgent {
  const agent = createAgent({
    provider: choice.provider,
    systemPrompt: codingSystemPrompt(cwd),
    tools: codingToolsFor(cwd, bashSetup),
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
