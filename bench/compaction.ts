// Compaction figures: `npx tsx bench/compaction.ts`.
// 1. Estimating and compacting a 1,000,000-token transcript (5,000 turns with tool output).
// 2. A 500-turn agent session (the real agent machine, scripted provider) with a 32k budget:
//    compactions, peak context, and the summary's size as compactions accumulate.
import { performance } from "node:perf_hooks";
import { z } from "zod";
import type { AgentMessage, ContextConfig, ProviderRequest, Summarizer } from "../index.js";
import {
  compactContext,
  contextBudget,
  createAgent,
  defineTool,
  emptyUsage,
  estimateMessageTokens,
  estimateTokens,
  isCompactionSummary,
  scripted,
  summarizerFromProvider,
} from "../index.js";

const ms = (t: number) => `${t.toFixed(1)} ms`;

function bigTranscript(turns: number): AgentMessage[] {
  const messages: AgentMessage[] = [{ role: "user", content: "Audit the whole repository.", timestamp: 0 }];
  for (let t = 0; t < turns; t++) {
    const output = Array.from(
      { length: 12 },
      (_, i) => `src/m${t}.ts:${i} export const v${i} = f(${t}, ${i}); // ok`,
    );
    messages.push(
      {
        role: "user",
        content: `Turn ${t}: check module m${t} for unused exports and report.`,
        timestamp: t * 10 + 1,
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: `Reading m${t}.` },
          { type: "toolCall", id: `c${t}`, name: "read", arguments: { path: `src/m${t}.ts` } },
        ],
        stopReason: "toolUse",
        usage: emptyUsage(),
        timestamp: t * 10 + 2,
      },
      {
        role: "toolResult",
        toolCallId: `c${t}`,
        toolName: "read",
        content: [{ type: "text", text: output.join("\n") }],
        isError: false,
        timestamp: t * 10 + 3,
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: `Module m${t}: all ${output.length} exports are used; nothing to change.` },
        ],
        stopReason: "stop",
        usage: emptyUsage(),
        timestamp: t * 10 + 4,
      },
    );
  }
  return messages;
}

