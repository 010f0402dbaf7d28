import { toolResultMessage } from "../actors/tool-call.machine.js";
import type { ToolCall, ToolResultMessage } from "../core/messages.js";
import type { ToolExecutionStrategy } from "../core/options.js";
import { errorResult } from "../tools/define-tool.js";

/** A call as the execution machine plans it. */
export interface PlannedCall {
  id: string;
  name: string;
  args: unknown;
  /** The tool exists and is concurrency-safe (strategy `"auto"`). */
  concurrencySafe: boolean;
}

/** The text of a call skipped because the user queued a message. */
export const SKIPPED_TEXT = "Skipped due to queued user message.";

/** The text of a call ended by an abort. */
export function abortedText(toolName: string): string {
  return `Tool ${toolName} aborted`;
}

/**
 * Splits calls into the groups a strategy runs one after another. Steering is checked between
 * groups; the first group always runs.
 *
 * @example
 * ```ts
 * groupCalls(calls, { batched: 2 }); // [[c1, c2], [c3, c4]]
 * groupCalls(calls, "auto");        // runs of concurrency-safe calls together, others alone
 * ```
 */
export function groupCalls(calls: readonly PlannedCall[], strategy: ToolExecutionStrategy): string[][] {
  if (calls.length === 0) return [];
  const ids = calls.map((c) => c.id);
  if (strategy === "parallel") return [ids];
  if (strategy === "sequential") return ids.map((id) => [id]);
  if (typeof strategy === "object") {
    const size = Math.max(1, Math.floor(strategy.batched));
    const groups: string[][] = [];
    for (let i = 0; i < ids.length; i += size) groups.push(ids.slice(i, i + size));
    return groups;
  }
  const groups: string[][] = [];
  let run: string[] = [];
  for (const call of calls) {
    if (call.concurrencySafe) {
      run.push(call.id);
      continue;
    }
    if (run.length) groups.push(run);
    run = [];
    groups.push([call.id]);
  }
  if (run.length) groups.push(run);
  return groups;
}

/**
 * Whether a call whose arguments just completed in the stream (it is call number `index`, 0-based;
 * `earlier` are the calls completed before it) belongs to the first group, and so may start eagerly.
 */
export function startsEagerly(
  strategy: ToolExecutionStrategy,
  index: number,
  call: PlannedCall,
  earlier: readonly PlannedCall[],
): boolean {
  if (strategy === "parallel") return true;
  if (strategy === "sequential") return index === 0;
  if (typeof strategy === "object") return index < Math.max(1, Math.floor(strategy.batched));
  return call.concurrencySafe && earlier.every((c) => c.concurrencySafe);
}

/** An error result message for a call that never ran (skipped or aborted). */
export function unranResult(
  call: Pick<PlannedCall, "id" | "name">,
  text: string,
  timestamp = Date.now(),
): ToolResultMessage {
  return toolResultMessage(call.id, call.name, errorResult(text), timestamp);
}

/** Planned calls from an assistant message's tool calls. */
export function planCalls(
  toolCalls: readonly ToolCall[],
  isConcurrencySafe: (toolName: string) => boolean,
): PlannedCall[] {
  return toolCalls.map((c) => ({
    id: c.id,
    name: c.name,
    args: c.arguments,
    concurrencySafe: isConcurrencySafe(c.name),
  }));
}
