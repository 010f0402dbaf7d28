// The AI SDK encoder on its own (encodeUIMessageChunks): what an ai 7 client gets and what the
// target-6 stream leaves out, from a recorded run with a retried attempt, a steer and an approval.
import { clientTargetOf } from "../http/internal/ai-sdk-client-version.js";
import * as z from "zod";
import { describe, expect, it } from "vitest";
import { encodeUIMessageChunks, type ResponseContext } from "../http.js";
import { type AgentEvent, createAgent, defineTool, scripted } from "../index.js";

const deleteFile = defineTool({
  name: "delete_file",
  description: "Deletes a file",
  parameters: z.object({ path: z.string() }),
  needsApproval: true,
  execute: () => "deleted",
});

/** The events of a run: an attempt that fails after streaming a call, its retry, an approval, a steer. */
async function recordedRun(): Promise<AgentEvent[]> {
  const agent = createAgent({
    provider: scripted([
      {
        text: "Trying",
        toolCalls: [{ name: "delete_file", id: "gone", arguments: { path: "a" } }],
        error: { kind: "overloaded", message: "busy" },
      },
      { text: "Deleting a.", toolCalls: [{ name: "delete_file", id: "del", arguments: { path: "a" } }] },
      { text: "Done, in French." },
    ]),
    tools: [deleteFile],
    retry: { baseDelayMs: 1, jitter: 0 },
  });
  const events: AgentEvent[] = [];
  agent.events$.subscribe((event) => {
    events.push(event);
    if (event.type === "approval_requested") {
      agent.steer({ role: "user", content: "answer in French", timestamp: 0, id: "s1" });
      agent.approve(event.toolCallId);
    }
  });
  await agent.prompt({ role: "user", content: "delete a", timestamp: 0, id: "u1" });
  return events;
}

const context: ResponseContext = { kind: "run", threadId: "t", runId: undefined, messages: [] };

describe("the AI SDK UI message stream encoder", () => {
  it("v7: one message id from the start, reset-step for the failed attempt, steering-message, approval chunks", async () => {
    const events = await recordedRun();
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    const chunks = encodeUIMessageChunks(context, events, {
      kind: "end",
      event: end,
      messages: end.messages,
    });
    const assistantId = end.messages.find((m) => m.role === "assistant")!.id;
    expect(chunks[0]).toEqual({ type: "start", messageId: assistantId });
    const types = chunks.map((c) => c.type);
    // The failed attempt streamed its call, then withdrew it before the retry's first chunk.
    expect(types.indexOf("reset-step")).toBeGreaterThan(types.indexOf("tool-input-start"));
    expect(chunks.filter((c) => c.type === "tool-input-start").map((c) => c.toolCallId)).toEqual([
      "gone",
      "del",
    ]);
    expect(chunks).toContainEqual({
      type: "tool-approval-request",
      approvalId: "del",
      toolCallId: "del",
      reason: "delete_file needs your approval", // what ai 7 sends back: how the host tells it from ai 6
    });
    expect(chunks).toContainEqual({ type: "tool-approval-response", approvalId: "del", approved: true });
    expect(chunks).toContainEqual({
      type: "steering-message",
      id: "s1",
      parts: [{ type: "text", text: "answer in French" }],
    });
    // The steered message comes before the step that reads it opens (a reset-step cannot remove it).
    const steer = types.indexOf("steering-message");
    expect(types.slice(steer + 1).indexOf("start-step")).toBeGreaterThanOrEqual(0);
    expect(types.slice(-2)).toEqual(["data-agent-machine-end", "finish"]);
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
  });

  it("v6: no chunk type ai 6 refuses, and the failed attempt's call never sent", async () => {
    const events = await recordedRun();
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    const chunks = encodeUIMessageChunks(
      context,
      events,
      { kind: "end", event: end, messages: end.messages },
      { target: 6 },
    );
    const types = new Set(chunks.map((c) => c.type));
    for (const v7Only of ["reset-step", "steering-message", "tool-approval-response"])
      expect(types.has(v7Only)).toBe(false);
    expect(chunks.filter((c) => c.type === "tool-input-start").map((c) => c.toolCallId)).toEqual(["del"]);
    expect(chunks).toContainEqual({
      type: "data-agent-machine-steering",
      id: "s1",
      data: { text: "answer in French", source: "steer" },
    });
    expect(chunks).toContainEqual({
      type: "tool-approval-request",
      approvalId: "del",
      toolCallId: "del",
      reason: "delete_file needs your approval", // what ai 7 sends back: how the host tells it from ai 6
    });
  });
});

describe("telling ai 7 from ai 6 (clientTargetOf)", () => {
  const approvalPart = (approval: Record<string, unknown>) => ({
    role: "assistant",
    parts: [{ type: "dynamic-tool", toolCallId: "c1", state: "approval-responded", approval }],
  });

  it("is 7 when an answered approval carries the request's reason (only ai 7 keeps it), else 6", () => {
    const user = { role: "user", parts: [{ type: "text", text: "hi" }] };
    expect(clientTargetOf([user])).toBe(6); // a new chat: nothing tells them apart yet
    expect(clientTargetOf([user, approvalPart({ id: "c1", approved: true })])).toBe(6);
    expect(
      clientTargetOf([
        user,
        approvalPart({ id: "c1", approved: true, requestReason: "x needs your approval" }),
      ]),
    ).toBe(7);
    // Malformed parts are not a sign of anything (the request's own checks refuse them).
    expect(clientTargetOf([{ role: "assistant", parts: [null, 3, { approval: "yes" }] }])).toBe(6);
  });
});
