import type { InspectionEvent, Observer } from "xstate";
import { errorText } from "../core/error-text.js";

/**
 * The app's `inspect` observer, guarded: an error it throws stays with it. XState calls inspection
 * observers in the middle of delivering an event, so an error thrown there would leave the event
 * undelivered (a model's answer, a tool's result) and the run waiting for ever, or come out of a
 * call that has nothing to do with it. Instead the first error is reported once, on the console
 * (`report`), and the observer is detached: it sees no more events of this agent, and the run goes
 * on as if it had never been attached. The same guard serves any observer fed from inside a run
 * (`T`: the visualizer's feed of wire messages, for one).
 *
 * @example
 * ```ts
 * const inspect = guardInspector(options.inspect, (error) => console.error(error));
 * createActor(agentMachine, { inspect });
 * ```
 */
export function guardInspector<T = InspectionEvent>(
  inspect: Observer<T> | ((event: T) => void),
  report: (error: unknown) => void,
): Observer<T> {
  const observer = typeof inspect === "function" ? { next: inspect } : inspect;
  let detached = false;
  const guarded = (call: () => void) => {
    if (detached) return;
    try {
      call();
    } catch (error) {
      detached = true;
      try {
        report(error);
      } catch {
        // A report that fails loses only the report.
      }
    }
  };
  return {
    next: (event) => guarded(() => observer.next?.(event)),
    error: (error) => guarded(() => observer.error?.(error)),
    complete: () => guarded(() => observer.complete?.()),
  };
}

/**
 * How a guarded inspector's error is reported: one line on the console naming the agent.
 *
 * @example
 * ```ts
 * guardInspector(inspect, inspectorFailure("agent-1"));
 * ```
 */
export function inspectorFailure(agentId: string): (error: unknown) => void {
  return (error) =>
    console.error(
      `agent-machine: the inspect observer of agent "${agentId}" threw, and sees no more events: ${errorText(error)}`,
    );
}
