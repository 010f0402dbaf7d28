// The live channel's wire form (serveAgents' `GET /runs/<session>/<run>`, read by the session
// follower). An entry's streamed answer is a partial message that grows by a delta per event: sent
// whole with every delta, a long answer would cost its length squared in bytes, in JSON work on both
// sides, and in memory (serialising each kept partial flattens its text). So, per connection, a
// message's first event goes out whole and each later `message_update` carries only what changed:
// its delta, the blocks it touched (a text or thinking block by the delta appended to it) and the
// message's block count. The reader rebuilds each partial exactly as it was published.
import type { AgentEvent } from "../core/events.js";
import type { AssistantMessage } from "../core/messages.js";
import type { LiveEntry } from "./live-runs.js";

type Block = AssistantMessage["content"][number];
type Update = Extract<AgentEvent, { type: "message_update" }>;

/**
 * What changed in a `message_update`'s partial message since the message's last event on this
 * connection: `count` blocks now, and the blocks at `at` replaced by `block`, or, with `append`,
 * grown by the event's delta (`block` then holds the block's other fields, its text left out).
 */
export interface LivePatch {
  count: number;
  changed: { at: number; block: Partial<Block>; append?: true }[];
}

/**
 * A live channel entry as it travels. A `message_update` with `patch` carries its message without
 * content (`content: []`): apply the patch to the message's previous event on the same connection
 * (see {@link createLiveDecoder}). A reader that wants only the deltas can ignore `patch`.
 */
export type LiveWireEntry = LiveEntry & { patch?: LivePatch };

/** The field a streamed block's text is in; `undefined` for a tool call. */
function textKey(block: Block): "text" | "thinking" | undefined {
  return block.type === "text" ? "text" : block.type === "thinking" ? "thinking" : undefined;
}

/** A block's fields but its text (read by length only elsewhere: reading a long text flattens it). */
function withoutText(block: Block): Partial<Block> {
  const key = textKey(block);
  if (!key) return block;
  const { [key]: _text, ...rest } = block as unknown as Record<string, unknown>;
  return rest as Partial<Block>;
}

/** Whether two blocks hold the same fields (texts compared by length: they only ever grow). */
function sameBlock(before: Block, now: Block): boolean {
  const was = before as unknown as Record<string, unknown>;
  const is = now as unknown as Record<string, unknown>;
  const keys = Object.keys(is);
  if (Object.keys(was).length !== keys.length) return false;
  const text = textKey(now);
  for (const key of keys) {
    const a = was[key];
    const b = is[key];
    if (key === text && typeof a === "string" && typeof b === "string") {
      if (a.length !== b.length) return false;
    } else if (a !== b) return false;
  }
  return true;
}

/** The length of a streamed block's text (a length is read without flattening the text). */
function textLength(block: Block, key: "text" | "thinking"): number {
  return (block as unknown as Record<string, string>)[key]!.length;
}

/**
 * The patch from `before` to `now` for `event`; `undefined` when only a whole message says it (a
 * block that shrank or changed type: no partial the agent publishes does that).
 */
function patchOf(before: AssistantMessage, now: AssistantMessage, event: Update): LivePatch | undefined {
  const changed: LivePatch["changed"] = [];
  const last = now.content.length - 1;
  const streamed = event.kind === "text_delta" || event.kind === "thinking_delta";
  for (let at = 0; at <= last; at++) {
    const block = now.content[at]!;
    const was = before.content[at];
    if (was && sameBlock(was, block)) continue;
    if (was && was.type !== block.type) return undefined;
    const key = textKey(block);
    if (key === undefined) {
      changed.push({ at, block });
      continue;
    }
    const had = was ? textLength(was, key) : 0;
    if (textLength(block, key) < had) return undefined;
    // The delta is what the open (last) block grew by: sent once, as the event's own field.
    if (streamed && at === last && textLength(block, key) === had + event.delta.length) {
      changed.push({ at, block: withoutText(block), append: true });
    } else {
      changed.push({ at, block });
    }
  }
  return { count: now.content.length, changed };
}

/** The partial message an update's event carried when published, as the live channel keeps it. */
function messageOf(event: AgentEvent): AssistantMessage | undefined {
  if (event.type !== "message_start" && event.type !== "message_update") return undefined;
  return event.message.role === "assistant" && event.message.id !== undefined ? event.message : undefined;
}

/**
 * The writer of one live connection: each entry as the JSON of its `data:` line, a message's later
 * updates as patches on what this connection sent before.
 *
 * @example
 * ```ts
 * const encode = createLiveEncoder();
 * entries.subscribe((entry) => response.write(`data: ${encode(entry)}\n\n`));
 * ```
 */
export function createLiveEncoder(): (entry: LiveEntry) => string {
  const sent = new Map<string, AssistantMessage>();
  return (entry) => {
    const { event } = entry;
    if (event.type === "message_end" && event.message.id !== undefined) sent.delete(event.message.id);
    const message = messageOf(event);
    if (!message) return JSON.stringify(entry);
    const before = sent.get(message.id!);
    const patch = event.type === "message_update" && before ? patchOf(before, message, event) : undefined;
    const text = patch
      ? JSON.stringify({ ...entry, event: { ...event, message: { ...message, content: [] } }, patch })
      : JSON.stringify(entry);
    // Kept only once written: an entry JSON refused is not the base of the next patch.
    sent.set(message.id!, message);
    return text;
  };
}

/**
 * The reader of one live connection: the entries {@link createLiveEncoder} wrote, each `message_update`
 * with its partial message rebuilt as the service published it.
 *
 * @example
 * ```ts
 * const decode = createLiveDecoder();
 * const entry = decode(frame.slice("data: ".length));
 * ```
 */
export function createLiveDecoder(): (data: string) => LiveEntry {
  const known = new Map<string, AssistantMessage>();
  return (data) => {
    const wire = JSON.parse(data) as LiveWireEntry;
    const { patch, ...entry } = wire;
    const { event } = entry;
    if (event.type === "message_end" && event.message.id !== undefined) known.delete(event.message.id);
    if (patch && event.type === "message_update") {
      const before = known.get(event.message.id!);
      const content = (before?.content ?? []).slice(0, patch.count);
      for (const { at, block, append } of patch.changed) {
        if (!append) {
          content[at] = block as Block;
          continue;
        }
        const key = block.type === "thinking" ? "thinking" : "text";
        const had = (content[at] as unknown as Record<string, string> | undefined)?.[key] ?? "";
        content[at] = { ...block, [key]: had + event.delta } as Block;
      }
      const message = { ...event.message, content };
      known.set(message.id!, message);
      return { ...entry, event: { ...event, message } } as LiveEntry;
    }
    const message = messageOf(event);
    if (message) known.set(message.id!, message);
    return entry as LiveEntry;
  };
}
