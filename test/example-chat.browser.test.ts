// The chat example (examples/chat, `npm run example:chat`) in Chromium, used as a person would: a
// prompt, the parallel tool calls with their progress, the approval card with edited arguments, a
// steer while the agent works, and the statechart beside the chat following the agent.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serveChatExample } from "../examples/chat/serve.js";
import { ARTIFACTS, useBrowser, watchPage } from "./visualizer-page.js";

const suite = useBrowser();

async function openExample(query = "", viewport = { width: 1400, height: 900 }) {
  const server = await serveChatExample({ port: 0, env: {} });
  const page = await suite.browser.newPage({ viewport });
  const problems = watchPage(page);
  /** Answers the test provokes (a refused edit) or the design has (a new thread is 404 until its first prompt). */
  const expected: RegExp[] = [];
  // Only this server is ever asked for anything.
  const requested: string[] = [];
  page.on("request", (request) => requested.push(request.url()));
  suite.cleanups.push(async () => {
    await page.close();
    await server.close();
    const unexpected = problems.filter(
      (problem) =>
        !expected.some((pattern) => pattern.test(problem)) &&
        // The browser's own line for each of those answers.
        !(
          expected.length &&
          /^console: Failed to load resource: the server responded with a status of 4/.test(problem)
        ),
    );
    expect(unexpected).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(server.url) && !url.startsWith("data:"))).toEqual([]);
  });
  await page.goto(server.url + query);
  await page.locator('[data-state="agent.idle"].active').waitFor();
  return { page, server, expected };
}

describe("the chat example", () => {
  it.each([
    ["with the agent in the page", ""],
    [
      "with the agent on the server (?remote: the session host; the page follows the thread)",
      "?remote&thread=t-browser",
    ],
  ])(
    "runs a deployment %s: tool progress, an approval edited on its card, a steer, the statechart alongside",
    async (_mode, query) => {
      const { page, server, expected } = await openExample(query);
      if (query)
        expected.push(
          /^HTTP 404 .*\/api\/threads\/t-browser$/,
          /^HTTP 400 .*\/api\/threads\/t-browser\/run$/,
        );
      await expect.poll(() => page.getByTestId("state").textContent()).toBe("idle");

      await page.getByTestId("input").fill("Ship the new build");
      await page.getByTestId("send").click();
      // The model's text streams, then three checks run in parallel with their progress.
      await page.getByTestId("streaming").waitFor();
      await page.locator("[data-testid=tool-calls] li").first().waitFor();
      await page.locator('[data-state="agent.running.executing"].active').waitFor();
      expect(await page.locator("[data-testid=tool-calls] li").count()).toBe(3);

      // Steering while the checks run: it shows on the button, then in the transcript as steered.
      await page.getByTestId("input").fill("use the blue-green switch");
      await expect.poll(() => page.getByTestId("send").textContent()).toBe("Steer");
      await page.getByTestId("send").click();

      // The deploy asks for approval: the card shows the model's arguments; an edit the tool's schema
      // refuses is shown on the card and the call keeps waiting; a valid edit runs.
      const card = page.getByTestId("approval");
      await card.waitFor();
      await expect.poll(() => card.getByLabel("Arguments").inputValue()).toContain('"staging"');
      await card.getByLabel("Arguments").fill('{ "target": "the moon" }');
      await card.getByRole("button", { name: "Approve" }).click();
      await card.locator(".ex-error").waitFor();
      expect(await card.locator(".ex-error").textContent()).toMatch(/schema of tool deploy/);
      await card.getByLabel("Arguments").fill('{ "target": "production" }');
      await card.getByRole("button", { name: "Approve" }).click();

      await page.locator('[data-state="agent.idle"].active').waitFor();
      await expect.poll(() => page.getByTestId("state").textContent()).toBe("idle");
      const transcript = await page.getByTestId("messages").innerText();
      expect(transcript).toContain("steered");
      expect(transcript).toContain("use the blue-green switch");
      expect(transcript).toContain("Deployed to production");
      expect(transcript).toContain('ran with edited arguments {"target":"production"}');
      expect(transcript).toContain('You said meanwhile: "use the blue-green switch"');
      expect(await page.getByTestId("approval").count()).toBe(0);
      await page.screenshot({
        path: join(ARTIFACTS, query ? "example-chat-remote.png" : "example-chat.png"),
      });

      // The page shows the agent's transcript: the agent's in the page, the server's for a remote thread.
      const shown = await page
        .locator("[data-testid=messages] > li")
        .evaluateAll((items) => items.map((li) => li.getAttribute("data-role")));
      type Transcript = { role: string }[];
      const truth = query
        ? ((await (await fetch(`${server.url}api/threads/t-browser`)).json()) as { messages: Transcript })
            .messages
        : await page.evaluate(
            () => (globalThis as unknown as { chatAgent: { messages: Transcript } }).chatAgent.messages,
          );
      expect(shown).toEqual(truth.map((m) => m.role));
      expect(shown).toEqual([
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "toolResult",
        "user",
        "assistant",
        "toolResult",
        "assistant",
      ]);
    },
  );

  it("fits a phone (390 × 844): one column, the chart a strip, the approval card in view at the bottom", async () => {
    const { page } = await openExample("", { width: 390, height: 844 });
    await page.getByTestId("input").fill("Ship the new build");
    await page.getByTestId("send").click();
    const approve = page.getByTestId("approval").getByRole("button", { name: "Approve" });
    await approve.waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "example-chat-phone.png") });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = await approve.boundingBox();
    expect(box!.y + box!.height).toBeLessThanOrEqual(844);
    expect(box!.y).toBeGreaterThanOrEqual(0);
    const chart = await page.locator(".ex-chart-panel .chart").boundingBox();
    expect(chart!.width).toBeLessThanOrEqual(390);
    expect(chart!.height).toBeLessThanOrEqual(844 * 0.4);
    await approve.click();
    await page.locator('[data-state="agent.idle"].active').waitFor();
  });

  it('stops a run from the Stop button; a steered "don\'t" cancels the deployment', async () => {
    const { page } = await openExample();
    await page.getByTestId("input").fill("Ship it");
    await page.getByTestId("send").click();
    await page.locator("[data-testid=tool-calls] li").first().waitFor();
    await page.getByTestId("stop").click();
    await page.locator('[data-state="agent.idle"].active').waitFor();
    await expect.poll(() => page.locator("[data-testid=tool-calls] li").count()).toBe(0);

    await page.getByTestId("input").fill("Ship it again");
    await page.getByTestId("send").click();
    await page.locator("[data-testid=tool-calls] li").first().waitFor();
    await page.getByTestId("input").fill("don't deploy after all");
    await page.getByTestId("send").click();
    await page.locator('[data-state="agent.idle"].active').waitFor();
    const transcript = await page.getByTestId("messages").innerText();
    expect(transcript).toContain("Understood: I will not deploy.");
    expect(await page.getByTestId("approval").count()).toBe(0);
  });
});
