// Serves the chat example on 127.0.0.1: `npm run example:chat` (or `npx tsx examples/chat/serve.ts
// [port]`). The page is bundled on start with esbuild (React, agent-machine's browser entry and the
// visualizer's chart). By default the agent runs in the page, on the scripted demo model; with
// `?remote` the page follows a thread of the session host mounted here at /api, whose agent runs on
// a real model when the environment has a key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) and on the
// scripted demo otherwise. The page fetches nothing from anywhere but this server.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { agentMachineProtocol, aiSdkProtocol, createSessionHost, toNodeListener } from "../../http.js";
import { providerFromEnv } from "../../index.js";
import { demoAgentOptions } from "./demo-agent.js";

const HERE = import.meta.dirname;
const ROOT = join(HERE, "..", "..");

/** The running example server. */
export interface ChatExampleServer {
  url: string;
  /** What the server-side agent (`?remote`) runs on. */
  model: string;
  close(): Promise<void>;
}

/**
 * Bundles the example page and serves it on 127.0.0.1.
 *
 * @example
 * ```ts
 * const server = await serveChatExample({ port: 0 });
 * console.log(server.url);
 * await server.close();
 * ```
 */
export async function serveChatExample({
  port = 0,
  env = process.env,
}: {
  port?: number;
  /** Where the server-side agent looks for an API key (tests pass `{}`: the scripted demo). */
  env?: Record<string, string | undefined>;
} = {}): Promise<ChatExampleServer> {
  const found = providerFromEnv({ env });
  const host = createSessionHost({
    agent: demoAgentOptions(found.provider),
    basePath: "/api",
    protocols: [aiSdkProtocol(), agentMachineProtocol()],
    // A demo for this machine alone: no users, so no identity to check. The host then answers only
    // requests sent to 127.0.0.1 / localhost from this page's own origin. An app with users gives
    // authorize: (request, threadId) => ... (docs/frontends.md).
    authorize: "none-local-only",
  });
  const api = toNodeListener(host.handle);
  const bundle = await build({
    entryPoints: [join(HERE, "app.tsx")],
    bundle: true,
    format: "esm",
    platform: "browser",
    jsx: "automatic",
    // React's development build: its warnings show in the console (the browser test fails on any).
    define: { "process.env.NODE_ENV": '"development"' },
    sourcemap: "inline",
    write: false,
    logLevel: "silent",
  });
  const files: Record<string, { type: string; body: string | Buffer }> = {
    "/": { type: "text/html; charset=utf-8", body: await readFile(join(HERE, "index.html")) },
    "/app.js": { type: "text/javascript; charset=utf-8", body: bundle.outputFiles[0]!.text },
    "/chat.css": { type: "text/css; charset=utf-8", body: await readFile(join(HERE, "chat.css")) },
    "/visualizer.css": {
      type: "text/css; charset=utf-8",
      body: await readFile(join(ROOT, "visualizer", "page", "style.css")),
    },
    // The chart's own styles (`agent-machine/chart.css`), which the page's style.css imports.
    "/chart.css": {
      type: "text/css; charset=utf-8",
      body: await readFile(join(ROOT, "visualizer", "page", "chart.css")),
    },
  };
  const server = createServer((request, response) => {
    if (request.url?.startsWith("/api/")) return api(request, response);
    const file = files[(request.url ?? "/").split("?")[0]!];
    if (!file || request.method !== "GET") return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": file.type, "cache-control": "no-store" }).end(file.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    model: found.provider ? `${found.provider.id} ${found.provider.model}` : "the scripted demo model",
    async close() {
      await host.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const server = await serveChatExample({ port: Number(process.argv[2] ?? process.env.PORT ?? 0) });
  console.log(
    `agent-machine chat example: open ${server.url} (the agent in the page, scripted demo model)\n` +
      `  or ${server.url}?remote (the agent on this server, on ${server.model}); Ctrl+C to stop`,
  );
  process.on("SIGINT", () => void server.close().then(() => process.exit(0)));
}
