import type { AnyActorRef } from "xstate";
import type { InboxKind } from "../core/effect-journal.js";
import { runtimeOf } from "../core/runtime.js";
import { agentMachine } from "./agent.machine.js";
import { boundChildEvents } from "./child-event-candidates.js";

let journaled: typeof agentMachine | undefined;

/**
 * The agent machine of a durable agent: the same statechart, whose `steeringCheck` and
 * `followUpCheck` first drain the messages queued from outside through the journal (a durable call,
 * so a replay takes the same messages), then check. Agents without a journal keep the plain
 * machine, whose checks cost no more than a message to itself. Made on the first durable agent's
 * start, then the same machine: an app without one does not build it as the package loads
 * (issue 44: a cold start pays for what the import does).
 *
 * @example
 * ```ts
 * const actor = createActor(journaledAgentMachine(), { input: {} }); // with a runtime that has a journal
 * ```
 */
export function journaledAgentMachine(): typeof agentMachine {
  if (journaled) return journaled;
  journaled = agentMachine.provide({
    actions: {
      scheduleCheck: ({ self }, kind: unknown) => drainThenCheck(self, kind as InboxKind),
    },
  });
  // `provide` makes new state nodes: bounded as the plain machine's are.
  boundChildEvents(journaled);
  return journaled;
}

/** Takes the queued messages of `kind` from the journal into the machine's queue, then checks. */
function drainThenCheck(self: AnyActorRef, kind: InboxKind): void {
  const journal = runtimeOf(self).journal;
  const drained = journal ? journal.drain(kind) : Promise.resolve([]);
  // Unnamed arrows: a transpiler that keeps names would give a named one a `defineProperty` per turn.
  drained.then(
    (messages) => check(self, kind, messages),
    () => check(self, kind, []),
  );
}

/** The drained messages go to the machine's queue, then the check. */
function check(self: AnyActorRef, kind: InboxKind, messages: readonly unknown[]): void {
  if (self.getSnapshot().status !== "active") return;
  for (const message of messages) self.send({ type: kind === "steering" ? "STEER" : "FOLLOW_UP", message });
  self.send({ type: "CHECK" });
}
