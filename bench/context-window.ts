// A long session against a provider whose real context window is smaller than the configured
// budget (a wrong `contextConfigForModel`, a proxy in front of a smaller model): how many model
// calls the provider refuses with a context overflow, and what compaction did.
//
//   npx tsx bench/context-window.ts            # 300 turns, budget 32k, real window 16k
//
// The scripted model counts a request as the bench in compaction.ts does (every character at 4 a
// token, system prompt and tool schemas included) and refuses it above its window, in two wordings:
// Anthropic's, which states the sizes (`prompt is too long: N tokens > M maximum`), and the OpenAI
// Responses API's, which does not (`Your input exceeds the context window of this model.`).
import { runWindowSession } from "../test/fixtures/window-session.js";

for (const statesSizes of [true, false]) {
  const figures = await runWindowSession({
    turns: 300,
    configured: 32_000,
    realWindow: 16_000,
    statesSizes,
  });
  console.log(
    `\n## 300 turns, budget 32,000, real window 16,000, error ${statesSizes ? "states the sizes (Anthropic)" : "without sizes (OpenAI Responses)"}`,
  );
  console.log(
    `model calls: ${figures.modelCalls}, answered turns: ${figures.turns}, overflow errors: ${figures.overflows} (after the first: ${figures.overflowsAfterFirst})`,
  );
  const c = figures.compactionsByLevel;
  console.log(
    `compactions: level 1 ×${c[1]}, level 2 ×${c[2]}, level 3 ×${c[3]}; windows learned: ${figures.learned.join(", ") || "none"}`,
  );
  console.log(
    `peak request: ${figures.peakRequest}; run ended: ${figures.reason}${figures.errorMessage ? ` (${figures.errorMessage})` : ""}`,
  );
}
