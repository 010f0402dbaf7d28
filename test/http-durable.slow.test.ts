// The session host over durable sessions: `createSessionHost({ durable })` in front of Restate (one
// real server for the file, from the npm package), the agent served as Restate services, driven by
// the real clients (`ai` 6/7 `Chat` + `DefaultChatTransport`, `@ag-ui/client` HttpAgent 1.0 and
// 0.0.59). The test agent answers from the first user message (test/fixtures/durable-agent.ts).
// After each exchange the client's messages must equal the server's transcript as the protocol's
// messages, and the client must report no error.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  agUiProtocol,
  aiSdkProtocol,
  createSessionHost,
  type SessionHostOptions,
  serveNode,
  type ThreadStatus,
  toAgUiMessages,
  toUIMessages,
  type UIMessage,
} from "../http.js";
import type { AgentMessage } from "../index.js";
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
import { type ClientRun, httpClient, runClient } from "./fixtures/ag-ui-clients.js";
import { AI_SDK_CLIENTS, type ChatLike, type ChatOptions } from "./fixtures/ai-sdk-clients.js";
import { durableTestAgent } from "./fixtures/durable-agent.js";
import { eventually, fastRetries, quietLogger } from "./fixtures/durable-harness.js";

let restate: RestateServer;
let server: AgentServer;
let client: SessionClient;

beforeAll(async () => {
  restate = await startRestateServer();
  const services = createAgentServices({ agent: durableTestAgent(), retryPolicy: fastRetries });
  server = await serveAgents({ services, logger: quietLogger });
  await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
  client = createSessionClient({ url: restate.ingressUrl });
});

