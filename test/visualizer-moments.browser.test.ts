// The visualizer page as one lives in it: a page opened late, a page left open (render on change only),
// a readable statechart, the machines below the agent, events with their payload and snapshot, time
// travel and back to live, the event log's filter and search. Screenshots at 1280 and 1920 px.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, scripted, subAgentTool } from "../index.js";
import { ARTIFACTS, gateTool, lanes, sleep, useBrowser } from "./visualizer-page.js";

const suite = useBrowser();
const { cleanups, open } = suite;

const text = (page: Page, selector: string) => page.locator(selector).textContent();

/** "35 ms" or "1.20 s" as milliseconds. */
const toMs = (shown: string | null) => {
  const [value, unit] = (shown ?? "").trim().split(" ");
  return Number(value) * (unit === "s" ? 1000 : 1);
};

/** Starts counting DOM changes under `selector` (every kind: nodes, attributes, texts). */
async function countMutations(page: Page, selector = "body") {
  await page.evaluate((target) => {
    const records: string[] = [];
    (window as unknown as { mutations: string[] }).mutations = records;
    new MutationObserver((list) => {
      for (const record of list) {
        const node = record.target instanceof Element ? record.target : record.target.parentElement;
        const where = node?.closest("[data-group], [id]");
        records.push(
          where ? ((where as HTMLElement).dataset.group ?? (where as HTMLElement).id) : String(node?.tagName),
        );
      }
    }).observe(document.querySelector(target)!, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
  }, selector);
  return () => page.evaluate(() => (window as unknown as { mutations: string[] }).mutations);
}

describe("a page opened late", () => {
  it("shows the current state, every pending approval, the transcript and recent lanes, and can approve", async () => {
    const deploy = gateTool("deploy");
    const { agent, server } = await open(
      {
        provider: scripted([
          { text: "Looking first.", toolCalls: [{ name: "deploy", id: "call_look" }] },
          {
            toolCalls: [
              { name: "deploy", id: "call_deploy" },
              { name: "deploy", id: "call_migrate" },
            ],
          },
          { text: "Both done." },
        ]),
        tools: [deploy.tool],
        permissions: {
          check: ({ toolCall }) => ({ behavior: toolCall.id === "call_look" ? "allow" : "ask" }),
        },
      },
      { historyLimit: 10 },
    );
    const first = agent.prompt("Deploy it");
    await expect.poll(() => agent.state).toBe("running.executing");
    agent.abort();
    await first;
    const second = agent.prompt("Deploy it again");
    await expect.poll(() => agent.pendingApprovals().length).toBe(2);

    const page = await suite.browser.newPage({ viewport: { width: 1280, height: 1000 } });
    cleanups.push(() => page.close());
    await page.goto(server.url);
    await page.locator('[data-state="agent.running.executing"].active').waitFor();
    expect(await text(page, '[data-testid="state"]')).toBe("running.executing");
    await page.locator('[data-approval="call_deploy"]').waitFor();
    expect(await page.locator(".approval-card").count()).toBe(2);
    const transcript = await text(page, '[data-testid="transcript"]');
    expect(transcript).toContain("Deploy it");
    expect(transcript).toContain("Looking first.");
    expect(transcript).toContain("Deploy it again");
    expect((await lanes(page)).map((l) => [l.id, l.outcome])).toEqual([
      ["call_look", "aborted"],
      ["call_deploy", "awaiting approval"],
      ["call_migrate", "awaiting approval"],
    ]);
    expect(await page.locator('#timeline .run[data-run="1"] [data-lane]').count()).toBe(1);
    expect(await page.locator('#timeline .run[data-run="2"] [data-lane]').count()).toBe(2);

    await page.locator('[data-approval="call_deploy"] [data-testid="approve"]').click();
    await page.locator('[data-approval="call_migrate"] [data-testid="approve"]').click();
    deploy.open();
    await second;
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant" });
    await expect.poll(() => text(page, '[data-testid="transcript"]')).toContain("Both done.");
  });
});

describe("a page left open", () => {
  it("renders on change only: idle, nothing moves and a text selection stays; running, only the open turn moves", async () => {
    const gate = gateTool("hold");
    const { agent, page } = await open({
      provider: scripted([
        {
          toolCalls: [
            { name: "sleep", arguments: { ms: 5 }, id: "early" },
            { name: "sleep", arguments: { ms: 5 }, id: "early_2" },
          ],
        },
        { text: "First run finished." },
        { toolCalls: [{ name: "hold", id: "long" }] },
        { text: "Second run finished." },
      ]),
      tools: [sleep, gate.tool],
    });
    await agent.prompt("First");
    await expect.poll(() => text(page, '[data-testid="transcript"]')).toContain("First run finished.");
    await page.locator('[data-state="agent.idle"].active').waitFor();

    // Idle: select a line of the log, wait longer than any old refresh period, nothing changed.
    await page.evaluate(() => {
      const line = document.querySelector("#log li")!;
      getSelection()!.selectAllChildren(line);
    });
    const selected = await page.evaluate(() => getSelection()!.toString());
    expect(selected).toContain("agent_start");
    const idleMutations = await countMutations(page);
    await page.waitForTimeout(1200);
    expect(await idleMutations()).toEqual([]);
    expect(await page.evaluate(() => getSelection()!.toString())).toBe(selected);

    // Running: the clock moves the open turn's lane, and nothing of the first run, the log or the transcript.
    const run = agent.prompt("Second");
    await page.locator('[data-lane="long"][data-outcome="running"]').waitFor();
    // The lane can be drawn a frame before the page shows the state the agent entered with it
    // (seen on a loaded machine): count from when the page has caught up with the agent.
    await page.locator('[data-state="agent.running.executing"].active').waitFor();
    await expect.poll(() => text(page, '[data-testid="state"]')).toBe("running.executing");
    const runningMutations = await countMutations(page);
    await expect.poll(async () => (await runningMutations()).length, { timeout: 5000 }).toBeGreaterThan(0);
    await page.waitForTimeout(600);
    expect(new Set(await runningMutations())).toEqual(new Set(["2:1"]));
    gate.open();
    await run;
  });
});

describe("the statechart", () => {
  it("opens fitted to the width at 1440 × 900: every state in view, one label per edge, none overlapping", async () => {
    const { page } = await open({ provider: scripted([]) }, { width: 1440, height: 900 });
    const report = await page.evaluate(() => {
      const viewport = document.getElementById("chart")!.getBoundingClientRect();
      const svg = document.querySelector("#chart svg") as SVGSVGElement;
      const outside = Array.from(svg.querySelectorAll(".node:not(.root)"), (node) => {
        const box = node.querySelector("rect")!.getBoundingClientRect();
        const inside =
          box.left >= viewport.left &&
          box.right <= viewport.right &&
          box.top >= viewport.top &&
          box.bottom <= viewport.bottom &&
          box.right <= innerWidth &&
          box.bottom <= innerHeight;
        return inside ? "" : node.getAttribute("data-state")!;
      }).filter(Boolean);
      const labels = Array.from(svg.querySelectorAll(".edge text"), (element) => {
        const box = element.getBoundingClientRect();
        return { text: element.textContent, box };
      });
      const overlapping: string[] = [];
      labels.forEach((a, i) =>
        labels.slice(i + 1).forEach((b) => {
          const hit =
            a.box.left < b.box.right &&
            b.box.left < a.box.right &&
            a.box.top < b.box.bottom &&
            b.box.top < a.box.bottom;
          if (hit) overlapping.push(`${a.text} × ${b.text}`);
        }),
      );
      const edges = Array.from(svg.querySelectorAll(".edge"), (edge) => ({
        id: edge.getAttribute("data-edge")!,
        shown: edge.querySelectorAll("text").length,
        hover: edge.querySelector("title")?.textContent ?? "",
      }));
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      const labelPx = parseFloat(getComputedStyle(svg.querySelector(".edge text")!).fontSize) * scale;
      return {
        states: svg.querySelectorAll(".node:not(.root)").length,
        outside,
        overlapping,
        edges,
        labelPx,
        scrolls:
          document.getElementById("chart")!.scrollWidth > document.getElementById("chart")!.clientWidth,
      };
    });
    expect(report.states).toBeGreaterThan(8);
    expect(report.outside).toEqual([]);
    expect(report.scrolls).toBe(false);
    expect(report.overlapping).toEqual([]);
    expect(report.labelPx).toBeGreaterThanOrEqual(9);
    // At most one label line per edge; hovering one shows every transition it stands for.
    for (const edge of report.edges) expect(edge.shown, edge.id).toBeLessThanOrEqual(1);
    const streamingToTurnEnd = report.edges.find(
      (edge) => edge.id === "agent.running.streaming->agent.running.turnEnd",
    )!;
    expect(streamingToTurnEnd.hover.split("\n")).toEqual(
      expect.arrayContaining(["streaming → turnEnd", "STREAM_DONE [callsNotToRun]", "error"]),
    );
    // Clicking an edge writes the same list under the chart.
    await page.locator('[data-edge="agent.running.streaming->agent.running.turnEnd"] text').click();
    await expect.poll(() => text(page, "#chart-caption")).toContain("STREAM_DONE [callsNotToRun]");
    await page.screenshot({ path: join(ARTIFACTS, "visualizer-chart-1440.png") });
  });

  for (const width of [1280, 800]) {
    // Fitted to its width while its 12 px labels stay at 9 px or more, else at 0.95 and scrolled.
    it(`is readable at ${width} px: labels at 9 px or more, none colliding, zoom and pan`, async () => {
      const { page } = await open({ provider: scripted([]) }, { width, height: 900 });
      for (const tab of ["agent", "toolExecution", "toolCall"]) {
        await page.locator(`[data-tab="${tab}"]`).click();
        await page.locator(`#chart svg[data-graph="${tab}"]`).waitFor();
        const report = await page.evaluate(() => {
          const svg = document.querySelector("#chart svg") as SVGSVGElement;
          const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
          const boxes = (selector: string) =>
            Array.from(svg.querySelectorAll(selector), (element) => {
              const box = (element as SVGGraphicsElement).getBBox();
              return { text: element.textContent, x: box.x, y: box.y, w: box.width, h: box.height };
            });
          const labels = boxes(".edge text");
          const others = [...boxes(".node.leaf > rect"), ...boxes(".node.compound > text")];
          const hit = (a: (typeof labels)[0], b: (typeof labels)[0]) =>
            a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
          const collisions: string[] = [];
          labels.forEach((a, i) =>
            labels.slice(i + 1).forEach((b) => hit(a, b) && collisions.push(`${a.text} × ${b.text}`)),
          );
          for (const a of labels)
            for (const b of others) if (hit(a, b)) collisions.push(`${a.text} × ${b.text}`);
          const labelPx = parseFloat(getComputedStyle(svg.querySelector(".edge text")!).fontSize) * scale;
          return { collisions, labelPx, labels: labels.length };
        });
        expect(report.labels, tab).toBeGreaterThan(3);
        expect(report.collisions, tab).toEqual([]);
        expect(report.labelPx, tab).toBeGreaterThanOrEqual(9);
      }
      await page.locator('[data-tab="agent"]').click();
      const scale = () => page.locator("#chart").getAttribute("data-scale").then(Number);
      const before = await scale();
      await page.locator("#zoom-in").click();
      expect(await scale()).toBeGreaterThan(before);
      await page.locator("#zoom-fit").click();
      const fitted = await page.evaluate(() => {
        const viewport = document.getElementById("chart")!;
        return viewport.querySelector("svg")!.getBoundingClientRect().width <= viewport.clientWidth;
      });
      expect(fitted).toBe(true);
      await page.locator("#zoom-reset").click();
      expect(await scale()).toBe(1);
      // Ctrl + wheel zooms; dragging pans.
      const chart = page.locator("#chart");
      const box = (await chart.boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.keyboard.down("Control");
      await page.mouse.wheel(0, -200);
      await page.keyboard.up("Control");
      await expect.poll(scale).toBeGreaterThan(1);
      const left = await chart.evaluate((node) => node.scrollLeft);
      await page.mouse.move(box.x + box.width / 2, box.y + 40);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2 - 200, box.y + 40, { steps: 4 });
      await page.mouse.up();
      expect(await chart.evaluate((node) => node.scrollLeft)).toBeGreaterThan(left);
    });
  }
});

describe("the machines below the agent", () => {
  it("opens a call's actor and a sub-agent's chart, lane details readable without hovering", async () => {
    const hold = gateTool("hold");
    const researcher = subAgentTool({
      name: "researcher",
      description: "Looks things up",
      provider: scripted([{ toolCalls: [{ name: "hold", id: "inner" }] }, { text: "Found it." }]),
      tools: [hold.tool],
    });
    const risky = defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: z.object({ target: z.string() }),
      execute: async ({ target }) => `Deployed to ${target}`,
    });
    const { agent, page } = await open(
      {
        provider: scripted([
          {
            text: "Researching and deploying.",
            toolCalls: [
              { name: "researcher", arguments: { task: "Find the config" }, id: "call_research" },
              { name: "deploy", arguments: { target: "staging" }, id: "call_deploy" },
              { name: "sleep", arguments: { ms: 5 }, id: "call_quick" },
            ],
          },
          { text: "All three done." },
        ]),
        tools: [researcher, risky, sleep],
        permissions: {
          check: ({ toolCall }) => ({ behavior: toolCall.name === "deploy" ? "ask" : "allow" }),
        },
      },
      { width: 1920, height: 1200 },
    );
    const run = agent.prompt("Research, then deploy");
    await page.locator('[data-lane="call_deploy"][data-outcome="awaiting approval"]').waitFor();
    await page.locator('[data-lane="call_quick"][data-outcome="ok"]').waitFor();
    await expect
      .poll(() => text(page, '[data-lane="call_research"] .lane-info'))
      .toContain("↳ researcher-call_research");

    // The execution machine, live.
    await page.locator('[data-tab="toolExecution"]').click();
    await page.locator('#chart [data-state="toolExecution.running"].active').waitFor();

    // A lane's details, by click: arguments, state, and the way to its actor.
    await page.locator('[data-lane="call_deploy"]').click();
    const details = page.locator('[data-details="call_deploy"]');
    await details.waitFor();
    expect(await details.isVisible()).toBe(true);
    expect(await details.textContent()).toContain('"target": "staging"');
    expect(await details.textContent()).toContain("awaitingApproval");
    await details.locator('[data-testid="open-actor"]').click();
    await page.locator('#chart svg[data-graph="toolCall"]').waitFor();
    await page.locator('#chart [data-state="toolCall.awaitingApproval"].active').waitFor();
    expect(await text(page, "#chart-status")).toContain("call_deploy");

    // The sub-agent's own chart: its loop is executing its own tool call.
    await page.locator('[data-lane="call_research"]').click();
    await page.locator('[data-details="call_research"] [data-testid="open-sub-agent"]').click();
    await page.locator('#chart svg[data-graph="agent"]').waitFor();
    await page.locator('#chart [data-state="agent.running.executing"].active').waitFor();
    expect(await text(page, "#chart-status")).toContain("researcher-call_research");
    expect(await page.locator('[data-tab="subAgent"]').getAttribute("aria-pressed")).toBe("true");

    await page.screenshot({ path: join(ARTIFACTS, "visualizer-1920.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.locator('[data-tab="agent"]').click();
    await page.screenshot({ path: join(ARTIFACTS, "visualizer-1280.png"), fullPage: true });

    await page.locator('[data-approval="call_deploy"] [data-testid="approve"]').click();
    hold.open();
    await run;
    await expect.poll(async () => (await lanes(page)).map((l) => l.outcome)).toEqual(["ok", "ok", "ok"]);
  });
});

describe("events and moments", () => {
  it("shows an event's payload and the snapshot then, steps through the past while live goes on, and comes back", async () => {
    const { agent, page, server } = await open({
      provider: scripted([
        {
          toolCalls: [
            { name: "sleep", arguments: { ms: 5 }, id: "call_a" },
            { name: "sleep", arguments: { ms: 30 }, id: "call_b" },
          ],
        },
        { text: "Both slept." },
        { text: "Second answer." },
      ]),
      tools: [sleep],
    });
    await agent.prompt("Sleep twice");
    await expect.poll(() => text(page, '[data-testid="transcript"]')).toContain("Both slept.");

    await page.locator('#log li[data-type="tool_execution_end"]', { hasText: "call_b" }).click();
    await page.locator("#replay-bar:not([hidden])").waitFor();
    expect(await text(page, "#replay-title")).toBe("Viewing the past");
    const payload = JSON.parse((await text(page, '[data-testid="event-payload"]'))!);
    expect(payload).toMatchObject({ type: "tool_execution_end", toolCallId: "call_b", outcome: "ok" });
    const snapshot = JSON.parse((await text(page, '[data-testid="event-snapshot"]'))!);
    expect(snapshot.state).toBe("running.executing");
    expect(snapshot.context).toMatchObject({ messages: "[2 messages]", steeringQueue: [], run: { turn: 1 } });
    // The whole page shows that moment: the answer has not come yet, the chart is back in executing.
    expect(await text(page, '[data-testid="transcript"]')).not.toContain("Both slept.");
    await page.locator('[data-state="agent.running.executing"].active').waitFor();
    expect(await page.locator('[data-testid="steer-button"]').isDisabled()).toBe(true);

    // Step back one event (the line above in the log) and forward again.
    const above = await page.locator("#log li.selected").evaluate((li) => {
      let row = li.previousElementSibling as HTMLElement | null;
      while (row && row.dataset.type === "message_update")
        row = row.previousElementSibling as HTMLElement | null;
      return { type: row!.dataset.type, text: row!.textContent };
    });
    await page.locator("#replay-prev").click();
    const earlier = JSON.parse((await text(page, '[data-testid="event-payload"]'))!);
    expect(earlier.type).toBe(above.type);
    if (earlier.toolCallId) expect(above.text).toContain(earlier.toolCallId);
    expect(await page.locator("#log li.selected").getAttribute("data-type")).toBe(above.type);
    await page.locator("#replay-next").click();
    expect(JSON.parse((await text(page, '[data-testid="event-payload"]'))!)).toMatchObject({
      type: "tool_execution_end",
      toolCallId: "call_b",
    });

    // Live goes on meanwhile, unseen until the user comes back.
    await agent.prompt("Again");
    await expect.poll(() => text(page, "#replay-name")).toMatch(/^[1-9]\d* newer messages/);
    expect(await text(page, '[data-testid="transcript"]')).not.toContain("Second answer.");
    await page.locator("#back-to-live").click();
    await page.locator("#replay-bar").waitFor({ state: "hidden" });
    expect(await text(page, '[data-testid="transcript"]')).toContain("Second answer.");
    expect(await page.locator('[data-testid="steer-button"]').isDisabled()).toBe(false);
    await page.locator('[data-state="agent.idle"].active').waitFor();

    // A page that connects later shows a past moment on the agent's clock, not its own connection time.
    const span = (p: Page) =>
      p.locator('#timeline .run[data-run="1"] .turn-head > span:last-child').textContent().then(toMs);
    const whole = await span(page);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const later = await suite.browser.newPage();
    cleanups.push(() => later.close());
    await later.goto(server.url);
    await later.locator('[data-state="agent.idle"].active').waitFor();
    await later.locator('#log li[data-type="tool_execution_start"]', { hasText: "call_b" }).click();
    expect(await span(later)).toBeLessThanOrEqual(whole);
  });

  it("filters the event log by kind and searches it", async () => {
    const chatty = defineTool({
      name: "chatty",
      description: "Reports progress a lot",
      parameters: z.object({}),
      execute: async (_args, { onProgress }) => {
        for (let i = 0; i < 40; i++) onProgress(`step ${i}`);
        return "done";
      },
    });
    const { agent, page } = await open({
      provider: scripted([
        {
          toolCalls: [
            { name: "chatty", id: "call_loud" },
            { name: "sleep", arguments: { ms: 1 }, id: "call_quiet" },
          ],
        },
        { text: "ok" },
      ]),
      tools: [chatty, sleep],
    });
    await agent.prompt("Go");
    await expect.poll(() => page.locator('#log li[data-type="agent_end"]').count()).toBe(1);
    const types = () =>
      page.$$eval("#log li", (rows) => rows.map((row) => (row as HTMLElement).dataset.type));
    expect((await types()).filter((t) => t === "tool_progress").length).toBe(40);

    await page.locator('#log-filters input[data-category="progress"]').uncheck();
    expect(await types()).not.toContain("tool_progress");
    expect(await types()).toContain("tool_execution_end");
    expect(await text(page, "#log-count")).toMatch(/^\d+ of \d+$/);

    await page.locator("#log-search").fill("call_quiet");
    const shown = await page.$$eval("#log li", (rows) => rows.map((row) => row.textContent));
    expect(shown.length).toBeGreaterThanOrEqual(2);
    for (const line of shown) expect(line).toContain("call_quiet");

    await page.locator('#log-filters input[data-category="progress"]').check();
    await page.locator("#log-search").fill("step 39");
    expect(await types()).toEqual(["tool_progress"]);
  });
});
