import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { type ProviderRequest, scripted, textOf } from "../index.js";
import {
  type AgentServer,
  createAgentServices,
  createSessionClient,
  registerDeployment,
  type RestateServer,
  type SessionClient,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { fastRetries, quietLogger } from "./fixtures/durable-harness.js";

// A durable session with an output schema, against a real Restate server on 127.0.0.1: the run's
// object comes back from the journaled run (prompt and result) and stays in the session's lastRun.

const Triage = z.object({ severity: z.enum(["low", "high"]), summary: z.string() });

/** Answers from what it was sent, as the durable tests' model does: the first answer is invalid. */
const model = () =>
  scripted((request: ProviderRequest) => {
    const corrected = request.messages.some(
      (m) => m.role === "user" && textOf(m.content).includes("not accepted"),
    );
    return { text: corrected ? '{"severity":"high","summary":"red build"}' : '{"severity":"urgent"}' };
  });

let restate: RestateServer;
let server: AgentServer;
let client: SessionClient;

beforeAll(async () => {
  restate = await startRestateServer();
  const services = createAgentServices({
    agent: () => ({ provider: model(), output: Triage }),
    retryPolicy: fastRetries,
  });
  server = await serveAgents({ services, logger: quietLogger });
  await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
  client = createSessionClient({ url: restate.ingressUrl });
});

afterAll(async () => {
  await server?.close();
  await restate?.stop();
});

describe("durable sessions with an output schema", () => {
  it("journal the validated object with the run's end: prompt, result and status answer it", async () => {
    const result = await client.prompt("typed", "Triage the build");
    expect(result.reason).toBe("stop");
    expect(result.output).toEqual({ severity: "high", summary: "red build" });
    const handle = await client.send("typed", "Again");
    expect((await client.result(handle)).output).toEqual({ severity: "high", summary: "red build" });
    const status = await client.status("typed");
    expect(status.lastRun?.output).toEqual({ severity: "high", summary: "red build" });
    // The correction is in the stored transcript, after the invalid answer.
    const transcript = await client.transcript("typed");
    expect(transcript.some((m) => m.role === "custom" && m.customType === "output_correction")).toBe(true);
  });
});
