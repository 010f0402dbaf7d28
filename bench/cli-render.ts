// What the command's screen costs per streamed text delta, in one process: the screen alone
// (`screen.write` of each delta: the floor), the event view as `--print`-less one-shot runs use it,
// and the interactive view with its status line, input line and three running tool lines. The
// view must add next to nothing to the floor: a delta is one write, whatever the live region holds.
// The markdown variant streams the same text through the markdown renderer (a paragraph: rows
// committed as they fill, each styled once by marked's inline pass).
// Run: node --import tsx bench/cli-render.ts (npm run bench -- cli-render).
import { createEventView } from "../cli/event-view.js";
import { loadMarkdownRenderer } from "../cli/markdown.js";
import { createScreen } from "../cli/screen.js";
import { createSessionMeter } from "../cli/status-line.js";
import { createStyle } from "../cli/style.js";
import type { AgentEvent, AssistantMessage } from "../index.js";
import { benchRuns, median } from "./harness.js";

const DELTAS = 20_000;
/** The screen is drawn every 100 deltas, as a network stream's bursts get a frame each. */
const FLUSH_EVERY = 100;

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
const partial: AssistantMessage = { role: "assistant", content: [], stopReason: "stop", usage, timestamp: 0 };
const delta: AgentEvent = {
  type: "message_update",
  message: partial,
  delta: "word word ",
  kind: "text_delta",
};

type Variant =
  "screen alone (floor)" | "event view, one-shot" | "event view, interactive" | "interactive, markdown";
const variants: Variant[] = [
  "screen alone (floor)",
  "event view, one-shot",
  "event view, interactive",
  "interactive, markdown",
];
const markdown = await loadMarkdownRenderer();

/** CPU µs per delta of one run of `variant`. */
function run(variant: Variant): number {
  const out = { isTTY: true, columns: 120, rows: 40, write: () => undefined };
  const screen = createScreen(out);
  const style = createStyle(true);
  const interactive = variant === "event view, interactive" || variant === "interactive, markdown";
  const view =
    variant === "screen alone (floor)"
      ? undefined
      : createEventView(screen, style, {
          now: () => 0,
          ...(interactive && {
            hint: "Enter: steer · >>: follow-up · Ctrl-C: abort",
            status: { model: "model", meter: createSessionMeter({ maxContextTokens: 100_000 }) },
          }),
          ...(variant === "interactive, markdown" && { markdown: () => markdown }),
        });
  if (view) {
    view.handle({ type: "agent_start" });
    view.handle({ type: "turn_start", turn: 1 });
    if (interactive) {
      for (const id of ["a", "b", "c"])
        view.handle({
          type: "tool_execution_start",
          toolCallId: id,
          toolName: "bash",
          args: { command: "sleep 9" },
        });
      view.setFooter([{ text: "› typing", keep: 2 }]);
    }
    view.handle({ type: "message_start", message: partial });
  }
  const started = process.cpuUsage();
  for (let i = 0; i < DELTAS; i++) {
    if (view) view.handle(delta);
    else screen.write("word word ");
    if (i % FLUSH_EVERY === FLUSH_EVERY - 1) screen.flush();
  }
  const spent = process.cpuUsage(started);
  view?.dispose();
  screen.close();
  return (spent.user + spent.system) / DELTAS;
}

for (const variant of variants) run(variant); // warm-up
const samples = new Map<Variant, number[]>(variants.map((v) => [v, []]));
for (let i = 0; i < Math.max(5, benchRuns()); i++)
  for (const variant of variants) samples.get(variant)!.push(run(variant));

const floor = median(samples.get("screen alone (floor)")!);
console.log(
  `CPU µs per text delta, ${DELTAS} deltas of 10 characters, drawn every ${FLUSH_EVERY} (medians):`,
);
for (const variant of variants) {
  const value = median(samples.get(variant)!);
  console.log(`  ${variant.padEnd(26)} ${value.toFixed(2)} µs  (×${(value / floor).toFixed(2)} the floor)`);
}
