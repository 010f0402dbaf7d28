import type { Agent } from "../agent/create-agent.js";
import type { AgentEndReason, AgentEvent, AgentEventType } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import {
  describe,
  eventProblems,
  matches,
  orderProblems,
  secretProblems,
  transcriptProblems,
} from "./internal/checks.js";
import type { AgentRun, RunToolCall } from "./run-agent.js";
import { TestKitError } from "./test-kit-error.js";

/** A run from `runAgent`, or just its events / messages. */
type EventsOf = AgentRun | readonly AgentEvent[];
type MessagesOf = AgentRun | readonly AgentMessage[];

/** One expected event: its type, or a partial event whose fields must match. */
export type ExpectedEvent = AgentEventType | (Partial<Record<string, unknown>> & { type?: AgentEventType });

const eventsOf = (value: EventsOf) => (Array.isArray(value) ? value : (value as AgentRun).events);
const messagesOf = (value: MessagesOf) => (Array.isArray(value) ? value : (value as AgentRun).transcript);

function fail(problems: readonly string[], what: string): void {
  if (problems.length > 0) throw new TestKitError(`${what}:\n  - ${problems.join("\n  - ")}`);
}

/**
 * Throws unless every tool call in the transcript is answered exactly once, after it and before
 * the next assistant message, and every result has its call — what every provider requires.
 *
 * @example
 * ```ts
 * assertValidTranscript(run); // or assertValidTranscript(agent.messages)
 * ```
 */
export function assertValidTranscript(runOrMessages: MessagesOf): void {
  fail(transcriptProblems(messagesOf(runOrMessages)), "The transcript is not valid");
}

/**
 * Throws unless the events keep the invariants of every run: `agent_start` first, `agent_end`
 * last, turns and messages paired, one `tool_execution_start` and one `tool_execution_end` per call.
 *
 * @example
 * ```ts
 * assertEventInvariants(run.events);
 * ```
 */
export function assertEventInvariants(runOrEvents: EventsOf): void {
  fail(eventProblems(eventsOf(runOrEvents)), "The events break the run's invariants");
}

/**
 * Throws unless the run called the tool `name` with arguments matching `args` (a partial object:
 * extra keys are fine; a RegExp tests a string; a function is a predicate; `expect.any(...)` works)
 * — at least once, or exactly `times`. Returns the matching calls.
 *
 * @example
 * ```ts
 * assertToolCalled(run, "write_file", { path: /\.md$/ });
 * assertToolCalled(run, "bash", { command: "npm test" }, { times: 1 });
 * ```
 */
export function assertToolCalled(
  run: AgentRun,
  name: string,
  args?: Record<string, unknown>,
  options: { times?: number } = {},
): RunToolCall[] {
  const calls = run.toolCalls.filter((c) => c.name === name && (args === undefined || matches(c.args, args)));
  const wanted = options.times;
  const ok = wanted === undefined ? calls.length > 0 : calls.length === wanted;
  if (!ok) {
    const made = run.toolCalls.map((c) => `${c.name}(${describe(c.args)})`).join(", ") || "none";
    const expected = `${name}${args ? `(${describe(args)})` : ""}`;
    throw new TestKitError(
      `Expected ${wanted === undefined ? "a call" : `${wanted} call(s)`} of ${expected}, found ${calls.length}. Calls made: ${made}`,
    );
  }
  return calls;
}

/**
 * Throws unless the events contain the expected ones in this order (other events may come
 * between them). Each is a type or a partial event.
 *
 * @example
 * ```ts
 * assertEventOrder(run, ["approval_requested", { type: "approval_decided", approved: false }, "agent_end"]);
 * ```
 */
export function assertEventOrder(runOrEvents: EventsOf, expected: readonly ExpectedEvent[]): void {
  fail(
    orderProblems(eventsOf(runOrEvents), expected as (string | Record<string, unknown>)[]),
    "Events out of order",
  );
}

/**
 * Throws unless the run ended with `reason` (and, when given, an error message matching `errorMessage`).
 *
 * @example
 * ```ts
 * assertEndedWith(run, "limit");
 * assertEndedWith(run, "error", /stalled/);
 * ```
 */
export function assertEndedWith(run: AgentRun, reason: AgentEndReason, errorMessage?: string | RegExp): void {
  const { outcome } = run;
  if (outcome.reason !== reason) {
    const why = outcome.errorMessage ? ` (${outcome.errorMessage})` : "";
    throw new TestKitError(
      `Expected the run to end with "${reason}", it ended with "${outcome.reason}"${why}`,
    );
  }
  if (errorMessage !== undefined && !matches(outcome.errorMessage ?? "", errorMessage)) {
    throw new TestKitError(
      `The run ended with "${reason}" but its error message was: ${outcome.errorMessage}`,
    );
  }
}

/** Options of {@link assertNoSecrets}. */
export interface NoSecretsOptions {
  /** The secrets to look for (your API keys). Anything shaped like a provider's API key is reported too. */
  secrets?: readonly string[];
}

/**
 * Throws when an API key appears in the run's events, its transcript or the agent's persisted
 * snapshot (or in any value you pass): the keys you name and anything shaped like a provider's key
 * (`sk-…`, `sk-ant-…`, `AIza…`, …).
 *
 * @example
 * ```ts
 * const run = await runAgent({ provider: anthropic({ apiKey: "sk-ant-test-0123456789abcdef", baseURL }) }, "hi");
 * assertNoSecrets(run, { secrets: ["sk-ant-test-0123456789abcdef"] });
 * ```
 */
export function assertNoSecrets(
  runOrValue: AgentRun | Agent | unknown,
  options: NoSecretsOptions = {},
): void {
  const secrets = options.secrets ?? [];
  const problems: string[] = [];
  const run = runOrValue as Partial<AgentRun>;
  if (run && Array.isArray(run.events) && Array.isArray(run.transcript) && run.agent) {
    run.events.forEach((e, i) => problems.push(...secretProblems(e, secrets, `event ${i} (${e.type})`)));
    problems.push(...secretProblems(run.agent.getPersistedSnapshot(), secrets, "the persisted snapshot"));
  } else if (isAgent(runOrValue)) {
    problems.push(...secretProblems(runOrValue.getPersistedSnapshot(), secrets, "the persisted snapshot"));
    problems.push(...secretProblems(runOrValue.messages, secrets, "the transcript"));
  } else {
    problems.push(...secretProblems(runOrValue, secrets, "the value"));
  }
  fail(problems, "A secret leaked");
}

function isAgent(value: unknown): value is Agent {
  return typeof (value as Agent | undefined)?.getPersistedSnapshot === "function";
}
