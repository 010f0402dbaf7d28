// The live channel's wire form: each partial message a follower rebuilds is the one the service
// published, and a long answer costs bytes in proportion to its length, not its length squared.
import { firstValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { AssistantBuilder } from "../actors/assistant-builder.js";
import type { AgentEvent } from "../core/events.js";
import { createLiveRuns, type LiveEntry } from "../durable/live-runs.js";
import { createLiveDecoder, createLiveEncoder } from "../durable/live-wire.js";
import type { ProviderEvent } from "../providers/provider.js";

/** Publishes `events` as the model stream does: the builder's one message object on every event. */
async function publishedAnswer(events: ProviderEvent[]): Promise<LiveEntry[]> {
  const live = createLiveRuns();
  const run = live.open("s-1", "inv_1");
  run.publish({ type: "agent_start" }, 0);
  const builder = new AssistantBuilder("scripted", "scripted-model", 1, "msg-1");
  run.publish({ type: "message_start", message: builder.message }, undefined);
  for (const event of events) {
    builder.apply(event);
    const update = updateOf(event, builder);
    if (update) run.publish(update, undefined);
  }
  run.publish({ type: "message_end", message: builder.message }, 1);
  run.close();
  return firstValueFrom(live.follow("s-1", "inv_1", 0)!.pipe(toArray()));
}

function updateOf(event: ProviderEvent, builder: AssistantBuilder): AgentEvent | undefined {
  const message = builder.message;
  switch (event.type) {
    case "text_delta":
    case "thinking_delta":
      return { type: "message_update", message, delta: event.delta, kind: event.type };
    case "toolcall_start":
    case "toolcall_end":
      return { type: "message_update", message, delta: "", kind: event.type, toolCallId: event.id };
    case "toolcall_delta":
      return { type: "message_update", message, delta: event.delta, kind: event.type, toolCallId: event.id };
    default:
      return undefined;
  }
}

/** The entries as one connection carries them: encoded, sent as text, decoded. */
function overTheWire(entries: LiveEntry[]): { decoded: LiveEntry[]; bytes: number } {
  const encode = createLiveEncoder();
  const decode = createLiveDecoder();
  let bytes = 0;
  const decoded = entries.map((entry) => {
    const data = encode(entry);
    bytes += data.length;
    return decode(data);
  });
  return { decoded, bytes };
}

const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
const words = (n: number): ProviderEvent[] =>
  Array.from({ length: n }, (_, i) => ({ type: "text_delta", delta: `w${i % 10} ` }));

const mixed: ProviderEvent[] = [
  { type: "thinking_delta", delta: "Let me " },
  { type: "thinking_delta", delta: "think." },
  { type: "thinking_delta", delta: "", signature: "sig-1" },
  { type: "thinking_delta", delta: "More thought." },
  { type: "thinking_delta", delta: "c2lnbmVk", signature: "sig-2", redacted: true },
  ...words(5),
  { type: "toolcall_start", id: "call_a", name: "read_file" },
  { type: "toolcall_start", id: "call_b", name: "list_files" },
  { type: "toolcall_delta", id: "call_a", delta: '{"pa' },
  { type: "toolcall_delta", id: "call_a", delta: 'th":"a.txt"}' },
  { type: "toolcall_end", id: "call_b", name: "list_files", arguments: { dir: "." } },
  { type: "toolcall_end", id: "call_a", name: "read_file", arguments: { path: "a.txt" } },
  { type: "text_delta", delta: "Reading " },
  { type: "text_delta", delta: "both." },
];

describe("the live channel's wire form", () => {
  it("rebuilds every partial message as it was published: thinking, signatures, redacted blocks, text, interleaved tool calls", async () => {
    const entries = await publishedAnswer(mixed);
    const { decoded } = overTheWire(entries);
    expect(decoded).toEqual(asJson(entries));
    // The rebuilt answer grows as it did: the text after the tool calls is a block of its own.
    const last = decoded.at(-2)!.event as Extract<AgentEvent, { type: "message_update" }>;
    expect(last.message.content.map((block) => block.type)).toEqual([
      "thinking",
      "thinking",
      "thinking",
      "text",
      "toolCall",
      "toolCall",
      "text",
    ]);
  });

  it("rebuilds from a connection that joins in the middle of an answer (a late follower)", async () => {
    const entries = await publishedAnswer(mixed);
    for (const from of [3, 9, 14]) {
      expect(overTheWire(entries.slice(from)).decoded).toEqual(asJson(entries.slice(from)));
    }
  });

  it("sends a long answer in bytes proportional to its length", async () => {
    const short = overTheWire(await publishedAnswer(words(1_000)));
    const long = overTheWire(await publishedAnswer(words(4_000)));
    // Each partial sent whole: ~4 × 4 = 16 times the bytes for 4 times the deltas.
    expect(long.bytes / short.bytes).toBeLessThan(4.5);
    expect(long.bytes / 4_000).toBeLessThan(400);
    const answer = long.decoded.at(-2)!.event as Extract<AgentEvent, { type: "message_update" }>;
    expect(answer.message.content).toEqual([
      {
        type: "text",
        text: words(4_000)
          .map((e) => (e as { delta: string }).delta)
          .join(""),
      },
    ]);
  });

  it("passes other events, and answers other than the agent's, through unchanged", async () => {
    const entries: LiveEntry[] = [
      { seq: 0, event: { type: "agent_start" } },
      { seq: 1, event: { type: "turn_start", turn: 0 } },
      {
        after: 1,
        index: 0,
        event: { type: "tool_progress", toolCallId: "c1", toolName: "bash", text: "50%" },
      },
    ];
    expect(overTheWire(entries).decoded).toEqual(entries);
  });
});