afterAll(async () => {
  await server?.close();
  await restate?.stop();
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function startHost(more: Partial<SessionHostOptions> = {}, target: 6 | 7 = 7) {
  const host = createSessionHost({
    durable: { url: restate.ingressUrl, pollIntervalMs: 40 },
    basePath: "/api",
    protocols: [aiSdkProtocol({ target }), agUiProtocol()],
    ...more,
  });
  const http = await serveNode(host.handle);
  closers.push(async () => {
    await host.close();
    await http.close();
  });
  return { host, base: `${http.url}/api` };
}

async function threadStatus(base: string, id: string): Promise<ThreadStatus & { messages: AgentMessage[] }> {
  const response = await fetch(`${base}/threads/${encodeURIComponent(id)}`);
  expect(response.status).toBe(200);
  return response.json() as Promise<ThreadStatus & { messages: AgentMessage[] }>;
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Waits until the client is done (automatic requests included) and the thread rests or waits. */
async function settle(chat: ChatLike, base: string): Promise<void> {
  await eventually(async () => {
    const done = chat.status === "ready" || chat.status === "error";
    return done && (await threadStatus(base, chat.id)).status !== "running" ? true : undefined;
  }, `chat ${chat.id} to settle`);
  // Nothing more arrives (an automatic request sent on the last chunk).
  await new Promise((resolve) => setTimeout(resolve, 100));
  await eventually(async () => {
    const done = chat.status === "ready" || chat.status === "error";
    return done && (await threadStatus(base, chat.id)).status !== "running" ? true : undefined;
  }, `chat ${chat.id} to settle`);
}

function clientView(messages: readonly UIMessage[]): UIMessage[] {
  const copy = JSON.parse(JSON.stringify(messages)) as UIMessage[];
  for (const message of copy) {
    for (const part of message.parts) {
      if (part.type === "dynamic-tool" && part.state !== "approval-requested") delete part.approval;
    }
  }
  return copy;
}

async function expectSameUI(chat: ChatLike, base: string, target: 6 | 7): Promise<void> {
  const status = await threadStatus(base, chat.id);
  const server = toUIMessages(status.messages, {
    target,
    pendingApprovals: status.pendingApprovals,
    finishedCalls: status.finishedCalls,
  });
  expect(clientView(chat.messages)).toEqual(JSON.parse(JSON.stringify(server)));
}

const toolStates = (message: UIMessage | undefined) =>
  (message?.parts ?? []).filter((p) => p.type === "dynamic-tool").map((p) => [p.toolName, p.state]);

const runningClients = AI_SDK_CLIENTS.filter((c) => c.skip === undefined);

for (const chatClient of runningClients) {
  const target = chatClient.target;
  const newChat = async (base: string, options: Partial<ChatOptions> & { id: string }) => {
    const errors: string[] = [];
    const chat = await chatClient.createChat({ api: `${base}/chat`, errors, ...options });
    return { chat, errors };
  };

  describe(`durable threads with ${chatClient.name} Chat + DefaultChatTransport`, () => {
    it("streams the answer and parallel tool calls of a durable run; the transcripts agree", async () => {
      const { base } = await startHost({}, target);
      const id = `tools-${target}`;
      const { chat, errors } = await newChat(base, { id });
      await chat.sendMessage({ text: "tools" });
      await settle(chat, base);
      expect(errors).toEqual([]);
      expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(toolStates(chat.messages[1])).toEqual([
        ["note", "output-available"],
        ["note", "output-available"],
      ]);
      expect(chat.messages[1].parts.at(-1)).toMatchObject({ type: "text", text: "Both noted." });
      // The server's transcript is Restate's: the user message kept the client's id.
      const transcript = await client.transcript(id);
      expect(transcript[0]).toMatchObject({ role: "user", id: chat.messages[0].id });
      await expectSameUI(chat, base, target);
      // A second prompt is a second durable run on the same session.
      await chat.sendMessage({ text: "again" });
      await settle(chat, base);
      expect(errors).toEqual([]);
      // (The test agent's script goes on from the session's first message: its third step.)
      expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      expect(chat.messages[3].parts.at(-1)).toMatchObject({ type: "text", text: "Both noted." });
      await expectSameUI(chat, base, target);
    });

    it("approves one call through the client and denies another: the runs go on in Restate", async () => {
      const { base } = await startHost({}, target);
      for (const [id, approved] of [
        [`approve-${target}`, true],
        [`deny-${target}`, false],
      ] as const) {
        const { chat, errors } = await newChat(base, { id, auto: true });
        await chat.sendMessage({ text: "approval" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect((await threadStatus(base, id)).status).toBe("waiting");
        expect((await client.status(id)).pendingApprovals.map((p) => p.toolCallId)).toEqual(["g1"]);
        expect(toolStates(chat.messages[1])).toEqual([["guarded", "approval-requested"]]);
        await expectSameUI(chat, base, target);

        const part = chat.messages[1].parts.find((p) => p.type === "dynamic-tool")!;
        await chat.addToolApprovalResponse({
          id: (part.approval as { id: string }).id,
          approved,
          ...(approved ? {} : { reason: "not today" }),
        });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.messages).toHaveLength(2);
        expect(toolStates(chat.messages[1])).toEqual([
          ["guarded", approved ? "output-available" : "output-denied"],
        ]);
        const status = await client.status(id);
        expect(status).toMatchObject({ state: "idle", lastRun: { reason: "stop" } });
        const result = (await client.transcript(id)).find((m) => m.role === "toolResult");
        expect(result).toMatchObject(
          approved
            ? { isError: false, content: [{ text: "did deploy" }] }
            : { isError: true, content: [{ text: expect.stringContaining("not today") }] },
        );
        await expectSameUI(chat, base, target);
      }
    });

    it("a client-run tool: the client's output answers the durable call", async () => {
      const { base } = await startHost({}, target);
      const id = `client-${target}`;
      const answer: { chat?: ChatLike } = {};
      const made = await newChat(base, {
        id,
        auto: true,
        onToolCall: (call) => {
          if (call.toolName !== "pick") return;
          setTimeout(
            () =>
              void answer.chat!.addToolOutput({ toolCallId: call.toolCallId, tool: "pick", output: "blue" }),
            20,
          );
        },
      });
      answer.chat = made.chat;
      await made.chat.sendMessage({ text: "client" });
      await settle(made.chat, base);
      expect(made.errors).toEqual([]);
      expect(toolStates(made.chat.messages[1])).toEqual([["pick", "output-available"]]);
      expect((await client.transcript(id)).find((m) => m.role === "toolResult")).toMatchObject({
        toolName: "pick",
        content: [{ text: "blue" }],
      });
      await expectSameUI(made.chat, base, target);
    });
  });
}
