import { describe, expect, it } from "vitest";
import { createEventView } from "../cli/event-view.js";
import { createScreen } from "../cli/screen.js";
import { createSessionMeter } from "../cli/status-line.js";
import { colorEnabled, createStyle, stripAnsi } from "../cli/style.js";
import type { AgentEvent, AssistantMessage } from "../index.js";

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 };
const assistant = (text: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  stopReason: "stop",
  usage,
  timestamp: 0,
});

function runEvents(): AgentEvent[] {
  const partial = assistant("");
  return [
    { type: "agent_start" },
    { type: "turn_start", turn: 1 },
    { type: "message_start", message: { role: "user", content: "list it", timestamp: 0 } },
    { type: "message_end", message: { role: "user", content: "list it", timestamp: 0 } },
    { type: "message_start", message: partial },
    { type: "message_update", message: partial, delta: "Looking ", kind: "text_delta" },
    { type: "message_update", message: partial, delta: "now.", kind: "text_delta" },
    { type: "message_end", message: assistant("Looking now.") },
    { type: "tool_execution_start", toolCallId: "a", toolName: "bash", args: { command: "ls -la" } },
    { type: "tool_execution_start", toolCallId: "b", toolName: "read_file", args: { path: "missing.txt" } },
    {
      type: "tool_execution_end",
      toolCallId: "b",
      toolName: "read_file",
      result: { content: [{ type: "text", text: "File not found: missing.txt\nmore" }] },
      isError: true,
    },
    {
      type: "tool_execution_end",
      toolCallId: "a",
      toolName: "bash",
      result: { content: [{ type: "text", text: "total 0" }] },
      isError: false,
    },
    { type: "turn_end", turn: 1, message: assistant("Looking now."), toolResults: [] },
    { type: "compaction", level: 1, tokensBefore: 900, tokensAfter: 400 },
    { type: "agent_end", messages: [], reason: "stop", usage },
  ];
}

function capture(isTTY: boolean) {
  let text = "";
  const out = { isTTY, columns: 100, write: (chunk: string) => (text += chunk) };
  return { out, text: () => text };
}

