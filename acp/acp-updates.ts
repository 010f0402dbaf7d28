// How our agent's events and transcript read in ACP: `session/update` notifications, tool call
// kinds, diffs and stop reasons. Pure functions, so the mapping table of docs/acp.md is tested here.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import type {
  ContentBlock,
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolKind,
} from "@agentclientprotocol/sdk";
import type { AgentEndReason, AgentEvent } from "../core/events.js";
import type { AgentMessage, ImageContent, TextContent, UserMessage } from "../core/messages.js";
import { acpPlanEntries, PLAN_TOOL_NAME } from "./plan-tool.js";

/**
 * The ACP kind of one of our tools, by its name (the editor picks an icon from it).
 *
 * @example
 * ```ts
 * acpToolKind("edit_file"); // "edit"
 * ```
 */
export function acpToolKind(toolName: string): ToolKind {
  switch (toolName) {
    case "read_file":
      return "read";
    case "write_file":
    case "edit_file":
      return "edit";
    case "bash":
      return "execute";
    case "grep":
    case "glob":
    case "list_files":
      return "search";
    default:
      return "other";
  }
}

const argsOf = (args: unknown): Record<string, unknown> =>
  args !== null && typeof args === "object" ? (args as Record<string, unknown>) : {};

/**
 * A one-line title for a tool call: the tool and what it acts on (a path, a command).
 *
 * @example
 * ```ts
 * acpToolTitle("bash", { command: "npm test" }); // "bash: npm test"
 * ```
 */
export function acpToolTitle(toolName: string, args: unknown): string {
  const a = argsOf(args);
  const subject = [a.command, a.path, a.pattern].find((v) => typeof v === "string") as string | undefined;
  if (!subject) return toolName;
  const line = subject.split("\n")[0]!;
  return `${toolName}: ${line.length > 120 ? `${line.slice(0, 119)}…` : line}`;
}

/**
 * The diff an edit tool's call makes, as ACP shows it (`write_file`'s old text is the file as it is
 * now, `null` when it does not exist yet); none for other tools. Paths are made absolute: ACP wants
 * them so.
 *
 * @example
 * ```ts
 * acpToolDiff("edit_file", { path: "a.ts", old_string: "x", new_string: "y" }, "/repo");
 * // [{ type: "diff", path: "/repo/a.ts", oldText: "x", newText: "y" }]
 * ```
 */
export function acpToolDiff(toolName: string, args: unknown, cwd: string): ToolCallContent[] {
  const a = argsOf(args);
  if (typeof a.path !== "string") return [];
  const file = path.resolve(cwd, a.path);
  if (toolName === "edit_file" && typeof a.old_string === "string" && typeof a.new_string === "string") {
    return [{ type: "diff", path: file, oldText: a.old_string, newText: a.new_string }];
  }
  if (toolName === "write_file" && typeof a.content === "string") {
    return [{ type: "diff", path: file, oldText: currentText(file), newText: a.content }];
  }
  return [];
}

function currentText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * The locations a call touches (a file path), so the editor can follow along.
 *
 * @example
 * ```ts
 * acpToolLocations({ path: "src/a.ts" }, "/repo"); // [{ path: "/repo/src/a.ts" }]
 * ```
 */
export function acpToolLocations(args: unknown, cwd: string): { path: string }[] {
  const a = argsOf(args);
  return typeof a.path === "string" ? [{ path: path.resolve(cwd, a.path) }] : [];
}

/**
 * The ACP stop reason of a run's end. An error is not a stop reason in ACP: the prompt request
 * fails with it instead (`undefined` here).
 *
 * @example
 * ```ts
 * acpStopReason("aborted"); // "cancelled"
 * ```
 */
export function acpStopReason(reason: AgentEndReason): StopReason | undefined {
  switch (reason) {
    case "stop":
      return "end_turn";
    case "aborted":
      return "cancelled";
    case "limit":
    case "loop":
      return "max_turn_requests";
    case "rejected":
      return "refusal";
    case "error":
      return undefined;
  }
}

const textBlock = (text: string): ContentBlock => ({ type: "text", text });

/** An `update_plan` call as ACP's `plan` update; none when its arguments are not a plan. */
function planUpdate(args: unknown): SessionUpdate | undefined {
  const entries = acpPlanEntries(args);
  return entries && { sessionUpdate: "plan", entries };
}

/**
 * The `session/update` one of our live events is, if any (text and thinking deltas, tool calls
 * starting and ending); `cwd` makes diff paths absolute. Approvals are not updates: the server asks
 * them with `session/request_permission`.
 *
 * @example
 * ```ts
 * acpUpdateOf({ type: "message_update", kind: "text_delta", delta: "Hi", message }, "/repo");
 * // { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hi" } }
 * ```
 */
