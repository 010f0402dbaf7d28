// A sub-agent's waiting call answered by a durable handle straight from its live event (a real
// Restate server). The service publishes the child's ask on the live channel as it asks; the
// session's state holds the waiting call once Restate has the run's journal entries, a moment
// later. Here that moment is made long and certain: the run's journal reaches Restate 250 ms late
// (the endpoint's output for `prompt` is held back, as a loaded runtime or network holds it).
import http2 from "node:http2";
import { createEndpointHandler } from "@restatedev/restate-sdk";
import { filter, firstValueFrom, lastValueFrom } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { AgentCallError, type AgentOptions, defineTool, scripted, subAgentTool } from "../index.js";
import {
  type AgentServer,
  createSessionClient,
  durableHandle,
  registerDeployment,
  type RestateServer,
  type SessionClient,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { quietLogger, servicesPerSession } from "./fixtures/durable-harness.js";

const JOURNAL_LAG_MS = 250;

let restate: RestateServer;
let server: AgentServer;
let endpoint: ReturnType<typeof laggingEndpoint>;
let client: SessionClient;
const agents = new Map<string, AgentOptions>();

/**
 * The services' endpoint with the output of every `prompt` invocation (its journal entries) sent
 * `lagMs` late, in order; the SDK is told each write went out at once, so the run goes on as
 * before. Reads and answers (shared handlers) are not held back.
 */
function laggingEndpoint(handler: ReturnType<typeof createEndpointHandler>, lagMs: number) {
  const server = http2.createServer((request, response) => {
    if (request.url.includes("/AgentSession/prompt")) {
      let chain = Promise.resolve();
      const later = (send: () => void) => {
        const at = Date.now() + lagMs;
        chain = chain
          .then(() => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now()))))
          .then(send);
      };
      const write = response.write.bind(response) as (chunk: unknown) => boolean;
      const end = response.end.bind(response) as () => void;
      Object.assign(response, {
        write(chunk: unknown, done?: (error?: Error | null) => void) {
          later(() => void write(chunk));
          done?.();
          return true;
        },
        end(done?: () => void) {
          later(() => end());
          done?.();
          return response;
        },
      });
    }
    handler(request, response);
  });
  // Closed with the test: the runs left waiting hold their streams open.
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return Object.assign(server, {
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  });
}

beforeAll(async () => {
  restate = await startRestateServer();
  const services = servicesPerSession(agents);
  // serveAgents for its live channel; Restate drives the runs through the lagging endpoint.
  server = await serveAgents({ services, logger: quietLogger });
  endpoint = laggingEndpoint(
    createEndpointHandler({ services: services.services, logger: quietLogger }),
    JOURNAL_LAG_MS,
  );
  await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  const { port } = endpoint.address() as { port: number };
  await registerDeployment({ adminUrl: restate.adminUrl, uri: `http://127.0.0.1:${port}` });
  client = createSessionClient({ url: restate.ingressUrl });
});

afterAll(async () => {
  await endpoint?.stop();
  await server?.close();
  await restate?.stop();
});

/** A parent whose one call (`call_h`) runs a helper; the helper's one call (`call_w`) asks first. */
function delegating(sessionId: string) {
  const written: string[] = [];
  const write = defineTool({
    name: "write_file",
    description: "Writes a file",
    parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: ({ path }) => {
      written.push(path);
      return `wrote ${path}`;
    },
  });
  const helper = subAgentTool({
    name: "helper",
    description: "Does the parent's work",
    tools: [write],
    provider: scripted([
      { toolCalls: [{ name: "write_file", id: "call_w", arguments: { path: "a.txt" } }] },
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

/** Starts a run on a handle following the live channel; resolves at the child's ask. */
async function asked(sessionId: string) {
  const handle = durableHandle(client, sessionId, { pollIntervalMs: 10_000, live: [server.liveUrl!] });
  const { runId } = await handle.run({ role: "user", content: "delegate it", timestamp: Date.now() });
  const events = handle.eventsSince(runId, 0);
  const ask = await firstValueFrom(events.pipe(filter(({ event }) => event.type === "approval_requested")));
  return { handle, events, ask: ask.event };
}

describe("durable handle: answering a nested call from its live event", () => {
  it("is taken although the session's state holds the call a moment later (the handle retries its 404 briefly)", async () => {
    for (let round = 0; round < 2; round++) {
      const sessionId = `live-answer-${Date.now()}-${round}`;
      const { written } = delegating(sessionId);
      const { handle, events, ask } = await asked(sessionId);
      expect(ask).toMatchObject({ toolCallId: "call_h/call_w", toolName: "write_file" });
      // Right away, as a UI answers what it was shown.
      await handle.answer([{ toolCallId: "call_h/call_w", approve: {} }]);
      expect((await lastValueFrom(events)).event).toMatchObject({ type: "agent_end", reason: "stop" });
      expect(written).toEqual(["a.txt"]);
    }
  });

  it("a call no event announced is refused at once (404), and the waiting call is still answered", async () => {
    const sessionId = `live-answer-unknown-${Date.now()}`;
    const { written } = delegating(sessionId);
    const { handle, events } = await asked(sessionId);
    const started = Date.now();
    const error = await handle.answer([{ toolCallId: "call_h/nope", approve: {} }]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentCallError);
    expect((error as AgentCallError).status).toBe(404);
    // No retry: well under the retries' bound (about 2 s).
    expect(Date.now() - started).toBeLessThan(1_000);
    await handle.answer([{ toolCallId: "call_h/call_w", deny: {} }]);
    expect((await lastValueFrom(events)).event).toMatchObject({ type: "agent_end" });
    expect(written).toEqual([]);
  });
});
