import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createH2cServer, type Http2ServerRequest } from "node:http2";
import type { AddressInfo, Socket } from "node:net";

/** One server-sent event: `event:` line (optional) and `data:` (objects are JSON-encoded). */
export interface SSEFrame {
  event?: string;
  data: unknown;
}

/** What the server answers one request with. */
export type FixtureReply =
  | {
      type: "sse";
      frames: SSEFrame[];
      status?: number;
      headers?: Record<string, string>;
      /** Cut the connection (TCP reset) after writing this many frames. */
      resetAfter?: number;
      /** Write this many frames, then send nothing more and keep the connection open. */
      stallAfter?: number;
    }
  | { type: "json"; status: number; body?: unknown; headers?: Record<string, string> }
  /** A response body replayed byte for byte (a recorded stream). */
  | { type: "raw"; status?: number; headers?: Record<string, string>; body: string }
  /**
   * A streamed body written piece by piece, each piece exactly as given (an SSE stream with the
   * API's own line endings, or binary frames such as AWS event-stream messages).
   */
  | {
      type: "stream";
      chunks: (string | Uint8Array)[];
      status?: number;
      headers?: Record<string, string>;
      /** Cut the connection (TCP reset) after writing this many chunks. */
      resetAfter?: number;
      /** Write this many chunks, then send nothing more and keep the connection open. */
      stallAfter?: number;
    }
  /** Close the connection without any response. */
  | { type: "reset" }
  /** Never answer (until the client gives up or the server closes). */
  | { type: "hang" };

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string without `?` (`alt=sse`), empty when none. */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** For `/v1/messages`: usage computed the way Anthropic's prompt cache bills it. */
  anthropicUsage?: AnthropicCacheUsage;
}

export type ReplySource = FixtureReply | ((request: RecordedRequest) => FixtureReply);

export interface ProviderFixtureServer {
  /** `http://127.0.0.1:<port>`: the Anthropic SDK's `baseURL`. */
  readonly url: string;
  /** `<url>/v1`: the OpenAI SDK's `baseURL`. */
  readonly openaiURL: string;
  readonly requests: RecordedRequest[];
  /** Queues replies; each request takes the next one. */
  reply(...replies: ReplySource[]): void;
  /** Answers requests when the queue is empty. */
  fallback: ((request: RecordedRequest) => FixtureReply) | undefined;
  /** Replies still queued. */
  pending(): number;
  close(): Promise<void>;
}

/** Usage as Anthropic reports it, computed from the request body and the cache's state. */
export interface AnthropicCacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** The cache writes per lifetime, as the API reports them beside the total. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Token estimate of the fixture server: one token per 4 characters of JSON. */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 4);
}

