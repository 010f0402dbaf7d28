import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentOptions,
  createAgent,
  defineTool,
  recordEvents,
  scripted,
  type VisualizerServer,
  visualize,
  visualizeRecording,
} from "../index.js";
import { launchBrowser } from "./browser.js";

const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts");

/** Sleeps for `ms`, or until the call is aborted. */
const sleep = defineTool({
  name: "sleep",
  description: "Waits a while",
  parameters: z.object({ ms: z.number() }),
  readOnly: true,
  execute: ({ ms }, { signal }) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve(`slept ${ms} ms`), ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new Error("interrupted"));
      });
    }),
});

let browser: Browser;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  await mkdir(ARTIFACTS, { recursive: true });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await browser?.close();
});

async function open(options: AgentOptions): Promise<{ agent: Agent; server: VisualizerServer; page: Page }> {
  const agent = createAgent(options);
  const server = await visualize(agent, { port: 0 });
  const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  cleanups.push(async () => {
    await page.close();
    await server.close();
    agent.stop();
    expect(errors).toEqual([]);
  });
  await page.goto(server.url);
  await page.locator(".connection.open").waitFor();
  await page.locator('[data-state="agent.idle"].active').waitFor();
  return { agent, server, page };
}

const lanes = (page: Page) =>
  page.$$eval("[data-lane]", (rows) =>
    rows.map((row) => {
      const data = (row as HTMLElement).dataset;
      return {
        id: data.lane!,
        tool: data.tool!,
        outcome: data.outcome!,
        start: data.start ? Number(data.start) : undefined,
        end: data.end ? Number(data.end) : undefined,
      };
    }),
  );

