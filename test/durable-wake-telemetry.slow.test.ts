// What woke a durable run, in its trace (issue 40): the run a schedule's slot, an event, or a late
// result wakes on Restate carries a span link to its cause and `agent_machine.wake.*` attributes,
// as in process (test/wake-telemetry.test.ts). A real Restate server; the service runs in this
// process, traced by the official SDK's in-memory exporter.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createScheduleTool, defineLaterTool, scripted } from "../index.js";
import {
  type AgentServer,
  createAgentServices,
  createSessionClient,
  createWakeClient,
  registerDeployment,
  type RestateServer,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { eventually, fastRetries, quietLogger } from "./fixtures/durable-harness.js";
import { createTestTracing, idOf } from "./fixtures/otel.js";

const tracing = createTestTracing();
let restate: RestateServer;
let server: AgentServer;
const sessions = () => createSessionClient({ url: restate.ingressUrl });
const wakes = () => createWakeClient({ url: restate.ingressUrl });

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  restate = await startRestateServer();
  const render = defineLaterTool({
    name: "render",
    description: "Renders",
    parameters: z.object({}),
    run: () => new Promise<string>((resolve) => setTimeout(() => resolve("intro.mp4"), 100)),
  });
  const provider = scripted((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === "user" && last.content === "render")
      return { toolCalls: [{ name: "render", arguments: {} }] };
    if (last.role === "user" && last.content === "remind") {
      const args = { action: "create", in_minutes: 0.01, message: "Look again" };
      return { toolCalls: [{ name: "schedule_wake", arguments: args }] };
    }
    return { text: "ok" };
  });
  const services = createAgentServices({
    agent: {
      provider,
      tools: [render, createScheduleTool()],
      telemetry: { tracerProvider: tracing.provider, agentName: "ada" },
    },
    retryPolicy: fastRetries,
  });
  server = await serveAgents({ services, logger: quietLogger });
  await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
});

afterAll(async () => {
  await server?.close();
  await restate?.stop();
  context.disable();
});

const CAUSE_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CAUSE_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${CAUSE_TRACE}-${CAUSE_SPAN}-01`;

/** The run a wake with this id woke: its `invoke_agent` span. */
const wokenRun = (id: string) =>
  eventually(
    () =>
      tracing
        .spans()
        .find(
          (span) => span.name.startsWith("invoke_agent") && span.attributes["agent_machine.wake.id"] === id,
        ),
    `the run woken by ${id}`,
  );
const link = (span: ReadableSpan, source: string, id: string) => ({
  context: expect.objectContaining({ traceId: span.spanContext().traceId, spanId: idOf(span) }),
  attributes: { "agent_machine.wake.source": source, "agent_machine.wake.id": id },
});

describe("a woken durable run links to its cause", () => {
  it("an event: to its traceparent, or to the span active when the client delivered it", async () => {
    const id = `event-${Date.now()}`;
    await sessions().prompt(id, "hello");
    expect(await wakes().deliverEvent(id, { id: "gh_1", text: "CI failed", traceparent: TRACEPARENT })).toBe(
      "delivered",
    );
    const woken = await wokenRun("gh_1");
    expect(woken.attributes["agent_machine.wake.source"]).toBe("event");
    expect(woken.links).toEqual([
      {
        context: expect.objectContaining({ traceId: CAUSE_TRACE, spanId: CAUSE_SPAN }),
        attributes: { "agent_machine.wake.source": "event", "agent_machine.wake.id": "gh_1" },
      },
    ]);
    // The webhook's own span, active as the client delivers: the default cause.
    let request: ReadableSpan | undefined;
    await tracing.provider.getTracer("app").startActiveSpan("webhook", async (span) => {
      await wakes().deliverEvent(id, { id: "gh_2", text: "CI passed" });
      span.end();
      request = span as unknown as ReadableSpan;
    });
    expect((await wokenRun("gh_2")).links).toEqual([link(request!, "event", "gh_2")]);
  });

  it("a schedule's slot: to the traceparent it was made with", async () => {
    const id = `schedule-${Date.now()}`;
    await sessions().prompt(id, "hello");
    const schedule = await wakes().schedule(id, {
      at: Date.now() + 300,
      message: "Tick",
      traceparent: TRACEPARENT,
    });
    const woken = await wokenRun(schedule.id);
    expect(woken.attributes["agent_machine.wake.source"]).toBe("schedule");
    expect(woken.links).toEqual([
      {
        context: expect.objectContaining({ traceId: CAUSE_TRACE, spanId: CAUSE_SPAN }),
        attributes: { "agent_machine.wake.source": "schedule", "agent_machine.wake.id": schedule.id },
      },
    ]);
  });

  it("a late result and the agent's own schedule: to the execute_tool span of the call", async () => {
    const id = `later-${Date.now()}`;
    await sessions().prompt(id, "render");
    const call = tracing.spans().findLast((span) => span.name === "execute_tool render")!;
    const handle = /\(handle (later_[\w-]+)\)/.exec(JSON.stringify(await sessions().transcript(id)))![1]!;
    expect((await wokenRun(handle)).links).toEqual([link(call, "laterResult", handle)]);

    await sessions().prompt(id, "remind");
    const scheduling = tracing.spans().findLast((span) => span.name === "execute_tool schedule_wake")!;
    const [made] = await wakes().list(id);
    expect((await wokenRun(made!.id)).links).toEqual([link(scheduling, "schedule", made!.id)]);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
