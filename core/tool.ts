// The tool contract, as types: what a tool is, what its `execute` receives and returns.
// `defineTool` (which builds one from a zod schema) and the tools themselves live in tools/.
import type { AnyActorRef } from "xstate";
import type * as z from "zod";
import type { ImageContent, TextContent } from "./messages.js";
import type { Workspace } from "./workspace.js";

/** What a tool returns: content for the model, optional details for the app, and an error flag. */
export interface ToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError?: boolean;
  /** Set by tools that run a child agent (sub-agents): its id, reported in `tool_execution_end`. */
  childAgentId?: string;
}

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  toolCallId: string;
  /**
   * A key that stays the same every time this call runs, and differs between calls: pass it to the
   * services the tool changes (e.g. an `Idempotency-Key` header) so a call that runs again does not
   * act twice. It is the tool call id. A call runs again when a durable session resumes after a
   * crash in the middle of it, or when a restored snapshot had no result for it: tools run at least
   * once, never exactly once.
   */
  idempotencyKey: string;
  /** Fires on abort and on timeout. A tool that holds resources must stop when it fires. */
  signal: AbortSignal;
  /** Publishes a partial result (`tool_execution_update`), e.g. streamed command output. */
  onUpdate(partialResult: ToolResult | string): void;
  /** Publishes a one-line progress note (`tool_progress`). */
  onProgress(text: string): void;
  /**
   * Characters of text this call's result may put into the history (the agent's
   * `toolResultBudget.maxChars`, or the tool's own `maxResultChars`; `Infinity` when unlimited;
   * absent when the tool is called outside an agent). Anything longer is cut to head and tail
   * anyway; a tool that can shape its output better (a page of a file, the start and end of a log)
   * should size itself by it.
   */
  maxResultChars?: number;
  /**
   * The actor running this call, for tools that run actors of their own (the sub-agent tool passes
   * it as `parentActor`, so the child agent is an actor in the parent's tree).
   */
  actor?: AnyActorRef;
}

/** A tool the agent can call. Build one with {@link defineTool}. */
export interface Tool<TArgs = any, TDetails = unknown> {
  readonly name: string;
  readonly description: string;
  /** The zod schema that validates the model's arguments. */
  readonly parameters: z.ZodType<TArgs>;
  /** JSON Schema of `parameters`, as sent to the provider. */
  readonly jsonSchema: Record<string, unknown>;
  /** The tool changes nothing outside itself. */
  readonly readOnly: boolean;
  /** Safe to run at the same time as other concurrency-safe calls (strategy `"auto"`). */
  readonly concurrencySafe: boolean;
  /** Overrides the agent's `toolTimeoutMs` for this tool. */
  readonly timeoutMs?: number;
  /** Overrides the agent's `toolResultBudget.maxChars` for this tool (`Infinity`: never cut). */
  readonly maxResultChars?: number;
  /** The workspace the tool works in, if any (the agent spills cut results where `read_file` can read them). */
  readonly workspace?: Workspace;
  /**
   * A client-run tool (`defineClientTool`): the agent never executes it; each call waits in
   * `awaitingResult` until `agent.resolveToolCall` (or `rejectToolCall`) answers it.
   */
  readonly external?: true;
  /** Whether a call waits for `agent.approve` / `agent.deny` before it runs (see `defineTool`'s `needsApproval`). */
  readonly needsApproval?: boolean | ((args: TArgs, ctx: ApprovalContext) => boolean | Promise<boolean>);
  execute(
    args: TArgs,
    ctx: ToolContext,
  ): Promise<string | ToolResult<TDetails>> | string | ToolResult<TDetails>;
}

/** What a tool's `needsApproval` is told about the call besides its arguments. */
export interface ApprovalContext {
  toolCallId: string;
  toolName: string;
}
