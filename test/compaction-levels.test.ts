// Each compaction level on its own: what it cuts, what it keeps, and when it declines.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { digestSummary, mergeDigest } from "../context/digest.js";
import type { AgentMessage, AssistantMessage, Summarizer, ToolResultMessage } from "../index.js";
import {
  COMPACTION_MARKER_TEXT,
  COMPACTION_SUMMARY_TYPE,
  digestTurns,
  dropMiddle,
  emptyUsage,
  estimateTokens,
  isCompactionSummary,
  resolveContextConfig,
  summarizeOldTurns,
  summaryTextOf,
  truncateText,
  truncateToolOutputs,
} from "../index.js";
import { transcriptArb } from "./compaction-arbitraries.js";

let clock = 1_000;
const tick = () => {
  clock += 1;
  return clock;
};
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: tick() });
const reply = (text: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  stopReason: "stop",
  usage: emptyUsage(),
  timestamp: tick(),
});
const call = (id: string, name = "bash"): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name, arguments: { command: `run ${id}` } }],
  stopReason: "toolUse",
  usage: emptyUsage(),
  timestamp: tick(),
});
const output = (id: string, lines: number, isError = false, name = "bash"): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text: Array.from({ length: lines }, (_, i) => `out ${id} ${i}`).join("\n") }],
  isError,
  timestamp: tick(),
});
/** A turn: a question, a tool call with `lines` lines of output, an answer. */
const turn = (n: number, lines = 100): AgentMessage[] => [
  user(`question ${n}`),
  call(`c${n}`),
  output(`c${n}`, lines),
  reply(`answer ${n}`),
];
const textOfResult = (m: AgentMessage) =>
  m.role === "toolResult" ? m.content.map((b) => (b.type === "text" ? b.text : "")).join("") : "";

describe("truncateText", () => {
  it("keeps head and tail lines around a count of what was cut", () => {
    const text = Array.from({ length: 10 }, (_, i) => `line ${i}`).join("\n");
    expect(truncateText(text, 5, 1_000)).toBe("line 0\nline 1\n[... 6 lines truncated ...]\nline 8\nline 9");
  });

  it("returns a text within the limits unchanged", () => {
    expect(truncateText("a\nb\nc", 3, 200)).toBe("a\nb\nc");
  });

  it("cuts a single huge line by characters, keeping both ends", () => {
    const out = truncateText(`START${"x".repeat(10_000)}END`, 5, 300);
    expect(out.length).toBeLessThanOrEqual(300);
    expect(out.startsWith("START")).toBe(true);
    expect(out.endsWith("END")).toBe(true);
    expect(out).toContain("[... 1 lines truncated ...]");
  });

  it("always ends within both limits and is idempotent", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 300 }), { maxLength: 80 }),
        fc.integer({ min: 3, max: 30 }),
        fc.integer({ min: 200, max: 2_000 }),
        (lines, maxLines, maxChars) => {
          const once = truncateText(lines.join("\n"), maxLines, maxChars);
          expect(once.split("\n").length).toBeLessThanOrEqual(Math.max(maxLines, lines.length === 0 ? 1 : 0));
          expect(once.length).toBeLessThanOrEqual(Math.max(maxChars, 0));
          expect(truncateText(once, maxLines, maxChars)).toBe(once);
        },
      ),
    );
  });
});

describe("level 1: truncateToolOutputs", () => {
  const config = resolveContextConfig({
    maxContextTokens: 1_000,
    keepFirst: 1,
    keepRecent: 4,
    toolOutputMaxLines: 5,
  });

  it("cuts old tool outputs only, keeping the head, the recent turns and every other message", () => {
    const messages = [...turn(1), ...turn(2), ...turn(3)];
    const out = truncateToolOutputs(messages, config)!;
    expect(out).toHaveLength(messages.length);
    out.forEach((m, i) => {
      if (i === 2 || i === 6) {
        expect(m).not.toBe(messages[i]);
        expect(textOfResult(m)).toContain("[... 96 lines truncated ...]");
        expect(textOfResult(m).split("\n")).toHaveLength(5);
      } else expect(m).toBe(messages[i]);
    });
    expect(estimateTokens(out)).toBeLessThan(estimateTokens(messages));
  });

  it("declines when no old output is long enough", () => {
    expect(truncateToolOutputs([...turn(1, 3), ...turn(2, 3), ...turn(3, 300)], config)).toBeUndefined();
  });

  it("hands back the same truncated object every time, so prompt caches stay valid", () => {
    const messages = [...turn(1), ...turn(2), ...turn(3)];
    expect(truncateToolOutputs(messages, config)![2]).toBe(truncateToolOutputs(messages, config)![2]);
  });
});

