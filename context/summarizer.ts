import type { AgentMessage } from "../core/messages.js";
import { textOf, type Usage } from "../core/messages.js";
import type { Provider } from "../providers/provider.js";
import type { Summarizer, SummaryRequest } from "./config.js";

/** The system prompt of summary requests. */
export const SUMMARIZER_SYSTEM_PROMPT =
  "You compact the history of a conversation between a user and an AI agent that uses tools. " +
  "Write a dense summary that lets the agent continue the work: the user's goals and constraints, " +
  "decisions made, files and identifiers touched, results of tool calls that still matter, open " +
  "problems and next steps. Do not invent anything. Answer with the summary only.";

/**
 * Options of `summarizerFromProvider`.
 *
 * @example
 * ```ts
 * summarizerFromProvider(provider, { systemPrompt: "Summarise for a support agent." });
 * ```
 */
export interface ProviderSummarizerOptions {
  /** Replaces `SUMMARIZER_SYSTEM_PROMPT`. */
  systemPrompt?: string;
}

function renderContent(content: AgentMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((block) => {
      switch (block.type) {
        case "text":
          return block.text;
        case "image":
          return "[image]";
        case "thinking":
          return block.redacted ? "" : `(thinking) ${block.thinking}`;
        case "toolCall":
          return `(calls ${block.name} ${JSON.stringify(block.arguments ?? {})})`;
      }
      return "";
    })
    .filter(Boolean)
    .join("\n");
}

/**
 * Renders messages as a plain-text transcript, one labelled paragraph per message. Summary requests
 * send the history as text rather than as messages, so a provider never sees tool calls it has no
 * schema for.
 *
 * @example
 * ```ts
 * renderTranscript([{ role: "user", content: "hi", timestamp: 0 }]); // "[user]\nhi"
 * ```
 */
export function renderTranscript(messages: readonly AgentMessage[]): string {
  return messages
    .map((message) => {
      switch (message.role) {
        case "user":
        case "assistant":
          return `[${message.role}]\n${renderContent(message.content)}`;
        case "toolResult":
          return `[tool result: ${message.toolName}${message.isError ? ", error" : ""}]\n${renderContent(message.content)}`;
        case "custom":
          return `[${message.customType}]\n${textOf(message.content)}`;
      }
      return "";
    })
    .join("\n\n");
}

/**
 * The user message of a summary request: the earlier summary (to be replaced, not repeated
 * verbatim), the transcript to fold in, and the size limit.
 *
 * @example
 * ```ts
 * summaryPrompt({ messages, previousSummary: "…", maxTokens: 2_000 });
 * ```
 */
export function summaryPrompt(request: SummaryRequest): string {
  const parts: string[] = [];
  if (request.previousSummary) {
    parts.push(`<previous-summary>\n${request.previousSummary}\n</previous-summary>`);
  }
  parts.push(`<conversation>\n${renderTranscript(request.messages)}\n</conversation>`);
  if (request.focus) parts.push(`<focus>\n${request.focus}\n</focus>`);
  parts.push(
    `Write one updated summary of ${request.previousSummary ? "the previous summary and " : ""}the conversation ` +
      `above, replacing the previous summary${request.focus ? ", keeping above all what the focus asks for" : ""}. At most ${Math.floor(request.maxTokens * 0.75)} words.`,
  );
  return parts.join("\n\n");
}

/**
 * A `Summarizer` that asks a provider for the summary (no tools, a summarising system prompt) and
 * returns the text of its answer. A provider error becomes a thrown `Error`, which makes level 2
 * fall back to its digest.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider,
 *   context: { maxContextTokens: 100_000, summarizer: summarizerFromProvider(provider) },
 * });
 * ```
 */
export function summarizerFromProvider(
  provider: Provider,
  options: ProviderSummarizerOptions = {},
): Summarizer {
  return async (request, signal) => {
    const stream = provider.stream(
      {
        systemPrompt: options.systemPrompt ?? SUMMARIZER_SYSTEM_PROMPT,
        messages: [{ role: "user", content: summaryPrompt(request), timestamp: 0 }],
        tools: [],
      },
      signal,
    );
    let text = "";
    let usage: Usage | undefined;
    for await (const event of stream) {
      if (event.type === "text_delta") text += event.delta;
      else if (event.type === "error") {
        throw new Error(`Summary request to ${provider.id} failed (${event.kind}): ${event.message}`);
      } else if (event.type === "done") {
        usage = event.usage ?? usage;
        break;
      }
    }
    if (!text.trim()) throw new Error(`Summary request to ${provider.id} returned no text`);
    // The call's usage goes with the text: the session's totals count the summary call too.
    return usage ? { text: text.trim(), usage } : text.trim();
  };
}
