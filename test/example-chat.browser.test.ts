// The chat example (examples/chat, `npm run example:chat`) in Chromium, used as a person would: a
// prompt, the parallel tool calls with their progress, the approval card with edited arguments, a
// steer while the agent works, and the statechart beside the chat following the agent.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serveChatExample } from "../examples/chat/serve.js";
import { ARTIFACTS, useBrowser, watchPage } from "./visualizer-page.js";

const suite = useBrowser();

async function openExample() {
  const server = await serveChatExample({ port: 0 });
  const page = await suite.browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems = watchPage(page);
  // Only this server is ever asked for anything.
  const requested: string[] = [];
  page.on("request", (request) => requested.push(request.url()));
  suite.cleanups.push(async () => {
    await page.close();
    await server.close();
    expect(problems).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(server.url) && !url.startsWith("data:"))).toEqual([]);
  });
  await page.goto(server.url);
  await page.locator('[data-state="agent.idle"].active').waitFor();
  return page;
}

describe("the chat example", () => {
  it("runs a deployment: tool progress, an approval edited on its card, a steer, the statechart alongside", async () => {
    const page = await openExample();
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
    await page.screenshot({ path: join(ARTIFACTS, "example-chat.png") });

    // The agent in the page agrees with what the page shows.
    const roles = await page.evaluate(() =>
      (globalThis as unknown as { chatAgent: { messages: { role: string }[] } }).chatAgent.messages.map(
        (m) => m.role,
      ),
    );
    expect(
      await page
        .locator("[data-testid=messages] > li")
        .evaluateAll((items) => items.map((li) => li.getAttribute("data-role"))),
    ).toEqual(roles);
  });

  it('stops a run from the Stop button; a steered "don\'t" cancels the deployment', async () => {
    const page = await openExample();
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
