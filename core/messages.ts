/**
 * Transcript message shapes. They match pi-agent-core's, so code and stored transcripts move over
 * without conversion.
 */

/** Plain text in a message. */
export interface TextContent {
  type: "text";
  text: string;
}

/** An image, base64-encoded, in a user message or a tool result. */
export interface ImageContent {
  type: "image";
  /** Base64 data, without a `data:` prefix. */
  data: string;
  mimeType: string;
}

/** Model reasoning. `signature` is kept so providers that sign thinking (Anthropic) can round-trip it. */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  signature?: string;
  /** Set when the provider returned the thinking in redacted (encrypted) form only. */
  redacted?: boolean;
}

/** A tool call the model asked for. */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

/** Token usage of one model call. `cost` is in US dollars when the model's price is known. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /**
   * Of `cacheWrite`, the tokens written for the provider's longer cache lifetime (Anthropic's and
   * Bedrock's 1 hour), priced at `ModelPrice.cacheWriteLong`; absent when none were.
   */
  cacheWriteLong?: number;
  totalTokens: number;
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/**
 * How a user or custom message entered the transcript: `prompt` (`agent.prompt`), `steer`
 * (`agent.steer`), `followUp` (`agent.followUp`), or `agent` (written by the agent itself: the
 * limit and loop notices, compaction summaries), `schedule` (a schedule's slot woke the agent),
 * `event` (an app or webhook delivered an event) or `laterResult` (the result of a tool that
 * answers later: docs/wake.md).
 */
export type MessageSource = "prompt" | "steer" | "followUp" | "agent" | "schedule" | "event" | "laterResult";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
  /**
   * Unique in the transcript, set when the message enters it (a caller may pass its own). Optional
   * in the type so messages written by hand or by older releases still type-check; every message of
   * an agent's transcript and events has one.
   */
  id?: string;
  /** How it entered the transcript (absent only in messages from before sources were recorded). */
  source?: MessageSource;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  stopReason: StopReason;
  usage: Usage;
  errorMessage?: string;
  /** The provider's id and model, when known. */
  provider?: string;
  model?: string;
  timestamp: number;
  /** Unique in the transcript; known from the call's first `message_start` (every attempt of one model call shares it). */
  id?: string;
}

export interface ToolResultMessage<TDetails = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError: boolean;
  timestamp: number;
  /** Unique in the transcript, set when the result is made. */
  id?: string;
  /**
   * The arguments the call ran with when a human corrected them at approval
   * (`agent.approve(id, { args })`); the assistant's call keeps the model's.
   */
  editedArgs?: unknown;
}

/**
 * An application-defined message kept in the transcript (a compaction summary, a UI notice).
 * It reaches the model only through `convertToLlm` (by default: as a user message, unless
 * `display` is `"ui-only"`).
 */
export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display?: "model" | "ui-only";
  details?: unknown;
  timestamp: number;
  /** Unique in the transcript, set when the message enters it (a caller may pass its own). */
  id?: string;
  /** How it entered the transcript: `agent` for the agent's own notices and compaction messages. */
  source?: MessageSource;
  /**
   * The ids of the messages this one stands for in the transcript: set on a compaction summary or
   * marker (the messages it replaced, earlier summaries included).
   */
  replaces?: string[];
}

/** A message the provider understands. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** Anything the transcript can hold. */
export type AgentMessage = Message | CustomMessage;

/** Usage with every count at zero. */
export function emptyUsage(): Usage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
}

/** Adds two usages field by field (cost too, when either has one). */
export function addUsage(a: Usage, b: Usage | undefined): Usage {
  if (!b) return a;
  const sum: Usage = {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.cacheWriteLong || b.cacheWriteLong)
    sum.cacheWriteLong = (a.cacheWriteLong ?? 0) + (b.cacheWriteLong ?? 0);
  if (a.cost || b.cost) {
    const ac = a.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
    const bc = b.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
    sum.cost = {
      input: ac.input + bc.input,
      output: ac.output + bc.output,
      cacheRead: ac.cacheRead + bc.cacheRead,
      cacheWrite: ac.cacheWrite + bc.cacheWrite,
      total: ac.total + bc.total,
    };
  }
  return sum;
}

/** Tokens a usage counts against `limits.maxTokens`: input, output and both cache counts. */
export function countedTokens(usage: Usage): number {
  return usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/** Builds a user message from text or content blocks. */
export function userMessage(content: UserMessage["content"], timestamp = Date.now()): UserMessage {
  return { role: "user", content, timestamp };
}

/** The text blocks of a message's content, joined. */
export function textOf(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  let out = "";
  for (const block of content) if (block.type === "text") out += block.text;
  return out;
}

/** The tool calls of an assistant message. */
export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return message.content.filter((c): c is ToolCall => c.type === "toolCall");
}

/**
 * The default `convertToLlm`: keeps user, assistant and tool-result messages, turns custom messages
 * meant for the model into user messages, and drops UI-only ones.
 */
export function defaultConvertToLlm(messages: readonly AgentMessage[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    if (m.role !== "custom") out.push(m);
    else if (m.display !== "ui-only") out.push({ role: "user", content: m.content, timestamp: m.timestamp });
  }
  return out;
}
