// A key pasted with a line break (or a tab, a NUL) in it: `fetch` refuses the header before anything
// is sent, and its error quotes the whole header value. Through every provider, the key must appear
// in no event, message or snapshot (the AI SDK's packages read their key themselves, so only the
// error's shape can tell it is one), and the error must say what to check.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  aiSdk,
  anthropic,
  createAgent,
  gemini,
  openai,
  openaiCompatible,
  type Provider,
} from "../index.js";
import { redactSecrets } from "../providers/internal/errors.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";

const KEYS = ["private-token-0001\nprivate-token-0002", "private\ttoken-0003\u0000"];

const providers: { name: string; make: (server: ProviderFixtureServer, key: string) => Provider }[] = [
  {
    name: "anthropic",
    make: (s, key) => anthropic({ model: "claude-haiku-4-5", apiKey: key, baseURL: s.url }),
  },
  { name: "openai", make: (s, key) => openai({ model: "gpt-4.1", apiKey: key, baseURL: s.openaiURL }) },
  {
    name: "openaiCompatible",
    make: (s, key) => openaiCompatible({ model: "qwen3-8b", apiKey: key, baseURL: s.openaiURL }),
  },
  { name: "gemini", make: (s, key) => gemini({ model: "gemini-2.5-flash", apiKey: key, baseURL: s.url }) },
  {
    name: "aiSdk (@ai-sdk/openai-compatible)",
    make: (s, key) =>
      aiSdk(
        createOpenAICompatible({ name: "fixture", baseURL: s.openaiURL, apiKey: key }).chatModel("gpt-4.1"),
      ),
  },
];

let server: ProviderFixtureServer;
beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());

describe.each(providers)("a key with a line break or a tab in it: $name", ({ make }) => {
  it.each(KEYS)("ends the run at once, says what to check, and shows the key nowhere (%j)", async (key) => {
    server.requests.length = 0;
    const agent = createAgent({ provider: make(server, key), retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((e) => events.push(e));
    await agent.prompt("Hi");

    expect(server.requests).toHaveLength(0); // refused before sending
    expect(events.some((e) => e.type === "retry")).toBe(false);
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end).toMatchObject({ type: "agent_end", reason: "error" });
    expect(end.errorMessage).toMatch(/check the API key, and any headers you set, for a line break, a tab/);
    const seen = JSON.stringify([events, agent.messages, agent.getPersistedSnapshot()]);
    expect(seen).not.toMatch(/private.?token/);
  });
});

describe("redactSecrets", () => {
  it("hides a header value fetch quotes, and credentials in a URL's query", () => {
    expect(redactSecrets('Headers.append: "Bearer abc\ndef" is an invalid header value.')).toBe(
      'Headers.append: "[redacted]" is an invalid header value.',
    );
    expect(redactSecrets("GET https://llm.example/v1/models?key=abc123&alt=sse failed")).toBe(
      "GET https://llm.example/v1/models?key=[redacted]&alt=sse failed",
    );
    expect(redactSecrets("https://h/p?x=1&access_token=t0k3n#f")).toBe(
      "https://h/p?x=1&access_token=[redacted]#f",
    );
    expect(redactSecrets("a plain message about keys")).toBe("a plain message about keys");
  });
});
