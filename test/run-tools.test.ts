// Tools supplied per run: `agent.prompt(input, { tools })` / `agent.continue({ tools })`, what a
// frontend protocol brings each request (AG-UI's RunAgentInput.tools). The model sees them for that
// run only; a name clash or a non-tool is refused before anything happens.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  createAgent,
  defineClientTool,
  defineTool,
  scripted,
  type ToolResultMessage,
} from "../index.js";
import { expectValidTranscript, record } from "./helpers.js";

const pickColor = defineClientTool({
  name: "pick_color",
  description: "Asks the user to pick a color",
  parameters: { type: "object", properties: { options: { type: "array", items: { type: "string" } } } },
});
const weather = defineTool({
  name: "weather",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny in ${city}`,
});

const toolNames = (request: { tools?: readonly { name: string }[] } | undefined) =>
  (request?.tools ?? []).map((t) => t.name);

function requested(events: AgentEvent[]) {
  return new Promise<void>((resolve) => {
    const check = () => events.some((e) => e.type === "tool_result_requested") && resolve();
    const timer = setInterval(() => check() && clearInterval(timer), 2);
  });
}

describe("tools supplied per run", () => {
  it("the model sees them in that run only; a call of one waits for the client and the run goes on", async () => {
    const provider = scripted([
      { toolCalls: [{ id: "c1", name: "pick_color", arguments: { options: ["red", "blue"] } }] },
      { text: "blue it is" },
      { text: "no tools now" },
    ]);
    const agent = createAgent({ provider, tools: [weather] });
    const events = record(agent);
    const done = agent.prompt("pick one", { tools: [pickColor] });
    await requested(events);
    expect(agent.pendingToolCalls()).toEqual([
      { toolCallId: "c1", toolName: "pick_color", args: { options: ["red", "blue"] } },
    ]);
    agent.resolveToolCall("c1", "blue");
    expect((await done).reason).toBe("stop");
    // Both calls of the run offered the agent's tool and the run's, the agent's first.
    expect(provider.requests.slice(0, 2).map(toolNames)).toEqual([
      ["weather", "pick_color"],
      ["weather", "pick_color"],
    ]);
    const result = agent.messages.find((m): m is ToolResultMessage => m.role === "toolResult");
    expect(result).toMatchObject({
      toolCallId: "c1",
      isError: false,
      content: [{ type: "text", text: "blue" }],
    });

    // The next run without them: the model is not offered the tool any more.
    await agent.prompt("again");
    expect(toolNames(provider.requests[2])).toEqual(["weather"]);
    expectValidTranscript(agent.messages);
  });

  it("continue({ tools }) gives them to the continued run", async () => {
    const provider = scripted([{ text: "first" }, { text: "second" }]);
    const agent = createAgent({ provider });
    await agent.prompt("hi");
    agent.followUp("more");
    await agent.continue({ tools: [pickColor] });
    expect(toolNames(provider.requests[0])).toEqual([]);
    expect(toolNames(provider.requests[1])).toEqual(["pick_color"]);
  });

  it("refuses a name the agent's tools already use, a non-tool and an unknown option, and starts no run", async () => {
    const provider = scripted([{ text: "ok" }]);
    const agent = createAgent({ provider, tools: [weather] });
    const clash = defineClientTool({ name: "weather", description: "x", parameters: { type: "object" } });
    await expect(agent.prompt("hi", { tools: [clash] })).rejects.toThrow(
      /tool named "weather" is already one of the agent's tools/,
    );
    await expect(agent.prompt("hi", { tools: [pickColor, pickColor] })).rejects.toThrow(
      /"pick_color" is already in this run's tools/,
    );
    await expect(agent.prompt("hi", { tools: [{ name: "x" } as never] })).rejects.toThrow(
      /must be a tool made with defineTool or defineClientTool/,
    );
    await expect(agent.prompt("hi", { tool: [pickColor] } as never)).rejects.toThrow(
      /unknown option "tool" \(did you mean "tools"\?\)/,
    );
    expect(agent.messages).toEqual([]);
    expect(provider.requests).toHaveLength(0);
    // The agent is unharmed: a good run still works with its own tools only.
    expect((await agent.prompt("hi")).reason).toBe("stop");
    expect(toolNames(provider.requests[0])).toEqual(["weather"]);
  });
});
