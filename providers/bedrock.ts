import type { Usage } from "../core/messages.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { checkHttpUrl, checkInteger, checkString, checkType, refuseValue } from "../core/option-values.js";
import { toBedrockRequest } from "./internal/bedrock-request.js";
import {
  type BedrockStreamEvent,
  bedrockStreamEvents,
  classifyBedrockError,
} from "./internal/bedrock-stream.js";
import { loadOptionalPeer } from "./internal/optional-peer.js";
import { withCost } from "./pricing.js";
import type { Provider, ProviderEvent, ProviderRequest } from "./provider.js";
import { withOutputTool } from "./internal/structured-output.js";

/** Options of {@link bedrock}. */
export interface BedrockOptions {
  /**
   * A Bedrock model id or inference profile, e.g. `us.anthropic.claude-sonnet-4-5-20250929-v1:0`
   * or `amazon.nova-pro-v1:0`.
   */
  model: string;
  /** The AWS region. Default: the SDK's (`AWS_REGION`, the profile's region, …). */
  region?: string;
  /**
   * Credentials (`{ accessKeyId, secretAccessKey, sessionToken? }` or a provider function).
   * Default: the standard AWS chain (environment, shared config and SSO profiles, web identity,
   * container and instance roles). Kept inside the SDK client only, never logged.
   */
  credentials?: unknown;
  /** A named profile of the shared AWS config files. */
  profile?: string;
  /** Another endpoint for the runtime API (a VPC endpoint, a proxy, a test server). */
  baseURL?: string;
  /**
   * The HTTP handler the AWS SDK client sends with (its `requestHandler` option). The SDK's
   * default speaks HTTP/2; for an endpoint that speaks only HTTP/1.1 (many proxies and gateways)
   * pass `new NodeHttpHandler()` from `@smithy/node-http-handler`.
   *
   * @example
   * ```ts
   * import { NodeHttpHandler } from "@smithy/node-http-handler";
   * bedrock({ model, baseURL: "http://proxy.internal:8080", requestHandler: new NodeHttpHandler() });
   * ```
   */
  requestHandler?: unknown;
  /** Output token cap per model call (`inferenceConfig.maxTokens`). Default 8192 (16384 with thinking). */
  maxTokens?: number;
  /** Extended thinking for the Claude models on Bedrock: a token budget (below `maxTokens`). */
  thinking?: { budgetTokens: number };
  /**
   * Cache points after the system prompt, the tools and the last message. Default: on for the
   * model families that support prompt caching on Bedrock (Claude, Nova), off otherwise.
   */
  cache?: boolean;
  /**
   * Whether a call the agent's `promptCache` policy asks to keep long gives its cache points the
   * 1-hour lifetime (`ttl: "1h"`). Default: on for the Claude models, off otherwise.
   */
  longCache?: boolean;
}

const BEDROCK_KEYS: OptionKeys<BedrockOptions> = {
  model: true,
  region: true,
  credentials: true,
  profile: true,
  baseURL: true,
  requestHandler: true,
  maxTokens: true,
  thinking: true,
  cache: true,
  longCache: true,
};

type BedrockModule = typeof import("@aws-sdk/client-bedrock-runtime");
type BedrockClient = InstanceType<BedrockModule["BedrockRuntimeClient"]>;

/** The id the price table knows: without the inference profile's region and the vendor prefix. */
export function bedrockPriceId(model: string): string {
  return model.replace(/^(?:us|eu|apac|au|jp|ca|us-gov|global)\./, "").replace(/^[a-z0-9-]+\./, "");
}

/**
 * A provider for Amazon Bedrock's Converse API (`ConverseStream`) over the official
 * `@aws-sdk/client-bedrock-runtime` (an optional peer dependency: `npm install
 * @aws-sdk/client-bedrock-runtime`): text, reasoning (signed, sent back), tool use and usage with
 * cache reads and writes, for every model Converse serves. Credentials come from the standard AWS
 * chain unless given. The SDK never retries (the agent does); every failure ends the stream with
 * one `error` event.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider: bedrock({ model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", region: "us-east-1" }),
 *   tools: [readTool],
 * });
 * ```
 */
