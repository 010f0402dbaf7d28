/**
 * How much context the model may see. Compaction keeps the prompt at or under
 * `maxContextTokens - systemPromptTokens`.
 */
export interface ContextConfig {
  /** The model's context window, in tokens, minus what you reserve for its answer. */
  maxContextTokens: number;
  /** Tokens the system prompt and tool schemas take; measured from provider usage when omitted. */
  systemPromptTokens?: number;
  /** Messages at the start that are always kept verbatim. */
  keepFirst?: number;
  /** Messages at the end that are always kept verbatim. */
  keepRecent?: number;
  /** Old tool outputs longer than this are truncated to head + tail (level 1). */
  toolOutputMaxLines?: number;
  /** Levels 2 and 3 aim at `targetRatio × budget`, leaving headroom for the next turns. */
  targetRatio?: number;
}

/**
 * How the last model call's prompt compared with our estimate, so the next estimate can include
 * what we cannot see (system prompt, tool schemas, provider framing).
 */
export interface TokenCalibration {
  /** Our estimate of the messages we sent. */
  estimated: number;
  /** What the provider reported as the prompt: input + cacheRead + cacheWrite. */
  reported: number;
}
