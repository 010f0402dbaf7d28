import type { AgentMessage, MessageSource } from "./messages.js";

/**
 * Message ids: a random prefix drawn once per process, then a counter. Minting one costs a string
 * concatenation (no random draw, no hashing per message), and ids stay unique across processes and
 * restores because each process draws its own prefix.
 */
const PREFIX = `m${randomPart()}-`;
let next = 0;

/**
 * A new message id, unique in this process and, with overwhelming likelihood, across processes.
 *
 * @example
 * ```ts
 * newMessageId(); // "mk3v9x0c2q-1f"
 * ```
 */
export function newMessageId(): string {
  // Joined, not `+`: a concatenation of 13+ characters is a rope (a cons string and the counter's
  // own string, 64 bytes on 64-bit Node) that every message would keep; a join makes one flat
  // string (40 bytes).
  return [PREFIX, (next++).toString(36)].join("");
}

/**
 * Where an agent's messages get their ids. An agent in memory draws from the process's ids
 * ({@link newMessageId}). A journaled (durable) agent counts under its journal's `idPrefix`, so a
 * replay of the run mints the very same ids in the same order; a tool result's id is made from its
 * call's id there, because results arrive in whatever order the calls finish.
 *
 * @example
 * ```ts
 * const ids = new MessageIds("inv_1a2b-");
 * ids.next(); // "inv_1a2b-0"
 * ids.forResult("call_7"); // "inv_1a2b-r-call_7"
 * ```
 */
export class MessageIds {
  private count = 0;
  constructor(private readonly prefix?: string) {}

  /** The next id. */
  next(): string {
    return this.prefix === undefined ? newMessageId() : [this.prefix, (this.count++).toString(36)].join("");
  }

  /** The id of the result of tool call `toolCallId`. */
  forResult(toolCallId: string): string {
    return this.prefix === undefined ? newMessageId() : [this.prefix, "r-", toolCallId].join("");
  }
}

/** The ids of messages made outside any agent (a pure `transition()` in a test). */
export const PROCESS_MESSAGE_IDS = new MessageIds();

/**
 * The message with an id: itself when it has one, else a copy with a new id (the caller's object is
 * never changed).
 *
 * @example
 * ```ts
 * withMessageId({ role: "user", content: "Hi", timestamp: 0 }).id; // "mk3v9x0c2q-20"
 * ```
 */
export function withMessageId<M extends AgentMessage>(message: M, ids = PROCESS_MESSAGE_IDS): M {
  return message.id === undefined ? withFields(message, { id: ids.next() }) : message;
}

/**
 * A copy of `message` with `fields` added (or replaced), in the same key order as `{ ...message,
 * ...fields }`. Not written as that literal: V8 (Node 20) gives every object made by a spread
 * followed by more properties a hidden class of its own, about 250 bytes more per message kept in
 * a transcript, and slower to read; `Object.assign` onto an empty object shares one.
 */
function withFields<M extends AgentMessage>(message: M, fields: Partial<AgentMessage>): M {
  return Object.assign({}, message, fields);
}

/**
 * A message entering the agent through `prompt`, `steer` or `followUp`: with an id (unless the
 * caller gave one) and, for a user or custom message, the way it came in as its `source` (unless the
 * caller set one). A message that has both is returned as it is, so applying it twice changes nothing.
 *
 * @example
 * ```ts
 * enteredAs({ role: "user", content: "Hi", timestamp: 0 }, "steer"); // { ..., id: "m…", source: "steer" }
 * ```
 */
export function enteredAs<M extends AgentMessage>(
  message: M,
  source: MessageSource,
  ids = PROCESS_MESSAGE_IDS,
): M {
  if (message.role !== "user" && message.role !== "custom") return withMessageId(message, ids);
  if (message.id !== undefined && message.source !== undefined) return message;
  return withFields(message, { id: message.id ?? ids.next(), source: message.source ?? source });
}

/** The messages, each with an id (copies only of those that had none). */
export function withMessageIds(messages: readonly AgentMessage[], ids = PROCESS_MESSAGE_IDS): AgentMessage[] {
  let out: AgentMessage[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.id !== undefined) continue;
    out ??= messages.slice();
    out[i] = withFields(message, { id: ids.next() });
  }
  return out ?? (messages as AgentMessage[]);
}

/**
 * Ten base-36 characters from `Math.random`, not `crypto.getRandomValues`: the prefix only has to
 * differ from one process to the next (Node and browsers seed each isolate's generator from the
 * system's entropy), and it guards nothing, as every id after it is a counter anyway. On Node the
 * first read of `globalThis.crypto` loads its Web Crypto implementation (some 25 internal modules),
 * which every cold start would pay for as the package loads (issue 44).
 */
function randomPart(): string {
  const draw = () => Math.floor(Math.random() * 2 ** 32).toString(36);
  return (draw() + draw()).slice(0, 10);
}
