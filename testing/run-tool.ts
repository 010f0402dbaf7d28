import * as z from "zod";
import {
  errorResult,
  normalizeToolResult,
  type Tool,
  type ToolContext,
  type ToolResult,
} from "../tools/define-tool.js";

/** Options of {@link runTool}. */
export interface RunToolOptions {
  /** The call's id (and idempotency key). Default `"call_test"`. */
  toolCallId?: string;
  /** Abort the call from the test (e.g. `AbortSignal.timeout(100)`, or a controller you abort mid-run). */
  signal?: AbortSignal;
  /** Abort the call and answer a timeout error after this long, as the agent's `toolTimeoutMs` does. Default: the tool's own `timeoutMs`. */
  timeoutMs?: number;
  /** What `ctx.maxResultChars` says. Default 50 000 (the agent's default budget). */
  maxResultChars?: number;
  /** Validate the arguments with the tool's schema first, as the agent does. Default `true`. */
  validate?: boolean;
}

/** What one call of a tool produced. */
export interface ToolRun<TDetails = unknown> {
  /** The result, as the agent would record it (a thrown error or a timeout becomes an error result). */
  result: ToolResult<TDetails>;
  /** The result's text parts, joined. */
  text: string;
  isError: boolean;
  /** Every partial result the tool published (`ctx.onUpdate`), in order. */
  updates: ToolResult[];
  /** Every progress note (`ctx.onProgress`), in order. */
  progress: string[];
  /** The signal the tool got fired (abort or timeout). */
  aborted: boolean;
  /** What the tool threw, if it threw. */
  error?: unknown;
}

/**
 * Runs one tool the way the agent runs it — arguments validated by its schema, a full
 * {@link ToolContext} (signal, `onUpdate`, `onProgress`, idempotency key, result budget), a thrown
 * error turned into an error result, a timeout that aborts the signal — without an agent or a model.
 * The tool's workspace is its own (`createWriteFileTool({ workspace })`, `codingTools({ cwd })`).
 *
 * @example
 * ```ts
 * const { text, isError } = await runTool(add, { a: 2, b: 3 });
 * assert.equal(text, "5");
 * ```
 */
export async function runTool<TArgs, TDetails>(
  tool: Tool<TArgs, TDetails>,
  args: unknown,
  options: RunToolOptions = {},
): Promise<ToolRun<TDetails>> {
  const updates: ToolResult[] = [];
  const progress: string[] = [];
  const toolCallId = options.toolCallId ?? "call_test";
  const controller = new AbortController();
  const outer = options.signal;
  const onOuterAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onOuterAbort();
  else outer?.addEventListener("abort", onOuterAbort, { once: true });

  const finish = (result: ToolResult, error?: unknown): ToolRun<TDetails> => ({
    result: result as ToolResult<TDetails>,
    text: textOf(result),
    isError: result.isError ?? false,
    updates,
    progress,
    aborted: controller.signal.aborted,
    ...(error !== undefined && { error }),
  });

  let input: unknown = args;
  if (options.validate !== false) {
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      return finish(
        errorResult(`Validation failed for tool "${tool.name}": ${z.prettifyError(parsed.error)}`),
      );
    }
    input = parsed.data;
  }

  let settled = false;
  const ctx: ToolContext = {
    toolCallId,
    idempotencyKey: toolCallId,
    signal: controller.signal,
    maxResultChars: options.maxResultChars ?? 50_000,
    onUpdate: (partial) => {
      if (!settled) updates.push(normalizeToolResult(partial));
    },
    onProgress: (text) => {
      if (!settled) progress.push(text);
    },
  };

  const timeoutMs = options.timeoutMs ?? tool.timeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut =
    timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs)
      ? new Promise<ToolResult>((resolve) => {
          timer = setTimeout(() => {
            resolve(errorResult(`Tool ${tool.name} timed out after ${timeoutMs} ms`));
            controller.abort(new Error("timeout"));
          }, timeoutMs);
        })
      : undefined;
  const aborted = new Promise<ToolResult>((resolve) => {
    const onAbort = () => resolve(errorResult(`Tool ${tool.name} aborted`));
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener("abort", onAbort, { once: true });
  });

  let thrown: unknown;
  const execution = (async () => {
    try {
      return normalizeToolResult(await tool.execute(input as TArgs, ctx));
    } catch (error) {
      thrown = error;
      return errorResult(error instanceof Error ? error.message : String(error));
    }
  })();
  try {
    const result = await Promise.race([execution, aborted, ...(timedOut ? [timedOut] : [])]);
    settled = true;
    return finish(result, thrown);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
  }
}

function textOf(result: ToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("");
}
