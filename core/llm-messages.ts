import { type AgentMessage, defaultConvertToLlm, type Message } from "./messages.js";

/**
 * The messages a model request carries: `read()` returns them as a new array (call it when the
 * provider asks, so a request nobody reads costs nothing).
 */
export type LlmMessagesReader = () => Message[];

/**
 * Converts the transcript for each model request (`convertToLlm`), without walking the whole
 * history every turn: with the default conversion, only the messages appended since the previous
 * request are converted, so a turn costs the same at message 20,000 as at message 20. A custom
 * `convertToLlm` may look at the whole transcript, so it runs over all of it, every request.
 *
 * The reader converts and copies the messages when it is called, not before: a provider reads
 * them once while it builds its request (as every real one does), one that keeps the request keeps
 * that turn's messages, never later ones, and a request nobody reads costs nothing.
 *
 * @example
 * ```ts
 * const messagesFor = createLlmMessages(undefined); // the default conversion, incremental
 * const request = { systemPrompt, tools, get messages() { return (read ??= messagesFor(transcript))(); } };
 * ```
 */
export function createLlmMessages(
  convert?: (messages: readonly AgentMessage[]) => Message[],
): (transcript: readonly AgentMessage[]) => LlmMessagesReader {
  if (convert && convert !== defaultConvertToLlm) {
    return (transcript) => {
      const messages = convert(transcript);
      return () => messages;
    };
  }
  let source: readonly AgentMessage[] | undefined;
  let converted = 0;
  let out: Message[] = [];
  return (transcript) => {
    // The transcript array only grows in place until a compaction or a restore replaces it, so
    // its first `length` messages stay what this request saw, however late the provider reads.
    const length = transcript.length;
    return () => {
      // The same array, grown: convert the new messages. Anything else: start over.
      if (transcript !== source || length < converted) {
        source = transcript;
        converted = 0;
        out = [];
      }
      for (; converted < length; converted++) {
        for (const message of defaultConvertToLlm([transcript[converted]!])) out.push(message);
      }
      return out.slice(0, out.length);
    };
  };
}