describe("level 2: summarizeOldTurns", () => {
  const base = { maxContextTokens: 400, keepFirst: 1, keepRecent: 2, summaryMaxTokens: 60 };

  it("without a summariser, replaces old turns with a one-line digest per turn", async () => {
    const messages = [
      user("the task"),
      ...turn(1, 5),
      ...turn(2, 5),
      ...turn(3, 5),
      user("now?"),
      reply("ok"),
    ];
    const out = (await summarizeOldTurns(messages, resolveContextConfig(base), {
      target: 120,
      bound: 400,
      budget: 400,
    }))!;
    expect(out[0]).toBe(messages[0]);
    expect(out.at(-1)).toBe(messages.at(-1));
    const summary = out.find(isCompactionSummary)!;
    expect(summary).toMatchObject({ role: "custom", customType: COMPACTION_SUMMARY_TYPE, display: "model" });
    expect(summary.timestamp).toBe(messages[1].timestamp);
    expect(summaryTextOf(summary as never)).toContain(
      "- user: question 1; tools: bash\n- assistant: answer 1\n",
    );
  });

  it("passes an earlier summary as previousSummary and removes it instead of nesting it", async () => {
    const requests: Parameters<Summarizer>[0][] = [];
    const summarizer: Summarizer = async (request) => {
      requests.push(request);
      return `S(${request.previousSummary ?? "-"} + ${request.messages.length})`;
    };
    const config = resolveContextConfig({ ...base, maxContextTokens: 2_000, summarizer });
    let messages: AgentMessage[] = [user("the task")];
    for (let round = 1; round <= 3; round++) {
      messages = [...messages, ...turn(round * 10), ...turn(round * 10 + 1)];
      messages = (await summarizeOldTurns(messages, config, { target: 60, bound: 2_000, budget: 2_000 }))!;
    }
    const summaries = messages.filter(isCompactionSummary);
    expect(summaries).toHaveLength(1);
    // Round 1 summarises turn 10 and the question of turn 11 (5 messages); later rounds 8 each.
    expect(requests.map((r) => r.previousSummary)).toEqual([undefined, "S(- + 5)", "S(S(- + 5) + 8)"]);
    expect(summaryTextOf(summaries[0] as never)).toBe("S(S(S(- + 5) + 8) + 8)");
  });

  it("falls back to the digest when the summariser fails, and says why", async () => {
    const summarizer: Summarizer = async () => {
      throw new Error("model unavailable");
    };
    const config = resolveContextConfig({ ...base, maxContextTokens: 2_000, summarizer });
    const messages = [user("task"), ...turn(1), ...turn(2), ...turn(3)];
    const out = (await summarizeOldTurns(messages, config, { target: 100, bound: 2_000, budget: 2_000 }))!;
    const summary = out.find(isCompactionSummary)!;
    expect(summary.role === "custom" && summary.details).toMatchObject({
      method: "digest",
      summarizerError: "model unavailable",
    });
  });

  it("stops when aborted instead of falling back", async () => {
    const controller = new AbortController();
    const summarizer: Summarizer = async () => {
      controller.abort(new Error("user aborted"));
      throw new Error("aborted");
    };
    const config = resolveContextConfig({ ...base, maxContextTokens: 2_000, summarizer });
    const messages = [user("task"), ...turn(1), ...turn(2), ...turn(3)];
    await expect(
      summarizeOldTurns(messages, config, {
        target: 100,
        bound: 2_000,
        budget: 2_000,
        signal: controller.signal,
      }),
    ).rejects.toThrow("aborted");
  });

  it("declines when the summary and the protected turns cannot fit the bound", async () => {
    const messages = [user("task"), ...turn(1), ...turn(2), ...turn(3, 400)];
    const out = await summarizeOldTurns(messages, resolveContextConfig({ ...base, keepRecent: 4 }), {
      target: 50,
      bound: 100,
      budget: 400,
    });
    expect(out).toBeUndefined();
  });
});

