import type { AnyActorRef } from "xstate";
import { toolResultMessage } from "../actors/tool-call.machine.js";
import { type MessageIds, PROCESS_MESSAGE_IDS } from "../core/message-id.js";
import type { ToolResultMessage } from "../core/messages.js";
import { runtimeOf } from "../core/runtime.js";
import type { PlannedCall } from "../rules/tool-execution.logic.js";
import { errorResult } from "../tools/define-tool.js";

// The actor-bound half of answering calls that never ran (skipped, aborted, dropped): it builds
// the result with the tool-call actor's message shape and publishes through the runtime, so it
// lives with the machines, while the pure planning rules live in rules/tool-execution.logic.ts.

/** An error result message for a call that never ran (skipped or aborted). */
export function unranResult(
  call: Pick<PlannedCall, "id" | "name">,
  text: string,
  timestamp = Date.now(),
  ids: MessageIds = PROCESS_MESSAGE_IDS,
): ToolResultMessage {
  return toolResultMessage(call.id, call.name, errorResult(text), timestamp, ids);
}

/** The `enqueue` of an `enqueueActions` block, for custom actions that need the actor. */
export type EnqueueEffect = (action: (args: { self: AnyActorRef }) => void) => void;

/**
 * Answers a call that ran no further (skipped, aborted, dropped) with an error result, and
 * publishes its `tool_execution_end` — preceded by its `tool_execution_start` when the call never
 * started (so every call has exactly one of each).
 */
export function answerUnran(
  enqueue: EnqueueEffect,
  call: PlannedCall,
  text: string,
  { started, timestamp, ids }: { started: boolean; timestamp: number; ids?: MessageIds },
): ToolResultMessage {
  const message = unranResult(call, text, timestamp, ids);
  enqueue(({ self }) => {
    const runtime = runtimeOf(self);
    if (!started) {
      runtime.publish({
        type: "tool_execution_start",
        toolCallId: call.id,
        toolName: call.name,
        args: call.args,
      });
    }
    runtime.publish({
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: call.name,
      result: { content: message.content, isError: true },
      isError: true,
    });
  });
  return message;
}
