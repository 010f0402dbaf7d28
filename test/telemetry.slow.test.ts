import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { anthropic, createAgent, defineTool, openaiCompatible } from "../index.js";
import { cleanEnv, removeDir, runCliProcess, TEST_SCRIPT, tempDir } from "./fixtures/cli-harness.js";
import { createTestTracing, everyValue } from "./fixtures/otel.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicHttpError, anthropicMessage, chatStream } from "./fixtures/provider-wire.js";

const readFile = defineTool({
  name: "read_file",
  description: "Read a text file",
  parameters: z.object({ path: z.string() }),
  readOnly: true,
  execute: ({ path }) => `contents of ${path}`,
});

describe("no API key in any span, over the real SDKs", () => {
  let server: ProviderFixtureServer;
  beforeAll(async () => {
    server = await startProviderServer();
  });
  afterAll(() => server.close());

  const cases = [
    {
      name: "anthropic",
      key: "sk-ant-telemetry-secret-123",
      provider: (key: string) => anthropic({ model: "claude-haiku-4-5", apiKey: key, baseURL: server.url }),
      toolCall: () => ({
        type: "sse" as const,
        frames: anthropicMessage({
          blocks: [{ type: "tool_use", id: "toolu_1", name: "read_file", json: ['{"path":"a.txt"}'] }],
        }),
      }),
      text: () => ({
        type: "sse" as const,
        frames: anthropicMessage({ blocks: [{ type: "text", text: ["Done."] }] }),
      }),
      // The API echoes the key in its error, as some servers do.
      unauthorized: (key: string) =>
        anthropicHttpError(401, "authentication_error", `invalid x-api-key ${key}`),
    },
    {
      name: "openai-compatible",
      key: "local-telemetry-token-456",
      provider: (key: string) =>
        openaiCompatible({ baseURL: server.openaiURL, model: "qwen3-8b", apiKey: key }),
      toolCall: () => ({
        type: "sse" as const,
        frames: chatStream({
          toolCalls: [{ index: 0, id: "call_1", name: "read_file", json: ['{"path":"a.txt"}'] }],
        }),
      }),
      text: () => ({ type: "sse" as const, frames: chatStream({ text: ["Done."] }) }),
      unauthorized: undefined,
    },
  ];

  it.each(cases)(
    "$name: a run and a refused key leave no trace of the key, content recording on",
    async (api) => {
      const tracing = createTestTracing();
      server.reply(api.toolCall(), api.text());
      if (api.unauthorized) server.reply(api.unauthorized(api.key));
      const agent = createAgent({
        provider: api.provider(api.key),
        systemPrompt: "You read files.",
        tools: [readFile],
        telemetry: { tracerProvider: tracing.provider, recordContent: true },
      });
      await agent.prompt("Read a.txt");
      if (api.unauthorized) await agent.prompt("Again");
      const spans = tracing.spans();
      expect(spans.map((s) => s.name)).toContain("execute_tool read_file");
      expect(everyValue(spans)).toContain("contents of a.txt"); // content is recorded...
      expect(everyValue(spans)).not.toContain(api.key); // ...the key never
    },
  );
});

/** A collector stand-in on 127.0.0.1: keeps the raw bodies the OTLP/HTTP exporter posts. */
function startReceiver(): Promise<{
  url: string;
  bodies: { path: string; type: string; body: string }[];
  close(): Promise<void>;
}> {
  const bodies: { path: string; type: string; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      bodies.push({
        path: req.url ?? "",
        type: String(req.headers["content-type"]),
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        bodies,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    }),
  );
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
}

const valueOf = (value: OtlpValue): unknown =>
  value.arrayValue
    ? (value.arrayValue.values ?? []).map(valueOf)
    : (value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue)));

const attributesOf = (span: { attributes?: { key: string; value: OtlpValue }[] }) =>
  Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, valueOf(value)]));

describe("agent-machine exports traces over OTLP/HTTP", () => {
  it("when OTEL_EXPORTER_OTLP_ENDPOINT is set: the run's span tree reaches the collector, without the API key", async () => {
    const receiver = await startReceiver();
    const dir = tempDir();
    try {
      const key = "sk-ant-cli-never-exported-789";
      const result = await runCliProcess(
        ["--print", "--permission-mode", "bypass", "--no-sandbox", "run: echo traced"],
        {
          cwd: dir,
          env: cleanEnv({
            AGENT_MACHINE_SCRIPT: TEST_SCRIPT,
            ANTHROPIC_API_KEY: key,
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
            OTEL_SERVICE_NAME: "my-agent-service",
          }),
        },
      );
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^tool results: traced/);

      expect(receiver.bodies.length).toBeGreaterThan(0);
      for (const body of receiver.bodies) {
        expect(body.path).toBe("/v1/traces");
        expect(body.type).toMatch(/application\/json/);
        expect(body.body).not.toContain(key);
      }
      const payloads = receiver.bodies.map((b) => JSON.parse(b.body));
      const resources = payloads.flatMap((p) => p.resourceSpans);
      expect(attributesOf(resources[0].resource)["service.name"]).toBe("my-agent-service");
      const spans: OtlpSpan[] = resources.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans));

      // The tree, from the ids the exporter sent: the run, and below it the model calls and the command.
      const run = spans.find((s) => s.name === "invoke_agent agent-machine")!;
      expect(run.parentSpanId ?? "").toBe("");
      const below = spans.filter((s) => s !== run);
      expect(below.map((s) => s.name).sort()).toEqual([
        "chat cli-script.mjs",
        "chat cli-script.mjs",
        "execute_tool bash",
      ]);
      for (const span of below) {
        expect(span.parentSpanId).toBe(run.spanId);
        expect(span.traceId).toBe(run.traceId);
      }
      expect(attributesOf(run)).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "agent-machine",
        "agent_machine.end_reason": "stop",
      });
      expect(String(attributesOf(run)["gen_ai.conversation.id"])).toMatch(/\d/);
      const tool = spans.find((s) => s.name === "execute_tool bash")!;
      expect(attributesOf(tool)).toMatchObject({
        "gen_ai.tool.name": "bash",
        "gen_ai.operation.name": "execute_tool",
      });
      expect(attributesOf(tool)["gen_ai.tool.call.id"]).toEqual(expect.any(String));
      // Content is off by default: the command's output is not in the spans.
      expect(JSON.stringify(spans)).not.toContain("traced");
    } finally {
      removeDir(dir);
      await receiver.close();
    }
  });
});
