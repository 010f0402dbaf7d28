import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";

// The README's event example prints the answer's text as it streams: `message_update` events of
// kind "text_delta". Their deltas are the text and nothing else: no thinking, no tool arguments.

describe("the text of an answer as it streams", () => {
  it("message_update with kind text_delta carries the text alone; tool arguments come as toolcall_delta", async () => {
    const weather = defineTool({
      name: "weather",
      description: "Current weather for a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `Sunny in ${city}`,
    });
    const agent = createAgent({
      provider: scripted([
        {
          thinking: "The user wants weather.",
          text: "Let me check.",
          toolCalls: [{ name: "weather", arguments: { city: "Lisbon" } }],
        },
        { text: "Sunny in Lisbon." },
      ]),
      tools: [weather],
    });
    let printed = "";
    const deltas: Record<string, string> = {};
    agent.events$.subscribe((event) => {
      if (event.type !== "message_update") return;
      deltas[event.kind] = (deltas[event.kind] ?? "") + event.delta;
      // The README's filter.
      if (event.kind === "text_delta") printed += event.delta;
    });
    await agent.prompt("Weather in Lisbon?");
    expect(printed).toBe("Let me check.Sunny in Lisbon.");
    expect(deltas).toEqual({
      thinking_delta: "The user wants weather.",
      text_delta: "Let me check.Sunny in Lisbon.",
      toolcall_start: "",
      toolcall_delta: '{"city":"Lisbon"}',
      toolcall_end: "",
    });
  });
});
