import { estimateMessageTokens, estimateTokens } from "../context/tokens.js";
import { withMessageId } from "../core/message-id.js";
import type { AgentMessage } from "../core/messages.js";

/**
 * The transcript in machine context, without a copy per message.
 *
 * Appending by copying (`[...messages, message]`) makes every message cost as much as the whole
 * history: a long session slows down turn after turn, and arrays past 128 KB (16,000 messages)
 * land in V8's large-object space, where each copy costs hundreds of microseconds. Here the
 * messages live in one array that grows in place, and each snapshot holds a read-only view of its
 * first n messages (a `Proxy`, made in O(1)). A snapshot's `context.messages` is therefore exactly
 * the transcript of that moment, like an immutable array: later appends do not show in it, and a
 * pure `transition()` from an older snapshot (model-based testing branches that way) appends to a
 * copy instead of overwriting what a newer snapshot holds.
 */

const stores = new WeakMap<readonly AgentMessage[], AgentMessage[]>();

/**
 * `messages` with `items` appended: in place when `messages` is the newest view of its array
 * (always, in a running agent), else on a copy of `messages` (a plain array from the input or a
 * restored snapshot, or an older snapshot's view).
 *
 * @example
 * ```ts
 * const next = appendToTranscript(context.messages, [reply]); // O(1); context.messages is unchanged
 * ```
 */
export function appendToTranscript(
  messages: readonly AgentMessage[],
  items: readonly AgentMessage[],
): AgentMessage[] {
  if (items.length === 0) return messages as AgentMessage[];
  const store = stores.get(messages);
  const owned = store !== undefined && store.length === messages.length ? store : Array.from(messages);
  // Every message is created with its id; one restored from an older snapshot's running call (or
  // sent to the machine by hand) gets it here, so the transcript never holds a message without one.
  for (const item of items) owned.push(item.id === undefined ? withMessageId(item) : item);
  return viewOf(owned, owned.length);
}

/**
 * The messages as a plain array, for reading at once (the view's array when the view is its
 * newest, so no copy; it may grow later, so do not keep it).
 *
 * @example
 * ```ts
 * convert(readTranscript(context.messages));
 * ```
 */
export function readTranscript(messages: readonly AgentMessage[]): readonly AgentMessage[] {
  const store = stores.get(messages);
  return store !== undefined && store.length === messages.length ? store : messages;
}

/**
 * The messages from `from` on, as a new plain array.
 *
 * @example
 * ```ts
 * messagesFrom(context.messages, run.firstMessage); // what this run added
 * ```
 */
export function messagesFrom(messages: readonly AgentMessage[], from: number): AgentMessage[] {
  const store = stores.get(messages);
  return (store ?? messages).slice(from, messages.length);
}

/** A read-only view of the first `length` messages of `store`. */
/** Per array of views: the estimated tokens of its first `counted` messages. */
const sums = new WeakMap<AgentMessage[], { counted: number; tokens: number }>();

/**
 * `estimateTokens(messages)` of a transcript, in time proportional to the messages added since it
 * was last asked rather than to the whole transcript: an agent with a context budget asks every
 * turn (the turn gate, the calibration of each answer), and walking 20,000 messages each time
 * made turn 10,000 eight times as slow as turn 1,000. The sum is kept per array of views and
 * only grows, as the array does; a shorter (older) view, or a transcript that is not a view (the
 * initial messages, a restored snapshot), is walked. Like the per-message estimates, it takes the
 * transcript's messages as immutable.
 *
 * @example
 * ```ts
 * transcriptTokens(context.messages) === estimateTokens(readTranscript(context.messages)); // true
 * ```
 */
export function transcriptTokens(messages: readonly AgentMessage[]): number {
  const store = stores.get(messages);
  if (store === undefined) return estimateTokens(messages);
  let sum = sums.get(store);
  if (sum === undefined) sums.set(store, (sum = { counted: 0, tokens: 0 }));
  const length = messages.length;
  if (length < sum.counted) return estimateTokens(store.slice(0, length));
  for (; sum.counted < length; sum.counted++) sum.tokens += estimateMessageTokens(store[sum.counted]!);
  return sum.tokens;
}

function viewOf(store: AgentMessage[], length: number): AgentMessage[] {
  const view = new Proxy(store, new FirstMessages(length));
  stores.set(view, store);
  return view;
}

/**
 * The traps of a view: the store's first `length` messages, read-only. One small object per view
 * (the traps live on the prototype), so a view costs next to nothing to make.
 */
class FirstMessages implements ProxyHandler<AgentMessage[]> {
  constructor(private readonly length: number) {}

  get(target: AgentMessage[], key: string | symbol, receiver: unknown): unknown {
    if (key === "length") return this.length;
    const index = indexOf(key);
    if (index !== undefined) return index < this.length ? target[index] : undefined;
    return Reflect.get(target, key, receiver);
  }

  has(target: AgentMessage[], key: string | symbol): boolean {
    const index = indexOf(key);
    return index !== undefined ? index < this.length : Reflect.has(target, key);
  }

  ownKeys(): string[] {
    const keys: string[] = [];
    for (let i = 0; i < this.length; i++) keys.push(String(i));
    keys.push("length");
    return keys;
  }

  getOwnPropertyDescriptor(target: AgentMessage[], key: string | symbol): PropertyDescriptor | undefined {
    if (key === "length")
      return { value: this.length, writable: true, enumerable: false, configurable: false };
    const index = indexOf(key);
    if (index === undefined) return Reflect.getOwnPropertyDescriptor(target, key);
    if (index >= this.length) return undefined;
    return { value: target[index], writable: false, enumerable: true, configurable: true };
  }

  set(): boolean {
    return false;
  }

  defineProperty(): boolean {
    return false;
  }

  deleteProperty(): boolean {
    return false;
  }
}

function indexOf(key: string | symbol): number | undefined {
  if (typeof key !== "string") return undefined;
  const index = Number(key);
  return Number.isInteger(index) && index >= 0 && String(index) === key ? index : undefined;
}
