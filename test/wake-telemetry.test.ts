import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  createAgent,
  createLaterResults,
  createScheduler,
  createScheduleTool,
  defineLaterTool,
  deliverEvent,
  scripted,
} from "../index.js";
import { createSessionHost } from "../http.js";
import { createTestClock } from "../testing.js";
import { createTestTracing, idOf, parentOf } from "./fixtures/otel.js";

// What woke a run, in its trace: the run a schedule, an event or a late result wakes carries a span
// link to its cause and `agent_machine.wake.*` attributes (the official SDK's in-memory exporter).

let tracing = createTestTracing();
afterEach(() => {
  tracing = createTestTracing();
  context.disable();
});

const runs = () => tracing.spans().filter((span) => span.name.startsWith("invoke_agent"));
const linkIds = (span: ReadableSpan) => span.links.map((link) => link.context.spanId);

async function turns(done: () => boolean) {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(done()).toBe(true);
}

describe("a woken run links to its cause", () => {
  it("a late result: the run it wakes links to the execute_tool span of the call that started the work", async () => {
    const clock = createTestClock({ now: Date.UTC(2026, 0, 5, 8) }).install();
    try {
      const agents = new Map<string, Agent>();
      const later = createLaterResults({ agents });
      const render = defineLaterTool({
        later,
        agentId: "ada",
        name: "render",
        description: "Renders",
        parameters: z.object({}),
        run: () => new Promise<string>((resolve) => setTimeout(() => resolve("intro.mp4"), 60_000)),
      });
      const provider = scripted((_request, call) =>
        call === 0 ? { toolCalls: [{ name: "render", arguments: {} }] } : { text: "ok" },
      );
      const agent = createAgent({
        id: "ada",
        provider,
        tools: [render],
        hibernate: "whenIdle",
        telemetry: { tracerProvider: tracing.provider, agentName: "ada" },
      });
      agents.set("ada", agent);
      await later.start();
      await clock.runUntil(agent.prompt("Render the intro"));
      const handle = later.list()[0]!.id;
      const call = tracing.spans().find((span) => span.name === "execute_tool render")!;
      expect(later.list()[0]!.traceparent).toBe(
        `00-${call.spanContext().traceId}-${call.spanContext().spanId}-01`,
      );

      await clock.advance(60_000);
      for (let i = 0; i < 100 && provider.requests.length < 3; i++) await clock.advance(0);
      await clock.runUntil(agent.waitForIdle());
      const [first, woken] = runs();
      expect(first!.attributes["agent_machine.wake.source"]).toBeUndefined();
      expect(first!.links).toEqual([]);
      expect(woken!.attributes).toMatchObject({
        "agent_machine.wake.source": "laterResult",
        "agent_machine.wake.id": handle,
      });
      expect(woken!.links).toEqual([
        {
          context: expect.objectContaining({ traceId: call.spanContext().traceId, spanId: idOf(call) }),
          attributes: { "agent_machine.wake.source": "laterResult", "agent_machine.wake.id": handle },
        },
      ]);
      later.stop();
    } finally {
      clock.uninstall();
    }
  });

  it("a schedule: the run of each slot is a trace of its own, linked to the span that made the schedule", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const provider = scripted(() => ({ text: "ok" }));
    const agent = createAgent({
      id: "ada",
      provider,
      hibernate: "whenIdle",
      telemetry: { tracerProvider: tracing.provider, agentName: "ada" },
    });
    const scheduler = createScheduler({ agents: new Map([["ada", agent]]) });
    await scheduler.start();
    const request = tracing.provider.getTracer("app").startSpan("POST /reminders");
    const made = await context.with(trace.setSpan(context.active(), request), () =>
      scheduler.schedule({ agentId: "ada", at: Date.now() + 30, message: "Standup" }),
    );
    request.end();
    await turns(() => runs().length === 1);
    const [woken] = runs();
    // Not a child of the request that made the schedule (the timer was armed inside it).
    expect(parentOf(woken!)).toBeUndefined();
    expect(woken!.spanContext().traceId).not.toBe(request.spanContext().traceId);
    expect(linkIds(woken!)).toEqual([request.spanContext().spanId]);
    expect(woken!.attributes).toMatchObject({
      "agent_machine.wake.source": "schedule",
      "agent_machine.wake.id": made.id,
    });
    scheduler.stop();
  });

  it("a schedule the agent made with its tool: the slot's run links to that tool call", async () => {
    const clock = createTestClock({ now: Date.UTC(2026, 0, 5, 8) }).install();
    try {
      const agents = new Map<string, Agent>();
      const scheduler = createScheduler({ agents });
      await scheduler.start();
      const provider = scripted((_request, call) =>
        call === 0
          ? {
              toolCalls: [
                {
                  name: "schedule_wake",
                  arguments: { action: "create", in_minutes: 5, message: "Check the deploy" },
                },
              ],
            }
          : { text: "ok" },
      );
      const agent = createAgent({
        id: "ada",
        provider,
        hibernate: "whenIdle",
        tools: [createScheduleTool({ scheduler, agentId: "ada" })],
        telemetry: { tracerProvider: tracing.provider, agentName: "ada" },
      });
      agents.set("ada", agent);
      await clock.runUntil(agent.prompt("Remind me to check the deploy in 5 minutes"));
      const call = tracing.spans().find((span) => span.name === "execute_tool schedule_wake")!;
      await clock.advance(5 * 60_000);
      await clock.runUntil(agent.waitForIdle());
      const woken = runs()[1]!;
      expect(woken.attributes["agent_machine.wake.source"]).toBe("schedule");
      expect(linkIds(woken)).toEqual([idOf(call)]);
      scheduler.stop();
    } finally {
      clock.uninstall();
    }
  });

  it("an event: the run links to the sender's traceparent; one that is not a traceparent costs the link, not the wake", async () => {
    const provider = scripted(() => ({ text: "ok" }));
    const agent = createAgent({
      id: "ada",
      provider,
      telemetry: { tracerProvider: tracing.provider, agentName: "ada" },
    });
    const agents = new Map([["ada", agent]]);
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await deliverEvent(agents, { agentId: "ada", id: "gh_81", text: "CI failed", traceparent });
    await agent.waitForIdle();
    await deliverEvent(agents, { agentId: "ada", id: "gh_82", text: "CI failed", traceparent: "garbage" });
    await agent.waitForIdle();
    const [linked, unlinked] = runs();
    expect(linked!.links.map((link) => link.context)).toEqual([
      {
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: "00f067aa0ba902b7",
        traceFlags: 1,
        isRemote: true,
      },
    ]);
    expect(linked!.attributes).toMatchObject({
      "agent_machine.wake.source": "event",
      "agent_machine.wake.id": "gh_81",
    });
    expect(unlinked!.links).toEqual([]);
    expect(unlinked!.attributes["agent_machine.wake.id"]).toBe("gh_82");
    expect(provider.requests).toHaveLength(2);
  });

  it("an event steered into a running run links to it, but the run stays the prompt's", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const provider = scripted(async (_request, call) => {
      if (call === 0) await gate;
      return { text: "ok" };
    });
    const agent = createAgent({
      id: "ada",
      provider,
      telemetry: { tracerProvider: tracing.provider, agentName: "ada" },
    });
    const run = agent.prompt("deploy");
    await turns(() => provider.requests.length === 1);
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await deliverEvent(new Map([["ada", agent]]), {
      agentId: "ada",
      id: "e1",
      text: "prod down",
      traceparent,
    });
    release();
    await run;
    const [only] = runs();
    expect(runs()).toHaveLength(1);
    expect(only!.attributes["agent_machine.wake.source"]).toBeUndefined();
    expect(linkIds(only!)).toEqual(["00f067aa0ba902b7"]);
  });
  it("an event through the session host's route: the run links to the request's traceparent header", async () => {
    const provider = scripted(() => ({ text: "ok" }));
    const host = createSessionHost({
      agent: { provider, telemetry: { tracerProvider: tracing.provider, agentName: "ada" } },
      basePath: "/api",
      authorize: "none-local-only",
    });
    try {
      const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
        host.handle(
          new Request(`http://localhost/api${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(body),
          }),
        );
      const chat = {
        id: "t1",
        trigger: "submit-message",
        messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
      };
      await (await post("/chat", chat)).text();
      await turns(() => runs().length === 1);
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const delivered = await post("/threads/t1/events", { id: "gh_81", text: "CI failed" }, { traceparent });
      expect(delivered.status).toBe(202);
      await turns(() => runs().length === 2);
      const woken = runs()[1]!;
      expect(linkIds(woken)).toEqual(["00f067aa0ba902b7"]);
      expect(woken.attributes).toMatchObject({
        "agent_machine.wake.source": "event",
        "agent_machine.wake.id": "gh_81",
      });
    } finally {
      await host.close();
    }
  });
});
