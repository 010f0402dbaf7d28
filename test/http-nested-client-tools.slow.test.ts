// Client-run tools called in sub-agents (issue 39, item 4), through the session host's UI protocols
// with the real clients: the AI SDK's `Chat` + `DefaultChatTransport` (ai 7 skipped on Node 20) and
// AG-UI's `HttpAgent` (1.0.0 and 0.0.59). A parent delegates to a designer, whose `pick_color` is a
// client-run tool (`defineClientTool`): the call has no part or tool call of its own in the client's
// messages, so it shows on the part of the parent's call it runs in (AI SDK: an approval request
// whose descriptor says it waits for a result, answered in the next request's body) or as an
// interrupt of its own reason bound to that call (AG-UI, answered through `resume`). The client's
// messages equal the server's transcript throughout, and a reloaded page gets the card back.
import { z } from "zod";
import { afterEach, describe, expect, it } from "vitest";
import {
  agUiProtocol,
  type AiSdkTarget,
  aiSdkProtocol,
  createSessionHost,
  type HostProtocol,
  serveNode,
  toAgUiMessages,
  toUIMessages,
  type UIMessage,
} from "../http.js";
import {
  type AgentMessage,
  type AgentOptions,
  defineClientTool,
  defineTool,
  type PendingApproval,
  scripted,
  subAgentTool,
} from "../index.js";
import { AI_SDK_CLIENTS, type ChatLike } from "./fixtures/ai-sdk-clients.js";
import { type ClientVersion, httpClient, runClient } from "./fixtures/ag-ui-clients.js";

