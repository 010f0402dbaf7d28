import { firstValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { AssistantBuilder } from "../actors/assistant-builder.js";
import type { AgentEvent } from "../core/events.js";
import type { AssistantMessage } from "../core/messages.js";
import { createLiveRuns, type LiveEntry } from "../durable/live-runs.js";

const answerOf = (entry: LiveEntry) =>
  (entry.event as Extract<AgentEvent, { type: "message_start" | "message_update" }>)
    .message as AssistantMessage;
const textOf = (entry: LiveEntry) =>
  answerOf(entry)
    .content.map((block) => (block.type === "text" ? block.text : block.type))
    .join("|");

describe("the live channel's entries of a run", () => {
  it("show a model's answer as it was when each event was published, to a follower that connects late", async () => {
    const live = createLiveRuns();
    const run = live.open("s-1", "inv_1");
    run.publish({ type: "agent_start" }, 0);
    // The answer is built in place, as the model stream builds it: one message object for every event.
    const builder = new AssistantBuilder("scripted", "scripted-model");
    run.publish({ type: "message_start", message: builder.message }, undefined);
    for (const delta of ["Hello", " there."]) {
      builder.apply({ type: "text_delta", delta });
      run.publish({ type: "message_update", message: builder.message, kind: "text_delta", delta }, undefined);
    }
    builder.message.usage.output = 4;
    run.close();

    const entries = await firstValueFrom(live.follow("s-1", "inv_1", 0)!.pipe(toArray()));
    expect(entries.slice(1).map(textOf)).toEqual(["", "Hello", "Hello there."]);
    expect(answerOf(entries[1]!).usage.output).toBe(0);
  });
});