function withoutCacheControl(value: unknown): unknown {
  if (!value || typeof value !== "object") return value;
  const { cache_control: _ignored, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** Anthropic's cache lifetimes: `cache_control.ttl` "1h", else 5 minutes. */
const ANTHROPIC_TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;

/**
 * Anthropic's prompt cache, modelled: the prompt is the sequence tools → system → message blocks.
 * Every block marked with `cache_control` is a breakpoint; the longest breakpoint prefix that an
 * earlier request wrote, and that has not expired, is billed as cache read (which refreshes its
 * lifetime), the rest up to the last breakpoint as cache write (and stored for the breakpoint's
 * `ttl`: "1h", else 5 minutes), everything after it as plain input. Prefixes shorter than
 * `minTokens` are not cached. `now` is the clock of the lifetimes (a test's fake clock).
 */
export class AnthropicPromptCache {
  /** Each written prefix's hash, and when it expires. */
  private readonly written = new Map<string, number>();
  constructor(
    private readonly minTokens = 0,
    private readonly now: () => number = Date.now,
  ) {}

  bill(body: any): AnthropicCacheUsage {
    const blocks: { json: unknown; ttl: keyof typeof ANTHROPIC_TTL_MS | undefined }[] = [];
    const push = (json: unknown, block: any) =>
      blocks.push({
        json,
        ttl: block.cache_control ? (block.cache_control.ttl === "1h" ? "1h" : "5m") : undefined,
      });
    for (const tool of body.tools ?? []) push(withoutCacheControl(tool), tool);
    const system =
      typeof body.system === "string" ? [{ type: "text", text: body.system }] : (body.system ?? []);
    for (const block of system) push(withoutCacheControl(block), block);
    for (const message of body.messages ?? []) {
      const content =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
      content.forEach((block: any, i: number) => {
        const json =
          i === 0 ? { role: message.role, block: withoutCacheControl(block) } : withoutCacheControl(block);
        push(json, block);
      });
    }
    const now = this.now();
    let hash = "";
    let tokens = 0;
    let readTokens = 0;
    const breakpoints: { hash: string; tokens: number; ttl: keyof typeof ANTHROPIC_TTL_MS }[] = [];
    for (const block of blocks) {
      hash = createHash("sha256").update(hash).update(JSON.stringify(block.json)).digest("hex");
      tokens += estimateTokens(block.json);
      if (!block.ttl || tokens < this.minTokens) continue;
      breakpoints.push({ hash, tokens, ttl: block.ttl });
      const expires = this.written.get(hash);
      if (expires !== undefined && expires > now) readTokens = tokens;
    }
    const written = { "5m": 0, "1h": 0 };
    let before = 0;
    for (const point of breakpoints) {
      this.written.set(
        point.hash,
        Math.max(this.written.get(point.hash) ?? 0, now + ANTHROPIC_TTL_MS[point.ttl]),
      );
      // The segment up to this breakpoint, past what was read, is written with its lifetime.
      written[point.ttl] += Math.max(0, point.tokens - Math.max(before, readTokens));
      before = point.tokens;
    }
    const writeTokens = written["5m"] + written["1h"];
    return {
      input_tokens: tokens - readTokens - writeTokens,
      cache_read_input_tokens: readTokens,
      cache_creation_input_tokens: writeTokens,
      cache_creation: { ephemeral_5m_input_tokens: written["5m"], ephemeral_1h_input_tokens: written["1h"] },
    };
  }
}

/** Placeholder for `message_start` usage: the server fills in {@link AnthropicPromptCache}'s bill. */
export const AUTO_USAGE = "auto";

function encodeFrame(frame: SSEFrame): string {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`;
}

function fillAutoUsage(frame: SSEFrame, usage: AnthropicCacheUsage | undefined): SSEFrame {
  const data = frame.data as any;
  if (!usage || data?.type !== "message_start" || data.message?.usage?.input_tokens !== AUTO_USAGE)
    return frame;
  return {
    ...frame,
    data: { ...data, message: { ...data.message, usage: { ...data.message.usage, ...usage } } },
  };
}

async function readBody(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Starts a fake model API on 127.0.0.1 (random port) that answers Anthropic's `/v1/messages` and
 * OpenAI's `/v1/chat/completions` and `/v1/responses` with queued replies — SSE streams in each
 * API's wire format, HTTP errors, cut connections, stalls — and records every request body.
 *
 * @example
 * ```ts
 * const server = await startProviderServer();
 * server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["Hi"] }] }) });
 * const provider = anthropic({ model: "claude-haiku-4-5", apiKey: "test", baseURL: server.url });
 * ```
 */
export async function startProviderServer(
  options: {
    cacheMinTokens?: number;
    /**
     * Serve HTTP/2 without TLS (h2c, prior knowledge) instead of HTTP/1.1: what the AWS SDK's
     * Bedrock runtime client speaks. A reset then ends the whole HTTP/2 session.
     */
    http2?: boolean;
    /** The clock of the Anthropic prompt cache's lifetimes (a test's fake clock). Default `Date.now`. */
    now?: () => number;
  } = {},
): Promise<ProviderFixtureServer> {
  const queue: ReplySource[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const cache = new AnthropicPromptCache(options.cacheMinTokens ?? 0, options.now);
  const state: { fallback: ((request: RecordedRequest) => FixtureReply) | undefined } = {
    fallback: undefined,
  };

  const send = (
    reply: FixtureReply,
    recorded: RecordedRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ) => {
    switch (reply.type) {
      case "reset":
        cut(req);
        return;
      case "hang":
        return;
      case "json":
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        res.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
        return;
      case "raw":
        res.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers });
        res.end(reply.body);
        return;
      case "stream": {
        res.writeHead(reply.status ?? 200, reply.headers);
        res.flushHeaders();
        const limit = reply.resetAfter ?? reply.stallAfter ?? reply.chunks.length;
        for (const chunk of reply.chunks.slice(0, limit)) res.write(chunk);
        if (reply.resetAfter !== undefined) setTimeout(() => cut(req), 20);
        else if (reply.stallAfter === undefined) res.end();
        return;
      }
      case "sse": {
        res.writeHead(reply.status ?? 200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          connection: "keep-alive",
          ...reply.headers,
        });
        res.flushHeaders();
        const frames = reply.frames.map((f) => fillAutoUsage(f, recorded.anthropicUsage));
        const limit = reply.resetAfter ?? reply.stallAfter ?? frames.length;
        for (const frame of frames.slice(0, limit)) res.write(encodeFrame(frame));
        if (reply.resetAfter !== undefined) {
          // Let the written frames reach the client, then cut the connection mid-message.
          setTimeout(() => cut(req), 20);
        } else if (reply.stallAfter === undefined) {
          res.end();
        }
        return;
      }
    }
  };

  // Cuts the connection as a network failure would: a TCP reset (HTTP/1.1), the session's socket
  // destroyed (HTTP/2).
  const cut = (req: IncomingMessage) => {
    const h2 = (req as unknown as Http2ServerRequest).stream;
    if (h2) h2.session?.destroy();
    else req.socket.resetAndDestroy();
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const [path, query = ""] = (req.url ?? "").split("?");
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path,
      query,
      headers: req.headers,
      body,
    };
    if (path.endsWith("/v1/messages") && body && typeof body === "object")
      recorded.anthropicUsage = cache.bill(body);
    requests.push(recorded);
    const next = queue.shift();
    const reply: FixtureReply | undefined =
      typeof next === "function" ? next(recorded) : (next ?? state.fallback?.(recorded));
    send(
      reply ?? { type: "json", status: 500, body: { error: { message: "fixture server: no reply queued" } } },
      recorded,
      req,
      res,
    );
  };
  const server = (
    options.http2
      ? createH2cServer((req, res) => void handle(req as never, res as never))
      : createServer(handle)
  ) as Server;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    openaiURL: `${url}/v1`,
    requests,
    reply: (...replies) => {
      queue.push(...replies);
    },
    get fallback() {
      return state.fallback;
    },
    set fallback(fn) {
      state.fallback = fn;
    },
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
