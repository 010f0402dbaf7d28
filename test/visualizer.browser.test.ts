import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAgent, recordEvents, scripted, visualizeRecording } from "../index.js";
import { ARTIFACTS, gateTool, lanes, sleep, useBrowser, watchPage } from "./visualizer-page.js";

const suite = useBrowser();
const { cleanups, open } = suite;

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
    const { tool: gate, open: release } = gateTool("gate");
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
    const { messages: newMessages } = await run;
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
    const page = await suite.browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const problems = watchPage(page);
    cleanups.push(async () => {
      await page.close();
      await server.close();
      expect(problems).toEqual([]);
    });
    await page.goto(server.url);
    await page.locator("#replay-bar:not([hidden])").waitFor();
    // The bar names the file, not the route it is served on.
    expect(await page.locator("#replay-name").textContent()).toMatch(/^run\.jsonl · \d+ entries$/);
    expect(await page.locator("#back-to-live").isHidden()).toBe(true);
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

    // A live page opens the same file from its file picker and switches to replay…
    const { agent: liveAgent, page: livePage } = await open({
      provider: scripted([{ text: "Live and well." }]),
    });
    await liveAgent.prompt("Are you there?");
    await expect
      .poll(() => livePage.locator('[data-testid="transcript"]').textContent())
      .toContain("Live and well.");
    await livePage.locator("#file-input").setInputFiles(file);
    await livePage.locator("#replay-bar:not([hidden])").waitFor();
    expect(await livePage.locator("#replay-name").textContent()).toContain("run.jsonl");
    await livePage.locator("#replay-last").click();
    await expect
      .poll(() => livePage.locator('[data-testid="transcript"]').textContent())
      .toContain("Replayed answer.");
    expect(await livePage.locator('[data-testid="steer-button"]').isDisabled()).toBe(true);
    // …and goes back to the live agent, which went on meanwhile.
    await liveAgent.prompt("Still there?");
    await livePage.locator("#back-to-live").click();
    await livePage.locator("#replay-bar").waitFor({ state: "hidden" });
    const transcript = await livePage.locator('[data-testid="transcript"]').textContent();
    expect(transcript).toContain("Still there?");
    expect(transcript).not.toContain("Replayed answer.");
    expect(await livePage.locator('[data-testid="steer-button"]').isDisabled()).toBe(false);
  });

  it("clears an approval card as soon as it is decided, while the approved tool still runs", async () => {
    const gate = gateTool("deploy");
    const { agent, page } = await open({
      provider: scripted([{ toolCalls: [{ name: "deploy", id: "call_deploy" }] }, { text: "Deployed." }]),
      tools: [gate.tool],
      permissions: { check: () => ({ behavior: "ask" }) },
    });
    const run = agent.prompt("Deploy");
    const card = page.locator('[data-approval="call_deploy"]');
    await card.waitFor();
    await card.locator('[data-testid="approve"]').click();
    // The tool has not finished (its gate is shut), yet the card is gone and nothing offers Approve again.
    await card.waitFor({ state: "detached" });
    expect(await page.locator('[data-testid="approve"]').count()).toBe(0);
    await expect
      .poll(() => page.locator('[data-lane="call_deploy"]').getAttribute("data-outcome"))
      .toBe("running");
    expect(await page.locator("#toast").isHidden()).toBe(true);
    gate.open();
    await run;
    await expect
      .poll(() => page.locator('[data-lane="call_deploy"]').getAttribute("data-outcome"))
      .toBe("ok");
  });

  it("groups the timeline by run, then turn: a second prompt's calls do not join the first run", async () => {
    const { agent, page } = await open({
      provider: scripted([
        {
          toolCalls: [
            { name: "sleep", arguments: { ms: 5 }, id: "first_a" },
            { name: "sleep", arguments: { ms: 5 }, id: "first_b" },
          ],
        },
        { text: "First run done." },
        { toolCalls: [{ name: "sleep", arguments: { ms: 5 }, id: "second_a" }] },
        { toolCalls: [{ name: "sleep", arguments: { ms: 5 }, id: "second_b" }] },
        { text: "Second run done." },
      ]),
      tools: [sleep],
    });
    await agent.prompt("First prompt");
    await agent.prompt("Second prompt");
    await expect
      .poll(async () => (await lanes(page)).map((l) => l.outcome))
      .toEqual(["ok", "ok", "ok", "ok"]);
    const structure = await page.$$eval("#timeline .run", (runs) =>
      runs.map((run) => ({
        head: Array.from(run.querySelector(".run-head")!.children, (part) => part.textContent).join(" "),
        turns: Array.from(run.querySelectorAll(".turn"), (turn) => ({
          head: turn.querySelector(".turn-head b")!.textContent,
          calls: Array.from(
            turn.querySelectorAll("[data-lane]"),
            (lane) => (lane as HTMLElement).dataset.lane,
          ),
        })),
      })),
    );
    expect(structure).toEqual([
      {
        head: expect.stringMatching(/^Run 1 “First prompt” stop 2 calls$/),
        turns: [{ head: "Turn 1", calls: ["first_a", "first_b"] }],
      },
      {
        head: expect.stringMatching(/^Run 2 “Second prompt” stop 2 calls$/),
        turns: [
          { head: "Turn 1", calls: ["second_a"] },
          { head: "Turn 2", calls: ["second_b"] },
        ],
      },
    ]);
  });

  it("sends a pasted 300 KB message, and keeps an over-limit one in the box with the reason", async () => {
    const { agent, page } = await open(
      { provider: scripted([{ toolCalls: [{ name: "hold" }] }]), tools: [gateTool("hold").tool] },
      { maxCommandBytes: 1024 * 1024 },
    );
    const run = agent.prompt("Start");
    await page.locator('[data-lane][data-outcome="running"]').waitFor();
    const trace = Array.from({ length: 8000 }, (_, i) => `    at frame${i} (src/file.ts:${i}:7)`).join("\n");
    expect(trace.length).toBeGreaterThan(300_000);
    const box = page.locator('[data-testid="steer-input"]');
    // Pasted: typing 300 KB through the editing commands takes this headless shell minutes.
    const paste = (text: string) =>
      box.evaluate((node, value) => {
        (node as HTMLTextAreaElement).value = value;
        node.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste" }));
      }, text);
    await paste(trace);
    await page.locator('[data-testid="steer-button"]').click();
    await expect.poll(() => agent.actor.getSnapshot().context.steeringQueue.length).toBe(1);
    expect(agent.actor.getSnapshot().context.steeringQueue[0]).toMatchObject({ content: trace });
    expect(await box.inputValue()).toBe("");

    const huge = trace.repeat(4); // 1.3 MB: over this server's 1 MiB
    await paste(huge);
    await page.locator('[data-testid="steer-button"]').click();
    await expect
      .poll(() => page.locator("#toast").textContent())
      .toMatch(/at most 1\.0 MB.*Nothing was sent/);
    expect(await box.inputValue()).toBe(huge);
    expect(await page.locator(".connection.open").count()).toBe(1);
    expect(agent.actor.getSnapshot().context.steeringQueue.length).toBe(1);
    agent.abort();
    await run;
  });

  it("shows 'not found' for a tool name with spaces, lane notes in full, and fetches nothing that fails", async () => {
    const { agent, page } = await open(
      {
        provider: scripted([
          {
            toolCalls: [
              { name: "read file", id: "call_spaced" },
              { name: "deploy", id: "call_wait" },
            ],
          },
          { text: "ok" },
        ]),
        tools: [gateTool("deploy").tool],
        permissions: {
          check: ({ toolCall }) => ({ behavior: toolCall.name === "deploy" ? "ask" : "allow" }),
        },
      },
      { width: 1280 },
    );
    const run = agent.prompt("Go");
    await page.locator('[data-lane="call_wait"][data-outcome="awaiting approval"]').waitFor();
    await expect
      .poll(() => page.locator('[data-lane="call_spaced"]').getAttribute("data-outcome"))
      .toBe("not found");
    // At 1280 px the lane's status and timing are not cut off.
    const cut = await page.$$eval(".lane-info > div", (lines) =>
      lines.filter((line) => line.scrollWidth > line.clientWidth + 1).map((line) => line.textContent),
    );
    expect(cut).toEqual([]);
    expect(await page.locator('[data-lane="call_wait"] .lane-info').textContent()).toMatch(
      /awaiting approval waited \d/,
    );
    agent.abort();
    await run;
    // watchPage (in the cleanup) fails the test on any HTTP error, the favicon included.
    const icon = await page.evaluate(async () => (await fetch("/favicon.ico")).status);
    expect(icon).toBe(200);
  });
});
