// Token accounting: the estimate, its cache, calibration by reported usage, and the config helpers.
import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, UserMessage } from "../index.js";
import {
  calibrationFromUsage,
  contextBudget,
  contextConfigForModel,
  emptyUsage,
  estimateImageTokens,
  estimateMessageTokens,
  estimateRequestOverhead,
  estimateTokens,
  isOverBudget,
  measuredOverhead,
  resolveContextConfig,
} from "../index.js";

describe("estimateMessageTokens", () => {
  it("counts text at four characters per token plus framing", () => {
    expect(estimateMessageTokens({ role: "user", content: "x".repeat(400), timestamp: 0 })).toBe(104);
  });

  it("counts tool calls by their JSON arguments", () => {
    const small: AssistantMessage = {
      role: "assistant",
      content: [{ type: "toolCall", id: "c1", name: "write", arguments: { path: "a" } }],
      stopReason: "toolUse",
      usage: emptyUsage(),
      timestamp: 0,
    };
    const big: AssistantMessage = {
      ...small,
      content: [
        { type: "toolCall", id: "c1", name: "write", arguments: { path: "a", body: "y".repeat(4_000) } },
      ],
    };
    expect(estimateMessageTokens(big) - estimateMessageTokens(small)).toBeGreaterThanOrEqual(1_000);
  });

  it("counts images by size within what providers bill, not as base64 text", () => {
    const tiny = estimateImageTokens({ type: "image", data: "AAAA", mimeType: "image/png" });
    const screenshot = estimateImageTokens({
      type: "image",
      data: "A".repeat(2_000_000),
      mimeType: "image/png",
    });
    expect(tiny).toBe(85);
    expect(screenshot).toBe(1_600);
    const medium = estimateImageTokens({ type: "image", data: "A".repeat(200_000), mimeType: "image/png" });
    expect(medium).toBeGreaterThan(tiny);
    expect(medium).toBeLessThan(screenshot);
  });

  it("costs nothing for a UI-only custom message, which never reaches the model", () => {
    const note: AgentMessage = {
      role: "custom",
      customType: "note",
      content: "x".repeat(999),
      display: "ui-only",
      timestamp: 0,
    };
    expect(estimateMessageTokens(note)).toBe(0);
  });

  it("re-estimates a message whose content was replaced or appended to", () => {
    const message: UserMessage = {
      role: "user",
      content: [{ type: "text", text: "x".repeat(40) }],
      timestamp: 0,
    };
    const before = estimateMessageTokens(message);
    message.content = [...(message.content as []), { type: "text", text: "y".repeat(400) }];
    expect(estimateMessageTokens(message)).toBe(before + 100);
    (message.content as unknown[]).push({ type: "text", text: "z".repeat(400) });
    expect(estimateMessageTokens(message)).toBe(before + 200);
  });

  it("sums a transcript", () => {
    const a: AgentMessage = { role: "user", content: "abcd", timestamp: 0 };
    expect(estimateTokens([a, a, a])).toBe(3 * estimateMessageTokens(a));
  });
});

describe("calibration", () => {
  it("measures the overhead the provider counted beyond our estimate", () => {
    const sent: AgentMessage[] = [{ role: "user", content: "x".repeat(4_000), timestamp: 0 }];
    const usage = { ...emptyUsage(), input: 300, cacheRead: 2_500, cacheWrite: 200 };
    const calibration = calibrationFromUsage(sent, usage);
    expect(calibration).toEqual({ estimated: 1_004, reported: 3_000 });
    expect(measuredOverhead(calibration)).toBe(1_996);
  });

  it("never counts a negative overhead", () => {
    expect(measuredOverhead({ estimated: 5_000, reported: 4_000 })).toBe(0);
    expect(measuredOverhead(undefined)).toBe(0);
  });

  it("takes the larger of the configured and the measured overhead off the budget", () => {
    expect(contextBudget({ maxContextTokens: 10_000, systemPromptTokens: 1_000 })).toBe(9_000);
    expect(
      contextBudget(
        { maxContextTokens: 10_000, systemPromptTokens: 1_000 },
        { estimated: 100, reported: 2_600 },
      ),
    ).toBe(7_500);
    expect(
      contextBudget(
        { maxContextTokens: 10_000, systemPromptTokens: 3_000 },
        { estimated: 100, reported: 2_600 },
      ),
    ).toBe(7_000);
  });

  it("makes isOverBudget see the system prompt and tools it cannot count itself", () => {
    const messages: AgentMessage[] = [{ role: "user", content: "x".repeat(3_600), timestamp: 0 }];
    const config = { maxContextTokens: 1_000 };
    expect(isOverBudget(messages, config)).toBe(false);
    expect(isOverBudget(messages, config, { estimated: 904, reported: 1_200 })).toBe(true);
  });

  it("estimates the system prompt and tool schemas before any usage is known", () => {
    const overhead = estimateRequestOverhead({
      systemPrompt: "s".repeat(400),
      tools: [{ name: "read", description: "d".repeat(96), parameters: { type: "object" } }],
    });
    expect(overhead).toBe(Math.ceil((400 + 4 + 96 + JSON.stringify({ type: "object" }).length) / 4));
  });
});

describe("config", () => {
  it("fills in the defaults", () => {
    expect(resolveContextConfig({ maxContextTokens: 32_000 })).toMatchObject({
      maxContextTokens: 32_000,
      keepFirst: 1,
      keepRecent: 6,
      toolOutputMaxLines: 80,
      targetRatio: 0.6,
    });
  });

  it("rejects bad numbers with a message naming the field", () => {
    expect(() => resolveContextConfig({ maxContextTokens: 0 })).toThrow(/maxContextTokens/);
    expect(() => resolveContextConfig({ maxContextTokens: 10, targetRatio: 1.5 })).toThrow(/targetRatio/);
    expect(() => resolveContextConfig({ maxContextTokens: 10, keepRecent: -1 })).toThrow(/keepRecent/);
  });

  it("derives a config from a model's context window, keeping room for the answer", () => {
    expect(contextConfigForModel(200_000)).toEqual({ maxContextTokens: 200_000 - 16_384 });
    expect(contextConfigForModel(8_192)).toEqual({ maxContextTokens: 8_192 - 1_638 });
    expect(contextConfigForModel(128_000, { reserveForOutput: 4_000, keepRecent: 10 })).toEqual({
      maxContextTokens: 124_000,
      keepRecent: 10,
    });
    expect(() => contextConfigForModel(1_000, { reserveForOutput: 1_000 })).toThrow(/reserveForOutput/);
  });
});
