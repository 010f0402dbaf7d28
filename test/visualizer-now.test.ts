// The page's header in plain words: what the agent waits for, or why it stopped, folded from the very
// messages the visualizer server sends a page.
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import { createAgent, defineTool, scripted, type VisualizerMessage, visualize } from "../index.js";
import { apply, emptyModel } from "../visualizer/page/model.js";
import { describeNow, stopReason, tabTitle } from "../visualizer/page/now.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const deploy = defineTool({
  name: "deploy",
  description: "Deploys the site",
  parameters: z.object({ env: z.string() }),
  execute: ({ env }) => `deployed to ${env}`,
});

/** An agent served by a visualizer, and a page's model folded from what a client of it receives. */
async function watched(options: Parameters<typeof createAgent>[0]) {
  const agent = createAgent(options);
  const server = await visualize(agent, { port: 0 });
  const url = new URL(server.url);
  const messages: VisualizerMessage[] = [];
  const socket = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get("token")}`);
  socket.on("message", (data) => {
    const message = JSON.parse(String(data));
    // The history a page gets on connecting comes in one backlog message: taken one by one.
    if (message.kind === "backlog") messages.push(...message.messages);
    else messages.push(message);
  });
  await new Promise((resolve) => socket.once("open", resolve));
  cleanups.push(
    () => socket.close(),
    () => agent.stop(),
    () => server.close(),
  );
  const model = () => {
    const folded = emptyModel();
    for (const message of messages) apply(folded, message);
    return folded;
  };
  return { agent, model };
}

describe("the visualizer's header in plain words", () => {
  it("says the agent waits for the user to approve a named tool, and counts it in the tab title", async () => {
    const { agent, model } = await watched({
      provider: scripted([
        { toolCalls: [{ name: "deploy", arguments: { env: "prod" } }] },
        { text: "Done." },
      ]),
      tools: [deploy],
      permissions: { check: () => ({ behavior: "ask" }) },
    });
    const run = agent.prompt("Ship it");
    await expect.poll(() => describeNow(model()).text).toBe("Waiting for you: approve `deploy`");
    const now = describeNow(model());
    expect(now).toMatchObject({ tone: "waiting", waiting: 1 });
    // The machine is in running.executing meanwhile: the header must not say so.
    expect(model().stateName).toBe("running.executing");
    expect(tabTitle(now, model().agentId)).toMatch(/^\(1\) Waiting for you: approve `deploy`/);
    agent.approve(agent.pendingApprovals()[0]!.toolCallId);
    await run;
    await expect.poll(() => describeNow(model()).text).toBe("Done: waiting for a prompt");
    expect(tabTitle(describeNow(model()), model().agentId)).not.toMatch(/^\(/);
  });

  it("blames the model for a provider failure, with its message and kind", async () => {
    const { agent, model } = await watched({
      provider: scripted([{ error: { kind: "rate_limit", message: "429 Too Many Requests" } }]),
      retry: { maxRetries: 0 },
    });
    const result = await agent.prompt("Hello");
    expect(result.reason).toBe("error");
    await expect.poll(() => model().lastEnd?.reason).toBe("error");
    expect(describeNow(model())).toMatchObject({
      tone: "stopped",
      text: "Stopped: model error, 429 Too Many Requests (rate limit)",
    });
    expect(model().runs.at(-1)).toMatchObject({ reason: "error", errorKind: "rate_limit" });
  });

  it("says why a run stopped that did not fail: an abort, a limit, a rejection with its reason", () => {
    expect(stopReason({ reason: "stop" })).toBeUndefined();
    // A run still going has no reason yet: nothing to say.
    expect(stopReason({ run: 1, startedAt: 0, prompt: "" } as never)).toBeUndefined();
    expect(stopReason({ reason: "aborted" })).toEqual({ blame: "user", text: "aborted" });
    expect(stopReason({ reason: "limit", errorMessage: "maxTurns (3) reached" })).toEqual({
      blame: "limit",
      text: "limit reached: maxTurns (3) reached",
    });
    expect(stopReason({ reason: "rejected", rejection: "contains a secret" })?.text).toBe(
      "rejected: contains a secret",
    );
    expect(stopReason({ reason: "error", errorKind: "overloaded", errorMessage: "Overloaded" })).toEqual({
      blame: "model",
      text: "model error, Overloaded",
    });
  });
});
