// The live page at a glance (issue 41): the header says in words what the agent waits for, turns amber
// with a review bar and a count in the tab title, and every text on the page reads at WCAG AA (4.5:1)
// in the light and in the dark scheme. Measured in Chromium, on the page as it is while a call waits.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Agent, createScheduler, defineTool, deliverEvent, scripted, subAgentTool } from "../index.js";
import { ARTIFACTS, useBrowser } from "./visualizer-page.js";

const { open } = useBrowser();

const deploy = defineTool({
  name: "deploy",
  description: "Deploys the site to an environment",
  parameters: z.object({ env: z.string() }),
  execute: ({ env }) => `deployed to ${env}`,
});

/**
 * Every visible text on the page whose contrast with what is behind it is under `min`: the text's colour
 * against the first opaque background among its ancestors (translucent ones blended on the way). Disabled
 * controls are exempt, as WCAG has them.
 */
function lowContrast(page: Page, min: number) {
  return page.evaluate((min) => {
    type Rgba = [number, number, number, number];
    const parse = (value: string): Rgba => {
      const m = value.match(/[\d.]+/g)?.map(Number) ?? [0, 0, 0, 0];
      return [m[0]!, m[1]!, m[2]!, m[3] ?? 1];
    };
    const over = (top: Rgba, bottom: Rgba): Rgba => {
      const a = top[3];
      return [0, 1, 2].map((i) => top[i]! * a + bottom[i]! * (1 - a)).concat(1) as Rgba;
    };
    const luminance = ([r, g, b]: Rgba) => {
      const lin = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    };
    const backgroundOf = (element: Element | null): Rgba => {
      const layers: Rgba[] = [];
      for (let node = element; node; node = node.parentElement) {
        const colour = parse(getComputedStyle(node).backgroundColor);
        if (colour[3] > 0) layers.push(colour);
        if (colour[3] >= 1) break;
      }
      let result: Rgba = [255, 255, 255, 1];
      for (const layer of layers.reverse()) result = over(layer, result);
      return result;
    };
    const failures: string[] = [];
    for (const element of Array.from(document.body.querySelectorAll("*"))) {
      if (element instanceof SVGElement || element.closest("svg")) continue;
      const text = Array.from(element.childNodes)
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent ?? "")
        .join("")
        .trim();
      if (!text) continue;
      const html = element as HTMLElement;
      if (!html.getClientRects().length || html.closest("[hidden]")) continue;
      const style = getComputedStyle(html);
      if (style.visibility !== "visible" || Number(style.opacity) === 0) continue;
      if (html.closest("button:disabled, input:disabled, textarea:disabled, select:disabled")) continue;
      const background = backgroundOf(html);
      const colour = over(parse(style.color), background);
      const [l1, l2] = [luminance(colour), luminance(background)].sort((a, b) => b - a);
      const ratio = (l1! + 0.05) / (l2! + 0.05);
      if (ratio < min)
        failures.push(
          `${ratio.toFixed(2)}:1 "${text.slice(0, 30)}" <${html.tagName.toLowerCase()} class="${html.className}">`,
        );
    }
    return failures;
  }, min);
}

/**
 * Visible elements whose box reaches past the window's right edge (`width`) or starts left of it,
 * outside a container that scrolls or clips them (a wide chart in its own scroller is fine): what a
 * page that hides its overflow would still cut off.
 */
function overflowing(page: Page, width: number) {
  return page.evaluate((width) => {
    const clipped = (element: Element) => {
      for (let node = element.parentElement; node && node !== document.body; node = node.parentElement) {
        const { overflowX } = getComputedStyle(node);
        if (overflowX !== "visible") return true;
      }
      return false;
    };
    const out: string[] = [];
    for (const element of Array.from(document.body.querySelectorAll("*"))) {
      const html = element as HTMLElement;
      if (element.closest("svg, [hidden]") || !html.getClientRects().length) continue;
      const box = html.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      if ((box.right > width + 0.5 || box.left < -0.5) && !clipped(element))
        out.push(
          `<${html.tagName.toLowerCase()} class="${html.className}"> ${Math.round(box.left)}–${Math.round(box.right)}`,
        );
    }
    return out;
  }, width);
}