export function acpUpdateOf(event: AgentEvent, cwd: string): SessionUpdate | undefined {
  switch (event.type) {
    case "message_update":
      if (event.kind === "text_delta")
        return { sessionUpdate: "agent_message_chunk", content: textBlock(event.delta) };
      if (event.kind === "thinking_delta")
        return { sessionUpdate: "agent_thought_chunk", content: textBlock(event.delta) };
      return undefined;
    case "tool_execution_start":
      if (event.toolName === PLAN_TOOL_NAME) return planUpdate(event.args);
      return {
        sessionUpdate: "tool_call",
        ...acpToolCall(event.toolCallId, event.toolName, event.args, cwd),
        status: "in_progress",
      };
    case "tool_execution_update": {
      if (event.toolName === PLAN_TOOL_NAME) return undefined;
      // A command running in the client's terminal: the editor shows that terminal in the call.
      const terminalId = (event.partialResult.details as { terminalId?: unknown } | undefined)?.terminalId;
      if (typeof terminalId !== "string") return undefined;
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: event.toolCallId,
        content: [{ type: "terminal", terminalId }],
      };
    }
    case "tool_execution_end":
      // A plan call is shown as the plan, not as a call.
      if (event.toolName === PLAN_TOOL_NAME) return undefined;
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: event.toolCallId,
        status: event.isError ? "failed" : "completed",
        content: resultContent(event.result.content),
      };
    default:
      return undefined;
  }
}

/**
 * The ACP description of a call (title, kind, input, diff, locations), for `tool_call` and for a
 * permission request.
 *
 * @example
 * ```ts
 * const call = acpToolCall("call-1", "bash", { command: "ls" }, "/repo");
 * ```
 */
export function acpToolCall(toolCallId: string, toolName: string, args: unknown, cwd: string) {
  return {
    toolCallId,
    title: acpToolTitle(toolName, args),
    kind: acpToolKind(toolName),
    rawInput: args,
    content: acpToolDiff(toolName, args, cwd),
    locations: acpToolLocations(args, cwd),
  };
}

function resultContent(content: readonly (TextContent | ImageContent)[]): ToolCallContent[] {
  return content.map((part) => ({
    type: "content",
    content:
      part.type === "text"
        ? textBlock(part.text)
        : { type: "image", data: part.data, mimeType: part.mimeType },
  }));
}

/**
 * A transcript replayed as `session/update`s, for `session/load`: user and agent text, thinking,
 * and each tool call with its final status and result.
 *
 * @example
 * ```ts
 * for (const update of acpHistory(agent.messages, cwd)) await client.notify("session/update", { sessionId, update });
 * ```
 */
export function acpHistory(messages: readonly AgentMessage[], cwd: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      for (const block of userBlocks(message))
        updates.push({ sessionUpdate: "user_message_chunk", content: block });
    } else if (message.role === "assistant") {
      for (const part of message.content) {
        if (part.type === "text" && part.text)
          updates.push({ sessionUpdate: "agent_message_chunk", content: textBlock(part.text) });
        else if (part.type === "thinking" && part.thinking)
          updates.push({ sessionUpdate: "agent_thought_chunk", content: textBlock(part.thinking) });
        else if (part.type === "toolCall" && part.name === PLAN_TOOL_NAME) {
          const plan = planUpdate(part.arguments);
          if (plan) updates.push(plan);
        } else if (part.type === "toolCall")
          updates.push({
            sessionUpdate: "tool_call",
            ...acpToolCall(part.id, part.name, part.arguments, cwd),
            status: "pending",
          });
      }
    } else if (message.role === "toolResult" && message.toolName !== PLAN_TOOL_NAME) {
      updates.push({
        sessionUpdate: "tool_call_update",
        toolCallId: message.toolCallId,
        status: message.isError ? "failed" : "completed",
        content: resultContent(message.content),
      });
    }
  }
  return updates;
}

function userBlocks(message: UserMessage): ContentBlock[] {
  if (typeof message.content === "string") return [textBlock(message.content)];
  return message.content.map((part) =>
    part.type === "text" ? textBlock(part.text) : { type: "image", data: part.data, mimeType: part.mimeType },
  );
}

/**
 * An ACP prompt as our user message: text blocks, images, embedded text resources (inlined with
 * their URI) and resource links (named). Audio and binary resources are refused: no model of ours
 * takes them from here.
 *
 * @example
 * ```ts
 * promptFromAcp([{ type: "text", text: "fix it" }]); // "fix it"
 * ```
 */
export function promptFromAcp(blocks: readonly ContentBlock[]): string | UserMessage {
  const parts: (TextContent | ImageContent)[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text });
        break;
      case "image":
        parts.push({ type: "image", data: block.data, mimeType: block.mimeType });
        break;
      case "resource_link":
        parts.push({ type: "text", text: `\n[file: ${block.uri}]` });
        break;
      case "resource":
        if ("text" in block.resource) {
          parts.push({ type: "text", text: `\n[file: ${block.resource.uri}]\n${block.resource.text}` });
          break;
        }
        throw new TypeError(`A binary resource (${block.resource.uri}) cannot be sent to the model`);
      default:
        throw new TypeError(`A prompt block of type "${block.type}" cannot be sent to the model`);
    }
  }
  if (parts.every((p) => p.type === "text")) {
    const text = parts.map((p) => (p as TextContent).text).join("");
    // Nothing to ask: a run would send the model an empty message, which providers refuse.
    if (text.trim() === "") throw new TypeError("The prompt is empty: send text, an image or a file");
    return text;
  }
  return { role: "user", content: parts, timestamp: Date.now() };
}
