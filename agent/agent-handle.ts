// The agent in this process as an AgentHandle: the contract the host serves and the page consumes,
// so a host (or a test) drives an in-process agent exactly as it drives a durable session or a
// thread over HTTP. Every method is the agent's own, done at once; the rules for answers are the
// shared ones (tools/call-answers.ts), and every refusal is an AgentCallError.
import { Observable } from "rxjs/internal/Observable";
import {
  AgentCallError,
  type AgentHandle,
  type AgentStatus,
  type CallAnswer,
  type SequencedEvent,
} from "../core/agent-handle.js";
import type { AgentEvent } from "../core/events.js";
import type { UserMessage } from "../core/messages.js";
import type { Tool } from "../core/tool.js";
import { answersRefusal } from "../tools/call-answers.js";
import type { Agent } from "./agent.js";
import { createCallTracker } from "./call-tracker.js";
import { EventsUnavailableError } from "./event-log.js";

/**
 * Options of {@link agentHandle}.
 *
 * @example
 * ```ts
 * const options: AgentHandleOptions = { tools: [readFile, writeFile] };
 * ```
 */
export interface AgentHandleOptions {
  /**
   * The agent's tools (its options' `tools`): `check` tests edited arguments against their schemas
   * before anything is applied. Without them `check` leaves edited arguments to `answer`, where the
   * agent refuses the ones that fail (nothing is ever run with them).
   */
  tools?: readonly Tool[];
}

/**
 * The agent in this process behind the {@link AgentHandle} contract. `run` resolves once the run's
 * `agent_start` is published (follow it with `eventsSince(runId, 0)`); `check` and `answer` apply the
 * rules every side applies; every refusal is an {@link AgentCallError} (`busy` for a second run,
 * `not_found` for a call that does not wait, `refused` for edited arguments or a client result the
 * agent will not take, `bad_request` for malformed input, `events_unavailable`, `unavailable` once
 * the agent is stopped).
 *
 * @example
 * ```ts
 * const agent = createAgent({ provider, tools: [writeFile] });
 * const handle = agentHandle(agent, { tools: [writeFile] });
 * const { runId } = await handle.run({ role: "user", content: "write notes.md", timestamp: Date.now() });
 * handle.eventsSince(runId, 0).subscribe(({ seq, event }) => console.log(seq, event.type));
 * ```
 */
export function agentHandle(agent: Agent, options: AgentHandleOptions = {}): AgentHandle {
  return new InProcessHandle(agent, options.tools);
}

class InProcessHandle implements AgentHandle {
  private readonly agentTools: ReadonlyMap<string, Tool> | undefined;
  /** The tools the handle's last run added (client-run tools a frontend brings). */
  private runTools: readonly Tool[] = [];
  /** Calls of the run the handle saw start: started and not ended, and those waiting for an answer. */
  private readonly calls = createCallTracker();
  private seenRun: string | undefined;

  constructor(
    private readonly agent: Agent,
    tools: readonly Tool[] | undefined,
  ) {
    this.agentTools = tools && new Map(tools.map((tool) => [tool.name, tool]));
    // Ends with the agent's events$ (when it stops).
    agent.events$.subscribe({ next: (event) => this.track(event), error: () => undefined });
  }

  get id(): string {
    return this.agent.id;
  }

  async status(): Promise<AgentStatus> {
    const { agent } = this;
    const state = agent.state;
    const pendingApprovals = agent.pendingApprovals();
    const pendingToolCalls = agent.pendingToolCalls();
    const { steering, followUp } = agent.queued;
    return {
      status:
        state === "idle"
          ? "idle"
          : this.waitsOnly(pendingApprovals.length + pendingToolCalls.length)
            ? "waiting"
            : "running",
      state,
      runId: agent.runId,
      pendingApprovals,
      pendingToolCalls,
      queued: { steering: steering.length, followUp: followUp.length },
    };
  }

  async messages() {
    return this.agent.messages.slice();
  }

  eventsSince(runId: string, seq = 0): Observable<SequencedEvent> {
    return new Observable<SequencedEvent>((subscriber) => {
      let events: Observable<SequencedEvent>;
      try {
        events = this.agent.eventsSince(runId, seq);
      } catch (error) {
        subscriber.error(eventsError(error));
        return undefined;
      }
      return events.subscribe(subscriber);
    });
  }

