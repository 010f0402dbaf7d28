// A tab opened late on a long run (issue 41 item 5): true counts, "N earlier turns · show" and
// "N earlier messages · show" instead of a silent drop, and the hidden part shown on demand.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted, visualize } from "../index.js";
import { useBrowser, watchPage } from "./visualizer-page.js";

const suite = useBrowser();
const { cleanups } = suite;

const text = (page: Page, selector: string) => page.locator(selector).first().textContent();

const read = defineTool({
  name: "read",
  description: "Reads a large file",
  parameters: z.object({ n: z.number() }),
  readOnly: true,
  execute: async ({ n }) => `file ${n}\n${"x".repeat(20_000)}`,
});

/** An agent that ran `turns` turns of two calls each, then answered; its page opened afterwards. */
async function lateTab(turns: number, options: { latePageMessages?: number } = {}) {
  const agent = createAgent({
    provider: scripted([
      ...Array.from({ length: turns }, (_, turn) => ({
        toolCalls: [
          { name: "read", arguments: { n: 2 * turn } },
          { name: "read", arguments: { n: 2 * turn + 1 } },
        ],
      })),
      { text: "All read." },
    ]),
    tools: [read],
    toolResultBudget: false,
  });
  const server = await visualize(agent, { port: 0, ...options });
  cleanups.push(async () => {
    await server.close();
    agent.stop();
  });
  await agent.prompt("Read them all");
  const page = await suite.browser.newPage({ viewport: { width: 1440, height: 900 } });
  const problems = watchPage(page);
  cleanups.push(async () => {
    await page.close();
    expect(problems).toEqual([]);
  });
  await page.goto(server.url);
  await page.locator('#chart [data-state="agent.idle"].active').waitFor();
  await expect.poll(() => text(page, '[data-testid="transcript"]')).toContain("All read.");
  return { agent, page };
}

describe("a tab opened late on a long run", () => {
  it("counts every call, says what it does not draw, and draws it on demand", async () => {
    const { page } = await lateTab(70);

    // True counts, in the run heading and the header.
    expect(await text(page, "#timeline .run-head .calls")).toBe("140 calls");
    expect(await text(page, '[data-testid="usage"]')).toContain("71 model calls · 140 tool calls");

    // The newest 40 turns are drawn; the 30 before them are named, not dropped.
    expect(await page.locator("[data-lane]").count()).toBe(80);
    expect(await text(page, '[data-testid="earlier-turns"]')).toBe(
      "30 earlier turns · 60 calls · show 30 more",
    );
    await page.locator('[data-testid="show-earlier-turns"]').click();
    expect(await page.locator("[data-lane]").count()).toBe(140);
    expect(await page.locator('[data-testid="earlier-turns"]').count()).toBe(0);
    expect(await page.locator('[data-lane="call_0_0"]').count()).toBe(1);

    // The transcript draws its newest 200 messages of 212, and the rest on demand.
    expect(await page.locator("#transcript .msg").count()).toBe(200);
    expect(await text(page, '[data-testid="earlier-messages"]')).toBe("12 earlier messages · show 12 more");
    await page.locator('[data-testid="earlier-messages"] button').click();
    expect(await page.locator("#transcript .msg").count()).toBe(212);
    expect(await text(page, "#transcript .msg")).toContain("Read them all");
  });

  it("starts from a folded summary when the run is longer than what a late tab is sent, counts still true", async () => {
    const { page } = await lateTab(30, { latePageMessages: 100 });
    expect(await text(page, "#timeline .run-head .calls")).toBe("60 calls");
    expect(await text(page, '[data-testid="usage"]')).toContain("31 model calls · 60 tool calls");
    expect(await page.locator("[data-lane]").count()).toBe(60);
    // A tool result travels as a preview, saying how much was left out.
    await page.locator('[data-lane="call_29_1"]').click();
    expect(await text(page, '[data-details="call_29_1"] pre.result')).toContain(
      "more characters not sent to the page",
    );
    // The scrubber has the run, from where the tab's word-for-word history begins.
    expect(await text(page, '[data-testid="scrub-run"]')).toBe("Run 1");
  });
});