export function bedrock(options: BedrockOptions): Provider {
  checkOptionKeys("bedrock", options, BEDROCK_KEYS);
  checkBedrockOptions(options);
  const { model } = options;
  const cache = options.cache ?? /anthropic\.claude|amazon\.nova/.test(model);
  const longCache = options.longCache ?? /anthropic\.claude/.test(model);
  const maxTokens = options.maxTokens ?? (options.thinking ? 16384 : 8192);
  const priceId = bedrockPriceId(model);
  const finish = (usage: Usage | undefined) => (usage ? withCost(usage, priceId) : undefined);
  // The client (and the credentials inside it) lives only in this closure, made on the first call.
  let client: Promise<{ sdk: BedrockModule; client: BedrockClient }> | undefined;
  const getClient = () =>
    (client ??= loadOptionalPeer<BedrockModule>("@aws-sdk/client-bedrock-runtime").then((sdk) => ({
      sdk,
      client: new sdk.BedrockRuntimeClient({
        ...(options.region ? { region: options.region } : {}),
        ...(options.credentials ? { credentials: options.credentials as never } : {}),
        ...(options.profile ? { profile: options.profile } : {}),
        ...(options.baseURL ? { endpoint: options.baseURL } : {}),
        ...(options.requestHandler ? { requestHandler: options.requestHandler as never } : {}),
        maxAttempts: 1,
      }),
    })));

  async function* stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    let endpoint = options.baseURL;
    try {
      const { sdk, client: c } = await getClient();
      endpoint ??= await defaultEndpoint(c);
      const { messages, system, toolConfig } = toBedrockRequest(request, { cache, longCache });
      const response = await c.send(
        new sdk.ConverseStreamCommand({
          modelId: model,
          messages: messages as never,
          ...(system ? { system: system as never } : {}),
          ...(toolConfig ? { toolConfig: toolConfig as never } : {}),
          inferenceConfig: { maxTokens },
          ...(options.thinking
            ? {
                additionalModelRequestFields: {
                  thinking: { type: "enabled", budget_tokens: options.thinking.budgetTokens },
                },
              }
            : {}),
        }),
        { abortSignal: signal },
      );
      if (!response.stream) throw new Error("Bedrock answered without a stream");
      yield* bedrockStreamEvents(response.stream as AsyncIterable<BedrockStreamEvent>, signal, finish);
    } catch (error) {
      yield classifyBedrockError(error, signal, undefined, endpoint);
    }
  }

  // Converse has no structured output that combines with tools: the output is a tool (docs/output.md).
  return {
    id: "bedrock",
    model,
    maxOutputTokens: maxTokens,
    stream: (request, signal) => withOutputTool(request, (forced) => stream(forced, signal)),
  };
}

/** The regional endpoint the SDK calls when no `baseURL` is given, named in a connection failure. */
async function defaultEndpoint(client: BedrockClient): Promise<string | undefined> {
  try {
    return `https://bedrock-runtime.${await client.config.region()}.amazonaws.com`;
  } catch {
    return undefined; // no region configured: the call itself will say so
  }
}

function checkBedrockOptions(options: BedrockOptions): void {
  const where = "bedrock";
  checkString(where, "model", options.model, {
    required: true,
    accepts: 'a Bedrock model id or inference profile, e.g. "us.anthropic.claude-sonnet-4-5-20250929-v1:0"',
  });
  checkString(where, "region", options.region);
  checkString(where, "profile", options.profile);
  checkHttpUrl(where, "baseURL", options.baseURL, "https://bedrock-runtime.us-east-1.amazonaws.com");
  checkInteger(where, "maxTokens", options.maxTokens, 1);
  checkType(where, "cache", options.cache, "boolean");
  checkType(where, "longCache", options.longCache, "boolean");
  const handler = options.requestHandler as { handle?: unknown } | undefined;
  if (handler !== undefined && (handler === null || typeof handler.handle !== "function"))
    refuseValue(
      where,
      "requestHandler",
      "an AWS SDK request handler (an object with a handle() method), e.g. new NodeHttpHandler()",
      options.requestHandler,
    );
  const { credentials, thinking } = options;
  if (
    credentials !== undefined &&
    typeof credentials !== "function" &&
    (credentials === null || typeof credentials !== "object")
  )
    refuseValue(
      where,
      "credentials",
      "{ accessKeyId, secretAccessKey, sessionToken? } or a provider function",
      credentials,
    );
  if (thinking !== undefined) {
    const budget = (thinking as { budgetTokens?: unknown } | null)?.budgetTokens;
    if (typeof budget !== "number" || !Number.isInteger(budget) || budget < 1)
      refuseValue(where, "thinking", "{ budgetTokens: n } with n a whole number ≥ 1", thinking);
  }
}