describe("the visualizer page", () => {
  it("draws one lane per tool actor, overlapping for a parallel turn, and the streamed answer", async () => {
    const { agent, page } = await open({
      provider: scripted([
        {
          text: "Checking three things at once.",
          toolCalls: [
            { name: "sleep", arguments: { ms: 150 } },
            { name: "sleep", arguments: { ms: 400 } },
            { name: "sleep", arguments: { ms: 700 } },
          ],
          delayMs: 2,
        },
        { text: "All three checks finished: everything is fine.", delayMs: 30, chunkSize: 4 },
      ]),
      tools: [sleep],
    });

    // Record what the page shows while the run goes on, whatever the speed of the machine.
    await page.evaluate(() => {
      const seen = { states: [] as string[], partialTexts: [] as string[] };
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver(() => {
        const active = document.querySelector(".node.active")?.getAttribute("data-state");
        if (active && seen.states.at(-1) !== active) seen.states.push(active);
        const streaming = document.querySelector('[data-testid="streaming"]')?.textContent;
        if (streaming) seen.partialTexts.push(streaming);
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await agent.prompt("Run the three checks");

    await page.waitForFunction(
      () => document.querySelectorAll('[data-lane][data-outcome="ok"]').length === 3,
    );
    const rows = await lanes(page);
    expect(rows.map((r) => r.tool)).toEqual(["sleep", "sleep", "sleep"]);
    const latestStart = Math.max(...rows.map((r) => r.start!));
    const earliestEnd = Math.min(...rows.map((r) => r.end!));
    expect(latestStart).toBeLessThan(earliestEnd);
    await expect
      .poll(() => page.locator('[data-testid="transcript"]').textContent())
      .toContain("All three checks finished: everything is fine.");
    await page.locator('[data-state="agent.idle"].active').waitFor();
    expect(await page.locator('[data-testid="state"]').textContent()).toContain("last run: stop");
    const seen = await page.evaluate(
      () => (window as unknown as { seen: { states: string[]; partialTexts: string[] } }).seen,
    );
    expect(seen.states).toEqual(
      expect.arrayContaining(["agent.running.streaming", "agent.running.executing", "agent.idle"]),
    );
    // The answer was shown while it streamed, before it was complete.
    expect(seen.partialTexts.some((text) => text.includes("All three") && !text.includes("fine."))).toBe(
      true,
    );
    expect(await page.locator(".turn-head").first().textContent()).toContain("up to 3 at once");
    await page.screenshot({ path: join(ARTIFACTS, "visualizer.png"), fullPage: true });
  });

  it("sends a steering message from the page: the rest of a sequential turn is skipped", async () => {
    // The first call holds until the steering message has reached the agent, however slow the machine.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gate = defineTool({
      name: "gate",
      description: "Waits for the test",
      parameters: z.object({}),
      execute: async () => {
        await released;
        return "opened";
      },
    });
    const { agent, page } = await open({
      provider: scripted([
        { toolCalls: [{ name: "gate" }, { name: "gate" }, { name: "gate" }] },
        { text: "Understood, I stopped the checks." },
      ]),
      tools: [gate],
      toolExecution: "sequential",
    });
    const run = agent.prompt("Run the checks one by one");
    await page.locator('[data-lane][data-outcome="running"]').waitFor();
    await page.locator('[data-testid="steer-input"]').fill("Stop, that is enough");
    await page.locator('[data-testid="steer-button"]').click();
    await expect.poll(() => agent.actor.getSnapshot().context.steeringQueue.length).toBe(1);
    release();
    await run;

    const steer = agent.messages.find((m) => m.role === "user" && m.content === "Stop, that is enough");
    expect(steer).toBeDefined();
    await expect
      .poll(async () => (await lanes(page)).map((l) => l.outcome))
      .toEqual(["ok", "skipped", "skipped"]);
    expect((await lanes(page)).map((l) => l.outcome)).toEqual(["ok", "skipped", "skipped"]);
    await expect
      .poll(() => page.locator('[data-testid="transcript"]').textContent())
      .toContain("Stop, that is enough");
  });

  it("approves and denies pending calls from the page", async () => {
    const { agent, page } = await open({
      provider: scripted([
        {
          toolCalls: [
            { name: "sleep", arguments: { ms: 50 }, id: "call_safe" },
            { name: "sleep", arguments: { ms: 60 }, id: "call_risky" },
          ],
        },
        { text: "One ran, one was refused." },
      ]),
      tools: [sleep],
      permissions: { check: () => ({ behavior: "ask" }) },
    });
    const run = agent.prompt("Do both");
    await page.locator('[data-approval="call_risky"]').waitFor();
    await page.locator('[data-approval="call_safe"]').waitFor();
    expect(
      agent
        .pendingApprovals()
        .map((p) => p.toolCallId)
        .sort(),
    ).toEqual(["call_risky", "call_safe"]);
    await page.screenshot({ path: join(ARTIFACTS, "visualizer-approval.png"), fullPage: true });

    await page.locator('[data-approval="call_safe"] [data-testid="approve"]').click();
    await page.locator('[data-approval="call_risky"] input').fill("too risky");
    await page.locator('[data-approval="call_risky"] [data-testid="deny"]').click();
    await run;

    const results = agent.messages.filter((m) => m.role === "toolResult");
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["call_safe", false],
      ["call_risky", true],
    ]);
    await page.waitForFunction(
      () => document.querySelector('[data-lane="call_risky"]')?.getAttribute("data-outcome") === "denied",
    );
    expect(await page.locator('[data-lane="call_safe"]').getAttribute("data-outcome")).toBe("ok");
    await expect.poll(() => page.locator('[data-testid="approvals"] .approval-card').count()).toBe(0);
  });

  it("aborts the run from the page", async () => {
    const { agent, page } = await open({
      provider: scripted([{ toolCalls: [{ name: "sleep", arguments: { ms: 30_000 } }] }]),
      tools: [sleep],
    });
    const run = agent.prompt("Wait for a long time");
    await page.locator('[data-lane][data-outcome="running"]').waitFor();
    await page.locator('[data-testid="abort-button"]').click();
    const newMessages = await run;
    expect(newMessages.at(-1)).toMatchObject({ role: "toolResult", isError: true });
    await page.waitForFunction(
      () => document.querySelector("[data-lane]")?.getAttribute("data-outcome") === "aborted",
    );
    await expect
      .poll(() => page.locator('[data-testid="state"]').textContent())
      .toContain("last run: aborted");
  });

  it("replays a recording step by step", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-machine-replay-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, "run.jsonl");
    const agent = createAgent({
      provider: scripted([
        {
          toolCalls: [
            { name: "sleep", arguments: { ms: 20 } },
            { name: "sleep", arguments: { ms: 40 } },
          ],
        },
        { text: "Replayed answer." },
      ]),
      tools: [sleep],
    });
    const recorder = recordEvents(agent, file);
    await agent.prompt("Record me");
    await recorder.close();
    agent.stop();

    const server = await visualizeRecording(file, { port: 0 });
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    cleanups.push(async () => {
      await page.close();
      await server.close();
    });
    await page.goto(server.url);
    await page.locator("#replay-bar:not([hidden])").waitFor();
    const position = () => page.locator("#replay-position").getAttribute("data-position").then(Number);
    const first = await position();
    expect(first).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="transcript"]').textContent()).not.toContain("Replayed answer.");

    await page.locator("#replay-next").click();
    await page.locator("#replay-next").click();
    const later = await position();
    expect(later).toBeGreaterThan(first);
    for (let i = 0; i < 8; i++) await page.locator("#replay-next").click();
    const further = await position();
    expect(further).toBeGreaterThan(later);
    await page.screenshot({ path: join(ARTIFACTS, "visualizer-replay.png"), fullPage: true });
    await page.locator("#replay-prev").click();
    expect(await position()).toBeLessThan(further);

    await page.locator("#replay-last").click();
    await expect
      .poll(() => page.locator('[data-testid="transcript"]').textContent())
      .toContain("Replayed answer.");
    expect((await lanes(page)).map((l) => l.outcome)).toEqual(["ok", "ok"]);
    expect(await page.locator('[data-state="agent.idle"]').getAttribute("class")).toContain("active");
    expect(await page.locator('[data-testid="steer-button"]').isDisabled()).toBe(true);

    // A live page opens the same file from its file picker and switches to replay.
    const { page: livePage } = await open({ provider: scripted([]) });
    await livePage.locator("#file-input").setInputFiles(file);
    await livePage.locator("#replay-bar:not([hidden])").waitFor();
    expect(await livePage.locator("#replay-name").textContent()).toContain("run.jsonl");
    await livePage.locator("#replay-last").click();
    await expect
      .poll(() => livePage.locator('[data-testid="transcript"]').textContent())
      .toContain("Replayed answer.");
  });
});
