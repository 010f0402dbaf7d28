import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  acpHistory,
  acpStopReason,
  acpToolDiff,
  acpToolKind,
  acpUpdateOf,
  createPlanTool,
  promptFromAcp,
} from "../acp.js";
import type { AgentEvent, AgentMessage, AssistantMessage } from "../index.js";

const usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (content: AssistantMessage["content"]): AssistantMessage =>
  ({ role: "assistant", content, stopReason: "stop", usage, timestamp: 0 }) as AssistantMessage;

describe("our events in ACP (docs/acp.md's table)", () => {
  it("maps text and thinking deltas to message and thought chunks, and nothing else of a message", () => {
    const message = assistant([]);
    expect(acpUpdateOf({ type: "message_update", kind: "text_delta", delta: "Hi", message }, "/w")).toEqual({
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "Hi" },
    });
    expect(
      acpUpdateOf({ type: "message_update", kind: "thinking_delta", delta: "hm", message }, "/w"),
    ).toEqual({
      sessionUpdate: "agent_thought_chunk",
      content: { type: "text", text: "hm" },
    });
    expect(acpUpdateOf({ type: "turn_start", turn: 1 }, "/w")).toBeUndefined();
  });

  it("maps a tool's start and end to tool_call (in progress) and tool_call_update (completed or failed)", () => {
    const start = acpUpdateOf(
      { type: "tool_execution_start", toolCallId: "c1", toolName: "bash", args: { command: "ls -la" } },
      "/w",
    );
    expect(start).toMatchObject({
      sessionUpdate: "tool_call",
      toolCallId: "c1",
      kind: "execute",
      status: "in_progress",
      title: "bash: ls -la",
    });
    const end = acpUpdateOf(
      {
        type: "tool_execution_end",
        toolCallId: "c1",
        toolName: "bash",
        result: { content: [{ type: "text", text: "boom" }] },
        isError: true,
      },
      "/w",
    );
    expect(end).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "boom" } }],
    });
  });

  it("gives a write its diff against the file as it is (null for a new file), with an absolute path", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "am-acp-diff-"));
    try {
      writeFileSync(path.join(dir, "old.txt"), "before\n");
      expect(acpToolDiff("write_file", { path: "old.txt", content: "after\n" }, dir)).toEqual([
        { type: "diff", path: path.join(dir, "old.txt"), oldText: "before\n", newText: "after\n" },
      ]);
      expect(acpToolDiff("write_file", { path: "new.txt", content: "x" }, dir)).toEqual([
        { type: "diff", path: path.join(dir, "new.txt"), oldText: null, newText: "x" },
      ]);
      expect(acpToolDiff("bash", { command: "ls" }, dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("maps tool kinds and stop reasons; an error is no stop reason (the prompt request fails)", () => {
    expect(["read_file", "edit_file", "bash", "grep", "my_tool"].map(acpToolKind)).toEqual([
      "read",
      "edit",
      "execute",
      "search",
      "other",
    ]);
    expect(acpStopReason("stop")).toBe("end_turn");
    expect(acpStopReason("aborted")).toBe("cancelled");
    expect(acpStopReason("limit")).toBe("max_turn_requests");
    expect(acpStopReason("rejected")).toBe("refusal");
    expect(acpStopReason("error")).toBeUndefined();
  });

  it("replays a transcript for session/load: user text, answers, each call with its final status", () => {
    const messages: AgentMessage[] = [
      { role: "user", content: "list", timestamp: 0 },
      assistant([{ type: "toolCall", id: "c1", name: "list_files", arguments: { path: "." } }]),
      {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "list_files",
        content: [{ type: "text", text: "a.txt" }],
        isError: false,
        timestamp: 0,
      },
      assistant([{ type: "text", text: "one file" }]),
    ];
    expect(acpHistory(messages, "/w").map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
    ]);
  });

  it("takes text, images and text resources as a prompt, and refuses audio with a reason", () => {
    expect(
      promptFromAcp([
        { type: "text", text: "fix " },
        { type: "resource_link", uri: "file:///w/a.ts", name: "a.ts" },
      ]),
    ).toBe("fix \n[file: file:///w/a.ts]");
    const withImage = promptFromAcp([
      { type: "text", text: "see" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
    ]);
    expect(withImage).toMatchObject({
      role: "user",
      content: [{ type: "text" }, { type: "image", mimeType: "image/png" }],
    });
    expect(() => promptFromAcp([{ type: "audio", data: "AAAA", mimeType: "audio/wav" }])).toThrow(/audio/);
  });

  it("shows update_plan calls as the session's plan (priority medium by default), never as tool calls", () => {
    const entries = [
      { content: "read the code", status: "completed" },
      { content: "fix the bug", status: "in_progress", priority: "high" },
    ];
    expect(
      acpUpdateOf(
        { type: "tool_execution_start", toolCallId: "p1", toolName: "update_plan", args: { entries } },
        "/w",
      ),
    ).toEqual({
      sessionUpdate: "plan",
      entries: [
        { content: "read the code", status: "completed", priority: "medium" },
        { content: "fix the bug", status: "in_progress", priority: "high" },
      ],
    });
    const end = {
      type: "tool_execution_end",
      toolCallId: "p1",
      toolName: "update_plan",
      result: { content: [{ type: "text", text: "Plan updated" }] },
      isError: false,
    } satisfies AgentEvent;
    expect(acpUpdateOf(end, "/w")).toBeUndefined();
    // Arguments that are not a plan show no plan (the call fails and the model is told why).
    expect(
      acpUpdateOf(
        { type: "tool_execution_start", toolCallId: "p2", toolName: "update_plan", args: { entries: "x" } },
        "/w",
      ),
    ).toBeUndefined();
    const messages: AgentMessage[] = [
      assistant([{ type: "toolCall", id: "p1", name: "update_plan", arguments: { entries } }]),
      {
        role: "toolResult",
        toolCallId: "p1",
        toolName: "update_plan",
        content: [{ type: "text", text: "Plan updated" }],
        isError: false,
        timestamp: 0,
      },
    ];
    expect(acpHistory(messages, "/w")).toEqual([
      expect.objectContaining({
        sessionUpdate: "plan",
        entries: expect.arrayContaining([expect.anything()]),
      }),
    ]);
  });

  it("answers update_plan with where the plan stands", async () => {
    const tool = createPlanTool();
    expect(tool.readOnly).toBe(true);
    const answer = await tool.execute(
      {
        entries: [
          { content: "a", status: "completed" },
          { content: "b", status: "in_progress" },
          { content: "c", status: "pending" },
        ],
      },
      {} as never,
    );
    expect(answer).toBe("Plan updated: 1 of 3 steps completed; in progress: b.");
  });
});
