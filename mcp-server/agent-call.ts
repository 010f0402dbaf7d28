// One agent run started by an MCP tool call on the 2026-07-28 revision, where a run can outlive the
// request that started it: it waits between rounds of a multi-round-trip call (an approval asked
// as an `input_required` result) and runs on as an MCP Task the client polls.
import { randomUUID } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Agent } from "../agent/agent.js";
import type { AgentEvent } from "../core/events.js";
import type { RunOutcome } from "../core/run-outcome.js";
import {
  approvalForm,
  approvalQuestion,
  callResultOf,
  progressMessage,
  type McpAgentTool,
} from "./serve-mcp.js";

/** A task's status, as the Tasks extension names them. */
export type AgentCallStatus = "working" | "input_required" | "completed" | "cancelled" | "failed";

/** A call of the agent waiting for approval, as the client is asked about it. */
interface PendingApproval {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** An embedded elicitation request (MRTR `inputRequests` entry, or a task's). */
export interface ApprovalInputRequest {
  method: "elicitation/create";
  params: { mode: "form"; message: string; requestedSchema: ReturnType<typeof approvalForm> };
}

/**
 * One running call: its agent, what it waits for, its result once it has one. `changed()` resolves
 * on the next change (an approval asked, the run ended), so a request can wait for either.
 */
export interface AgentCall {
  readonly id: string;
  readonly toolName: string;
  readonly agent: Agent;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly status: AgentCallStatus;
  /** The last progress line (a turn, a tool call): the task's `statusMessage`. */
  readonly statusMessage: string | undefined;
  /** Set once the run ended. */
  readonly result: CallToolResult | undefined;
  /** Where progress lines go while a request follows the run (the request's notifications). */
  onProgress: ((message: string) => void) | undefined;
  /** Resolves on the next change of status or of what waits for approval. */
  changed(): Promise<void>;
  /** The approvals waiting, keyed by the agent's call id (unique over the call's lifetime). */
  inputRequests(): Record<string, ApprovalInputRequest>;
  /**
   * Answers waiting approvals from the client's `inputResponses`: `accept` with `approve: true`
   * runs the call; any other answer denies it. Keys that wait for nothing are ignored (as the spec
   * says a server should).
   */
  answer(inputResponses: Record<string, unknown>): void;
  /** Denies every waiting approval with `reason` (the model reads it). */
  refuseAll(reason: string): void;
  /** Aborts the run (the client cancelled). */
  cancel(): void;
}

/**
 * Starts `prompt` on a fresh agent of `tool` and follows it.
 *
 * @example
 * ```ts
 * const call = startAgentCall("helper", tool, "Summarise README.md");
 * await call.changed(); // an approval waits, or the run ended
 * ```
 */
export function startAgentCall(toolName: string, tool: McpAgentTool, prompt: string): AgentCall {
  const agent = tool.create();
  const pending = new Map<string, PendingApproval>();
  const createdAt = new Date().toISOString();
  let lastUpdatedAt = createdAt;
  let status: AgentCallStatus = "working";
  let statusMessage: string | undefined;
  let result: CallToolResult | undefined;
  let wake: (() => void) | undefined;
  let next: Promise<void> | undefined;

  const touch = () => {
    lastUpdatedAt = new Date().toISOString();
    status = result ? status : pending.size > 0 ? "input_required" : "working";
    const resolve = wake;
    wake = next = undefined;
    resolve?.();
  };
  const decide = (toolCallId: string, approved: boolean, reason: string) => {
    if (!pending.delete(toolCallId)) return;
    try {
      if (approved) agent.approve(toolCallId);
      else agent.deny(toolCallId, reason);
    } catch {
      // Decided already: the run was aborted meanwhile.
    }
    touch();
  };

  const subscription = agent.events$.subscribe((event: AgentEvent) => {
    const message = progressMessage(event);
    if (message) {
      statusMessage = message;
      call.onProgress?.(message);
    }
    if (event.type === "approval_requested") {
      pending.set(event.toolCallId, {
        toolCallId: event.toolCallId,
        toolName: event.toolName,
        args: event.args,
      });
      touch();
    }
  });
  const finish = (outcome: RunOutcome | undefined, error?: unknown) => {
    subscription.unsubscribe();
    pending.clear();
    if (outcome?.reason === "aborted") {
      status = "cancelled";
      result = { isError: true, content: [{ type: "text", text: "[the run ended: aborted]" }] };
    } else {
      status = "completed";
      result = outcome
        ? callResultOf(tool, outcome)
        : { isError: true, content: [{ type: "text", text: (error as Error)?.message ?? String(error) }] };
    }
    agent.stop();
    touch();
  };
  const call: AgentCall = {
    id: randomUUID(),
    toolName,
    agent,
    createdAt,
    get lastUpdatedAt() {
      return lastUpdatedAt;
    },
    get status() {
      return status;
    },
    get statusMessage() {
      return statusMessage;
    },
    get result() {
      return result;
    },
    onProgress: undefined,
    changed() {
      next ??= new Promise<void>((resolve) => (wake = resolve));
      return next;
    },
    inputRequests() {
      const requests: Record<string, ApprovalInputRequest> = {};
      for (const [key, waiting] of pending) {
        requests[key] = {
          method: "elicitation/create",
          params: { mode: "form", message: approvalQuestion(waiting), requestedSchema: approvalForm() },
        };
      }
      return requests;
    },
    answer(inputResponses) {
      for (const [key, response] of Object.entries(inputResponses)) {
        if (!pending.has(key)) continue;
        const { action, content } = (response ?? {}) as { action?: unknown; content?: { approve?: unknown } };
        decide(key, action === "accept" && content?.approve === true, "The user refused this call.");
      }
    },
    refuseAll(reason) {
      for (const key of [...pending.keys()]) decide(key, false, reason);
    },
    cancel() {
      if (result) return;
      try {
        agent.abort();
      } catch {
        // Stopped already (the app closed it): nothing runs.
      }
    },
  };
  // Started once the call exists: the first events come synchronously.
  agent.prompt(prompt, tool.output ? { output: tool.output } : undefined).then(
    (outcome) => finish(outcome),
    (error: unknown) => finish(undefined, error),
  );
  return call;
}
