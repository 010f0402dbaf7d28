import type { AgentMessage, CustomMessage } from "../core/messages.js";
import { textOf } from "../core/messages.js";

/**
 * `customType` of the message that holds a level-2 summary.
 *
 * @example
 * ```ts
 * agent.messages.filter((m) => m.role === "custom" && m.customType === COMPACTION_SUMMARY_TYPE);
 * ```
 */
export const COMPACTION_SUMMARY_TYPE = "compaction_summary";
/**
 * `customType` of the level-3 marker that stands where messages were dropped.
 *
 * @example
 * ```ts
 * const dropped = agent.messages.some((m) => m.role === "custom" && m.customType === COMPACTION_MARKER_TYPE);
 * ```
 */
export const COMPACTION_MARKER_TYPE = "compaction_marker";
/**
 * The level-3 marker's text: constant, so the marker never changes a cached prompt prefix.
 *
 * @example
 * ```ts
 * textOf(marker.content) === COMPACTION_MARKER_TEXT; // true
 * ```
 */
export const COMPACTION_MARKER_TEXT = "[Earlier messages were removed to fit the context window.]";
/** The first line of every summary message, before the summary itself. */
export const COMPACTION_SUMMARY_PREFIX =
  "[Summary of the earlier conversation, compacted to fit the context window]\n";

/**
 * What a summary message keeps in `details`.
 *
 * @example
 * ```ts
 * const details = summary.details as CompactionSummaryDetails;
 * if (details.summarizerError) console.warn(`digest used: ${details.summarizerError}`);
 * ```
 */
export interface CompactionSummaryDetails {
  /** The summary text alone, handed to the next summary as `previousSummary`. */
  summary: string;
  /** How it was written: by the configured summariser, or as a one-line-per-turn digest. */
  method: "summarizer" | "digest";
  /** Why the summariser was not used, when it failed. */
  summarizerError?: string;
}

/**
 * Whether a message is a compaction summary or marker.
 *
 * @example
 * ```ts
 * agent.messages.filter(isCompactionMessage); // what compaction has written so far
 * ```
 */
export function isCompactionMessage(message: AgentMessage): boolean {
  return (
    message.role === "custom" &&
    (message.customType === COMPACTION_SUMMARY_TYPE || message.customType === COMPACTION_MARKER_TYPE)
  );
}

/**
 * Whether a message is a compaction summary.
 *
 * @example
 * ```ts
 * const summary = agent.messages.find(isCompactionSummary);
 * ```
 */
export function isCompactionSummary(message: AgentMessage): boolean {
  return message.role === "custom" && message.customType === COMPACTION_SUMMARY_TYPE;
}

/**
 * The bare text of a summary message (without its prefix line).
 *
 * @example
 * ```ts
 * summaryTextOf(createSummaryMessage("did X", "digest", 0)); // "did X"
 * ```
 */
export function summaryTextOf(message: CustomMessage): string {
  const details = message.details as Partial<CompactionSummaryDetails> | undefined;
  if (typeof details?.summary === "string") return details.summary;
  const text = textOf(message.content);
  return text.startsWith(COMPACTION_SUMMARY_PREFIX) ? text.slice(COMPACTION_SUMMARY_PREFIX.length) : text;
}

/**
 * A summary message. `timestamp` comes from the first message it replaces, never from the clock,
 * so the same compaction always writes the same bytes.
 *
 * @example
 * ```ts
 * createSummaryMessage("The user asked for X; we did Y.", "summarizer", replaced[0].timestamp);
 * ```
 */
export function createSummaryMessage(
  summary: string,
  method: CompactionSummaryDetails["method"],
  timestamp: number,
  summarizerError?: string,
  replaces?: readonly AgentMessage[],
): CustomMessage {
  const details: CompactionSummaryDetails = { summary, method };
  if (summarizerError !== undefined) details.summarizerError = summarizerError;
  const message: CustomMessage = {
    role: "custom",
    customType: COMPACTION_SUMMARY_TYPE,
    content: COMPACTION_SUMMARY_PREFIX + summary,
    display: "model",
    details,
    timestamp,
    source: "agent",
  };
  return replaces ? withReplaced(message, replaces) : message;
}

/**
 * The level-3 marker. Its text is constant and its timestamp is the first dropped message's, so a
 * second drop that swallows the first marker writes an identical one.
 *
 * @example
 * ```ts
 * createMarkerMessage(dropped[0].timestamp);
 * ```
 */
export function createMarkerMessage(timestamp: number, replaces?: readonly AgentMessage[]): CustomMessage {
  const message: CustomMessage = {
    role: "custom",
    customType: COMPACTION_MARKER_TYPE,
    content: COMPACTION_MARKER_TEXT,
    display: "model",
    timestamp,
    source: "agent",
  };
  return replaces ? withReplaced(message, replaces) : message;
}

/**
 * The compaction message with the ids of the messages it stands for (`replaces`); its own id comes
 * as it enters the transcript. Messages without an id (never in an agent's transcript) are skipped.
 */
function withReplaced(message: CustomMessage, replaced: readonly AgentMessage[]): CustomMessage {
  const ids: string[] = [];
  for (const m of replaced) if (m.id !== undefined) ids.push(m.id);
  return { ...message, replaces: ids };
}
