import {
  type AnyActorRef,
  type AnyActorScope,
  assign,
  type EventObject,
  type ExecutableActionObject,
  type SnapshotFrom,
  setup,
  StateMachine,
} from "xstate";
import { type MessageIds, PROCESS_MESSAGE_IDS } from "../core/message-id.js";
import type { ToolResultMessage } from "../core/messages.js";
import type { ApprovalDecision } from "../core/effect-journal.js";
import { type AgentRuntime, messageIdsFor, nowFor, runtimeOf } from "../core/runtime.js";
import { errorText } from "../core/error-text.js";
import { errorResult, thrownErrorResult, type ToolResult } from "../tools/define-tool.js";
import { executeToolCall } from "./execute-tool.js";
import { checkEditedArgs } from "../tools/call-answers.js";
import {
  checkPermissionActor,
  type Preparation,
  type Validation,
  validateToolCall,
} from "./prepare-tool-call.actor.js";

export interface ToolCallInput {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

export interface ToolCallContext extends ToolCallInput {
  /** Lookup and validation, done when the actor starts (they need no waiting). */
  validation: Validation;
  /** The tool is run by the client (`defineClientTool`): the call waits in `awaitingResult`. */
  external: boolean;
  result?: ToolResult;
}

export type ToolCallEvent =
  /** `args`: arguments a human corrected, already checked against the tool's schema (`agent.approve`). */
  | { type: "APPROVE"; args?: unknown }
  | { type: "DENY"; reason?: string }
  | { type: "TOOL_EXECUTED"; result: ToolResult }
  /** The client's answer to a client-run call (`agent.resolveToolCall` / `rejectToolCall`, or its timeout). */
  | { type: "RESULT_PROVIDED"; result: ToolResult };

/** What a finished call tells its parent. */
/** What a finished call outputs; its parent receives it as `xstate.done.actor.<toolCallId>`. */
export interface ToolCallOutput {
  toolCallId: string;
  message: ToolResultMessage;
}

import { deniedText } from "./denied-text.js";

export { deniedText };

/** The transcript message for a finished call. */
export function toolResultMessage(
  toolCallId: string,
  toolName: string,
  result: ToolResult,
  timestamp = Date.now(),
  ids: MessageIds = PROCESS_MESSAGE_IDS,
): ToolResultMessage {
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId,
    toolName,
    content: result.content,
    isError: result.isError ?? false,
    timestamp,
    id: ids.forResult(toolCallId),
  };
  if (result.details !== undefined) message.details = result.details;
  return message;
}

/**
 * A decision that came through the journal, as the call takes it. Edited arguments are checked by
 * the tool's schema again here: whoever holds the awakeable's id (the admin API shows it) can
 * resolve it with anything, bypassing the check `SessionClient.approve` makes. Arguments the schema
 * refuses deny the call, with the reason, and nothing runs.
 *
 * @example
 * ```ts
 * journaledDecision(runtime, "guarded", { approved: true, args: { action: 42 } });
 * // { type: "DENY", reason: "the edited arguments fail the schema of tool guarded: …" }
 * ```
 */
export function journaledDecision(
  runtime: Pick<AgentRuntime, "tools">,
  toolName: string,
  decision: ApprovalDecision,
): ToolCallEvent {
  if (!decision.approved) return { type: "DENY", reason: decision.reason };
  if (decision.args === undefined) return { type: "APPROVE" };
  const tool = runtime.tools.get(toolName);
  const checked = tool ? checkEditedArgs(tool, decision.args) : { ok: false as const, error: "unknown tool" };
  if (!checked.ok)
    return {
      type: "DENY",
      reason: `the edited arguments fail the schema of tool ${toolName}: ${checked.error}`,
    };
  return { type: "APPROVE", args: checked.args };
}

function editedValidation(args: unknown): Validation {
  return { outcome: "run", args, edited: true };
}

/**
 * A result of a call that ran with arguments a human corrected: it says so to the model (a first
 * text block) and to apps (`editedArgs`), since the assistant's call in the transcript still shows
 * the model's arguments.
 */
