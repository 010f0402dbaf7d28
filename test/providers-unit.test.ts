import { describe, expect, it } from "vitest";
import {
  aiSdk,
  bedrock,
  createAgent,
  gemini,
  modelPrice,
  providerFromEnv,
  scripted,
  setModelPrice,
  withCost,
} from "../index.js";
import { bedrockPriceId } from "../providers/bedrock.js";
import {
  classifyProviderError,
  isContextOverflowText,
  parseRetryAfterMs,
  redactSecrets,
  retryHintMs,
} from "../providers/internal/errors.js";
import { parseToolArguments } from "../providers/internal/tool-arguments.js";

const headers = (entries: Record<string, string>) => new Headers(entries);
const live = new AbortController().signal;

describe("retry-after parsing", () => {
  it("reads retry-after-ms first, then retry-after in seconds or as an HTTP date", () => {
    expect(parseRetryAfterMs(headers({ "retry-after-ms": "250.4", "retry-after": "9" }))).toBe(250);
    expect(parseRetryAfterMs(headers({ "retry-after": "1.5" }))).toBe(1500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfterMs(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:12 GMT" }), now)).toBe(12_000);
    expect(parseRetryAfterMs(headers({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), now)).toBe(0);
    expect(parseRetryAfterMs(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(parseRetryAfterMs(headers({}))).toBeUndefined();
  });
});

describe("retryHintMs", () => {
  it("reads the wait a rate-limit message names: OpenAI's clock form and milliseconds, Azure's seconds", () => {
    expect(retryHintMs("Please try again in 250ms.")).toBe(250);
    expect(retryHintMs("Please try again in 1.898s.")).toBe(1898);
    expect(retryHintMs("Please try again in 1m12.5s.")).toBe(72_500);
    expect(retryHintMs("Please try again in 6m0s.")).toBe(360_000);
    expect(
      retryHintMs("Requests to the ChatCompletions_Create Operation … Please retry after 20 seconds."),
    ).toBe(20_000);
    expect(retryHintMs("Please try again later.")).toBeUndefined();
  });

  it("gives a 429 without a retry-after header its retryAfterMs; a header still wins", () => {
    const error = (headers: Record<string, string>) =>
      classifyProviderError(
        {
          status: 429,
          headers: new Headers(headers),
          error: { error: { message: "Please try again in 2s.", code: "rate_limit_exceeded" } },
        },
        live,
      );
    expect(error({})).toMatchObject({ kind: "rate_limit", retryAfterMs: 2000 });
    expect(error({ "retry-after": "5" })).toMatchObject({ kind: "rate_limit", retryAfterMs: 5000 });
  });
});

describe("error classification", () => {
  it("names every provider's context-overflow text", () => {
    for (const text of [
      "prompt is too long: 208467 tokens > 200000 maximum",
      "Your input exceeds the context window of this model.",
      "the request exceeds the available context size, try increasing it",
      "This model's maximum context length is 8192 tokens.",
      "the model is loaded with context length of 4096, which is greater than the context length",
      "context_length_exceeded",
      "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again",
      "This model's maximum prompt length is 131072 but the request contains 200000 tokens.",
    ]) {
      expect(isContextOverflowText(text), text).toBe(true);
    }
    expect(isContextOverflowText("Invalid value for tools[0].name")).toBe(false);
  });

  it("maps connection failures to network, malformed events and unknown errors to api, aborts to aborted", () => {
    const reset = Object.assign(new TypeError("terminated"), {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    expect(classifyProviderError(reset, live).kind).toBe("network");
    expect(
      classifyProviderError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), live)
        .kind,
    ).toBe("network");
    expect(classifyProviderError(new SyntaxError("Unexpected token"), live).kind).toBe("api");
    expect(classifyProviderError(new RangeError("bug"), live).kind).toBe("api");
    const aborted = new AbortController();
    aborted.abort();
    expect(classifyProviderError(new Error("whatever"), aborted.signal)).toEqual({
      type: "error",
      kind: "aborted",
      message: "Request aborted",
    });
  });

  it("never lets an API key through, configured or look-alike", () => {
    expect(redactSecrets("bad key sk-ant-api03-AbCdEf123456 given", undefined)).toBe(
      "bad key [redacted] given",
    );
    expect(redactSecrets("token my-secret-token rejected", "my-secret-token")).toBe(
      "token [redacted] rejected",
    );
    const event = classifyProviderError(
      { status: 401, error: { error: { type: "authentication_error", message: "key sk-live-0123456789" } } },
      live,
    );
    expect(event).toEqual({ type: "error", kind: "auth", message: "401 key [redacted]" });
  });
});

describe("tool-call arguments", () => {
  it("parses objects, treats empty as {}, and wraps anything else under __invalid_json", () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ a: 1 });
    expect(parseToolArguments("  ")).toEqual({});
    expect(parseToolArguments("[1,2]")).toEqual({ __invalid_json: "[1,2]" });
    expect(parseToolArguments('{"a":')).toEqual({ __invalid_json: '{"a":' });
  });
});

describe("pricing", () => {
  it("prices by exact id or the longest prefix, and users can add models", () => {
    expect(modelPrice("claude-sonnet-4-5-20250929")).toMatchObject({ input: 3, output: 15 });
    expect(modelPrice("gpt-4.1-mini-2025-04-14")).toMatchObject({ input: 0.4 });
    expect(modelPrice("my-finetune-v2")).toBeUndefined();
    setModelPrice("my-finetune", { input: 10, output: 20 });
    const usage = {
      input: 1_000_000,
      output: 500_000,
      cacheRead: 1_000_000,
      cacheWrite: 0,
      totalTokens: 2_500_000,
    };
    expect(withCost(usage, "my-finetune-v2").cost).toEqual({
      input: 10,
      output: 10,
      cacheRead: 10,
      cacheWrite: 0,
      total: 30,
    });
    expect(withCost(usage, "unknown-model").cost).toBeUndefined();
  });

  it("a built-in price covers its model's snapshots, never another model whose id starts alike", () => {
    for (const [id, input] of [
      ["claude-opus-4-20250514", 15],
      ["claude-opus-4-1-20250805", 15],
      ["claude-3-7-sonnet-latest", 3],
      ["gpt-5-2025-08-07", 1.25],
      ["o3-2025-04-16", 2],
      ["gemini-3-pro-preview", 2],
      ["gemini-2.5-flash-preview-05-20", 0.3],
      ["gemini-2.0-flash-001", 0.1],
      ["claude-sonnet-4-5-20250929-v1:0", 3], // Bedrock, without its region and vendor
      ["nova-pro-v1:0", 0.8],
    ] as const) {
      expect(modelPrice(id)?.input, id).toBe(input);
    }
    // Dearer models than the key that starts their id: a budget must not price them at its price.
    for (const id of ["gpt-5-pro", "o3-pro", "gpt-5.2", "claude-opus-4-6", "gemini-2.5-flash-image"]) {
      expect(modelPrice(id), id).toBeUndefined();
    }
    expect(() =>
      createAgent({
        provider: scripted([{ text: "ok" }], { model: "gpt-5-pro" }),
        limits: { maxCostUsd: 1 },
      }),
    ).toThrow(/the model "gpt-5-pro" has no price/);
    // A key the app sets stays a prefix of every id it names.
    setModelPrice("o3", { input: 2, output: 8 });
    expect(modelPrice("o3-pro")?.input).toBe(2);
  });
});

describe("providerFromEnv", () => {
  it("picks Anthropic, then OpenAI, then an OpenAI-compatible server, in that order", () => {
    const both = providerFromEnv({ env: { ANTHROPIC_API_KEY: "sk-ant-x", OPENAI_API_KEY: "sk-o" } });
    expect(both.provider).toMatchObject({ id: "anthropic", model: "claude-sonnet-4-6" });
    expect(both.reason).not.toContain("sk-ant-x");
    expect(providerFromEnv({ env: { OPENAI_API_KEY: "sk-o" } }).provider).toMatchObject({
      id: "openai",
      model: "gpt-4.1",
    });
    const local = providerFromEnv({
      model: "llama3.1",
      env: { OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" },
    });
    expect(local.provider).toMatchObject({ id: "openai-compatible", model: "llama3.1" });
  });

  it("honours --provider and --model", () => {
    const env = { ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o" };
    expect(providerFromEnv({ provider: "openai-responses", model: "o4-mini", env }).provider).toMatchObject({
      id: "openai-responses",
      model: "o4-mini",
    });
    expect(providerFromEnv({ provider: "anthropic", model: "claude-opus-4-5", env }).provider?.model).toBe(
      "claude-opus-4-5",
    );
  });

  it("returns no provider and a plain reason when nothing fits", () => {
    expect(providerFromEnv({ env: {} })).toEqual({
      provider: undefined,
      reason:
        "No provider configured: none of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (GOOGLE_API_KEY) or OPENAI_BASE_URL is set.",
    });
    expect(providerFromEnv({ provider: "anthropic", env: { OPENAI_API_KEY: "o" } }).reason).toBe(
      "Provider anthropic needs ANTHROPIC_API_KEY.",
    );
    expect(providerFromEnv({ provider: "mistral", env: {} }).reason).toMatch(/^Unknown provider "mistral"/);
    expect(providerFromEnv({ provider: "gemini", env: {} }).reason).toBe(
      "Provider gemini needs GEMINI_API_KEY (or GOOGLE_API_KEY).",
    );
    expect(providerFromEnv({ env: { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" } }).reason).toMatch(
      /no model/,
    );
  });
});

describe("providerFromEnv: Gemini and Bedrock", () => {
  it("picks Gemini from GEMINI_API_KEY or GOOGLE_API_KEY after Anthropic and OpenAI, the key in no reason", () => {
    const key = "AIzaSyUnitTestKey0000000000000000000";
    const found = providerFromEnv({ env: { GEMINI_API_KEY: key, OPENAI_BASE_URL: "http://127.0.0.1:1/v1" } });
    expect(found.provider).toMatchObject({ id: "gemini", model: "gemini-2.5-flash" });
    expect(found.reason).toBe("Using Gemini gemini-2.5-flash (GEMINI_API_KEY).");
    expect(JSON.stringify(found)).not.toContain(key);
    expect(providerFromEnv({ env: { GOOGLE_API_KEY: key } }).provider?.id).toBe("gemini");
    expect(providerFromEnv({ env: { GOOGLE_API_KEY: key, OPENAI_API_KEY: "sk-o" } }).provider?.id).toBe(
      "openai",
    );
    expect(
      providerFromEnv({ env: { GOOGLE_GENAI_USE_VERTEXAI: "true", GOOGLE_CLOUD_PROJECT: "p" } }).provider?.id,
    ).toBe("gemini-vertex");
  });

  it("takes the provider from a <provider>:<id> model, Bedrock only when asked for", () => {
    const aws = {
      AWS_ACCESS_KEY_ID: "AKIAUNITTEST00000000",
      AWS_SECRET_ACCESS_KEY: "s3cr3t",
      AWS_REGION: "eu-west-1",
    };
    expect(providerFromEnv({ env: aws }).provider).toBeUndefined();
    const found = providerFromEnv({ model: "bedrock:amazon.nova-pro-v1:0", env: aws });
    expect(found.provider).toMatchObject({ id: "bedrock", model: "amazon.nova-pro-v1:0" });
    expect(found.reason).toBe(
      "Using Amazon Bedrock amazon.nova-pro-v1:0 (region eu-west-1, credentials from the standard AWS chain).",
    );
    expect(JSON.stringify(found)).not.toMatch(/AKIAUNITTEST|s3cr3t/);
    expect(providerFromEnv({ provider: "bedrock", env: aws }).provider?.model).toBe(
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    );
    expect(
      providerFromEnv({ model: "gemini:gemini-2.5-pro", env: { GEMINI_API_KEY: "k" } }).provider,
    ).toMatchObject({
      id: "gemini",
      model: "gemini-2.5-pro",
    });
    // A colon that is not after a provider name is part of the model id.
    expect(
      providerFromEnv({ model: "qwen3:8b", env: { OPENAI_BASE_URL: "http://127.0.0.1:1/v1" } }).provider
        ?.model,
    ).toBe("qwen3:8b");
    expect(providerFromEnv({ provider: "openai", model: "bedrock:x", env: aws }).reason).toMatch(
      /name one provider/,
    );
  });

  it("prices Gemini models and Bedrock ids (region and vendor prefix left out)", () => {
    expect(modelPrice("gemini-2.5-flash-lite-preview-09-2025")).toMatchObject({ input: 0.1, output: 0.4 });
    expect(modelPrice("gemini-2.5-flash")).toMatchObject({ input: 0.3, output: 2.5, cacheRead: 0.03 });
    expect(modelPrice(bedrockPriceId("us.anthropic.claude-sonnet-4-5-20250929-v1:0"))).toMatchObject({
      input: 3,
      output: 15,
    });
    expect(modelPrice(bedrockPriceId("amazon.nova-pro-v1:0"))).toMatchObject({ input: 0.8, output: 3.2 });
  });
});

describe("gemini, bedrock and aiSdk options", () => {
  it("are refused when malformed, with a TypeError naming the option", () => {
    expect(() => gemini({} as never)).toThrow(/gemini: model is required/);
    expect(() => gemini({ model: "gemini-2.5-flash", thinking: { level: "max" } } as never)).toThrow(
      /thinking\.level/,
    );
    expect(() => gemini({ model: "gemini-2.5-flash", baseURL: "localhost:8080" })).toThrow(/baseURL/);
    expect(() => bedrock({ model: "" })).toThrow(/bedrock: model/);
    expect(() => bedrock({ model: "amazon.nova-pro-v1:0", thinking: { budgetTokens: 0 } })).toThrow(
      /thinking/,
    );
    expect(() => aiSdk({ specificationVersion: "v1" } as never)).toThrow(/specification v2, v3 or v4/);
    const model = {
      specificationVersion: "v3",
      provider: "p",
      modelId: "m",
      doStream: async () => ({}),
    } as never;
    expect(() => aiSdk(model, { maxTokens: -1 })).toThrow(/maxTokens/);
  });
});