describe("the visualizer page at a glance", () => {
  it("says what waits for the user, in amber, with a review bar and the count in the tab title; AA contrast in both schemes", async () => {
    const { agent, page } = await open(
      {
        provider: scripted([
          {
            text: "I will deploy to production.",
            toolCalls: [{ name: "deploy", arguments: { env: "prod" }, id: "call_deploy" }],
          },
          { text: "Deployed." },
        ]),
        tools: [deploy],
        permissions: { check: () => ({ behavior: "ask" }) },
      },
      { width: 1440, height: 900 },
    );
    const run = agent.prompt("Ship it");
    await page.locator('[data-approval="call_deploy"]').waitFor();

    await expect
      .poll(() => page.locator('[data-testid="now"]').textContent())
      .toBe("Waiting for you: approve `deploy`");
    expect(await page.evaluate(() => document.body.classList.contains("awaiting"))).toBe(true);
    expect(await page.title()).toMatch(/^\(1\) Waiting for you: approve `deploy`/);
    // A run still going has no end to explain.
    expect(await page.locator('[data-testid="run-end"]').count()).toBe(0);
    // The review bar is in view at the top, and one key brings the Approve button to hand.
    const bar = await page.locator('[data-testid="review-bar"]').boundingBox();
    expect(bar && bar.y + bar.height).toBeLessThanOrEqual(900);
    await page.keyboard.press("a");
    const approve = page.locator('[data-approval="call_deploy"] [data-testid="approve"]');
    expect(await approve.evaluate((button) => button === document.activeElement)).toBe(true);
    const box = await approve.boundingBox();
    expect(box!.y).toBeGreaterThanOrEqual(0);
    expect(box!.y + box!.height).toBeLessThanOrEqual(900);

    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      // Nothing wider than the window: no sideways scrolling of the page, and no element past its edge.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1440);
      expect(await overflowing(page, 1440)).toEqual([]);
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [r, g, b] = background.match(/\d+/g)!.map(Number);
      // The dark scheme is really dark, the light one light.
      expect((r! + g! + b!) / 3 < 60).toBe(scheme === "dark");
      await page.screenshot({ path: join(ARTIFACTS, `visualizer-glance-${scheme}.png`) });
      expect(await lowContrast(page, 4.5), scheme).toEqual([]);
    }

    await approve.click();
    await run;
    await expect
      .poll(() => page.locator('[data-testid="now"]').textContent())
      .toBe("Done: waiting for a prompt");
    expect(await page.title()).not.toMatch(/^\(/);
    expect(await page.evaluate(() => document.body.classList.contains("awaiting"))).toBe(false);
  });

  it("fits a phone (390 × 844): nothing overflows, the approval sits in a bottom sheet in view, AA contrast in both schemes", async () => {
    const { agent, page } = await open(
      {
        provider: scripted([
          {
            text: "Deploying now.",
            toolCalls: [
              {
                name: "deploy",
                arguments: { env: "a-rather-long-environment-name-that-goes-on" },
                id: "call_deploy",
              },
            ],
          },
          { text: "Deployed." },
        ]),
        tools: [deploy],
        permissions: { check: () => ({ behavior: "ask" }) },
      },
      { width: 390, height: 844 },
    );
    const run = agent.prompt("Ship it");
    const approve = page.locator('[data-approval="call_deploy"] [data-testid="approve"]');
    await approve.waitFor();
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: join(ARTIFACTS, `visualizer-phone-${scheme}.png`) });
      // Nothing wider than the screen: no sideways scrolling of the page, and no element past its edge.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await overflowing(page, 390)).toEqual([]);
      // The Approve button is on screen without scrolling, and stays there when the page scrolls.
      for (const scrollY of [0, 600]) {
        await page.evaluate((y) => window.scrollTo(0, y), scrollY);
        const box = await approve.boundingBox();
        expect(box!.y).toBeGreaterThanOrEqual(0);
        expect(box!.y + box!.height).toBeLessThanOrEqual(844);
        expect(box!.x + box!.width).toBeLessThanOrEqual(390);
      }
      expect(await lowContrast(page, 4.5), scheme).toEqual([]);
    }
    // The header's words fit on the screen.
    const now = await page.locator('[data-testid="now"]').boundingBox();
    expect(now!.x + now!.width).toBeLessThanOrEqual(390);
    await approve.click();
    await run;
  });

  it("shows exactly what an approval approves: the proposing text, a command block, a diff, and edited arguments", async () => {
    const ran: unknown[] = [];
    const bash = defineTool({
      name: "bash",
      description: "Runs a shell command",
      parameters: z.object({ command: z.string() }),
      execute: ({ command }) => (ran.push(command), "ok"),
    });
    const edit = defineTool({
      name: "edit_file",
      description: "Replaces a string in a file",
      parameters: z.object({ path: z.string(), old_string: z.string(), new_string: z.string() }),
      execute: () => "edited",
    });
    const { agent, page } = await open({
      provider: scripted([
        {
          text: "First the tests, then the fix, then the deploy.",
          toolCalls: [
            { name: "bash", arguments: { command: "npm test -- --run\necho done" }, id: "call_bash" },
            {
              name: "edit_file",
              arguments: {
                path: "src/a.ts",
                old_string: "const a = 1;\nkeep();",
                new_string: "const a = 2;\nkeep();",
              },
              id: "call_edit",
            },
            { name: "deploy", arguments: { env: "prod" }, id: "call_deploy" },
          ],
        },
        { text: "Done." },
      ]),
      tools: [bash, edit, deploy],
      permissions: { check: () => ({ behavior: "ask" }) },
    });
    const run = agent.prompt("Fix and ship");
    const card = (id: string) => page.locator(`[data-approval="${id}"]`);
    await card("call_deploy").waitFor();
    // Each card says what its tool does, as the model was told.
    expect(await card("call_deploy").locator('[data-testid="tool-description"]').textContent()).toBe(
      "Deploys the site to an environment",
    );
    expect(await card("call_bash").locator('[data-testid="tool-description"]').textContent()).toBe(
      "Runs a shell command",
    );
    expect(await card("call_bash").locator('[data-testid="proposed"]').textContent()).toBe(
      "First the tests, then the fix, then the deploy.",
    );
    expect(await card("call_bash").locator('[data-testid="command"]').textContent()).toBe(
      "$ npm test -- --run\necho done",
    );
    const diff = card("call_edit").locator('[data-testid="diff"] span');
    expect(await diff.evaluateAll((rows) => rows.map((row) => [row.className, row.textContent]))).toEqual([
      ["del", "-const a = 1;\n"],
      ["add", "+const a = 2;\n"],
      ["same", " keep();\n"],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, "visualizer-approval-cards.png"), fullPage: true });

    // Approve the deploy with edited arguments: the tool runs with them.
    await card("call_deploy").locator('[data-testid="edit"]').click();
    await card("call_deploy").locator('[data-testid="edit-args"]').fill('{ "env": "staging" }');
    await card("call_deploy").locator('[data-testid="approve"]').click();
    await card("call_bash").locator('[data-testid="approve"]').click();
    await card("call_edit").locator('[data-testid="deny"]').click();
    await run;
    const results = agent.messages.filter((m) => m.role === "toolResult");
    // The result also notes that the user edited the arguments.
    expect(JSON.stringify(results.find((r) => r.toolCallId === "call_deploy")?.content)).toContain(
      "deployed to staging",
    );
    expect(ran).toEqual(["npm test -- --run\necho done"]);
  });

  it("shows the tree of agents live, when the sleeping agent wakes next, and what woke it", async () => {
    const refund = defineTool({
      name: "refund",
      description: "Refunds an amount",
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: ({ amount }) => `refunded ${amount}`,
    });
    const writer = subAgentTool({
      name: "writer",
      description: "Writes",
      tools: [refund],
      provider: scripted((_r, call) =>
        call === 0
          ? { toolCalls: [{ id: "w1", name: "refund", arguments: { amount: 20 } }] }
          : { text: "ok" },
      ),
    });
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [writer],
      provider: scripted((_r, call) =>
        call === 0
          ? { toolCalls: [{ id: "r1", name: "writer", arguments: { task: "refund" } }] }
          : { text: "ok" },
      ),
    });
    const holder: { agent?: Agent } = {};
    const scheduler = createScheduler({ agents: { get: () => holder.agent } });
    await scheduler.start();
    const { agent, page } = await open(
      {
        provider: scripted((_r, call) =>
          call === 0
            ? { toolCalls: [{ id: "p1", name: "researcher", arguments: { task: "go" } }] }
            : { text: "ok" },
        ),
        tools: [researcher],
      },
      { scheduler },
    );
    holder.agent = agent;
    const run = agent.prompt("handle it");
    const card = page.locator('[data-approval="p1/r1/w1"]');
    await card.waitFor();
    // The refund waits two levels down: the tree says where.
    const row = (key: string) => page.locator(`[data-testid="agents"] [data-agent="${key}"] > .agent-row`);
    await expect
      .poll(() => row("p1/r1").textContent())
      .toMatch(/^r1 · writer .* · waiting for your approval \(1\)$/);
    expect(await row("p1").textContent()).toMatch(/^p1 · researcher .* · running tools$/);
    expect(await card.locator('[data-testid="tool-description"]').textContent()).toBe("Refunds an amount");
    // A grandchild's row opens its chart.
    await row("p1/r1").click();
    await expect.poll(() => page.locator("#chart-status").textContent()).toMatch(/^sub-agent \S*r1/);
    await card.locator('[data-testid="approve"]').click();
    await run;
    await expect.poll(() => row("p1/r1").textContent()).toMatch(/done · ok$/);

    // Asleep: the header and the panel say when a schedule wakes it next.
    await scheduler.schedule({
      agentId: agent.id,
      id: "daily",
      cron: "0 9 * * *",
      timeZone: "UTC",
      message: "Report",
    });
    await expect
      .poll(() => page.locator('[data-testid="now"]').textContent())
      .toMatch(/^Sleeping: wakes at .+ \(schedule daily, cron 0 9 \* \* \* \(UTC\)\)$/);
    expect(await page.locator('[data-testid="next-wake"]').textContent()).toMatch(
      /^Next wake-up: .+schedule daily/,
    );
    // An event wakes it: the panel and the run's heading say so.
    await deliverEvent({ get: () => agent }, { agentId: agent.id, id: "build-42", text: "CI failed" });
    await agent.waitForIdle();
    await expect
      .poll(() => page.locator('[data-testid="woken-by"]').textContent())
      .toBe("Last woken by an event (build-42)");
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await lowContrast(page, 4.5), scheme).toEqual([]);
    }
    scheduler.stop();
  });

  it("blames the model, not a tool, when the provider fails", async () => {
    const { agent, page } = await open({
      provider: scripted([
        { toolCalls: [{ name: "deploy", arguments: { env: "staging" } }] },
        { error: { kind: "rate_limit", message: "429 Too Many Requests" } },
      ]),
      tools: [deploy],
      retry: { maxRetries: 0 },
    });
    await agent.prompt("Ship it");
    await expect
      .poll(() => page.locator('[data-testid="now"]').textContent())
      .toBe("Stopped: model error, 429 Too Many Requests (rate limit)");
    const end = page.locator('[data-testid="run-end"]');
    expect(await end.getAttribute("data-blame")).toBe("model");
    expect(await end.textContent()).toContain("Model call failed");
    // The tool that ran before the failure keeps its own, green outcome.
    expect(await page.locator("[data-lane]").getAttribute("data-outcome")).toBe("ok");
  });
});