function withEditedArgs(message: ToolResultMessage, validation: Validation): ToolResultMessage {
  if (validation.outcome !== "run" || validation.edited !== true) return message;
  const note = `[The user edited the arguments before approving; the call ran with: ${JSON.stringify(validation.args)}]`;
  return {
    ...message,
    content: [{ type: "text", text: note }, ...message.content],
    editedArgs: validation.args,
  };
}

/** A call's context as it starts: its input, with the tool looked up and the arguments validated. */
function callContext(input: ToolCallInput, self: AnyActorRef): ToolCallContext {
  const runtime = runtimeOf(self);
  return {
    ...input,
    validation: validateToolCall(runtime, input),
    external: runtime.tools.get(input.toolName)?.external === true,
  };
}

/** What a finished call outputs: its result message. */
function callOutput({ context, self }: { context: ToolCallContext; self: AnyActorRef }): ToolCallOutput {
  return {
    toolCallId: context.toolCallId,
    message: withEditedArgs(
      toolResultMessage(
        context.toolCallId,
        context.toolName,
        context.result ?? errorResult(`Tool ${context.toolName} produced no result`),
        nowFor(self),
        messageIdsFor(self),
      ),
      context.validation,
    ),
  };
}

/**
 * The scope of each call actor's current step (set as the step starts): its end is published
 * through `defer`, once the step is committed (see `announceEnd`). A weak map: a call's actor
 * holds it no longer than it lives.
 */
const stepScopes = new WeakMap<AnyActorRef, AnyActorScope>();

/**
 * Contexts made for a call that then takes the chart's full path: its context factory takes them
 * instead of validating the arguments a second time. Each is taken once.
 */
const prepared = {
  contexts: new WeakMap<ToolCallInput, ToolCallContext>(),
  put(input: ToolCallInput, context: ToolCallContext): void {
    this.contexts.set(input, context);
  },
  take(input: ToolCallInput): ToolCallContext | undefined {
    const context = this.contexts.get(input);
    if (context) this.contexts.delete(input);
    return context;
  },
};

/**
 * One tool call, as a statechart: `preparing` (lookup, validation, permission) → `awaitingApproval`
 * when the permission checker asks → `executing` → `done`. {@link toolCallMachine} runs it.
 */
