// MCP Tasks on the client side (the Tasks extension of 2026-07-28, `io.modelcontextprotocol/tasks`):
// a server may answer a tool call with a task handle instead of a result; the client polls
// `tasks/get` until the task ends. The v2 SDK has no runtime for the extension (its client refuses a
// result of type "task"), so a task result is lifted out at the transport, before the SDK reads it.
import type { Client } from "@modelcontextprotocol/client";
import { z } from "zod";
import { lazy } from "../core/lazy.js";

/** The Tasks extension's identifier (SEP-2663). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Where a lifted task handle travels inside the result the SDK reads. */
const TASK_KEY = "agent-machine/task";

/** A task handle (`CreateTaskResult`) or a task's state (`tasks/get`), as much as a client reads. */
export interface McpTask {
  taskId: string;
  status: "working" | "input_required" | "completed" | "cancelled" | "failed" | string;
  statusMessage?: string;
  pollIntervalMs?: number;
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  result?: Record<string, unknown>;
  error?: { code?: number; message?: string };
}

const TaskSchema = /* @__PURE__ */ lazy(() =>
  z.looseObject({
    taskId: z.string(),
    status: z.string(),
    statusMessage: z.string().optional(),
    pollIntervalMs: z.number().optional(),
    inputRequests: z.record(z.string(), z.looseObject({ method: z.string() })).optional(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }).optional(),
  }),
);

/**
 * Makes a transport hand the SDK a task result as a result it reads: a tool-call response with
 * `resultType: "task"` becomes an error result (no output validation) carrying the handle, which
 * {@link taskOf} finds again. Call it before `client.connect(transport)`.
 *
 * @example
 * ```ts
 * const transport = liftTaskResults(new StreamableHTTPClientTransport(url));
 * await client.connect(transport);
 * ```
 */
export function liftTaskResults<T extends object>(transport: T): T {
  let handler: ((message: unknown, extra?: unknown) => void) | undefined;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => handler,
    set: (next: ((message: unknown, extra?: unknown) => void) | undefined) => {
      handler = next && ((message, extra) => next(liftTask(message), extra));
    },
  });
  return transport;
}

function liftTask(message: unknown): unknown {
  const result = (message as { result?: { resultType?: unknown } } | undefined)?.result;
  if (result?.resultType !== "task") return message;
  return {
    ...(message as object),
    result: { resultType: "complete", content: [], isError: true, _meta: { [TASK_KEY]: result } },
  };
}

/**
 * The task handle a tool call was answered with, or `undefined` for an ordinary result.
 *
 * @example
 * ```ts
 * const task = taskOf(await client.callTool({ name: "render", arguments: {} }));
 * if (task) await followTask(client, task, { signal });
 * ```
 */
export function taskOf(result: Record<string, unknown>): McpTask | undefined {
  const task = (result._meta as Record<string, unknown> | undefined)?.[TASK_KEY];
  const parsed = TaskSchema().safeParse(task);
  return parsed.success ? (parsed.data as McpTask) : undefined;
}

/** How {@link followTask} follows a task. */
export interface FollowTaskOptions {
  signal: AbortSignal;
  /** Each new status line of the task. */
  onStatus?: (text: string) => void;
  /**
   * Answers a request for input the task waits on (an elicitation): the answer goes back with
   * `tasks/update`. Without it, such requests are declined.
   */
  answerInput?: (
    key: string,
    request: { method: string; params?: Record<string, unknown> },
  ) => Promise<unknown>;
  /** Polling interval when the server suggests none. Default 500 ms. */
  pollIntervalMs?: number;
}

/**
 * Polls a task (`tasks/get`, at the interval the server suggests) until it ends, answering what it
 * waits on; resolves with its final state. An abort cancels the task (`tasks/cancel`) and rejects.
 *
 * @example
 * ```ts
 * const done = await followTask(client, task, { signal, onStatus: (text) => console.log(text) });
 * if (done.status === "completed") console.log(done.result);
 * ```
 */
export async function followTask(
  client: Client,
  task: McpTask,
  options: FollowTaskOptions,
): Promise<McpTask> {
  const { signal } = options;
  const answered = new Set<string>();
  let current = task;
  let lastStatus: string | undefined;
  try {
    for (;;) {
      const line = current.statusMessage ?? current.status;
      if (line !== lastStatus) options.onStatus?.((lastStatus = line));
      if (current.status === "completed" || current.status === "failed" || current.status === "cancelled") {
        return current;
      }
      if (current.status === "input_required" && current.inputRequests) {
        const responses: Record<string, unknown> = {};
        for (const [key, request] of Object.entries(current.inputRequests)) {
          if (answered.has(key)) continue;
          answered.add(key);
          responses[key] = options.answerInput
            ? await options.answerInput(key, request)
            : { action: "decline" };
        }
        if (Object.keys(responses).length > 0) {
          await client.request(
            { method: "tasks/update", params: { taskId: task.taskId, inputResponses: responses } },
            z.looseObject({}),
            { signal },
          );
        }
      }
      await sleep(current.pollIntervalMs ?? task.pollIntervalMs ?? options.pollIntervalMs ?? 500, signal);
      current = (await client.request(
        { method: "tasks/get", params: { taskId: task.taskId } },
        TaskSchema(),
        {
          signal,
        },
      )) as McpTask;
    }
  } catch (error) {
    if (signal.aborted) {
      await client
        .request({ method: "tasks/cancel", params: { taskId: task.taskId } }, z.looseObject({}))
        .catch(() => undefined);
    }
    throw error;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
