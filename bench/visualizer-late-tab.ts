// A tab opened late on a long run: how long until the visualizer page shows the true state, how much
// travelled over its WebSocket, whether its counts are true, and the page's heap. The run: 120 turns of
// 4 tool calls each (480 calls), every call returning 200 KB, then an answer (the issue 41 run).
//
//   npx tsx bench/visualizer-late-tab.ts            # this tree
//   npx tsx bench/visualizer-late-tab.ts /path/to/another/checkout   # e.g. an older commit, to compare
//
// "Usable": the chart's active state is idle, the transcript shows the final answer, and the page
// answers an animation frame (its main thread is free). Not part of `npm run bench` (it needs the test
// browser); run it on a quiet machine. TURNS=40 for a shorter run; TIMEOUT_S (300) bounds the wait;
// PROFILE=1 adds the page's requests and its functions by self time.
import { resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { launchBrowser } from "../test/browser.js";

const root = resolve(process.argv[2] ?? ".");
const lib = (await import(pathToFileURL(`${root}/index.ts`).href)) as typeof import("../index.js");
const TURNS = Number(process.env.TURNS ?? 120);
const CALLS = 4;
const RESULT_BYTES = 200_000;
/** How long to wait for a usable page before giving up (ms). */
const TIMEOUT = Number(process.env.TIMEOUT_S ?? 300) * 1000;

const read = lib.defineTool({
  name: "read",
  description: "Reads a large file",
  parameters: z.object({ n: z.number() }),
  readOnly: true,
  execute: async ({ n }) => `file ${n}\n${"x".repeat(RESULT_BYTES)}`,
});
const steps = [
  ...Array.from({ length: TURNS }, (_, turn) => ({
    toolCalls: Array.from({ length: CALLS }, (_, i) => ({
      name: "read",
      arguments: { n: turn * CALLS + i },
    })),
  })),
  { text: "All done." },
];
const agent = lib.createAgent({ provider: lib.scripted(steps), tools: [read], toolResultBudget: false });
const server = await lib.visualize(agent, { port: 0 });
await agent.prompt(`Read ${TURNS * CALLS} files`);

const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
const cdp = await page.context().newCDPSession(page);
await cdp.send("Performance.enable");
// Counted in the page (a CDP frame listener would copy every frame out of the browser and slow it).
await page.addInitScript(() => {
  const counter = { chars: 0, frames: 0, first: 0, last: 0 };
  (window as unknown as { wsCounter: typeof counter }).wsCounter = counter;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      this.addEventListener("message", (event) => {
        counter.frames++;
        counter.chars += String(event.data).length;
        counter.last = performance.now();
        counter.first ||= counter.last;
      });
    }
  };
});

if (process.env.PROFILE) {
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.start");
}
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const started = performance.now();
if (process.env.PROFILE) {
  page.on("requestfinished", (request) =>
    console.log(`${((performance.now() - started) / 1000).toFixed(2)} s  ${request.url().split("?")[0]}`),
  );
}
await page.goto(server.url);
await page.locator('#chart [data-state="agent.idle"].active').waitFor({ timeout: TIMEOUT });
await page.waitForFunction(
  () => document.getElementById("transcript")?.textContent?.includes("All done."),
  null,
  {
    timeout: TIMEOUT,
  },
);
await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0))));
const usable = performance.now() - started;
if (process.env.PROFILE) {
  const { profile } = await cdp.send("Profiler.stop");
  const self = new Map<string, number>();
  const dt = profile.timeDeltas ?? [];
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  (profile.samples ?? []).forEach((id, i) => {
    const node = byId.get(id)!;
    const key = `${node.callFrame.functionName || "(anon)"} ${node.callFrame.url.split("/").pop()}:${node.callFrame.lineNumber}`;
    self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0) / 1000);
  });
  for (const [key, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`${ms.toFixed(0).padStart(7)} ms  ${key}`);
}

const ws = await page.evaluate(
  () =>
    (window as unknown as { wsCounter: { chars: number; frames: number; first: number; last: number } })
      .wsCounter,
);
const calls = await page.locator("#timeline .run-head .calls").first().textContent();
const header = await page.locator("#usage").textContent();
await cdp.send("HeapProfiler.collectGarbage");
const { metrics } = await cdp.send("Performance.getMetrics");
const heap = metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0;

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
console.log(`late tab on a ${TURNS}-turn run (${TURNS * CALLS} calls of ${RESULT_BYTES / 1000} KB), ${root}`);
console.log(`  usable after        ${(usable / 1000).toFixed(2)} s`);
console.log(
  `  sent to the tab     ${mb(ws.chars)} in ${ws.frames} messages, received ${(ws.first / 1000).toFixed(2)} s to ${(ws.last / 1000).toFixed(2)} s after the page started`,
);
console.log(`  run heading says    ${calls?.trim()} (true: ${TURNS * CALLS} calls)`);
console.log(`  header says         ${header?.trim()}`);
console.log(
  `  server's event loop  longest stall ${(loopDelay.max / 1e6).toFixed(0)} ms while the tab opened`,
);
console.log(`  page heap           ${mb(heap)}`);
await browser.close();
await server.close();
agent.stop();
