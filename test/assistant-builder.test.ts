import { describe, expect, it } from "vitest";
import { AssistantBuilder } from "../actors/assistant-builder.js";

describe("AssistantBuilder", () => {
  it("keeps each signed thinking block and each redacted block apart", () => {
    const b = new AssistantBuilder("p", "m");
    b.apply({ type: "thinking_delta", delta: "A" });
    b.apply({ type: "thinking_delta", delta: "", signature: "sig-A" });
    b.apply({ type: "thinking_delta", delta: "", redacted: true, signature: "opaque" });
    b.apply({ type: "thinking_delta", delta: "B" });
    b.apply({ type: "thinking_delta", delta: "", signature: "sig-B1" });
    b.apply({ type: "thinking_delta", delta: "", signature: "sig-B" });
    b.apply({ type: "text_delta", delta: "answer" });
    expect(b.message.content).toEqual([
      { type: "thinking", thinking: "A", signature: "sig-A" },
      { type: "thinking", thinking: "", signature: "opaque", redacted: true },
      { type: "thinking", thinking: "B", signature: "sig-B" },
      { type: "text", text: "answer" },
    ]);
  });

  it("drops tool calls whose arguments never completed when the message fails", () => {
    const b = new AssistantBuilder("p", "m");
    b.apply({ type: "toolcall_start", id: "a", name: "t" });
    b.apply({ type: "toolcall_end", id: "a", name: "t", arguments: { x: 1 } });
    b.apply({ type: "toolcall_start", id: "b", name: "t" });
    b.apply({ type: "toolcall_delta", id: "b", delta: '{"x":' });
    const message = b.fail("aborted", "stopped");
    expect(message.content).toEqual([{ type: "toolCall", id: "a", name: "t", arguments: { x: 1 } }]);
    expect(message).toMatchObject({ stopReason: "aborted", errorMessage: "stopped" });
  });
});
