// What the visualizer page costs the browser with 500 tool-call lanes on it: main-thread time and DOM
// changes per second while the agent is idle, then while one more call runs. Figures come from
// Chromium's own counters (CDP Performance.getMetrics), so any version of the page can be measured.
//
//   npx tsx bench/visualizer-render.ts            # this tree
//   npx tsx bench/visualizer-render.ts /path/to/another/checkout   # e.g. an older commit, to compare
//
// Not part of `npm run bench` (it needs the test browser); run it on a quiet machine.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { launchBrowser } from "../test/browser.js";

const root = resolve(process.argv[2] ?? ".");
const lib = (await import(pathToFileURL(`${root}/index.ts`).href)) as typeof import("../index.js");
const TURNS = 20;
const CALLS = 25;
const WINDOW_MS = 4000;

const noop = lib.defineTool({
  name: "noop",
  description: "Does nothing",
  parameters: z.object({ n: z.number() }),
  execute: async ({ n }) => `done ${n}`,
});
let release!: () => void;
const hold = lib.defineTool({
  name: "hold",
  description: "Holds until released",
  parameters: z.object({}),
  execute: () => new Promise<string>((done) => (release = () => done("released"))),
});
const steps = [
  ...Array.from({ length: TURNS }, (_, turn) => ({
    toolCalls: Array.from({ length: CALLS }, (_, i) => ({
      name: "noop",
      arguments: { n: turn * CALLS + i },
    })),
  })),
  { text: "All done." },
  { toolCalls: [{ name: "hold" }] },
  { text: "Released." },
];
const agent = lib.createAgent({ provider: lib.scripted(steps), tools: [noop, hold] });
const server = await lib.visualize(agent, { port: 0 });
await agent.prompt("Make 500 calls");

const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
const cdp = await page.context().newCDPSession(page);
await cdp.send("Performance.enable");
await page.goto(server.url);
await page.waitForFunction((n) => document.querySelectorAll("[data-lane]").length >= n, TURNS * CALLS);
await page.evaluate(() => {
  const counter = { mutations: 0 };
  (window as unknown as { counter: typeof counter }).counter = counter;
  new MutationObserver((records) => (counter.mutations += records.length)).observe(document.body, {
    subtree: true,
    childList: true,
    attributes: true,
    characterData: true,
  });
});

async function measure(label: string) {
  const metric = async () => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    const value = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0;
    const mutations = await page.evaluate(
      () => (window as unknown as { counter: { mutations: number } }).counter.mutations,
    );
    return {
      task: value("TaskDuration"),
      script: value("ScriptDuration"),
      layout: value("LayoutDuration"),
      style: value("RecalcStyleDuration"),
      mutations,
    };
  };
  const before = await metric();
  await page.waitForTimeout(WINDOW_MS);
  const after = await metric();
  const perSecond = (a: number, b: number) => ((b - a) * 1000) / WINDOW_MS;
  console.log(
    `${label.padEnd(34)} main thread ${(perSecond(before.task, after.task) * 1000).toFixed(1).padStart(7)} ms/s` +
      ` (script ${(perSecond(before.script, after.script) * 1000).toFixed(1)}, layout ${(perSecond(before.layout, after.layout) * 1000).toFixed(1)}, style ${(perSecond(before.style, after.style) * 1000).toFixed(1)})` +
      `  DOM changes ${perSecond(before.mutations, after.mutations).toFixed(1).padStart(6)}/s`,
  );
}

console.log(`visualizer page, ${await page.locator("[data-lane]").count()} lanes (${root})`);
await measure("idle");
const run = agent.prompt("One more");
await page.locator('[data-lane][data-outcome="running"]').waitFor();
await measure("one call running");
release();
await run;
await browser.close();
await server.close();
agent.stop();