/** The tree: the designer calls `pick_color` once per question, in parallel; `heard` is what it got back. */
function tree(questions: string[]) {
  const pickColor = defineClientTool({
    name: "pick_color",
    description: "Asks the user for a color",
    parameters: z.object({ question: z.string() }),
  });
  const heard: string[] = [];
  const designer = subAgentTool({
    name: "designer",
    description: "Designs",
    tools: [pickColor],
    provider: scripted((request, call) => {
      if (call === 0)
        return {
          toolCalls: questions.map((question, i) => ({
            id: `c${i + 1}`,
            name: "pick_color",
            arguments: { question },
          })),
        };
      for (const m of request.messages)
        if (m.role === "toolResult") heard.push(JSON.stringify(m.content).slice(0, 200));
      return { text: "designer done" };
    }),
  });
  const options: AgentOptions = {
    provider: scripted((_request, call) =>
      call === 0
        ? { toolCalls: [{ id: "p1", name: "designer", arguments: { task: "pick a color" } }] }
        : { text: "parent done" },
    ),
    tools: [designer],
  };
  return { options, heard };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function startHost(options: AgentOptions, protocol: HostProtocol) {
  const host = createSessionHost({
    agent: () => options,
    basePath: "/api",
    protocols: [protocol],
    authorize: "none-local-only",
  });
  const server = await serveNode(host.handle);
  closers.push(async () => {
    await host.close();
    await server.close();
  });
  return { host, base: `${server.url}/api` };
}

async function thread(base: string, id: string) {
  const response = await fetch(`${base}/threads/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    messages: AgentMessage[];
    pendingApprovals: PendingApproval[];
    pendingToolCalls: PendingApproval[];
    finishedCalls: never[];
  };
}

// --- AI SDK ---

async function settle(chat: ChatLike, base: string): Promise<void> {
  let stable = 0;
  for (let i = 0; i < 500 && stable < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const done = chat.status === "ready" || chat.status === "error";
    const server = done ? (await thread(base, chat.id)).status : "running";
    stable = done && server !== "running" ? stable + 1 : 0;
  }
  expect(stable, "the client and the server settled").toBe(3);
}

/** The client's messages without what the transcript does not record (as http-ai-sdk.slow.test.ts). */
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

async function expectSameTranscript(chat: ChatLike, base: string, target: AiSdkTarget) {
  const status = await thread(base, chat.id);
  expect(clientView(chat.messages)).toEqual(JSON.parse(JSON.stringify(toUIMessages(status, { target }))));
}

const toolParts = (chat: ChatLike) => chat.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");

/** What the page does with the card: runs its tool, and sends the result in the next request's body. */
async function answer(chat: ChatLike, toolCallId: string, result: string): Promise<void> {
  const send = chat.sendMessage as unknown as (
    message: undefined,
    options: { body: Record<string, unknown> },
  ) => Promise<void>;
  await send(undefined, { body: { toolResults: [{ toolCallId, result }] } });
}

for (const client of AI_SDK_CLIENTS) {
  describe.skipIf(client.skip !== undefined)(
    `a sub-agent's client-run call, ${client.name} Chat${client.skip ? ` (${client.skip})` : ""}`,
    () => {
      const target = client.target;

      it("shows on the parent call's part (waitsFor: result); the result in the request body runs on, and the run ends", async () => {
        const { options, heard } = tree(["walls?"]);
        const { base, host } = await startHost(options, aiSdkProtocol({ target }));
        const errors: string[] = [];
        const chat = await client.createChat({ id: "one", api: `${base}/chat`, errors, auto: true });
        await chat.sendMessage({ text: "pick a color" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect((await thread(base, "one")).status).toBe("waiting");
        expect(toolParts(chat)).toMatchObject([
          {
            toolCallId: "p1",
            toolName: "designer",
            state: "approval-requested",
            approval: {
              id: "p1/c1",
              descriptor: {
                toolName: "pick_color",
                input: { question: "walls?" },
                path: ["p1", "c1"],
                agents: ["designer-p1"],
                waitsFor: "result",
              },
            },
          },
        ]);
        await expectSameTranscript(chat, base, target);

        await answer(chat, "p1/c1", "blue");
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(heard).toEqual([expect.stringContaining("blue")]);
        expect(chat.messages).toHaveLength(2); // the same assistant message, continued
        expect(toolParts(chat).map((p) => [p.toolCallId, p.state])).toEqual([["p1", "output-available"]]);
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "parent done" });
        expect(host.agent("one")!.state).toBe("idle");
        await expectSameTranscript(chat, base, target);
      });

      it("a page reloaded while it waits: toUIMessages(GET /threads/{id}) brings the card back, and the result runs it", async () => {
        const { options, heard } = tree(["walls?"]);
        const { base } = await startHost(options, aiSdkProtocol({ target }));
        const first = await client.createChat({ id: "reload", api: `${base}/chat`, errors: [], auto: true });
        await first.sendMessage({ text: "pick a color" });
        await settle(first, base);
        const messages = toUIMessages(await thread(base, "reload"), { target });
        const errors: string[] = [];
        const chat = await client.createChat({
          id: "reload",
          api: `${base}/chat`,
          errors,
          auto: true,
          messages,
        });
        expect(toolParts(chat)).toMatchObject([
          {
            toolCallId: "p1",
            state: "approval-requested",
            approval: { id: "p1/c1", descriptor: { toolName: "pick_color", waitsFor: "result" } },
          },
        ]);
        await answer(chat, "p1/c1", "green");
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(heard).toEqual([expect.stringContaining("green")]);
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "parent done" });
        await expectSameTranscript(chat, base, target);
      });

      it("two calls under one parent call show one after the other; Deny on the card tells the model the page did not run it", async () => {
        const { options, heard } = tree(["walls?", "roof?"]);
        const { base, host } = await startHost(options, aiSdkProtocol({ target }));
        const errors: string[] = [];
        const chat = await client.createChat({ id: "two", api: `${base}/chat`, errors, auto: true });
        await chat.sendMessage({ text: "pick two colors" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(toolParts(chat)).toMatchObject([{ state: "approval-requested", approval: { id: "p1/c1" } }]);
        await expectSameTranscript(chat, base, target);

        // The first answered: no event marks it (the call ends inside the sub-agent), and the
        // response that ends waiting shows the second on the same part.
        await answer(chat, "p1/c1", "blue");
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(toolParts(chat)).toMatchObject([
          {
            state: "approval-requested",
            approval: { id: "p1/c2", descriptor: { input: { question: "roof?" }, waitsFor: "result" } },
          },
        ]);
        expect((await thread(base, "two")).status).toBe("waiting");
        await expectSameTranscript(chat, base, target);

        await chat.addToolApprovalResponse({ id: "p1/c2", approved: false, reason: "no roof" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(heard).toEqual([expect.stringContaining("blue"), expect.stringContaining("no roof")]);
        expect(toolParts(chat).map((p) => p.state)).toEqual(["output-available"]);
        expect(host.agent("two")!.state).toBe("idle");
        await expectSameTranscript(chat, base, target);
      });

      it("Approve on the card is refused with what to send instead; the call keeps waiting", async () => {
        const { options } = tree(["walls?"]);
        const { base } = await startHost(options, aiSdkProtocol({ target }));
        const errors: string[] = [];
        const chat = await client.createChat({ id: "approve", api: `${base}/chat`, errors, auto: true });
        await chat.sendMessage({ text: "pick a color" });
        await settle(chat, base);
        await chat.addToolApprovalResponse({ id: "p1/c1", approved: true });
        await settle(chat, base);
        expect(errors.join("\n")).toMatch(/waits for a client-run tool's result, not an approval/);
        const status = await thread(base, "approve");
        expect(status.status).toBe("waiting");
        expect(status.pendingToolCalls.map((p) => p.toolCallId)).toEqual(["p1/c1"]);
      });
    },
  );
}

// --- AG-UI ---

const VERSIONS: ClientVersion[] = ["1.0", "0.0.59"];

describe.each(VERSIONS)("a sub-agent's client-run call, AG-UI @ag-ui/client %s HttpAgent", (version) => {
  it("ends the run with a client_tool interrupt bound to the parent's call; resume with its result ends the run", async () => {
    const { options, heard } = tree(["walls?"]);
    const { base, host } = await startHost(options, agUiProtocol());
    const client = httpClient(version, `${base}/ag-ui`, "t1");
    client.addMessage({ id: "u1", role: "user", content: "pick a color" });
    const first = await runClient(client);
    expect(first.failures).toEqual([]);
    expect(first.logged).toEqual([]);
    expect(first.finished?.outcome).toBe("interrupt");
    expect(first.finished?.interrupts).toEqual([
      expect.objectContaining({
        id: "p1/c1",
        reason: "client_tool",
        toolCallId: "p1",
        metadata: {
          toolName: "pick_color",
          args: { question: "walls?" },
          path: ["p1", "c1"],
          agents: ["designer-p1"],
        },
      }),
    ]);
    expect(client.messages).toEqual(toAgUiMessages((await thread(base, "t1")).messages));

    const second = await runClient(client, {
      resume: [{ interruptId: "p1/c1", status: "resolved", payload: { result: "blue" } }],
    });
    expect(second.failures).toEqual([]);
    expect(second.logged).toEqual([]);
    expect(second.finished?.outcome).toBe("success");
    expect(heard).toEqual([expect.stringContaining("blue")]);
    expect(host.agent("t1")!.state).toBe("idle");
    expect(client.messages).toEqual(toAgUiMessages((await thread(base, "t1")).messages));
    expect(client.messages.at(-1)).toMatchObject({ role: "assistant", content: "parent done" });
  });

  it("a reloaded page connects and gets the interrupt again; cancelled tells the model, a bad payload is refused", async () => {
    const { options, heard } = tree(["walls?", "roof?"]);
    const { base } = await startHost(options, agUiProtocol());
    const first = httpClient(version, `${base}/ag-ui`, "t2");
    first.addMessage({ id: "u1", role: "user", content: "pick two colors" });
    await runClient(first);

    // The reloaded page: the transcript from GET /threads/{id}, then a connect for how it stands.
    const client = httpClient(version, `${base}/ag-ui`, "t2");
    client.setMessages(toAgUiMessages((await thread(base, "t2")).messages) as never);
    const connected = await runClient(client, {}, "connectAgent");
    expect(connected.failures).toEqual([]);
    expect(connected.finished?.outcome).toBe("interrupt");
    expect(connected.finished?.interrupts?.map((i) => [i.id, (i as { reason?: string }).reason])).toEqual([
      ["p1/c1", "client_tool"],
      ["p1/c2", "client_tool"],
    ]);

    const refused = await fetch(`${base}/ag-ui`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        threadId: "t2",
        runId: "r-bad",
        protocolVersion: "1.0.0",
        messages: client.messages,
        tools: [],
        context: [],
        resume: [
          { interruptId: "p1/c1", status: "resolved", payload: { result: 42 } },
          { interruptId: "p1/c2", status: "cancelled" },
        ],
      }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/must be \{ result: text or \{ content \} \} or \{ error \}/);
    expect((await thread(base, "t2")).pendingToolCalls.map((p) => p.toolCallId)).toEqual(["p1/c1", "p1/c2"]);

    const done = await runClient(client, {
      resume: [
        { interruptId: "p1/c1", status: "resolved", payload: { result: "blue" } },
        { interruptId: "p1/c2", status: "cancelled" },
      ],
    });
    expect(done.failures).toEqual([]);
    expect(done.finished?.outcome).toBe("success");
    expect(heard).toEqual([expect.stringContaining("blue"), expect.stringContaining("did not run it")]);
    expect(client.messages).toEqual(toAgUiMessages((await thread(base, "t2")).messages));
  });
});

// ai 7's own stream reader (it loads on Node 20, where its Chat test above is skipped): the card
// on the parent call's part, then the request whose body carries the result continues the message.
describe("a sub-agent's client-run call, ai 7 readUIMessageStream", () => {
  it("reads the card with its descriptor, and the answered request's stream ends the part with its output", async () => {
    const { readUIMessageStream, parseJsonEventStream, uiMessageChunkSchema } = await import("ai");
    const { options, heard } = tree(["walls?"]);
    const { base } = await startHost(options, aiSdkProtocol({ target: 7 }));
    const chat = (messages: unknown[], extra: Record<string, unknown> = {}) =>
      fetch(`${base}/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "seven", trigger: "submit-message", messages, ...extra }),
      });
    const read = async (response: Response, message?: UIMessage) => {
      expect(response.status).toBe(200);
      const chunks = parseJsonEventStream({
        stream: response.body!,
        schema: uiMessageChunkSchema,
      }).pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (!part.success) throw part.error;
            controller.enqueue(part.value);
          },
        }),
      );
      const seen: UIMessage[] = [];
      for await (const m of readUIMessageStream({
        stream: chunks,
        ...(message && { message: message as never }),
        onError: (error) => {
          throw error;
        },
      }))
        seen.push(JSON.parse(JSON.stringify(m)) as UIMessage);
      return seen;
    };
    const user = { id: "u1", role: "user", parts: [{ type: "text", text: "pick a color" }] };
    const first = (await read(await chat([user]))).at(-1)!;
    expect(first.parts.filter((p) => p.type === "dynamic-tool")).toMatchObject([
      {
        toolCallId: "p1",
        state: "approval-requested",
        approval: { id: "p1/c1", descriptor: { toolName: "pick_color", waitsFor: "result" } },
      },
    ]);
    const seen = await read(
      await chat([user, first], { toolResults: [{ toolCallId: "p1/c1", result: "blue" }] }),
      first,
    );
    const done = seen.at(-1)!;
    expect(heard).toEqual([expect.stringContaining("blue")]);
    // The card goes as soon as the answer is taken (the sub-agent works on), before the output.
    const states = seen.map((m) => m.parts.find((p) => p.type === "dynamic-tool")!.state);
    expect(states.indexOf("input-available")).toBeGreaterThanOrEqual(0);
    expect(states.indexOf("input-available")).toBeLessThan(states.indexOf("output-available"));
    expect(done.parts.filter((p) => p.type === "dynamic-tool").map((p) => p.state)).toEqual([
      "output-available",
    ]);
    expect(done.parts.at(-1)).toMatchObject({ type: "text", text: "parent done" });
  });
});

describe("a sub-agent's client-run call answered on the side route, beside a waiting approval", () => {
  it("the thread reports running while the sub-agent works on after the answer, then waits for the approval alone", async () => {
    const pickColor = defineClientTool({
      name: "pick_color",
      description: "Asks the user for a color",
      parameters: z.object({}),
    });
    // The designer answers slowly once it has its color: the thread is working, not waiting.
    const designer = subAgentTool({
      name: "designer",
      description: "Designs",
      tools: [pickColor],
      provider: scripted((_request, call) =>
        call === 0
          ? { toolCalls: [{ id: "c1", name: "pick_color", arguments: {} }] }
          : { text: "the designer thinks it over at length", chunkSize: 2, delayMs: 40 },
      ),
    });
    const wipe = defineTool({
      name: "wipe",
      description: "Wipes",
      parameters: z.object({}),
      needsApproval: true,
      execute: () => "wiped",
    });
    const options: AgentOptions = {
      provider: scripted((_request, call) =>
        call === 0
          ? {
              toolCalls: [
                { id: "p1", name: "designer", arguments: { task: "pick" } },
                { id: "p2", name: "wipe", arguments: {} },
              ],
            }
          : { text: "parent done" },
      ),
      tools: [designer, wipe],
    };
    const { base } = await startHost(options, agUiProtocol());
    const client = httpClient("1.0", `${base}/ag-ui`, "side");
    client.addMessage({ id: "u1", role: "user", content: "go" });
    const first = await runClient(client);
    expect(first.finished?.interrupts?.map((i) => i.id).sort()).toEqual(["p1/c1", "p2"]);

    const answered = await fetch(`${base}/threads/side/tool-result`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ toolCallId: "p1/c1", result: "blue" }),
    });
    expect(answered.status).toBe(200);
    const seen: string[] = [];
    for (let i = 0; i < 300; i++) {
      const status = (await thread(base, "side")).status;
      if (seen.at(-1) !== status) seen.push(status);
      if (seen.includes("running") && status === "waiting") break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Running from the sub-agent's first progress on (before: "waiting" throughout, the answered
    // call still counted as waiting under p1), then waiting for the approval.
    expect(seen.slice(seen.indexOf("running"))).toEqual(["running", "waiting"]);
    const status = await thread(base, "side");
    expect(status.pendingApprovals.map((p) => p.toolCallId)).toEqual(["p2"]);
    expect(status.pendingToolCalls).toEqual([]);
  });
});