  async run(message: UserMessage, options?: { tools?: readonly Tool[] }): Promise<{ runId: string }> {
    checkUserMessage(message, "run");
    if (this.agent.state !== "idle") {
      throw new AgentCallError(409, "busy", "a run is in progress: steer it, or wait for its end");
    }
    let started = false;
    const watch = this.agent.events$.subscribe((event) => {
      if (event.type === "agent_start") started = true;
    });
    const tools = options?.tools;
    let outcome;
    try {
      outcome = this.agent.prompt(message, tools ? { tools } : undefined);
    } finally {
      watch.unsubscribe();
    }
    outcome.catch(() => undefined);
    if (started) {
      this.runTools = tools ?? [];
      return { runId: this.agent.runId! };
    }
    const reason = await outcome.then(
      () => "the run did not start",
      (error: Error) => error.message,
    );
    if (/already running/i.test(reason)) throw new AgentCallError(409, "busy", reason);
    if (/stopped/i.test(reason)) throw new AgentCallError(503, "unavailable", reason);
    throw new AgentCallError(400, "bad_request", reason);
  }

  async steer(message: string | UserMessage): Promise<void> {
    checkUserMessage(message, "steer");
    this.queue(() => this.agent.steer(message));
  }

  async followUp(message: string | UserMessage): Promise<void> {
    checkUserMessage(message, "followUp");
    this.queue(() => this.agent.followUp(message));
  }

  async check(answers: readonly CallAnswer[]): Promise<void> {
    const refusal = this.refusalOf(answers);
    if (refusal) throw refusal;
  }

  async answer(answers: readonly CallAnswer[]): Promise<void> {
    // Checked whole, then applied: nothing runs in between, so a request is taken whole or not at all.
    const refusal = this.refusalOf(answers);
    if (refusal) throw refusal;
    for (const answer of answers) {
      try {
        this.apply(answer);
      } catch (error) {
        throw new AgentCallError(400, "refused", (error as Error).message);
      }
    }
  }

  async abort(): Promise<boolean> {
    const running = this.agent.state !== "idle";
    this.agent.abort();
    return running;
  }

  private refusalOf(answers: readonly CallAnswer[]): AgentCallError | undefined {
    const waiting = {
      pendingApprovals: this.agent.pendingApprovals(),
      pendingToolCalls: this.agent.pendingToolCalls(),
    };
    const known = this.agentTools;
    if (!known) {
      // No tools to check edits against: the shape of everything else, and the agent checks edits.
      const unedited = answers.map((a) =>
        a && typeof a === "object" && "approve" in a && a.approve ? { ...a, approve: {} } : a,
      );
      return answersRefusal(unedited, waiting, () => undefined);
    }
    return answersRefusal(
      answers,
      waiting,
      (name) => known.get(name) ?? this.runTools.find((t) => t.name === name),
    );
  }

  private apply(answer: CallAnswer): void {
    const { agent } = this;
    if ("approve" in answer) {
      agent.approve(
        answer.toolCallId,
        answer.approve.args === undefined ? undefined : { args: answer.approve.args },
      );
    } else if ("deny" in answer) agent.deny(answer.toolCallId, answer.deny.reason);
    else if ("result" in answer) agent.resolveToolCall(answer.toolCallId, answer.result);
    else agent.rejectToolCall(answer.toolCallId, answer.reject.reason);
  }

  private queue(send: () => void): void {
    try {
      send();
    } catch (error) {
      throw new AgentCallError(503, "unavailable", (error as Error).message);
    }
  }

  /** Every call the run has open waits for an answer (as far as the handle saw the run). */
  private waitsOnly(pending: number): boolean {
    if (pending === 0) return false;
    if (this.seenRun !== this.agent.runId) return true;
    // A call whose sub-agent waits (a nested approval) waits too, as the session host counts it.
    return this.calls.unfinishedWait();
  }

  private track(event: AgentEvent): void {
    if (event.type === "agent_start") this.seenRun = this.agent.runId;
    this.calls.track(event);
  }
}

/** Non-empty text, or a user message with content, as a handle takes it; else a `bad_request`. */
function checkUserMessage(message: unknown, where: string): void {
  if (typeof message === "string" ? message.trim() !== "" : isUserMessage(message)) return;
  throw new AgentCallError(
    400,
    "bad_request",
    `${where}: the message must be non-empty text or a user message ({ role: "user", content, timestamp })`,
  );
}

function isUserMessage(message: unknown): boolean {
  if (typeof message !== "object" || message === null) return false;
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (role !== "user") return false;
  return typeof content === "string" ? content.trim() !== "" : Array.isArray(content) && content.length > 0;
}

function eventsError(error: unknown): AgentCallError {
  if (error instanceof EventsUnavailableError) {
    return new AgentCallError(410, "events_unavailable", error.message);
  }
  return new AgentCallError(400, "bad_request", error instanceof Error ? error.message : String(error));
}
