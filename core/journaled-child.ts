// Tools whose call runs an agent of its own (a `subAgentTool`): under a journal that can make a
// child journal, such a call is not one journaled step (a crash would run the whole child again)
// but the child's own steps, journaled under the call's path.

const marked = new WeakSet<object>();

/**
 * Marks `tool` as running a child agent that journals its own steps (`EffectJournal.child`).
 *
 * @example
 * ```ts
 * const tool = defineTool({ ... }); // whose execute runs createJournaledAgent(options, journal.child(id, name))
 * markJournaledChild(tool);
 * ```
 */
export function markJournaledChild(tool: object): void {
  marked.add(tool);
}

/**
 * Whether a tool's calls run a child that journals its own steps; also for a wrapper made with
 * `Object.create(tool)` (as the test kit watches tools).
 *
 * @example
 * ```ts
 * const step = journal.child && journalsOwnSteps(tool) ? run() : journal.toolCall(id, run);
 * ```
 */
export function journalsOwnSteps(tool: object | undefined): boolean {
  for (let at: object | null = tool ?? null; at !== null; at = Object.getPrototypeOf(at) as object | null) {
    if (marked.has(at)) return true;
  }
  return false;
}

/** Calls (their actors) that run outside a journaled step, so that their child journals its own. */
const ownStepCalls = new WeakSet<object>();

/**
 * Records that the call of actor `call` runs outside a journaled step, its child journaling its
 * own steps: a child must never journal inside its parent's step (a durable engine allows no step
 * inside a step), as it would when its tool was wrapped into a plain tool the journal takes whole.
 *
 * @example
 * ```ts
 * markOwnStepsCall(self); // execute-tool, before running a marked tool outside journal.toolCall
 * ```
 */
export function markOwnStepsCall(call: object): void {
  ownStepCalls.add(call);
}

/**
 * Whether the call of actor `call` runs outside a journaled step (see {@link markOwnStepsCall}).
 *
 * @example
 * ```ts
 * const journal = callRunsOwnSteps(ctx.actor) ? runtime.journal?.child?.(id, name) : undefined;
 * ```
 */
export function callRunsOwnSteps(call: object | undefined): boolean {
  return call !== undefined && ownStepCalls.has(call);
}
