import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { type AgentEvent, anthropic, createAgent, openaiCompatible, type ProviderEvent } from "../index.js";
import { createSessionClient } from "../restate.js";

// A refused connection names the address and the cause, and a refused connection at a local
// address is reported at once (nothing listens there; retrying for 17 s tells the user nothing).

/** A port on 127.0.0.1 that nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function runAgainst(provider: Parameters<typeof createAgent>[0]["provider"]) {
  const agent = createAgent({ provider });
  const retries: AgentEvent[] = [];
  agent.events$.subscribe((event) => event.type === "retry" && retries.push(event));
  const outcome = await agent.prompt("hi");
  return { outcome, retries };
}

describe("a refused connection", () => {
  it("openaiCompatible at a closed local port: the URL and ECONNREFUSED, at once, no retries", async () => {
    const port = await closedPort();
    const baseURL = `http://127.0.0.1:${port}/v1`;
    const { outcome, retries } = await runAgainst(openaiCompatible({ baseURL, model: "llama3.1:8b" }));
    expect(outcome.reason).toBe("error");
    expect(outcome.errorKind).toBe("network");
    expect(outcome.errorMessage).toBe(
      `Cannot connect to ${baseURL}: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:${port}); is the server running, on that port?`,
    );
    expect(retries).toEqual([]);
  });

  it("anthropic at a closed local port says the same", async () => {
    const port = await closedPort();
    const baseURL = `http://localhost:${port}`;
    const { outcome, retries } = await runAgainst(
      anthropic({ model: "claude-sonnet-4-6", apiKey: "sk-ant-test", baseURL }),
    );
    expect(outcome.reason).toBe("error");
    expect(outcome.errorMessage).toMatch(
      new RegExp(`^Cannot connect to ${baseURL}/?: ECONNREFUSED \\(connect ECONNREFUSED`),
    );
    expect(retries).toEqual([]);
  });

  it("the durable client at a wrong port names the ingress and the cause, not 'fetch failed'", async () => {
    const port = await closedPort();
    const client = createSessionClient({ url: `http://127.0.0.1:${port}` });
    const failure = await client.status("s-1").then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(
      new RegExp(
        `^Cannot reach Restate's ingress at http://127\\.0\\.0\\.1:${port}: ECONNREFUSED \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\); is restate-server running`,
      ),
    );
    expect(failure?.cause).toBeInstanceOf(Error);
  });
});

describe("a provider that says a transient failure is not worth retrying", () => {
  it("retryable: false ends the call at once; the same failure without it is retried", async () => {
    const failing = (retryable: boolean) => ({
      id: "custom",
      model: "m",
      async *stream(): AsyncGenerator<ProviderEvent> {
        yield {
          type: "error",
          kind: "network",
          message: "down",
          ...(retryable ? {} : { retryable: false as const }),
        };
      },
    });
    const once = createAgent({
      provider: failing(false),
      retry: { baseDelayMs: 1, maxDelayMs: 1, maxRetries: 2 },
    });
    const onceRetries: AgentEvent[] = [];
    once.events$.subscribe((event) => event.type === "retry" && onceRetries.push(event));
    expect((await once.prompt("hi")).reason).toBe("error");
    expect(onceRetries).toEqual([]);

    const retried = createAgent({
      provider: failing(true),
      retry: { baseDelayMs: 1, maxDelayMs: 1, maxRetries: 2 },
    });
    const retriedEvents: AgentEvent[] = [];
    retried.events$.subscribe((event) => event.type === "retry" && retriedEvents.push(event));
    expect((await retried.prompt("hi")).reason).toBe("error");
    expect(retriedEvents).toHaveLength(2);
  });
});