async function bigTranscriptFigures() {
  const messages = bigTranscript(5_000);
  const chars = JSON.stringify(messages.map((m) => m.content)).length;
  let start = performance.now();
  const tokens = estimateTokens(messages);
  const cold = performance.now() - start;
  start = performance.now();
  estimateTokens(messages);
  const warm = performance.now() - start;
  console.log(`\n## 1,000,000-token transcript`);
  console.log(
    `messages: ${messages.length}, content: ${(chars / 1e6).toFixed(2)} MB, estimate: ${tokens} tokens`,
  );
  console.log(`estimate: ${ms(cold)} cold (every message measured), ${ms(warm)} warm (cached per message)`);

  const rows: string[][] = [];
  const calls = { n: 0 };
  const instant: Summarizer = async ({ previousSummary, messages: chunk }) => {
    calls.n++;
    return `${previousSummary ?? ""} [${chunk.length} messages]`.slice(-4_000);
  };
  for (const [label, config] of [
    ["200k, digest", { maxContextTokens: 200_000 }],
    ["32k, digest", { maxContextTokens: 32_000 }],
    ["200k, summariser", { maxContextTokens: 200_000, summarizer: instant }],
    ["32k, summariser", { maxContextTokens: 32_000, summarizer: instant }],
  ] as [string, ContextConfig][]) {
    calls.n = 0;
    const fresh = bigTranscript(5_000); // fresh objects: no cached estimates or truncations
    start = performance.now();
    const result = (await compactContext(fresh, config))!;
    const took = performance.now() - start;
    rows.push([
      label,
      ms(took),
      String(result.level),
      String(result.tokensBefore),
      String(result.tokensAfter),
      String(result.target),
      String(result.budget),
      config.summarizer ? String(calls.n) : "-",
    ]);
  }
  console.log(
    "\n| budget, level 2 by | compact time | level | before | after | target | budget | summary requests |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}

/** The model's count of a request: every character at 4 a token, plus framing per message. */
function modelTokens(request: ProviderRequest): number {
  let chars = (request.systemPrompt?.length ?? 0) + JSON.stringify(request.tools).length;
  for (const m of request.messages) {
    if (typeof m.content === "string") chars += m.content.length;
    else
      for (const b of m.content) {
        if (b.type === "text") chars += b.text.length;
        else if (b.type === "toolCall")
          chars += b.id.length + b.name.length + JSON.stringify(b.arguments).length;
      }
    if (m.role === "toolResult") chars += m.toolName.length + m.toolCallId.length;
  }
  return Math.ceil(chars / 4) + 4 * request.messages.length;
}

async function sessionFigures(label: string, useSummarizer: boolean) {
  const WINDOW = 32_000;
  const TURNS = 500;
  const systemPrompt = `You are a careful engineer. ${"Follow the house rules. ".repeat(100)}`;
  const read = defineTool({
    name: "read",
    description: "Reads a file",
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) =>
      Array.from(
        { length: 45 },
        (_, i) => `${path}:${i + 1} export function f${i}(x: number) { return x * ${i}; }`,
      ).join("\n"),
  });
  let peak = 0;
  let overflows = 0;
  let answered = 0;
  const provider = scripted(
    (request) => {
      const tokens = modelTokens(request);
      peak = Math.max(peak, tokens);
      if (tokens > WINDOW) {
        overflows++;
        return { error: { kind: "context_overflow", message: `prompt is too long: ${tokens} > ${WINDOW}` } };
      }
      answered++;
      const usage = { input: tokens, output: 30 };
      if (answered >= TURNS) return { text: "Done.", usage };
      return {
        text: `Step ${answered}: reading the next file.`,
        toolCalls: [{ name: "read", arguments: { path: `src/file${answered}.ts` } }],
        usage,
      };
    },
    { record: false },
  );
  // A stand-in LLM summariser: carries the previous summary forward and adds a line per chunk.
  const summaryModel = scripted(
    (request) => {
      const prompt = request.messages[0].content as string;
      const previous = /<previous-summary>\n([\s\S]*?)\n<\/previous-summary>/.exec(prompt)?.[1] ?? "";
      const steps = prompt.match(/Step \d+/g) ?? [];
      return {
        text: `${previous}\nWorked through ${steps[0] ?? "?"}..${steps.at(-1) ?? "?"}: read files, no issues.`,
      };
    },
    { record: false },
  );
  const context: ContextConfig = {
    maxContextTokens: WINDOW,
    ...(useSummarizer && { summarizer: summarizerFromProvider(summaryModel) }),
  };
  const agent = createAgent({ provider, systemPrompt, tools: [read], context });
  const summarySizes: number[] = [];
  const levels: number[] = [];
  agent.events$.subscribe((event) => {
    if (event.type !== "compaction") return;
    levels.push(event.level);
    const summary = agent.actor.getSnapshot().context.messages.find(isCompactionSummary);
    summarySizes.push(summary ? estimateMessageTokens(summary) : 0);
  });
  const start = performance.now();
  await agent.prompt("Read every file in src/ and report problems.");
  const took = performance.now() - start;
  const budget = contextBudget({ maxContextTokens: WINDOW });
  const at = (n: number) => (summarySizes[n - 1] === undefined ? "-" : String(summarySizes[n - 1]));
  console.log(`\n## 500-turn session, 32k window (${label})`);
  console.log(`model calls answered: ${answered}, run time: ${ms(took)}`);
  console.log(
    `compactions: ${levels.length} (level 1: ${levels.filter((l) => l === 1).length}, level 2: ${levels.filter((l) => l === 2).length}, level 3: ${levels.filter((l) => l === 3).length})`,
  );
  console.log(
    `peak request (model's count, system prompt and tools included): ${peak} / ${WINDOW}; overflows: ${overflows}`,
  );
  console.log(
    `summary tokens after compaction 1 / 5 / 10 / 20 / last: ${at(1)} / ${at(5)} / ${at(10)} / ${at(20)} / ${at(summarySizes.length)} (max ${Math.max(...summarySizes)}, cap 2000)`,
  );
  console.log(
    `final transcript: ${agent.messages.length} messages, ${estimateTokens(agent.messages)} tokens (budget ${budget} before the measured overhead)`,
  );
}

await bigTranscriptFigures();
await sessionFigures("digest", false);
await sessionFigures("LLM summariser via summarizerFromProvider", true);
