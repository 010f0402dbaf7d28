// A session host restarted from its store while a run waits for the client: the page, unaware of
// the restart, answers the waiting call with its next request, and that response streams the run
// on to its end (the tool's result, the model's next answer) and ends. Driven by the real AI SDK
// clients (`Chat` + `DefaultChatTransport`) against hosts on 127.0.0.1 behind one server, so the
// page keeps its URL across the restart.
import * as z from "zod";
import { afterEach, describe, expect, it } from "vitest";
import {
  agUiProtocol,
  aiSdkProtocol,
  createSessionHost,
  type SessionHostOptions,
  type SessionHost,
  serveNode,
  type ThreadStatus,
  toAgUiMessages,
  toUIMessages,
  type UIMessage,
} from "../http.js";
import { type AgentMessage, defineClientTool, scripted, type Tool } from "../index.js";
import { type ClientVersion, httpClient, runClient } from "./fixtures/ag-ui-clients.js";
import { AI_SDK_CLIENTS, type ChatLike } from "./fixtures/ai-sdk-clients.js";
import { deleteFile } from "./fixtures/frontend-tools.js";

const pickColor = defineClientTool({
  name: "pick_color",
  description: "Asks the user for a color",
  parameters: z.object({ options: z.array(z.string()) }),
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

function memoryStore() {
  const saved = new Map<string, unknown>();
  return {
    saved,
    load: (id: string) => saved.get(id),
    save: (id: string, snapshot: unknown) => void saved.set(id, JSON.parse(JSON.stringify(snapshot))),
  };
}

/** A model that calls `call` first, then answers with what the call gave (any instance, any process). */
function callsThenAnswers(call: { name: string; arguments: Record<string, unknown> }) {
  return scripted((request) => {
    const last = request.messages.at(-1);
    if (last?.role !== "toolResult") return { toolCalls: [call] };
    const text = last.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    return { text: `Done: ${text}.` };
  });
}

/**
 * One server on 127.0.0.1 whose host can be replaced: `restart()` closes the host (the process
 * goes away) and makes a new one over the same store.
 */
async function restartableHost(
  tools: Tool[],
  protocols: SessionHostOptions["protocols"],
  call: Parameters<typeof callsThenAnswers>[0],
) {
  const store = memoryStore();
  const make = () =>
    createSessionHost({
      agent: () => ({ provider: callsThenAnswers(call), tools }),
      store,
      basePath: "/api",
      protocols,
      authorize: "none-local-only",
    });
  const current: { host: SessionHost } = { host: make() };
  const server = await serveNode((request) => current.host.handle(request));
  closers.push(async () => {
    await current.host.close();
    await server.close();
  });
  return {
    base: `${server.url}/api`,
    store,
    get host() {
      return current.host;
    },
    async restart() {
      await current.host.close();
      current.host = make();
    },
  };
}

async function threadStatus(base: string, id: string): Promise<ThreadStatus & { messages: AgentMessage[] }> {
  const response = await fetch(`${base}/threads/${id}`);
  expect(response.status).toBe(200);
  return response.json();
}

/** Waits until the client is done (its requests answered in full) and the server's run rests or waits. */
async function settle(chat: ChatLike, base: string): Promise<void> {
  let stable = 0;
  for (let i = 0; i < 500 && stable < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const done = chat.status === "ready" || chat.status === "error";
    const server = done ? (await threadStatus(base, chat.id)).status : "running";
    stable = done && server !== "running" ? stable + 1 : 0;
  }
  expect(stable, `the client and the server settled (client: ${chat.status})`).toBe(3);
}

function clientView(messages: readonly UIMessage[]): UIMessage[] {
  const copy = JSON.parse(JSON.stringify(messages)) as UIMessage[];
  for (const message of copy) {
    for (const part of message.parts) {
      if (part.type === "dynamic-tool" && part.state !== "approval-requested") delete part.approval;
      else if (part.type === "dynamic-tool")
        delete (part.approval as { requestReason?: string }).requestReason;
    }
  }
  return copy;
}

async function expectSameTranscript(chat: ChatLike, base: string, target: 6 | 7): Promise<void> {
  const status = await threadStatus(base, chat.id);
  const server = toUIMessages(status.messages, {
    target,
    pendingApprovals: status.pendingApprovals,
    finishedCalls: status.finishedCalls,
  });
  expect(clientView(chat.messages)).toEqual(JSON.parse(JSON.stringify(server)));
}

/** Every tool call in the transcript has exactly one result, after it. */
function expectEveryCallAnsweredOnce(messages: readonly AgentMessage[]): void {
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.flatMap((c) => (c.type === "toolCall" ? [c.id] : [])) : [],
  );
  const results = messages.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
  expect(results).toEqual(calls);
}

const texts = (message: UIMessage | undefined) =>
  (message?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text);
const toolStates = (message: UIMessage | undefined) =>
  (message?.parts ?? []).filter((p) => p.type === "dynamic-tool").map((p) => [p.toolName, p.state]);

for (const client of AI_SDK_CLIENTS) {
  describe.skipIf(client.skip !== undefined)(
    `a host restarted from its store, ${client.name} Chat${client.skip ? ` (${client.skip})` : ""}`,
    () => {
      const target = client.target;

      it("the approval the page answers after the restart: the response streams the result and the answer, and ends", async () => {
        const served = await restartableHost([deleteFile], [aiSdkProtocol({ target })], {
          name: "delete_file",
          arguments: { path: "a.txt" },
        });
        const errors: string[] = [];
        const chat = await client.createChat({ id: "t1", api: `${served.base}/chat`, errors, auto: true });
        await chat.sendMessage({ text: "delete a.txt" });
        await settle(chat, served.base);
        const [call] = chat.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");
        expect(call).toMatchObject({ state: "approval-requested" });
        expect(served.store.saved.has("t1")).toBe(true);

        await served.restart();
        // The restored thread waits as it did (its status read from the new host).
        expect((await threadStatus(served.base, "t1")).status).toBe("waiting");
        await chat.addToolApprovalResponse({ id: (call!.approval as { id: string }).id, approved: true });
        await settle(chat, served.base);
        expect(errors).toEqual([]);
        expect(chat.status).toBe("ready");
        expect(chat.messages).toHaveLength(2);
        expect(toolStates(chat.messages[1])).toEqual([["delete_file", "output-available"]]);
        expect(texts(chat.messages[1])).toEqual(["Done: deleted a.txt."]);
        const agent = served.host.agent("t1")!;
        expect(agent.state).toBe("idle");
        expectEveryCallAnsweredOnce(agent.messages);
        await expectSameTranscript(chat, served.base, target);
      });

      it("a client-run tool's result the page gives after the restart: the run goes on to its answer, and the response ends", async () => {
        const served = await restartableHost([pickColor], [aiSdkProtocol({ target })], {
          name: "pick_color",
          arguments: { options: ["red", "blue"] },
        });
        const errors: string[] = [];
        const asked: { toolCallId: string; toolName: string }[] = [];
        const chat = await client.createChat({
          id: "t2",
          api: `${served.base}/chat`,
          errors,
          auto: true,
          // The page asks its user; the answer comes after the host restarted.
          onToolCall: (call) => void asked.push(call),
        });
        await chat.sendMessage({ text: "pick a color" });
        await settle(chat, served.base);
        expect(asked.map((c) => c.toolName)).toEqual(["pick_color"]);
        expect((await threadStatus(served.base, "t2")).status).toBe("waiting");

        await served.restart();
        expect((await threadStatus(served.base, "t2")).status).toBe("waiting");
        await chat.addToolOutput({ toolCallId: asked[0]!.toolCallId, tool: "pick_color", output: "blue" });
        await settle(chat, served.base);
        expect(errors).toEqual([]);
        expect(chat.status).toBe("ready");
        expect(toolStates(chat.messages[1])).toEqual([["pick_color", "output-available"]]);
        expect(texts(chat.messages[1])).toEqual(["Done: blue."]);
        const agent = served.host.agent("t2")!;
        expect(agent.state).toBe("idle");
        expectEveryCallAnsweredOnce(agent.messages);
        await expectSameTranscript(chat, served.base, target);
      });
    },
  );
}

describe.each<ClientVersion>(["1.0", "0.0.59"])(
  "a host restarted from its store, @ag-ui/client %s HttpAgent",
  (version) => {
    it("resuming the interrupt after the restart: the run finishes with the tool's result and the answer", async () => {
      const served = await restartableHost([deleteFile], [agUiProtocol()], {
        name: "delete_file",
        arguments: { path: "a.txt" },
      });
      const client = httpClient(version, `${served.base}/ag-ui`, "t3");
      client.addMessage({ id: "u1", role: "user", content: "delete a.txt" });
      const first = await runClient(client);
      expect(first.failures).toEqual([]);
      expect(first.finished?.outcome).toBe("interrupt");
      const [interrupt] = first.finished!.interrupts!;

      await served.restart();
      const second = await runClient(client, {
        resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { approved: true } }],
      });
      expect(second.failures).toEqual([]);
      expect(second.logged).toEqual([]);
      expect(second.types).toContain("TOOL_CALL_RESULT");
      expect(second.types).toContain("TEXT_MESSAGE_CONTENT");
      expect(second.types.at(-1)).toBe("RUN_FINISHED");
      expect(second.finished?.outcome).toBe("success");
      const agent = served.host.agent("t3")!;
      expect(agent.state).toBe("idle");
      expect(agent.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "Done: deleted a.txt." }],
      });
      expectEveryCallAnsweredOnce(agent.messages);
      expect(client.messages).toEqual(toAgUiMessages(agent.messages));
    }, 15_000);
  },
);
