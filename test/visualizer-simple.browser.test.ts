// The chart's "Simple" view (issue 41 item 8): momentary states folded into their edges, events in
// words, the active state still lit; the choice kept across a reload, and the full chart one click away.
import { describe, expect, it } from "vitest";
import { scripted } from "../index.js";
import { useBrowser } from "./visualizer-page.js";

const { open } = useBrowser();

describe("the simple chart", () => {
  it("reads at a glance, keeps the active state lit, and stays chosen across a reload", async () => {
    const { agent, page } = await open({ provider: scripted([{ text: "Hello." }]) });
    const states = () =>
      page.$$eval("#chart .node:not(.root)", (nodes) => nodes.map((node) => node.getAttribute("data-state")));
    const labels = () => page.$$eval("#chart .edge text", (texts) => texts.map((text) => text.textContent));
    expect(await states()).toContain("agent.running.turnGate");

    await page.locator('[data-testid="chart-simple"]').click();
    expect(await page.locator('[data-testid="chart-simple"]').getAttribute("aria-pressed")).toBe("true");
    const simple = await states();
    expect(simple).not.toContain("agent.running.turnGate");
    expect(simple).not.toContain("agent.running.turnEnd");
    expect(simple).toContain("agent.running.streaming");
    expect(await labels()).toContain("prompt +1");
    expect((await labels()).join(" ")).not.toMatch(/STREAM_DONE|\[/);
    expect(await page.locator('#chart [data-state="agent.idle"].active').count()).toBe(1);
    // No two labels on top of each other.
    const overlapping = await page.evaluate(() => {
      const boxes = Array.from(document.querySelectorAll("#chart .edge text"), (text) => ({
        text: text.textContent,
        box: text.getBoundingClientRect(),
      }));
      const hits: string[] = [];
      boxes.forEach((a, i) =>
        boxes.slice(i + 1).forEach((b) => {
          const hit =
            a.box.left < b.box.right &&
            b.box.left < a.box.right &&
            a.box.top < b.box.bottom &&
            b.box.top < a.box.bottom;
          if (hit) hits.push(`${a.text} × ${b.text}`);
        }),
      );
      return hits;
    });
    expect(overlapping).toEqual([]);

    await agent.prompt("Hi");
    await page.reload();
    await page.locator('#chart [data-state="agent.idle"].active').waitFor();
    expect(await states()).not.toContain("agent.running.turnGate");

    await page.locator('[data-testid="chart-simple"]').click();
    expect(await states()).toContain("agent.running.turnGate");
  });
});
