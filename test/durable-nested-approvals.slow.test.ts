// A sub-agent's waiting call on a durable session (a real Restate server), answered through the
// session's service by its path id ("parentCall/childCall"), as in process and on the session host.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { type AgentOptions, defineClientTool, defineTool, scripted, subAgentTool } from "../index.js";
import {
  type AgentServer,
  type AgentServices,
  createAgentServices,
  createSessionClient,
  registerDeployment,
  type RestateServer,
  type SessionCallError,
  type SessionClient,
  type SessionEvent,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { eventsOf, eventually, fastRetries, quietLogger, shape } from "./fixtures/durable-harness.js";

let restate: RestateServer;
let services: AgentServices;
let server: AgentServer;
let client: SessionClient;
const published: SessionEvent[] = [];
const agents = new Map<string, AgentOptions>();

beforeAll(async () => {
  restate = await startRestateServer();
  services = createAgentServices({
    agent: (sessionId) => {
      const agent = agents.get(sessionId);
      if (!agent) throw new Error(`no agent for session ${sessionId}`);
      return agent;
    },
    retryPolicy: fastRetries,
  });
  services.events$.subscribe((event) => published.push(event));
  server = await serveAgents({ services, logger: quietLogger });
  await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
  client = createSessionClient({ url: restate.ingressUrl });
});

afterAll(async () => {
  await server?.close();
  await restate?.stop();
});

/** A parent whose one call (`call_h`) runs a helper; the helper's one call (`call_w`) waits. */
function delegating(sessionId: string, childTool: "approval" | "client") {
  const written: string[] = [];
  const tool =
    childTool === "approval"
      ? defineTool({
          name: "write_file",
          description: "Writes a file",
          parameters: z.object({ path: z.string() }),
          needsApproval: true,
          execute: ({ path }) => {
            written.push(path);
            return `wrote ${path}`;
          },
        })
      : defineClientTool({
          name: "pick_color",
          description: "Asks the user to pick a color",
          parameters: z.object({ options: z.array(z.string()) }),
        });
  const args = childTool === "approval" ? { path: "a.txt" } : { options: ["red", "blue"] };
  const helper = subAgentTool({
    name: "helper",
    description: "Does the parent's work",
    tools: [tool],
    provider: scripted([
      { text: "Working.", toolCalls: [{ name: tool.name, id: "call_w", arguments: args }] },
      { text: "Helper done." },
    ]),
  });
  agents.set(sessionId, {
    provider: scripted([
      { toolCalls: [{ name: "helper", id: "call_h", arguments: { task: "do it" } }] },
      { text: "All done." },
    ]),
    tools: [helper],
  });
  return { written };
}

/** The error a rejected call throws. */
async function refusal(call: Promise<unknown>): Promise<SessionCallError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "the call should have been refused").toBeInstanceOf(Error);
  return error as SessionCallError;
}

/** Waits until the session has published that `call_h/call_w` waits (`type`). */
async function surfaced(sessionId: string, type: "approval_requested" | "tool_result_requested") {
  const event = await eventually(
    async () =>
      eventsOf(published, sessionId).find(
        (e) => e.type === type && "toolCallId" in e && e.toolCallId === "call_h/call_w",
      ),
    `the nested ${type}`,
  );
  // The event is published as the child asks, a moment before the session's state holds the waiting
  // call (Restate makes a handler's writes visible as its journal commits); answers are taken from
  // that state, as a client reading the status does.
  await eventually(async () => {
    const status = await client.status(sessionId);
    const waiting = type === "approval_requested" ? status.pendingApprovals : status.pendingToolCalls;
    return waiting.some((call) => call.toolCallId === "call_h/call_w");
  }, `the nested call waiting in the session's state`);
  return event;
}

describe("durable sessions: a sub-agent's waiting call is answered by its path", () => {
  it("a deny by path reaches the child (its call does not run); a second decision is 404", async () => {
    const sessionId = `nested-deny-${Date.now()}`;
    const { written } = delegating(sessionId, "approval");
    const run = await client.send(sessionId, "delegate it");
    expect(await surfaced(sessionId, "approval_requested")).toMatchObject({
      toolName: "write_file",
      path: ["call_h", "call_w"],
    });
    await client.deny(sessionId, "call_h/call_w", "not on main");
    const result = await client.result(run);
    expect(shape(result.messages).at(-1)).toBe('assistant "All done."');
    expect(written).toEqual([]);
    expect(eventsOf(published, sessionId)).toContainEqual(
      expect.objectContaining({ type: "approval_decided", toolCallId: "call_h/call_w", approved: false }),
    );
    const late = await refusal(client.approve(sessionId, "call_h/call_w"));
    expect(late.status).toBe(404);
  });

  it("edited arguments that fail the child tool's schema are refused (400) and the call still waits; valid ones run", async () => {
    const sessionId = `nested-edit-${Date.now()}`;
    const { written } = delegating(sessionId, "approval");
    const run = await client.send(sessionId, "delegate it");
    await surfaced(sessionId, "approval_requested");
    const bad = await refusal(client.approve(sessionId, "call_h/call_w", { args: { path: 42 } }));
    expect(bad.status).toBe(400);
    expect(bad.message).toMatch(/write_file/);
    await client.approve(sessionId, "call_h/call_w", { args: { path: "b.txt" } });
    await client.result(run);
    expect(written).toEqual(["b.txt"]);
  });

  it("a nested client-run call takes the client's result by its path", async () => {
    const sessionId = `nested-client-${Date.now()}`;
    delegating(sessionId, "client");
    const run = await client.send(sessionId, "delegate it");
    await surfaced(sessionId, "tool_result_requested");
    await client.resolveToolCall(sessionId, "call_h/call_w", "blue");
    const result = await client.result(run);
    expect(shape(result.messages).at(-1)).toBe('assistant "All done."');
    const late = await refusal(client.resolveToolCall(sessionId, "call_h/call_w", "red"));
    expect(late.status).toBe(404);
  });

  it("a path that names no waiting call is 404, as before", async () => {
    const sessionId = `nested-unknown-${Date.now()}`;
    delegating(sessionId, "approval");
    const run = await client.send(sessionId, "delegate it");
    await surfaced(sessionId, "approval_requested");
    expect((await refusal(client.approve(sessionId, "call_h/nope"))).status).toBe(404);
    expect((await refusal(client.deny(sessionId, "nope/call_w"))).status).toBe(404);
    await client.approve(sessionId, "call_h/call_w");
    await client.result(run);
  });
});
