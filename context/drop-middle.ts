import type { AgentMessage } from "../core/messages.js";
import { COMPACTION_MARKER_TYPE, createMarkerMessage } from "./compaction-messages.js";
import type { ResolvedContextConfig } from "./config.js";
import { estimateMessageTokens, estimateTokens } from "./tokens.js";
import { earliestCutWithin, layoutTranscript } from "./units.js";

/**
 * Level 3: drops everything between the protected head and the recent turns that fit `target`,
 * leaving one constant marker message in its place (timestamp of the first dropped message).
 * When not even the protected turns fit the target it keeps just those: the smallest answer the
 * invariants allow. Returns `undefined` when that would change nothing.
 *
 * @example
 * ```ts
 * const compacted = dropMiddle(messages, resolveContextConfig(config), { target: 0.6 * budget });
 * ```
 */
export function dropMiddle(
  messages: readonly AgentMessage[],
  config: Pick<ResolvedContextConfig, "keepFirst" | "keepRecent">,
  options: { target: number },
): AgentMessage[] | undefined {
  const { unitStarts, headEnd, recentStart } = layoutTranscript(
    messages,
    config.keepFirst,
    config.keepRecent,
  );
  const head = messages.slice(0, headEnd);
  const markerTokens = estimateMessageTokens(createMarkerMessage(0));
  const fixed = estimateTokens(head) + markerTokens;
  const cut = earliestCutWithin(messages, unitStarts, headEnd, recentStart, fixed, options.target);
  if (cut === headEnd) return undefined;
  const first = messages[headEnd];
  if (cut === headEnd + 1 && first.role === "custom" && first.customType === COMPACTION_MARKER_TYPE) {
    return undefined;
  }
  return [
    ...head,
    createMarkerMessage(first.timestamp, messages.slice(headEnd, cut)),
    ...messages.slice(cut),
  ];
}