describe("level 3: dropMiddle", () => {
  const config = { keepFirst: 1, keepRecent: 2 };

  it("keeps the head and the recent turns around one constant marker", () => {
    const messages = [user("task"), ...turn(1), ...turn(2), user("last"), reply("done")];
    const out = dropMiddle(messages, config, { target: 10 })!;
    expect(out).toHaveLength(4);
    expect(out[0]).toBe(messages[0]);
    expect(out[1]).toEqual({
      role: "custom",
      customType: "compaction_marker",
      content: COMPACTION_MARKER_TEXT,
      display: "model",
      timestamp: messages[1].timestamp,
      source: "agent",
      // These hand-made messages have no ids: the marker lists none.
      replaces: [],
    });
    expect(out.slice(2)).toEqual(messages.slice(-2));
  });

  it("widens the recent cut to keep a tool call with its result", () => {
    const messages = [user("task"), ...turn(1), ...turn(2)];
    // keepRecent 2 lands on the tool result of turn 2: its call comes along.
    const out = dropMiddle(messages, config, { target: 10 })!;
    expect(out.slice(2)).toEqual(messages.slice(-3));
  });

  it("keeps as many recent turns as the target allows", () => {
    const messages = [user("task"), ...turn(1, 2), ...turn(2, 2), ...turn(3, 2)];
    const out = dropMiddle(messages, config, { target: estimateTokens(messages) - 1 })!;
    expect(out.length).toBeGreaterThan(4);
    expect(estimateTokens(out)).toBeLessThanOrEqual(estimateTokens(messages) - 1);
  });

  it("writes the identical marker when it drops again, and declines when only the marker is left", () => {
    const messages = [user("task"), ...turn(1), ...turn(2), ...turn(3)];
    const once = dropMiddle(messages, config, { target: 10 })!;
    const grown = [...once, ...turn(4), ...turn(5)];
    const twice = dropMiddle(grown, config, { target: 10 })!;
    expect(twice[1]).toEqual(once[1]);
    expect(dropMiddle(twice, config, { target: 10 })).toBeUndefined();
  });
});

describe("digestSummary", () => {
  it("renders only the turns that can fit, with the same result as digesting everything", () => {
    fc.assert(
      fc.property(
        transcriptArb(40),
        fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
        fc.integer({ min: 1, max: 200 }),
        (messages, previous, maxTokens) => {
          expect(digestSummary(previous, messages, maxTokens)).toBe(
            mergeDigest(previous, digestTurns(messages), maxTokens),
          );
        },
      ),
    );
  });

  it("counts what it leaves out", () => {
    const messages = Array.from({ length: 500 }, (_, i) => turn(i, 1)).flat();
    const digest = digestSummary("[7 earlier turns omitted]\n- user: older", messages, 50);
    expect(digest.length).toBeLessThanOrEqual(200);
    // 500 turns of two model calls each, plus the 8 of the earlier summary, minus what is shown.
    const shown = digest.split("\n").length - 1;
    expect(digest.split("\n")[0]).toBe(`[${1_000 + 8 - shown} earlier turns omitted]`);
  });
});

describe("digestTurns", () => {
  it("writes one line per model call, with the messages that led to it, its text and its tools", () => {
    const lines = digestTurns([
      user("fix   the\n test"),
      {
        ...call("a", "read"),
        content: [
          { type: "text", text: "Looking." },
          { type: "toolCall", id: "a", name: "read", arguments: {} },
          { type: "toolCall", id: "a2", name: "read", arguments: {} },
          { type: "toolCall", id: "b", name: "bash", arguments: {} },
        ],
      },
      output("a", 1, false, "read"),
      output("a2", 1, false, "read"),
      output("b", 1, true, "bash"),
      reply("Fixed."),
      user("thanks"),
      user("bye"),
    ]);
    expect(lines).toEqual([
      "- user: fix the test; assistant: Looking.; tools: read ×2, bash (1 failed)",
      "- assistant: Fixed.",
      "- user: thanks; user: bye",
    ]);
  });
});
