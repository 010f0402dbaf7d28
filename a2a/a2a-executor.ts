// An agent behind the A2A SDK's AgentExecutor: a task is one run of the agent (an AgentHandle), its
// events become the task's status and artifact updates, an approval is the input-required state
// (answered by the client's next message on the same task), and tasks/cancel aborts the run.
import { randomUUID } from "node:crypto";
import { type Message, type Part, Role, TaskState } from "@a2a-js/sdk";
import { RequestMalformedError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import {
  AgentEvent as A2aEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import type { Subscription } from "rxjs";
import type { AgentHandle, PendingCall } from "../core/agent-handle.js";
import type { AgentEvent } from "../core/events.js";
import { userMessage } from "../core/messages.js";

/** A text part of an A2A message or artifact. */
export function textPart(text: string): Part {
  return {
    content: { $case: "text", value: text },
    metadata: undefined,
    filename: "",
    mediaType: "text/plain",
  };
}

/** A JSON data part of an A2A message or artifact. */
export function dataPart(value: unknown): Part {
  return {
    content: { $case: "data", value },
    metadata: undefined,
    filename: "",
    mediaType: "application/json",
  };
}

/** The text of an A2A message's text parts, joined by newlines. */
export function messageText(message: Message | undefined): string {
  return (message?.parts ?? [])
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .filter((text) => text !== "")
    .join("\n");
}

/** An approval decision, as a client sends it on an input-required task. */
export interface A2aDecision {
  toolCallId: string;
  approve: boolean;
  reason?: string;
}

/**
 * The decision a client's message carries for a pending call: a data part
 * `{ approve: boolean, toolCallId?, reason? }`, or the text `approve` / `deny`. `toolCallId` may be
 * left out while one call waits. Anything else is refused (nothing is decided).
 *
 * @example
 * ```ts
 * decisionOf(message, { toolCallId: "call_1", toolName: "bash", args: {} }); // { toolCallId: "call_1", approve: true }
 * ```
 */
export function decisionOf(message: Message | undefined, pending: PendingCall): A2aDecision {
  for (const part of message?.parts ?? []) {
    if (part.content?.$case !== "data") continue;
    const value = part.content.value as Record<string, unknown> | undefined;
    if (typeof value !== "object" || value === null || typeof value.approve !== "boolean") continue;
    if (value.toolCallId !== undefined && value.toolCallId !== pending.toolCallId) {
      throw new RequestMalformedError(
        `No call ${JSON.stringify(value.toolCallId)} waits for a decision on this task (${pending.toolCallId} does)`,
      );
    }
    return {
      toolCallId: pending.toolCallId,
      approve: value.approve,
      ...(typeof value.reason === "string" && { reason: value.reason }),
    };
  }
  const text = messageText(message).trim().toLowerCase();
  if (text === "approve" || text === "deny")
    return { toolCallId: pending.toolCallId, approve: text === "approve" };
  throw new RequestMalformedError(
    `Task waits for a decision on ${pending.toolName} (${pending.toolCallId}): send a data part { "approve": true | false } or the text "approve" / "deny"`,
  );
}

/** Where one task's run is. */
interface TaskRun {
  taskId: string;
  contextId: string;
  handle: AgentHandle;
  runId: string;
  /** The next event to read of the run. */
  nextSeq: number;
  /** The call the task waits for (input-required), if it waits. */
  pending?: PendingCall;
  /** The run's events are being read onto a bus now. */
  following?: Subscription;
  /** The answer artifact has had its first chunk. */
  answered: boolean;
}

/** Options of {@link createA2aExecutor}. */
export interface A2aExecutorOptions {
  /** The agent of one A2A context (one conversation): asked once per new `contextId`. */
  handleFor(contextId: string): AgentHandle | Promise<AgentHandle>;
  /** Contexts kept (the least recently used beyond it is forgotten). Default 1000. */
  maxContexts?: number;
}

/** The executor and what the HTTP handler needs of it. */
export interface A2aExecutor extends AgentExecutor {
  /**
   * Refuses, before anything changes, a message the agent cannot take: one for a task that waits
   * with no valid decision, or works; a new task with no text, or in a context whose task is not done
   * (or is being started by a request still in flight). A new task in a named context holds it until
   * the returned release is called, when its request is answered: call it once, in a `finally`.
   */
  checkMessage(message: Message | undefined): () => void;
  /** Aborts every run (the handler closes). */
  close(): Promise<void>;
}

const ANSWER_ARTIFACT = "answer";

/**
 * An A2A `AgentExecutor` over {@link AgentHandle}s: one handle per context, one run per task.
 *
 * @example
 * ```ts
 * const executor = createA2aExecutor({ handleFor: () => agentHandle(createAgent({ provider })) });
 * ```
 */
export function createA2aExecutor(options: A2aExecutorOptions): A2aExecutor {
  const contexts = new Map<string, Promise<AgentHandle>>();
  const runs = new Map<string, TaskRun>();
  /** Contexts a request in flight starts a task in (between its check and its answer). */
  const starting = new Set<string>();

  const maxContexts = options.maxContexts ?? 1000;
  const handleOf = (contextId: string): Promise<AgentHandle> => {
    let handle = contexts.get(contextId);
    if (handle) {
      // Most recently used last, so the first is the one to forget.
      contexts.delete(contextId);
    } else {
      handle = Promise.resolve(options.handleFor(contextId));
      handle.catch(() => contexts.delete(contextId));
    }
    contexts.set(contextId, handle);
    for (const oldest of contexts.keys()) {
      if (contexts.size <= maxContexts) break;
      // A context with a task still running or waiting is kept.
      if ([...runs.values()].some((run) => run.contextId === oldest)) continue;
      contexts.delete(oldest);
    }
    return handle;
  };

  const status = (run: TaskRun, state: TaskState, text?: string, data?: unknown) =>
    A2aEvent.statusUpdate({
      taskId: run.taskId,
      contextId: run.contextId,
      status: {
        state,
        timestamp: new Date().toISOString(),
        message:
          text === undefined
            ? undefined
            : {
                messageId: randomUUID(),
                contextId: run.contextId,
                taskId: run.taskId,
                role: Role.ROLE_AGENT,
                parts: data === undefined ? [textPart(text)] : [textPart(text), dataPart(data)],
                metadata: undefined,
                extensions: [],
                referenceTaskIds: [],
              },
      },
      metadata: undefined,
    });

  /** Publishes one agent event; true when the task stops here (input-required or the end). */
  const publish = (run: TaskRun, event: AgentEvent, bus: ExecutionEventBus): boolean => {
    switch (event.type) {
      case "agent_start":
        bus.publish(status(run, TaskState.TASK_STATE_WORKING));
        return false;
      case "message_update":
        if (event.kind !== "text_delta" || event.delta === "") return false;
        bus.publish(
          A2aEvent.artifactUpdate({
            taskId: run.taskId,
            contextId: run.contextId,
            artifact: {
              artifactId: ANSWER_ARTIFACT,
              name: "answer",
              description: "",
              parts: [textPart(event.delta)],
              metadata: undefined,
              extensions: [],
            },
            append: run.answered,
            lastChunk: false,
            metadata: undefined,
          }),
        );
        run.answered = true;
        return false;
      case "tool_execution_start":
        bus.publish(status(run, TaskState.TASK_STATE_WORKING, `running ${event.toolName}`));
        return false;
      case "approval_requested":
        run.pending = { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args };
        bus.publish(
          status(
            run,
            TaskState.TASK_STATE_INPUT_REQUIRED,
            `The agent wants to run ${event.toolName} with ${JSON.stringify(event.args)}. Approve?`,
            { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args },
          ),
        );
        return true;
      case "agent_end": {
        runs.delete(run.taskId);
        const answer = lastText(event.messages);
        if (event.reason === "stop") bus.publish(status(run, TaskState.TASK_STATE_COMPLETED, answer));
        else if (event.reason === "aborted")
          bus.publish(status(run, TaskState.TASK_STATE_CANCELED, "cancelled"));
        else if (event.reason === "rejected") {
          bus.publish(status(run, TaskState.TASK_STATE_REJECTED, event.rejection ?? "rejected"));
        } else {
          bus.publish(
            status(run, TaskState.TASK_STATE_FAILED, event.errorMessage ?? `the run ended: ${event.reason}`),
          );
        }
        bus.finished();
        return true;
      }
      default:
        return false;
    }
  };

  /** Reads the run's events onto `bus` until the task waits for input or ends. */
  const follow = (run: TaskRun, bus: ExecutionEventBus): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      let done = false;
      const subscription = run.handle.eventsSince(run.runId, run.nextSeq).subscribe({
        next: ({ seq, event }) => {
          if (done) return;
          run.nextSeq = seq + 1;
          if (publish(run, event, bus)) {
            done = true;
            run.following = undefined;
            queueMicrotask(() => subscription.unsubscribe());
            resolve();
          }
        },
        error: (error: unknown) => {
          run.following = undefined;
          reject(error instanceof Error ? error : new Error(String(error)));
        },
        complete: () => {
          run.following = undefined;
          resolve();
        },
      });
      if (!done) run.following = subscription;
    });

  return {
    checkMessage(message) {
      const run = message?.taskId ? runs.get(message.taskId) : undefined;
      if (run) {
        if (run.pending) decisionOf(message, run.pending);
        else {
          throw new RequestMalformedError(
            `Task ${run.taskId} is working and waits for no input: follow it (SubscribeToTask) or cancel it`,
          );
        }
        return () => {};
      }
      if (message?.taskId) return () => {}; // a task that ended, or none: the SDK answers for it
      // A new task: the run would refuse it after the task was made (a failed task, an error logged).
      if (messageText(message).trim() === "") {
        throw new RequestMalformedError(
          "The message has no text: its text parts are the prompt (files and data parts alone are not read)",
        );
      }
      const busy = message?.contextId
        ? [...runs.values()].find((other) => other.contextId === message.contextId)
        : undefined;
      if (busy) {
        throw new UnsupportedOperationError(
          `Context ${busy.contextId} has task ${busy.taskId} ${busy.pending ? "waiting for a decision" : "running"}: one task runs at a time in a context; answer, follow or cancel it, or start a new context`,
        );
      }
      const contextId = message?.contextId;
      if (!contextId) return () => {}; // a new context: nobody else names it yet
      // Two requests at once: the first holds the context until its run is known (runs) or refused.
      if (starting.has(contextId)) {
        throw new UnsupportedOperationError(
          `Context ${contextId} has a task being started by another request: one task runs at a time in a context; wait for it, or start a new context`,
        );
      }
      starting.add(contextId);
      return () => starting.delete(contextId);
    },

    async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
      const existing = runs.get(context.taskId);
      if (existing?.pending && context.task) {
        bus.publish(A2aEvent.task(context.task));
        const decision = decisionOf(context.userMessage, existing.pending);
        existing.pending = undefined;
        await existing.handle.answer([
          decision.approve
            ? { toolCallId: decision.toolCallId, approve: {} }
            : {
                toolCallId: decision.toolCallId,
                deny: { reason: decision.reason ?? "The user refused this call." },
              },
        ]);
        bus.publish(status(existing, TaskState.TASK_STATE_WORKING));
        return follow(existing, bus);
      }
      const handle = await handleOf(context.contextId);
      const message = context.userMessage;
      bus.publish(
        A2aEvent.task({
          id: context.taskId,
          contextId: context.contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [message],
          metadata: undefined,
        }),
      );
      const { runId } = await handle.run(userMessage(messageText(message)));
      const run: TaskRun = {
        taskId: context.taskId,
        contextId: context.contextId,
        handle,
        runId,
        nextSeq: 0,
        answered: false,
      };
      runs.set(context.taskId, run);
      return follow(run, bus);
    },

    async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
      const run = runs.get(taskId);
      if (!run) return;
      if (run.following) {
        // The reader publishes the cancellation when the run's agent_end arrives.
        await run.handle.abort();
        return;
      }
      // Waiting for input: nobody reads the run, so the cancellation is published here.
      runs.delete(taskId);
      await run.handle.abort();
      bus.publish(status(run, TaskState.TASK_STATE_CANCELED, "cancelled"));
      bus.finished();
    },

    async close() {
      for (const run of [...runs.values()]) await run.handle.abort().catch(() => false);
      runs.clear();
    },
  };
}

function lastText(messages: readonly { role: string; content?: unknown }[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    return (message.content as { type: string; text?: string }[])
      .filter((part) => part.type === "text")
      .map((part) => part.text)
      .join("");
  }
  return "";
}
