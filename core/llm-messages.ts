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
 * The reader copies the converted messages when it is called, not before: a provider reads them
 * once while it builds its request (as every real one does), and one that keeps the request keeps
 * that turn's messages, never later ones.
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
    // The same array, grown: convert the new messages. Anything else (a compacted or restored
    // transcript): start over.
    if (transcript !== source || transcript.length < converted) {
      source = transcript;
      converted = 0;
      out = [];
    }
    for (; converted < transcript.length; converted++) {
      for (const message of defaultConvertToLlm([transcript[converted]!])) out.push(message);
    }
    const messages = out;
    const length = out.length;
    return () => messages.slice(0, length);
  };
}