const toolCallChart = setup({
  types: {
    input: {} as ToolCallInput,
    context: {} as ToolCallContext,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actors: {
    checkPermission: checkPermissionActor,
  },
  guards: {
    isSettled: (_, preparation: Validation) => preparation.outcome === "settled",
    isValidToRun: (_, preparation: Validation) => preparation.outcome === "run",
    needsApproval: (_, preparation: Preparation) => preparation.outcome === "ask",
    isValidForClient: ({ context }) => context.external && context.validation.outcome === "run",
  },
  actions: {
    announceStart: ({ context, self }) =>
      runtimeOf(self).publish({
        type: "tool_execution_start",
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: context.args,
      }),
    announceApprovalRequest: ({ context, self }) => {
      const { journal } = runtimeOf(self);
      if (journal) {
        // A durable agent waits on its journal, where the decision arrives from outside.
        const { toolCallId, toolName, args } = context;
        journal.approval({ toolCallId, toolName, args }).then(
          (decision) => {
            if (self.getSnapshot().status !== "active") return;
            const event = journaledDecision(runtimeOf(self), toolName, decision);
            // Decided from outside (not through agent.approve, which publishes it in process): published
            // here, before the call acts on it, by the agent the call is in (a sub-agent's surfaces).
            runtimeOf(self).publish({
              type: "approval_decided",
              toolCallId,
              toolName,
              approved: event.type === "APPROVE",
              ...(event.type === "APPROVE" && event.args !== undefined && { editedArgs: event.args }),
            });
            self.send(event);
          },
          (error: unknown) => {
            if (self.getSnapshot().status !== "active") return;
            self.send({ type: "DENY", reason: `The approval failed: ${errorMessage(error)}` });
          },
        );
      }
      // Published once the new state is committed: an entry action runs before the snapshot shows
      // `awaitingApproval`, so a listener answering at once (approve/deny inside the subscriber)
      // would be refused as "not waiting for approval".
      queueMicrotask(() => {
        const snapshot = self.getSnapshot();
        if (snapshot.status !== "active" || !snapshot.matches("awaitingApproval")) return;
        runtimeOf(self).publish({
          type: "approval_requested",
          toolCallId: context.toolCallId,
          toolName: context.toolName,
          args: context.args,
        });
      });
    },
    announceResultRequest: ({ context, self }) => awaitClientResult(self, context),
    adoptPreparation: assign(({ context }, preparation: Preparation) =>
      preparation.outcome === "settled"
        ? { result: preparation.result }
        : { args: preparation.args, result: context.result },
    ),
    recordResult: assign({ result: (_, result: ToolResult) => result }),
    adoptEditedArgs: assign(({ context }, args: unknown) => ({
      validation: args === undefined ? context.validation : editedValidation(args),
    })),
    // The tool runs in this actor (no child actor per call); stopping the actor aborts it.
    runTool: ({ context, self }) =>
      executeToolCall(self, {
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: validatedArgs(context),
      }),
    announceEnd: ({ context, self }) => {
      const result = context.result ?? errorResult(`Tool ${context.toolName} produced no result`);
      const publish = () =>
        runtimeOf(self).publish({
          type: "tool_execution_end",
          toolCallId: context.toolCallId,
          toolName: context.toolName,
          result,
          isError: result.isError ?? false,
          ...(result.childAgentId !== undefined && { childAgentId: result.childAgentId }),
        });
      // Published once the call's final snapshot is committed, before its parent hears of it: apps
      // call back into the agent from this event (abort(), steer()), and inside an action XState
      // takes every action the agent then makes as one this action makes (its development build
      // warns), while the parent, still not told, would answer the finished call a second time.
      const scope = stepScopes.get(self);
      if (scope) scope.defer(publish);
      else publish();
    },
  },
}).createMachine({
  id: "toolCall",
  context: ({ input, self }) => prepared.take(input) ?? callContext(input, self),
  output: callOutput,
  entry: "announceStart",
  initial: "preparing",
  states: {
    preparing: {
      always: [
        {
          guard: { type: "isSettled", params: ({ context }) => context.validation },
          target: "done",
          actions: { type: "adoptPreparation", params: ({ context }) => context.validation as Preparation },
        },
        // A client-run tool is never executed here: its call waits for the client's result.
        { guard: "isValidForClient", target: "awaitingResult" },
        {
          // The validated arguments stay in `validation`: the tool runs with them (no copy of the context).
          guard: { type: "isValidToRun", params: ({ context }) => context.validation },
          target: "executing",
        },
        { target: "checkingPermission" },
      ],
    },
    checkingPermission: {
      invoke: {
        id: "checkPermission",
        src: "checkPermission",
        input: ({ context }) => ({
          toolCallId: context.toolCallId,
          toolName: context.toolName,
          args: "args" in context.validation ? context.validation.args : context.args,
          rawArgs: context.args,
        }),
        onDone: [
          {
            guard: { type: "isSettled", params: ({ event }) => event.output },
            target: "done",
            actions: { type: "adoptPreparation", params: ({ event }) => event.output },
          },
          {
            guard: { type: "needsApproval", params: ({ event }) => event.output },
            target: "awaitingApproval",
            actions: { type: "adoptPreparation", params: ({ event }) => event.output },
          },
          { target: "executing", actions: { type: "adoptPreparation", params: ({ event }) => event.output } },
        ],
        onError: {
          target: "done",
          actions: { type: "recordResult", params: ({ event }) => thrownErrorResult(event.error) },
        },
      },
    },
    awaitingApproval: {
      entry: "announceApprovalRequest",
      on: {
        APPROVE: {
          target: "executing",
          actions: {
            type: "adoptEditedArgs",
            params: ({ event }: { event: { args?: unknown } }) => event.args,
          },
        },
        DENY: {
          target: "done",
          actions: { type: "recordResult", params: ({ event }) => errorResult(deniedText(event.reason)) },
        },
      },
    },
    executing: {
      entry: "runTool",
      on: {
        TOOL_EXECUTED: {
          target: "done",
          actions: { type: "recordResult", params: ({ event }) => event.result },
        },
      },
    },
    awaitingResult: {
      entry: "announceResultRequest",
      on: {
        RESULT_PROVIDED: {
          target: "done",
          actions: { type: "recordResult", params: ({ event }) => event.result },
        },
      },
    },
    done: {
      type: "final",
      entry: "announceEnd",
    },
  },
});

type ToolCallSnapshot = SnapshotFrom<typeof toolCallChart>;

/**
 * The tool-call chart as an actor's logic, with a direct path for a plain call: one whose tool
 * exists, whose arguments pass, that no permission checker or approval holds and no client runs.
 * Such a call goes through the chart's transient `preparing` to `executing`, then on `TOOL_EXECUTED`
 * to `done`; XState works each step out from the chart (microsteps, node sets, action lists),
 * which was most of a call's cost in a fan-out of thousands. This logic takes those two steps
 * itself: the snapshots are the chart's own for those states (copies of `resolveState`), and the
 * chart's own actions run through the actor's action executor, in the chart's order, so the
 * inspector, observers and the parent see what the chart would give them. Everything else (a
 * call that is checked, asks, is refused or waits for a client; any other event; a restored
 * snapshot's other states) is the chart's own `transition`. (Its type parameters are `any`: the
 * export below gives it the chart's types.)
 */
class ToolCallMachine extends StateMachine<
  any,
  any,
  any,
  any,
  any,
  any,
  any,
  any,
  any,
  any,
  any,
  any,
  any,
  any
> {
  private direct: { executing: ToolCallSnapshot; done: ToolCallSnapshot } | undefined;

  constructor(chart: typeof toolCallChart) {
    super(chart.config, chart.implementations);
  }

  override getInitialSnapshot(scope: AnyActorScope, input?: ToolCallInput): ToolCallSnapshot {
    stepScopes.set(scope.self, scope);
    const context = input && plainCallContext(input, scope.self);
    if (!context) return super.getInitialSnapshot(scope, input) as ToolCallSnapshot;
    // The chart's entry actions on its way in: the root's, then `executing`'s.
    const init = { type: "xstate.init", input };
    this.execute(scope, "announceStart", context, init);
    this.execute(scope, "runTool", context, init);
    return this.snapshotIn("executing", context);
  }

  override transition(
    snapshot: ToolCallSnapshot,
    event: ToolCallEvent,
    scope: AnyActorScope,
  ): ToolCallSnapshot {
    stepScopes.set(scope.self, scope);
    if (event.type !== "TOOL_EXECUTED" || snapshot.status !== "active" || snapshot.value !== "executing")
      return super.transition(snapshot, event, scope) as ToolCallSnapshot;
    // `executing` → `done`: `recordResult`, then `done`'s entry; the final state's output.
    const context: ToolCallContext = { ...snapshot.context, result: event.result };
    this.execute(scope, "announceEnd", context, event);
    return {
      ...this.snapshotIn("done", context),
      status: "done",
      output: callOutput({ context, self: scope.self }),
    } as ToolCallSnapshot;
  }

  /** The chart's snapshot of an atomic state with this context (the state's node set is made once). */
  private snapshotIn(state: "executing" | "done", context: ToolCallContext): ToolCallSnapshot {
    // Made with an empty context, so that they hold no call's arguments.
    const none = {} as ToolCallContext;
    this.direct ??= {
      executing: this.resolveState({ value: "executing", context: none }) as ToolCallSnapshot,
      done: this.resolveState({ value: "done", context: none }) as ToolCallSnapshot,
    };
    return { ...this.direct[state], context, children: {}, historyValue: {} } as ToolCallSnapshot;
  }

  /** Runs one of the chart's actions as XState runs it: through the actor's executor (inspection, deferral). */
  private execute(scope: AnyActorScope, type: string, context: ToolCallContext, event: EventObject): void {
    scope.actionExecutor({
      type,
      info: { context, event, self: scope.self, system: scope.system },
      params: undefined,
      exec: this.implementations.actions[type] as ExecutableActionObject["exec"],
    });
  }
}

/**
 * The context of a call that takes the direct path, or undefined when it takes the chart's (its
 * context is then handed to the chart's factory, so the arguments are validated once).
 */
function plainCallContext(input: ToolCallInput, self: AnyActorRef): ToolCallContext | undefined {
  let context: ToolCallContext;
  try {
    context = callContext(input, self);
  } catch {
    // Not part of an agent: the chart's own start fails the same way, into an error snapshot.
    return undefined;
  }
  if (context.validation.outcome === "run" && !context.external) return context;
  prepared.put(input, context);
  return undefined;
}

/**
 * One tool call, as an actor: `preparing` (lookup, validation, permission) → `awaitingApproval`
 * when the permission checker asks → `executing` → `done`. Its id is the tool call id. A plain
 * call (no check, no approval, not client-run) takes the chart's states without XState working
 * out each step (see {@link ToolCallMachine}).
 *
 * @example
 * ```ts
 * const call = createActor(toolCallMachine, { parent: agentActor, input: { toolCallId: "c1", toolName: "read", args: {} } });
 * ```
 */
export const toolCallMachine: typeof toolCallChart = new ToolCallMachine(
  toolCallChart,
) as unknown as typeof toolCallChart;

/**
 * Runs the tool again for a call actor restored while its tool ran (a restored snapshot does not
 * run entry actions): at-least-once, as the README says. Does nothing for a call in another state.
 *
 * @example
 * ```ts
 * for (const call of toolCallActorsOf(agent.actor)) resumeToolCall(call);
 * ```
 */
export function resumeToolCall(actor: AnyActorRef): void {
  const snapshot = actor.getSnapshot() as SnapshotFrom<typeof toolCallMachine>;
  // A client-run call restored while it waited: its timeout runs again, from the restore.
  if (snapshot.status === "active" && snapshot.matches("awaitingResult")) {
    awaitClientResult(actor, snapshot.context, { announce: false });
    return;
  }
  if (snapshot.status !== "active" || !snapshot.matches("executing")) return;
  const { toolCallId, toolName } = snapshot.context;
  executeToolCall(actor, { toolCallId, toolName, args: validatedArgs(snapshot.context) });
}

/**
 * A client-run call starts waiting: `tool_result_requested` is published once the state is
 * committed (a listener may answer at once), and the tool's timeout (or the agent's
 * `toolTimeoutMs`) answers the call with an error the model reads if the client does not.
 */
function awaitClientResult(
  self: AnyActorRef,
  context: ToolCallContext,
  { announce = true }: { announce?: boolean } = {},
): void {
  const runtime = runtimeOf(self);
  const waiting = () => {
    const snapshot = self.getSnapshot() as SnapshotFrom<typeof toolCallMachine>;
    return snapshot.status === "active" && snapshot.matches("awaitingResult");
  };
  if (announce) {
    queueMicrotask(() => {
      if (!waiting()) return;
      runtime.publish({
        type: "tool_result_requested",
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: validatedArgs(context),
      });
    });
  }
  const timeoutMs = runtime.tools.get(context.toolName)?.timeoutMs ?? runtime.toolTimeoutMs;
  const bounded = timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs);
  const timedOut = () =>
    errorResult(`Tool ${context.toolName} timed out after ${timeoutMs} ms waiting for the client's result`);
  const { journal } = runtime;
  if (journal) {
    const answer = (result: ToolResult) => {
      if (waiting()) self.send({ type: "RESULT_PROVIDED", result });
    };
    if (!journal.clientResult) {
      // A journal that cannot take a client's result: answer at once rather than wait forever.
      queueMicrotask(() =>
        answer(
          errorResult(`Tool ${context.toolName} is run by the client, which this journal does not support`),
        ),
      );
      return;
    }
    // A durable run waits on its journal, where the result (or the timeout) arrives from outside.
    journal
      .clientResult({
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: validatedArgs(context),
        ...(bounded && { timeout: { ms: timeoutMs, result: timedOut() } }),
      })
      .then(answer, (error: unknown) =>
        answer(errorResult(`Waiting for the client's result failed: ${errorMessage(error)}`)),
      );
    return;
  }
  if (!bounded) return;
  const timer = setTimeout(() => {
    if (waiting()) self.send({ type: "RESULT_PROVIDED", result: timedOut() });
  }, timeoutMs);
  // A wait must not keep the process alive by itself.
  (timer as { unref?: () => void }).unref?.();
}

/** The arguments the tool runs with: validated by its schema (and approved, when it asked). */
function validatedArgs(context: ToolCallContext): unknown {
  return "args" in context.validation ? context.validation.args : context.args;
}

function errorMessage(error: unknown): string {
  return errorText(error);
}
