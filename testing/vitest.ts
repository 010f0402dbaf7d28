// agent-machine/testing/vitest: the kit's assertions as vitest matchers. Import it once (in a
// test file or in `setupFiles`); vitest itself stays your dependency, never ours.
import { expect } from "vitest";
import type { AgentEndReason, AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import {
  assertEndedWith,
  assertEventInvariants,
  assertEventOrder,
  assertNoSecrets,
  assertToolCalled,
  assertValidTranscript,
  type ExpectedEvent,
  type NoSecretsOptions,
} from "./assertions.js";
import type { AgentRun } from "./run-agent.js";

type MatcherResult = { pass: boolean; message: () => string };

/** A matcher from an assertion: passes when it does not throw, fails with its message. */
function fromAssertion(check: () => void, negated: string): MatcherResult {
  try {
    check();
    return { pass: true, message: () => negated };
  } catch (error) {
    return { pass: false, message: () => (error instanceof Error ? error.message : String(error)) };
  }
}

/**
 * The matchers, for `expect.extend(agentMatchers)` (importing this module does it for you).
 *
 * @example
 * ```ts
 * import "agent-machine/testing/vitest";
 * const run = await runAgent(options, "Add 2 and 3");
 * expect(run).toHaveValidTranscript();
 * expect(run).toHaveCalledTool("add", { a: 2 });
 * expect(run).toHaveEventsInOrder(["tool_execution_end", "agent_end"]);
 * expect(run).toHaveEndedWith("stop");
 * expect(run).toLeakNoSecrets({ secrets: [apiKey] });
 * ```
 */
export const agentMatchers = {
  toHaveValidTranscript(received: AgentRun | readonly AgentMessage[]) {
    return fromAssertion(() => assertValidTranscript(received), "expected the transcript not to be valid");
  },
  toKeepEventInvariants(received: AgentRun | readonly AgentEvent[]) {
    return fromAssertion(() => assertEventInvariants(received), "expected the events to break an invariant");
  },
  toHaveCalledTool(
    received: AgentRun,
    name: string,
    args?: Record<string, unknown>,
    options?: { times?: number },
  ) {
    return fromAssertion(
      () => assertToolCalled(received, name, args, options),
      `expected no call of ${name} matching the arguments`,
    );
  },
  toHaveEventsInOrder(received: AgentRun | readonly AgentEvent[], expected: readonly ExpectedEvent[]) {
    return fromAssertion(
      () => assertEventOrder(received, expected),
      "expected the events not to come in this order",
    );
  },
  toHaveEndedWith(received: AgentRun, reason: AgentEndReason, errorMessage?: string | RegExp) {
    return fromAssertion(
      () => assertEndedWith(received, reason, errorMessage),
      `expected the run not to end with ${reason}`,
    );
  },
  toLeakNoSecrets(received: unknown, options?: NoSecretsOptions) {
    return fromAssertion(() => assertNoSecrets(received, options), "expected a secret to leak");
  },
};

expect.extend(agentMatchers);

/** The matchers' types, added to vitest's `expect(...)`. */
export interface AgentMatchers<R = unknown> {
  toHaveValidTranscript(): R;
  toKeepEventInvariants(): R;
  toHaveCalledTool(name: string, args?: Record<string, unknown>, options?: { times?: number }): R;
  toHaveEventsInOrder(expected: readonly ExpectedEvent[]): R;
  toHaveEndedWith(reason: AgentEndReason, errorMessage?: string | RegExp): R;
  toLeakNoSecrets(options?: NoSecretsOptions): R;
}

declare module "vitest" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Matchers<T = any> extends AgentMatchers<T> {}
}
