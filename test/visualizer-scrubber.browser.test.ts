// The scrubber (issue 41 item 3): one time axis per run with its model calls, tool calls and approval
// waits, always on screen; clicking a moment on it shows the whole page as it was then (chart, state,
// transcript, lanes), the chart stays in view, and "Live" comes back in one click.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { scripted } from "../index.js";
import { gateTool, lanes, sleep, useBrowser } from "./visualizer-page.js";

const { open } = useBrowser();

const text = (page: Page, selector: string) => page.locator(selector).textContent();

/** Clicks the middle of a span of the scrubber and returns its time range. */
async function clickSpan(page: Page, selector: string) {
  const span = page.locator(`[data-testid="scrubber"] ${selector}`);
  const box = (await span.boundingBox())!;
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  return {
    from: Number(await span.getAttribute("data-from")),
    to: Number(await span.getAttribute("data-to")),
  };
}

/** Whether an element is wholly inside the browser's viewport. */
const inViewport = (page: Page, selector: string) =>
  page.$eval(selector, (element) => {
    const box = element.getBoundingClientRect();
    return box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight && box.right <= innerWidth;
  });

describe("the scrubber", () => {
  it("shows any moment of a run when clicked, chart in view, and goes live again in one click", async () => {
    const deploy = gateTool("deploy");
    const { agent, page } = await open(
      {
        provider: scripted([
          {
            text: "Checking first.",
            toolCalls: [{ name: "sleep", arguments: { ms: 400 }, id: "call_look" }],
          },
          { toolCalls: [{ name: "deploy", id: "call_deploy" }] },
          { text: "Deployed." },
        ]),
        tools: [sleep, deploy.tool],
        permissions: {
          check: ({ toolCall }) => ({ behavior: toolCall.name === "deploy" ? "ask" : "allow" }),
        },
      },
      { width: 1440, height: 900 },
    );
    // Before any run: the scrubber is there and says what it will show.
    expect(await page.locator('[data-testid="scrubber"]').isVisible()).toBe(true);
    expect(await text(page, '[data-testid="scrubber"]')).toContain("appears here once one starts");

    const run = agent.prompt("Deploy it");
    await expect.poll(() => agent.pendingApprovals().length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    agent.approve("call_deploy");
    deploy.open();
    await run;
    await expect.poll(() => text(page, '[data-testid="transcript"]')).toContain("Deployed.");
    await page.locator('[data-state="agent.idle"].active').waitFor();

    // One axis for the run: three model calls, the two tool calls and the approval wait.
    const scrubber = page.locator('[data-testid="scrubber"]');
    expect(await text(page, '[data-testid="scrub-run"]')).toBe("Run 1");
    expect(await scrubber.locator('.scrub-span[data-kind="model"]').count()).toBe(3);
    expect(await scrubber.locator('.scrub-span[data-call="call_look"]').getAttribute("data-kind")).toBe(
      "tool",
    );
    expect(await scrubber.locator('.scrub-span[data-call="call_deploy"]').count()).toBe(2);
    expect(await page.locator('[data-testid="scrub-following"]').isVisible()).toBe(true);
    expect(await page.locator('[data-testid="scrub-live"]').isVisible()).toBe(false);

    // The middle of the approval wait: the page as it was while the call waited for the user.
    const wait = await clickSpan(page, '.scrub-span[data-kind="approval"]');
    await expect.poll(() => text(page, '[data-testid="now"]')).toBe("Waiting for you: approve `deploy`");
    expect(await text(page, '[data-testid="state"]')).toBe("running.executing");
    expect(await page.locator('#chart [data-state="agent.running.executing"].active').count()).toBe(1);
    const transcript = await text(page, '[data-testid="transcript"]');
    expect(transcript).toContain("Checking first.");
    expect(transcript).not.toContain("Deployed.");
    expect(Object.fromEntries((await lanes(page)).map((lane) => [lane.id, lane.outcome]))).toEqual({
      call_look: "ok",
      call_deploy: "awaiting approval",
    });
    // A past approval is shown but cannot be decided.
    expect(await page.locator('[data-approval="call_deploy"] [data-testid="approve"]').isDisabled()).toBe(
      true,
    );
    const playhead = Number(await page.locator('[data-testid="playhead"]').getAttribute("data-t"));
    expect(playhead).toBeGreaterThanOrEqual(wait.from);
    expect(playhead).toBeLessThanOrEqual(wait.to);
    // The chart's active state stays in view while scrubbing, under the sticky scrubber.
    expect(await inViewport(page, '#chart [data-state="agent.running.executing"].active')).toBe(true);
    expect(await inViewport(page, '[data-testid="scrub-track"]')).toBe(true);

    // Earlier, scrolled down to the log first: the chart comes back into view with the moment.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    expect(await inViewport(page, "#chart")).toBe(false);
    await clickSpan(page, '.scrub-span[data-call="call_look"]');
    expect(await inViewport(page, '#chart [data-state="agent.running.executing"].active')).toBe(true);
    await expect.poll(() => text(page, '[data-testid="now"]')).toBe("Running `sleep`");
    expect(Object.fromEntries((await lanes(page)).map((lane) => [lane.id, lane.outcome]))).toEqual({
      call_look: "running",
    });
    expect(await page.locator(".approval-card").count()).toBe(0);

    // Live again, in one click.
    await page.locator('[data-testid="scrub-live"]').click();
    await expect.poll(() => text(page, '[data-testid="state"]')).toContain("idle");
    expect(await text(page, '[data-testid="transcript"]')).toContain("Deployed.");
    expect(await page.locator('[data-testid="scrub-following"]').isVisible()).toBe(true);
    expect(await page.locator('[data-testid="scrub-live"]').isVisible()).toBe(false);
  });

  it("follows the live agent, keeps the moment while it goes on, and steps between runs", async () => {
    const { agent, page } = await open({
      provider: scripted([{ text: "First answer." }, { text: "Second answer." }]),
    });
    await agent.prompt("One");
    await agent.prompt("Two");
    await expect.poll(() => text(page, '[data-testid="scrub-run"]')).toBe("Run 2 of 2");
    await expect.poll(() => text(page, '[data-testid="transcript"]')).toContain("Second answer.");

    // The run before, at how it ended: its answer, not the next run's.
    await page.locator('[data-testid="scrubber"] .scrub-run-prev').click();
    expect(await text(page, '[data-testid="scrub-run"]')).toBe("Run 1 of 2");
    const transcript = await text(page, '[data-testid="transcript"]');
    expect(transcript).toContain("First answer.");
    expect(transcript).not.toContain("Two");
    expect(await page.locator('[data-testid="scrub-live"]').isVisible()).toBe(true);
  });
});
