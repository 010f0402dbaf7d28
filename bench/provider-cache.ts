/**
 * How much of a long Anthropic session's input is billed as prompt-cache reads.
 *
 * Runs a 200-turn agent session (40 prompts × 5 model calls: 4 tool calls, then an answer)
 * against the fixture server, which bills cache reads the way Anthropic does: the longest prefix
 * up to a `cache_control` breakpoint that an earlier request already wrote is a cache read, the
 * rest up to the last breakpoint a cache write, anything after it plain input; prefixes under
 * 1,024 tokens are not cached. Tokens are estimated as JSON characters / 4.
 *
 *   npx tsx bench/provider-cache.ts            # caching on (the default)
 *   npx tsx bench/provider-cache.ts --no-cache # for comparison
 */
import { z } from "zod";
import {
  type AssistantMessage,
  addUsage,
  anthropic,
  createAgent,
  defineTool,
  emptyUsage,
  withCost,
} from "../index.js";
import { startProviderServer } from "../test/fixtures/provider-server.js";
import { anthropicMessage } from "../test/fixtures/provider-wire.js";

const PROMPTS = 40;
const CALLS_PER_PROMPT = 4;
const cache = !process.argv.includes("--no-cache");
const model = "claude-opus-4-5";

const server = await startProviderServer({ cacheMinTokens: 1024 });
let call = 0;
server.fallback = () => {
  call++;
  const inPrompt = call % (CALLS_PER_PROMPT + 1);
  if (inPrompt === 0) {
    return {
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "text", text: ["Done: ", "the files look fine."] }] }),
    };
  }
  return {
    type: "sse",
    frames: anthropicMessage({
      blocks: [
        { type: "text", text: [`Reading file ${call}.`] },
        {
          type: "tool_use",
          id: `toolu_${call}`,
          name: "read_file",
          json: [`{"path":"src/file-${call}.ts"}`],
        },
      ],
    }),
  };
};

const readFile = defineTool({
  name: "read_file",
  description: "Read a source file and return its text.",
  parameters: z.object({ path: z.string().describe("Path relative to the project root") }),
  readOnly: true,
  // ~1.2k tokens of "source" per call, different for every file.
  execute: async ({ path }) =>
    Array.from({ length: 60 }, (_, i) => `// ${path} line ${i}: export const value${i} = ${i * 7};`).join(
      "\n",
    ),
});

const agent = createAgent({
  provider: anthropic({ model, apiKey: "sk-ant-bench-key", baseURL: server.url, cache }),
  systemPrompt: `You are a careful coding assistant.\n${"Follow the project's conventions. ".repeat(120)}`,
  tools: [readFile],
});

for (let i = 0; i < PROMPTS; i++) await agent.prompt(`Task ${i + 1}: review the next files.`);

let usage = emptyUsage();
let turns = 0;
for (const message of agent.messages) {
  if (message.role !== "assistant") continue;
  turns++;
  usage = addUsage(usage, (message as AssistantMessage).usage);
}
const billedInput = usage.input + usage.cacheRead + usage.cacheWrite;
const uncached =
  withCost({ ...usage, input: billedInput, cacheRead: 0, cacheWrite: 0 }, model).cost?.total ?? 0;
const cost = usage.cost?.total ?? 0;
console.log(
  `turns (model calls): ${turns}, requests served: ${server.requests.length}, caching ${cache ? "on" : "off"}`,
);
console.log(
  `input tokens: ${billedInput} = plain ${usage.input} + cache read ${usage.cacheRead} + cache write ${usage.cacheWrite}`,
);
console.log(`share billed as cache reads: ${((100 * usage.cacheRead) / billedInput).toFixed(1)} %`);
console.log(`cost at ${model} list prices: $${cost.toFixed(4)} (without caching: $${uncached.toFixed(4)})`);
agent.stop();
await server.close();