describe("the terminal view of agent events", () => {
  it("on a non-terminal: plain lines in order, tool lines once finished, no escape codes", () => {
    const { out, text } = capture(false);
    const screen = createScreen(out);
    const view = createEventView(screen, createStyle(false), { now: () => 1000 });
    for (const event of runEvents()) view.handle(event);
    screen.close();
    view.dispose();
    expect(text()).not.toContain("\x1b");
    expect(text().split("\n")).toEqual([
      "› list it",
      "Looking now.",
      // Tool lines keep the order the calls started in, whatever order they finished in.
      // Under each call its output, folded (a command's last lines; an error's lines after the first).
      "  ✓ bash ls -la  done 0.0s",
      "    │ total 0",
      "  ✗ read_file missing.txt  failed 0.0s · File not found: missing.txt",
      "    │ more",
      "⟳ context compacted (level 1: old tool outputs truncated) 900 → 400 tokens",
      "— done · 1 turn · 15 tokens · 0.0s",
      "",
    ]);
  });

  it("on a terminal: a running call's line is redrawn in place, then committed as done", async () => {
    const { out, text } = capture(true);
    const screen = createScreen(out);
    let now = 0;
    const view = createEventView(screen, createStyle(true), { now: () => now });
    view.handle({ type: "agent_start" });
    view.handle({
      type: "tool_execution_start",
      toolCallId: "a",
      toolName: "bash",
      args: { command: "sleep 1" },
    });
    screen.flush();
    expect(stripAnsi(text())).toContain("bash sleep 1  running 0.0s");
    now = 1500;
    view.handle({
      type: "tool_execution_end",
      toolCallId: "a",
      toolName: "bash",
      result: { content: [{ type: "text", text: "" }] },
      isError: false,
    });
    screen.flush();
    // The live region is cleared (cursor up + erase) and the final line written in its place.
    const after = text();
    expect(after).toContain("\x1b[J");
    expect(stripAnsi(after)).toContain("✓ bash sleep 1  done 1.5s");
    view.handle({ type: "agent_end", messages: [], reason: "aborted", usage });
    screen.close();
    view.dispose();
    expect(stripAnsi(text())).toContain("— aborted · 0 turns");
  });

  it("the status line names the model that answers (a fallback chain's second model), not the one configured", () => {
    const { out, text } = capture(true);
    const screen = createScreen(out);
    const meter = createSessionMeter({ maxContextTokens: 1000 });
    const view = createEventView(screen, createStyle(false), { status: { model: "first-model", meter } });
    const live = () => {
      const before = text().length;
      view.setFooter([]);
      screen.flush();
      return stripAnsi(text().slice(before));
    };
    const message = (model: string): AssistantMessage => ({
      role: "assistant",
      content: [],
      stopReason: "stop",
      usage,
      model,
      timestamp: 0,
    });
    view.handle({ type: "agent_start" });
    view.handle({ type: "turn_start", turn: 1 });
    view.handle({ type: "message_start", message: message("first-model") });
    view.handle({ type: "message_end", message: message("first-model"), discarded: true });
    view.handle({ type: "message_start", message: message("second-model") });
    view.handle({ type: "agent_end", messages: [], reason: "stop", usage });
    expect(live()).toContain("second-model");
    screen.close();
    view.dispose();
  });

  it("an approval: the line waits (not running), the status says so, and the tool's time starts when allowed", () => {
    const { out, text } = capture(true);
    const screen = createScreen(out);
    let now = 0;
    const view = createEventView(screen, createStyle(false), { now: () => now });
    /** The live region as last drawn: what follows the last erase. */
    const live = () => {
      const before = text().length;
      view.setFooter([]); // redraws at the clock's time, as the spinner's tick does
      screen.flush();
      return stripAnsi(text().slice(before));
    };
    const args = { command: "sleep 4" };
    view.handle({ type: "agent_start" });
    view.handle({ type: "turn_start", turn: 1 });
    view.handle({ type: "tool_execution_start", toolCallId: "a", toolName: "bash", args });
    view.handle({
      type: "tool_execution_start",
      toolCallId: "b",
      toolName: "read_file",
      args: { path: "x" },
    });
    view.handle({ type: "approval_requested", toolCallId: "a", toolName: "bash", args });
    now = 3000;
    let region = live();
    expect(region).toContain("? bash sleep 4  waiting for your approval");
    expect(region).not.toMatch(/bash sleep 4 +running/);
    expect(region).toContain("read_file x  running 3.0s");
    expect(region).toContain("waiting for your approval of bash · running 1 tool 3.0s");

    view.handle({ type: "approval_decided", toolCallId: "a", toolName: "bash", approved: true });
    now = 4000;
    region = live();
    expect(region).toMatch(/bash sleep 4 +running 1\.0s/);
    expect(region).not.toContain("waiting for your approval");
    expect(region).toContain("running 2 tools 4.0s");

    now = 7000;
    view.handle({
      type: "tool_execution_end",
      toolCallId: "a",
      toolName: "bash",
      result: { content: [{ type: "text", text: "" }] },
      isError: false,
    });
    view.handle({
      type: "tool_execution_end",
      toolCallId: "b",
      toolName: "read_file",
      result: { content: [{ type: "text", text: "x" }] },
      isError: false,
    });
    screen.flush();
    // 4 s of the command's own, not the 7 s since the call was announced.
    expect(stripAnsi(text())).toContain("✓ bash sleep 4  done 4.0s");
    screen.close();
    view.dispose();
  });

  it("a denied call is never shown running, and takes no time of its own", () => {
    const { out, text } = capture(false);
    const screen = createScreen(out);
    let now = 0;
    const view = createEventView(screen, createStyle(false), { now: () => now });
    const args = { path: "notes.txt", content: "x" };
    view.handle({ type: "agent_start" });
    view.handle({ type: "tool_execution_start", toolCallId: "w", toolName: "write_file", args });
    view.handle({ type: "approval_requested", toolCallId: "w", toolName: "write_file", args });
    now = 5000;
    view.handle({ type: "approval_decided", toolCallId: "w", toolName: "write_file", approved: false });
    view.handle({
      type: "tool_execution_end",
      toolCallId: "w",
      toolName: "write_file",
      result: { content: [{ type: "text", text: "Permission denied: the user said no" }] },
      isError: true,
    });
    screen.close();
    view.dispose();
    expect(text()).toContain("  ✗ write_file notes.txt  failed 0.0s · Permission denied: the user said no\n");
  });

  it("says when a limit ends the work, and whether the model is asked for its answer", () => {
    const { out, text } = capture(false);
    const screen = createScreen(out);
    const view = createEventView(screen, createStyle(false), { now: () => 0 });
    view.handle({ type: "agent_start" });
    view.handle({
      type: "limit_reached",
      limit: "maxTurns",
      action: "answer",
      text: "Max turns reached (3/3)",
    });
    view.handle({
      type: "limit_reached",
      limit: "maxDurationMs",
      action: "stop",
      text: "Time limit reached (60000 ms)",
    });
    screen.close();
    view.dispose();
    expect(text().split("\n").slice(0, 2)).toEqual([
      "⏹ Max turns reached (3/3) — asking the model for its answer, without tools",
      "⏹ Time limit reached (60000 ms)",
    ]);
  });

  it("shows a retried attempt as retried, not as a model error", () => {
    const { out, text } = capture(false);
    const screen = createScreen(out);
    const view = createEventView(screen, createStyle(false), { now: () => 0 });
    const partial = assistant("");
    const failed: AssistantMessage = {
      ...assistant("half an ans"),
      stopReason: "error",
      errorMessage: "Overloaded",
    };
    view.handle({ type: "agent_start" });
    view.handle({ type: "turn_start", turn: 1 });
    view.handle({ type: "message_start", message: partial });
    view.handle({ type: "message_update", message: partial, delta: "half an ans", kind: "text_delta" });
    view.handle({ type: "retry", attempt: 1, delayMs: 1000, error: "Overloaded" });
    view.handle({ type: "message_end", message: failed, discarded: true });
    view.handle({ type: "message_start", message: partial });
    view.handle({ type: "message_update", message: partial, delta: "The answer.", kind: "text_delta" });
    view.handle({ type: "message_end", message: assistant("The answer.") });
    screen.close();
    view.dispose();
    expect(text().split("\n").slice(0, 3)).toEqual([
      "half an ans",
      "↻ retry 1 in 1.0s: Overloaded",
      "The answer.",
    ]);
    expect(text()).not.toContain("model error");
  });

  it("colours only a terminal, and never with NO_COLOR", () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colorEnabled({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(true);
    expect(createStyle(false, "light").error("x")).toBe("x");
    expect(createStyle(true, "light").error("x")).toBe("\x1b[31mx\x1b[39m");
  });
});
