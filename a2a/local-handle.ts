// The in-process agent behind the AgentHandle contract (core/agent-handle.ts), for the A2A server:
// it serves AgentHandles, and an app most often has an Agent. Kept small and to the contract, so
// that it gives way to the contract's own in-process implementation when that lands.
import { filter, firstValueFrom, take } from "rxjs";
import type { Agent } from "../agent/agent.js";
import { AgentCallError, type AgentHandle, type AgentStatus, type CallAnswer } from "../core/agent-handle.js";
import type { UserMessage } from "../core/messages.js";

/** Whether `value` is an AgentHandle (it has `run`) rather than an Agent (which has `prompt`). */
export function isAgentHandle(value: Agent | AgentHandle): value is AgentHandle {
  return typeof (value as Partial<AgentHandle>).run === "function";
}

function applyAnswer(agent: Agent, answer: CallAnswer): void {
  const id = answer.toolCallId;
  const pending =
    agent.pendingApprovals().some((call) => call.toolCallId === id) ||
    agent.pendingToolCalls().some((call) => call.toolCallId === id);
  if (!pending) throw new AgentCallError(404, "not_found", `No call ${id} waits for an answer`);
  try {
    if ("approve" in answer) agent.approve(id, answer.approve);
    else if ("deny" in answer) agent.deny(id, answer.deny.reason);
    else if ("result" in answer) agent.resolveToolCall(id, answer.result);
    else agent.rejectToolCall(id, answer.reject.reason);
  } catch (error) {
    throw new AgentCallError(422, "refused", error instanceof Error ? error.message : String(error));
  }
}

/**
 * An {@link AgentHandle} over an agent in this process.
 *
 * @example
 * ```ts
 * const handle = localAgentHandle(createAgent({ provider }));
 * const { runId } = await handle.run(userMessage("hi"));
 * ```
 */
export function localAgentHandle(agent: Agent): AgentHandle {
  return {
    id: agent.id,
    async status(): Promise<AgentStatus> {
      const approvals = agent.pendingApprovals();
      const calls = agent.pendingToolCalls();
      const running = agent.state !== "idle" && !agent.state.startsWith("idle");
      const waiting = running && (approvals.length > 0 || calls.length > 0);
      return {
        status: waiting ? "waiting" : running ? "running" : "idle",
        state: agent.state,
        runId: agent.runId,
        pendingApprovals: approvals.map(({ toolCallId, toolName, args }) => ({ toolCallId, toolName, args })),
        pendingToolCalls: calls.map(({ toolCallId, toolName, args }) => ({ toolCallId, toolName, args })),
        queued: { steering: agent.queued.steering.length, followUp: agent.queued.followUp.length },
      };
    },
    messages: async () => agent.messages,
    eventsSince: (runId, seq) => agent.eventsSince(runId, seq),
    async run(message: UserMessage) {
      const started = firstValueFrom(
        agent.events$.pipe(
          filter((event) => event.type === "agent_start"),
          take(1),
        ),
      );
      const outcome = agent.prompt(message);
      // A run that cannot start rejects at once; one that starts publishes agent_start first.
      await Promise.race([started, outcome.then(() => undefined)]).catch((error: unknown) => {
        throw new AgentCallError(409, "busy", error instanceof Error ? error.message : String(error));
      });
      outcome.catch(() => undefined);
      return { runId: agent.runId! };
    },
    steer: async (message) => agent.steer(message),
    followUp: async (message) => agent.followUp(message),
    async check(answers) {
      for (const answer of answers) {
        const id = answer.toolCallId;
        const waits =
          agent.pendingApprovals().some((call) => call.toolCallId === id) ||
          agent.pendingToolCalls().some((call) => call.toolCallId === id);
        if (!waits) throw new AgentCallError(404, "not_found", `No call ${id} waits for an answer`);
      }
    },
    async answer(answers) {
      for (const answer of answers) applyAnswer(agent, answer);
    },
    async abort() {
      const active = agent.runId !== undefined && agent.state !== "idle";
      agent.abort();
      return active;
    },
  };
}
