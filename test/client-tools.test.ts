// Issue 23 item 4: tools the client runs. A call waits in the tool-call state awaitingResult until
// agent.resolveToolCall / rejectToolCall (or its timeout, or an abort) answers it.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentEvent,
  createAgent,
  defineClientTool,
  scripted,
  type ToolResultMessage,
} from "../index.js";
import { expectEventInvariants, expectValidTranscript, record } from "./helpers.js";

const pickColor = (timeoutMs?: number) =>
  defineClientTool({
    name: "pick_color",
    description: "Asks the user to pick a color",
    parameters: z.object({ options: z.array(z.string()) }),
    timeoutMs,
  });

const ask = (id = "c1") => ({ id, name: "pick_color", arguments: { options: ["red", "blue"] } });

function waitingFor(agent: Agent, events: AgentEvent[]) {
  return new Promise<Extract<AgentEvent, { type: "tool_result_requested" }>>((resolve) => {
    const found = events.find((e) => e.type === "tool_result_requested");
    if (found?.type === "tool_result_requested") return resolve(found);
    agent.events$.subscribe((e) => {
      if (e.type === "tool_result_requested") resolve(e);
    });
  });
}

const results = (agent: Agent) =>
  agent.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");

/** The state of the call actor with this id, read from the agent's actor tree. */
function callState(agent: Agent, toolCallId: string): unknown {
  const child = agent.actor.getSnapshot().children[toolCallId] as
    { getSnapshot(): { value: unknown } } | undefined;
  return child?.getSnapshot().value;
}

describe("client-run tools", () => {
  it("a call waits in awaitingResult until the client's result arrives; the run then goes on", async () => {
    const provider = scripted([{ toolCalls: [ask()] }, { text: "blue it is" }]);
    const agent = createAgent({ provider, tools: [pickColor()] });
    void agent.actor;
    const events = record(agent);
    const done = agent.prompt("pick one");
    const request = await waitingFor(agent, events);

    expect(request).toMatchObject({
      toolCallId: "c1",
      toolName: "pick_color",
      args: { options: ["red", "blue"] },
    });
    expect(callState(agent, "c1")).toBe("awaitingResult");
    expect(agent.state).toBe("running.executing");
    expect(agent.pendingToolCalls()).toEqual([
      { toolCallId: "c1", toolName: "pick_color", args: { options: ["red", "blue"] } },
    ]);
    agent.resolveToolCall("c1", "blue");
    const outcome = await done;

    expect(outcome.reason).toBe("stop");
    expect(results(agent).map((r) => [r.toolCallId, r.content, r.isError])).toEqual([
      ["c1", [{ type: "text", text: "blue" }], false],
    ]);
    // The model read the client's result.
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({ role: "toolResult", toolCallId: "c1" });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("a rejection answers the call with an error the model reads", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [ask()] }, { text: "ok" }]),
      tools: [pickColor()],
    });
    const events = record(agent);
    const done = agent.prompt("pick one");
    await waitingFor(agent, events);
    agent.rejectToolCall("c1", "the user closed the picker");
    await done;
    expect(results(agent)[0]).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "the user closed the picker" }],
    });
  });

  it("refuses bad answers clearly, changing nothing: unknown, malformed, a second answer", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [ask()] }, { text: "ok" }]),
      tools: [pickColor()],
    });
    const events = record(agent);
    const done = agent.prompt("pick one");
    await waitingFor(agent, events);
    expect(() => agent.resolveToolCall("nope", "x")).toThrow(/No tool call "nope" waits for a client result/);
    expect(() => agent.resolveToolCall("c1", { content: "blue" } as never)).toThrow(
      /must be text or a ToolResult.*still waits/,
    );
    expect(agent.pendingToolCalls().map((p) => p.toolCallId)).toEqual(["c1"]);
    agent.resolveToolCall("c1", { content: [{ type: "text", text: "red" }] });
    expect(() => agent.resolveToolCall("c1", "blue")).toThrow(/already answered/);
    await done;
    expect(() => agent.rejectToolCall("c1", "late")).toThrow(/already answered/);
    expect(results(agent).map((r) => r.content)).toEqual([[{ type: "text", text: "red" }]]);
  });

  it("the tool's timeout answers a call the client never answers", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [ask()] }, { text: "no answer then" }]),
      tools: [pickColor(30)],
    });
    await agent.prompt("pick one");
    expect(results(agent)[0]).toMatchObject({
      isError: true,
      content: [
        { type: "text", text: "Tool pick_color timed out after 30 ms waiting for the client's result" },
      ],
    });
  });

  it("an abort answers the waiting call and ends the run", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [ask()] }, { text: "unused" }]),
      tools: [pickColor()],
    });
    const events = record(agent);
    const done = agent.prompt("pick one");
    await waitingFor(agent, events);
    agent.abort();
    const outcome = await done;
    expect(outcome.reason).toBe("aborted");
    expect(results(agent)[0]!.isError).toBe(true);
    expectValidTranscript(agent.messages);
    expect(() => agent.resolveToolCall("c1", "late")).toThrow(/No tool call/);
  });

  it("a snapshot keeps the wait: the restored agent asks again and takes the result", async () => {
    const tools = [pickColor()];
    const agent = createAgent({ provider: scripted([{ toolCalls: [ask()] }]), tools });
    const events = record(agent);
    void agent.prompt("pick one");
    await waitingFor(agent, events);
    const saved = JSON.parse(JSON.stringify(agent.getPersistedSnapshot()));
    agent.stop();

    const restored = createAgent({ provider: scripted([{ text: "blue, then" }]), tools, snapshot: saved });
    const again = record(restored);
    const request = await waitingFor(restored, again);
    expect(request.toolCallId).toBe("c1");
    expect(restored.pendingToolCalls().map((p) => p.toolCallId)).toEqual(["c1"]);
    restored.resolveToolCall("c1", "blue");
    await restored.waitForIdle();
    expect(results(restored).map((r) => r.content)).toEqual([[{ type: "text", text: "blue" }]]);
    expect(restored.messages.at(-1)).toMatchObject({ role: "assistant" });
    expectValidTranscript(restored.messages);
  });

  it("a tool declared by JSON Schema goes to the provider as declared; its arguments pass to the client", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const provider = scripted([
      { toolCalls: [{ id: "g", name: "geo", arguments: { city: "Lisbon" } }] },
      { text: "ok" },
    ]);
    const agent = createAgent({
      provider,
      tools: [defineClientTool({ name: "geo", description: "Where the user is", parameters: schema })],
    });
    const events = record(agent);
    const done = agent.prompt("where am I?");
    const request = await waitingFor(agent, events);
    expect(request.args).toEqual({ city: "Lisbon" });
    agent.resolveToolCall("g", "38.7, -9.1");
    await done;
    expect(provider.requests[0]!.tools).toEqual([
      { name: "geo", description: "Where the user is", parameters: schema },
    ]);
  });
});
