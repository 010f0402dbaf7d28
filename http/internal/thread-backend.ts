// What a hosted thread drives: an agent in this process, or a durable session on Restate through
// the session client (durable-backend.ts). hosted-thread.ts speaks only to this interface, so the
// quiescence detector, the response periods, the reconnects and the side routes are the same code
// for both backends.
import type { Observable } from "rxjs";
import type { Agent } from "../../agent/agent.js";
import type { SequencedEvent } from "../../agent/event-log.js";
import type { AgentEvent } from "../../core/events.js";
import type { AgentMessage, UserMessage } from "../../core/messages.js";
import type { Tool, ToolResult } from "../../core/tool.js";
import type { ThreadAgent } from "../protocol.js";

/** The operations a hosted thread needs of what runs its agent. */
export interface ThreadBackend extends ThreadAgent {
  /** The run's events, each published once, in order (the host numbers them per run). */
  readonly events$: Observable<AgentEvent>;
  /** Messages queued by steer / follow-up that no turn has taken yet (what the backend knows of). */
  readonly queued: { steering: readonly AgentMessage[]; followUp: readonly AgentMessage[] };
  /** The events of run `runId` from `seq` (0 = its `agent_start`), then live; as `agent.eventsSince`. */
  eventsSince(runId: string, seq: number): Observable<SequencedEvent>;
  /**
   * Starts a run with `message`. Resolves once `agent_start` has been published (`undefined`), or
   * with the reason the run was refused (nothing started).
   */
  start(message: UserMessage, tools: readonly Tool[] | undefined): Promise<string | undefined>;
  steer(message: UserMessage): Promise<void>;
  followUp(message: UserMessage): Promise<void>;
  /** Aborts the active run; whether one was active. */
  abort(): Promise<boolean>;
  approve(toolCallId: string, args: unknown): Promise<void>;
  deny(toolCallId: string, reason: string | undefined): Promise<void>;
  resolveToolCall(toolCallId: string, result: string | ToolResult): Promise<void>;
  rejectToolCall(toolCallId: string, reason: string): Promise<void>;
  /** Brings what the backend knows up to date before a request is checked against it. */
  refresh(): Promise<void>;
  /** The thread's snapshot for a `ThreadStore` (in process only). */
  persistedSnapshot(): unknown;
  /** Stops it (the host is closing). */
  stop(): void;
  /** The in-process agent, when there is one. */
  readonly local: Agent | undefined;
}

/**
 * An agent in this process as a thread backend: every operation is the agent's own, done at once
 * (prompt, approve and deny publish their events synchronously, before the promise settles).
 */
export function localBackend(agent: Agent): ThreadBackend {
  return {
    get events$() {
      return agent.events$;
    },
    get messages() {
      return agent.messages;
    },
    get state() {
      return agent.state;
    },
    get runId() {
      return agent.runId;
    },
    get queued() {
      return agent.queued;
    },
    local: agent,
    pendingApprovals: () => agent.pendingApprovals(),
    pendingToolCalls: () => agent.pendingToolCalls(),
    eventsSince: (runId, seq) => agent.eventsSince(runId, seq),
    async start(message, tools) {
      let started = false;
      const watch = agent.events$.subscribe((event) => {
        if (event.type === "agent_start") started = true;
      });
      const outcome = agent.prompt(message, tools ? { tools } : undefined);
      watch.unsubscribe();
      outcome.catch(() => undefined);
      if (started) return undefined;
      return outcome.then(
        () => "the run did not start",
        (error: Error) => error.message,
      );
    },
    steer: async (message) => agent.steer(message),
    followUp: async (message) => agent.followUp(message),
    async abort() {
      const running = agent.state !== "idle";
      agent.abort();
      return running;
    },
    approve: async (toolCallId, args) => agent.approve(toolCallId, args === undefined ? undefined : { args }),
    deny: async (toolCallId, reason) => agent.deny(toolCallId, reason),
    resolveToolCall: async (toolCallId, result) => agent.resolveToolCall(toolCallId, result),
    rejectToolCall: async (toolCallId, reason) => agent.rejectToolCall(toolCallId, reason),
    refresh: async () => undefined,
    persistedSnapshot: () => agent.getPersistedSnapshot(),
    stop: () => agent.stop(),
  };
}
