import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import {
  type AgentEvent,
  aiSdk,
  anthropic,
  bedrock,
  createAgent,
  gemini,
  openai,
  openaiCompatible,
  type ProviderEvent,
  type RetryPolicy,
} from "../index.js";
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

async function runAgainst(provider: Parameters<typeof createAgent>[0]["provider"], retry?: RetryPolicy) {
  const agent = createAgent({ provider, ...(retry && { retry }) });
  const retries: AgentEvent[] = [];
  agent.events$.subscribe((event) => event.type === "retry" && retries.push(event));
  const started = Date.now();
  const outcome = await agent.prompt("hi");
  return { outcome, retries, ms: Date.now() - started };
}

/** Every provider, pointed at `base` (`http://127.0.0.1:<port>`), with the address its error should name. */
function everyProvider(base: string) {
  const aws = { accessKeyId: "AKIAFIXTURE000000001", secretAccessKey: "fixtureSecret/0123456789" };
  return [
    {
      name: "openai",
      provider: openai({ model: "gpt-4.1", apiKey: "sk-test", baseURL: `${base}/v1` }),
      where: `${base}/v1`,
    },
    {
      name: "openai responses",
      provider: openai({ model: "gpt-4.1", api: "responses", apiKey: "sk-test", baseURL: `${base}/v1` }),
      where: `${base}/v1`,
    },
    {
      name: "openaiCompatible",
      provider: openaiCompatible({ baseURL: `${base}/v1`, model: "m" }),
      where: `${base}/v1`,
    },
    {
      name: "anthropic",
      provider: anthropic({ model: "claude-sonnet-4-6", apiKey: "sk-ant-test", baseURL: base }),
      where: base,
    },
    {
      name: "gemini",
      provider: gemini({ model: "gemini-2.5-flash", apiKey: "test-key", baseURL: base }),
      where: base,
    },
    {
      name: "bedrock",
      provider: bedrock({
        model: "amazon.nova-pro-v1:0",
        region: "us-east-1",
        credentials: aws,
        baseURL: base,
      }),
      where: base,
    },
    {
      name: "aiSdk",
      provider: aiSdk(createOpenAICompatible({ name: "local", baseURL: `${base}/v1` }).chatModel("m")),
      where: `${base}/v1/chat/completions`, // the SDK names the endpoint it called
    },
  ];
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

describe("every provider says where and why a connection failed, quickly", () => {
  it("a closed local port: the address and ECONNREFUSED in the error, no retry, within seconds", async () => {
    const port = await closedPort();
    for (const { name, provider, where } of everyProvider(`http://127.0.0.1:${port}`)) {
      const { outcome, retries, ms } = await runAgainst(provider);
      expect({ name, reason: outcome.reason, errorKind: outcome.errorKind }).toEqual({
        name,
        reason: "error",
        errorKind: "network",
      });
      expect(outcome.errorMessage, name).toContain(`Cannot connect to ${where}`);
      expect(outcome.errorMessage, name).toContain("ECONNREFUSED");
      expect(retries, name).toEqual([]);
      expect(ms, name).toBeLessThan(5_000);
    }
  });

  it("retries a refused connection only when asked to (retry.maxConnectRetries), each retry naming address and cause", async () => {
    const port = await closedPort();
    const baseURL = `http://127.0.0.1:${port}/v1`;
    const { outcome, retries } = await runAgainst(openaiCompatible({ baseURL, model: "m" }), {
      maxConnectRetries: 2,
      baseDelayMs: 1,
      jitter: 0,
    });
    expect(retries).toHaveLength(2);
    for (const retry of retries) {
      expect(retry).toMatchObject({
        type: "retry",
        error: expect.stringContaining(`Cannot connect to ${baseURL}: ECONNREFUSED`),
      });
    }
    expect(outcome.errorMessage).toContain(`Cannot connect to ${baseURL}: ECONNREFUSED`);
  });

  it("a port fetch refuses (1): says so, no retry", async () => {
    const { outcome, retries, ms } = await runAgainst(
      openaiCompatible({ baseURL: "http://127.0.0.1:1/v1", model: "m" }),
    );
    expect(outcome.errorKind).toBe("network");
    expect(outcome.errorMessage).toMatch(
      /^Cannot connect to http:\/\/127\.0\.0\.1:1\/v1: fetch refuses its port \(a "bad port"/,
    );
    expect(retries).toEqual([]);
    expect(ms).toBeLessThan(5_000);
  });

  it("a host name DNS does not know: the address and ENOTFOUND, no retry", async () => {
    const baseURL = "http://no-such-host.invalid/v1";
    const { outcome, retries } = await runAgainst(openaiCompatible({ baseURL, model: "m" }));
    expect(outcome.errorKind).toBe("network");
    expect(outcome.errorMessage).toMatch(
      /^Cannot connect to http:\/\/no-such-host\.invalid\/v1: (ENOTFOUND|EAI_AGAIN)/,
    );
    if (outcome.errorMessage?.includes("ENOTFOUND")) expect(retries).toEqual([]);
  });

  it("https:// to a plain HTTP server: the TLS failure named, with the fix, no retry", async () => {
    const server = createHttpServer((_req, res) => res.end("plain"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      for (const { name, provider, where } of everyProvider(`https://127.0.0.1:${port}`).filter((p) =>
        ["openaiCompatible", "anthropic", "gemini", "aiSdk"].includes(p.name),
      )) {
        const { outcome, retries } = await runAgainst(provider);
        expect(outcome.errorKind, name).toBe("network");
        expect(outcome.errorMessage, name).toContain(
          `TLS handshake with ${where} failed: ERR_SSL_WRONG_VERSION_NUMBER (wrong version number)`,
        );
        expect(outcome.errorMessage, name).toContain("use http://");
        expect(retries, name).toEqual([]);
      }
    } finally {
      server.close();
    }
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
