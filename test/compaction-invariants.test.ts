// The compaction invariants of DESIGN.md, property-tested over random transcripts and configs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ContextConfig, Summarizer } from "../index.js";
import {
  compactContext,
  contextBudget,
  estimateTokens,
  isCompactionMessage,
  isCompactionSummary,
} from "../index.js";
import { configArb, pairingProblems, smallestAnswerTokens, transcriptArb } from "./compaction-arbitraries.js";

// FC_RUNS=5000 npx vitest run … to search harder.
const RUNS = { numRuns: Number(process.env.FC_RUNS ?? 300) };

/** A deterministic stand-in for an LLM: says how much it was given. */
const countingSummarizer: Summarizer = async ({ messages, previousSummary }) =>
  `Earlier: ${previousSummary ? previousSummary.slice(0, 80) : "nothing"}. Then ${messages.length} messages.`;

const withSummarizer = (config: ContextConfig): ContextConfig => ({
  ...config,
  summarizer: countingSummarizer,
});

for (const [name, configure] of [
  ["digest", (c: ContextConfig) => c],
  ["summarizer", withSummarizer],
] as const) {
  describe(`compaction invariants (${name})`, () => {
    it("never separates a tool call from its result", async () => {
      await fc.assert(
        fc.asyncProperty(transcriptArb(), configArb, async (messages, config) => {
          const result = await compactContext(messages, configure(config));
          expect(pairingProblems(result?.messages ?? messages)).toEqual([]);
        }),
        RUNS,
      );
    });

    it("is idempotent: compacting a compacted context changes nothing", async () => {
      await fc.assert(
        fc.asyncProperty(transcriptArb(), configArb, async (messages, config) => {
          const first = await compactContext(messages, configure(config));
          if (!first) return;
          expect(await compactContext(first.messages, configure(config))).toBeUndefined();
        }),
        RUNS,
      );
    });

    it("keeps the first keepFirst and last keepRecent messages as the same objects", async () => {
      await fc.assert(
        fc.asyncProperty(transcriptArb(), configArb, async (messages, config) => {
          const out = (await compactContext(messages, configure(config)))?.messages ?? messages;
          const first = Math.min(config.keepFirst!, messages.length);
          const recent = Math.min(config.keepRecent!, messages.length);
          for (let i = 0; i < first; i++) expect(out[i]).toBe(messages[i]);
          for (let i = 1; i <= recent; i++) expect(out[out.length - i]).toBe(messages[messages.length - i]);
        }),
        RUNS,
      );
    });

    it("fits the budget whenever the smallest allowed answer does", async () => {
      await fc.assert(
        fc.asyncProperty(transcriptArb(), configArb, async (messages, config) => {
          const result = await compactContext(messages, configure(config));
          const budget = contextBudget(config);
          const after = estimateTokens(result?.messages ?? messages);
          if (smallestAnswerTokens(messages, config) <= budget) {
            expect(after).toBeLessThanOrEqual(budget);
            if (result) expect(result.fits).toBe(true);
          }
          if (result) {
            expect(result.tokensAfter).toBe(after);
            expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
          }
        }),
        RUNS,
      );
    });

    it("keeps messages byte-identical and in order; only old tool results are cut", async () => {
      await fc.assert(
        fc.asyncProperty(transcriptArb(), configArb, async (messages, config) => {
          const result = await compactContext(messages, configure(config));
          if (!result) return;
          let lastIndex = -1;
          for (const message of result.messages) {
            const index = messages.indexOf(message);
            if (index >= 0) {
              expect(index).toBeGreaterThan(lastIndex);
              lastIndex = index;
              continue;
            }
            if (isCompactionMessage(message) && !messages.includes(message)) continue;
            // Not kept as is: must be a truncated copy of a later tool result, same in all but its text.
            expect(message.role).toBe("toolResult");
            if (message.role !== "toolResult") return;
            const original = messages.findIndex(
              (m) => m.role === "toolResult" && m.toolCallId === message.toolCallId,
            );
            expect(original).toBeGreaterThan(lastIndex);
            lastIndex = original;
            const { content, ...rest } = message;
            const { content: _, ...originalRest } = messages[original] as typeof message;
            expect(rest).toEqual(originalRest);
            expect(content.map((b) => (b.type === "text" ? b.text : "")).join("")).toMatch(
              /\[\.\.\. \d+ lines truncated \.\.\.\]/,
            );
          }
        }),
        RUNS,
      );
    });

    it("is deterministic: the same input gives the same bytes", async () => {
      await fc.assert(
        fc.asyncProperty(transcriptArb(), configArb, async (messages, config) => {
          const a = await compactContext(structuredClone(messages), configure(config));
          const b = await compactContext(structuredClone(messages), configure(config));
          expect(JSON.stringify(a)).toBe(JSON.stringify(b));
        }),
        RUNS,
      );
    });

    it("replaces earlier summaries instead of nesting them", async () => {
      await fc.assert(
        fc.asyncProperty(transcriptArb(), configArb, async (messages, config) => {
          const result = await compactContext(messages, configure(config));
          if (result?.level !== 2) return;
          const created = result.messages.filter((m) => isCompactionSummary(m) && !messages.includes(m));
          expect(created).toHaveLength(1);
          // Every earlier summary either survives verbatim (protected) or is gone.
          const survivors = result.messages.filter((m) => isCompactionSummary(m) && messages.includes(m));
          const earlier = messages.filter(isCompactionSummary);
          for (const s of survivors) expect(earlier).toContain(s);
          const text = JSON.stringify(created[0].content);
          expect(text.split("[Summary of the earlier conversation").length).toBe(2);
        }),
        RUNS,
      );
    });
  });
}
