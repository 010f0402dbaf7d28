// Approvals of calls waiting in sub-agents (issue 39), through the session host's UI protocols with
// the real clients: the AI SDK's `Chat` + `DefaultChatTransport` (ai 7 skipped on Node 20) and
// AG-UI's `HttpAgent` (1.0.0 and 0.0.59). A parent delegates to a researcher, which delegates to a
// writer, whose refunds need approval: the nested call shows on the part (AI SDK) or as an
// interrupt bound to the tool call (AG-UI) of the parent's call it runs in, is answered from the
// client, and the run goes on; the client's messages equal the server's transcript throughout.
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
  defineTool,
  type PendingApproval,
  scripted,
  subAgentTool,
} from "../index.js";
import { AI_SDK_CLIENTS, type ChatLike } from "./fixtures/ai-sdk-clients.js";
import { type ClientVersion, httpClient, runClient } from "./fixtures/ag-ui-clients.js";

/** The tree: `refunds` records what ran; the writer asks for one refund per amount, in parallel. */
function tree(amounts: number[]) {
  const refunds: number[] = [];
  const refund = defineTool({
    name: "refund",
    description: "Refunds an amount",
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      refunds.push(amount);
      return `refunded ${amount}`;
    },
  });
  const writer = subAgentTool({
    name: "writer",
    description: "Writes",
    tools: [refund],
    provider: scripted((_request, call) =>
      call === 0
        ? {
            toolCalls: amounts.map((amount, i) => ({
              id: `w${i + 1}`,
              name: "refund",
              arguments: { amount },
            })),
          }
        : { text: "writer done" },
    ),
  });
  const researcher = subAgentTool({
    name: "researcher",
    description: "Researches",
    tools: [writer],
    provider: scripted((_request, call) =>
      call === 0
        ? { toolCalls: [{ id: "r1", name: "writer", arguments: { task: "refund" } }] }
        : { text: "researcher done" },
    ),
  });
  const options: AgentOptions = {
    provider: scripted((_request, call) =>
      call === 0
        ? { toolCalls: [{ id: "p1", name: "researcher", arguments: { task: "handle it" } }] }
        : { text: "parent done" },
    ),
    tools: [researcher],
  };
  return { options, refunds };
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

for (const client of AI_SDK_CLIENTS) {
  describe.skipIf(client.skip !== undefined)(
    `a nested approval, ${client.name} Chat${client.skip ? ` (${client.skip})` : ""}`,
    () => {
      const target = client.target;

      it("shows on the parent call's part with the nested call described; Approve runs it and the run ends", async () => {
        const { options, refunds } = tree([20]);
        const { base, host } = await startHost(options, aiSdkProtocol({ target }));
        const errors: string[] = [];
        const chat = await client.createChat({ id: "one", api: `${base}/chat`, errors, auto: true });
        await chat.sendMessage({ text: "refund 20" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect((await thread(base, "one")).status).toBe("waiting");
        const [part] = toolParts(chat);
        expect(part).toMatchObject({
          toolCallId: "p1",
          toolName: "researcher",
          state: "approval-requested",
          approval: {
            id: "p1/r1/w1",
            descriptor: {
              toolName: "refund",
              input: { amount: 20 },
              path: ["p1", "r1", "w1"],
              agents: ["researcher-p1", "writer-r1"],
            },
          },
        });
        await expectSameTranscript(chat, base, target);
        expect(refunds).toEqual([]);

        await chat.addToolApprovalResponse({ id: "p1/r1/w1", approved: true });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(refunds).toEqual([20]);
        expect(chat.messages).toHaveLength(2); // the same assistant message, continued
        expect(toolParts(chat).map((p) => [p.toolCallId, p.state])).toEqual([["p1", "output-available"]]);
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "parent done" });
        expect(host.agent("one")!.state).toBe("idle");
        await expectSameTranscript(chat, base, target);
      });

      it("a page reloaded while it waits: toUIMessages(GET /threads/{id}) brings the card back, and Approve runs it", async () => {
        const { options, refunds } = tree([20]);
        const { base } = await startHost(options, aiSdkProtocol({ target }));
        const first = await client.createChat({ id: "reload", api: `${base}/chat`, errors: [], auto: true });
        await first.sendMessage({ text: "refund 20" });
        await settle(first, base);
        // The reloaded page: the thread as the host answers it, converted as documented.
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
          { toolCallId: "p1", state: "approval-requested", approval: { id: "p1/r1/w1" } },
        ]);
        await chat.addToolApprovalResponse({ id: "p1/r1/w1", approved: true });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(refunds).toEqual([20]);
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "parent done" });
        await expectSameTranscript(chat, base, target);
      });

      it("two nested calls under one parent call show one after the other: approve the first, deny the second", async () => {
        const { options, refunds } = tree([20, 30]);
        const { base, host } = await startHost(options, aiSdkProtocol({ target }));
        const errors: string[] = [];
        const chat = await client.createChat({ id: "two", api: `${base}/chat`, errors, auto: true });
        await chat.sendMessage({ text: "refund 20 and 30" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(
          host
            .agent("two")!
            .pendingApprovals()
            .map((p) => p.toolCallId),
        ).toEqual(["p1/r1/w1", "p1/r1/w2"]);
        expect(toolParts(chat)).toMatchObject([
          { state: "approval-requested", approval: { id: "p1/r1/w1" } },
        ]);
        await expectSameTranscript(chat, base, target);

        await chat.addToolApprovalResponse({ id: "p1/r1/w1", approved: true });
        await settle(chat, base);
        expect(errors).toEqual([]);
        // The first ran; the second now shows on the same part, and the run waits for it.
        expect(refunds).toEqual([20]);
        expect(toolParts(chat)).toMatchObject([
          {
            state: "approval-requested",
            approval: { id: "p1/r1/w2", descriptor: { toolName: "refund", input: { amount: 30 } } },
          },
        ]);
        expect((await thread(base, "two")).status).toBe("waiting");
        await expectSameTranscript(chat, base, target);

        await chat.addToolApprovalResponse({ id: "p1/r1/w2", approved: false, reason: "too much" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(refunds).toEqual([20]);
        expect(toolParts(chat).map((p) => p.state)).toEqual(["output-available"]);
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "parent done" });
        expect(host.agent("two")!.state).toBe("idle");
        await expectSameTranscript(chat, base, target);
      });
    },
  );
}

// --- AG-UI ---

const VERSIONS: ClientVersion[] = ["1.0", "0.0.59"];

describe.each(VERSIONS)("a nested approval, AG-UI @ag-ui/client %s HttpAgent", (version) => {
  it("ends the run with an interrupt bound to the parent's call; resume answers it and the run ends", async () => {
    const { options, refunds } = tree([20, 30]);
    const { base, host } = await startHost(options, agUiProtocol());
    const client = httpClient(version, `${base}/ag-ui`, "t1");
    client.addMessage({ id: "u1", role: "user", content: "refund 20 and 30" });
    const first = await runClient(client);
    expect(first.failures).toEqual([]);
    expect(first.logged).toEqual([]);
    expect(first.finished?.outcome).toBe("interrupt");
    expect(first.finished?.interrupts).toEqual([
      expect.objectContaining({
        id: "p1/r1/w1",
        reason: "tool_call",
        toolCallId: "p1",
        metadata: {
          toolName: "refund",
          args: { amount: 20 },
          path: ["p1", "r1", "w1"],
          agents: ["researcher-p1", "writer-r1"],
        },
      }),
      expect.objectContaining({ id: "p1/r1/w2", toolCallId: "p1" }),
    ]);
    expect(client.messages).toEqual(toAgUiMessages((await thread(base, "t1")).messages));
    expect(refunds).toEqual([]);

    const second = await runClient(client, {
      resume: [
        { interruptId: "p1/r1/w1", status: "resolved", payload: { approved: true } },
        { interruptId: "p1/r1/w2", status: "cancelled" },
      ],
    });
    expect(second.failures).toEqual([]);
    expect(second.logged).toEqual([]);
    expect(second.finished?.outcome).toBe("success");
    expect(refunds).toEqual([20]);
    expect(host.agent("t1")!.state).toBe("idle");
    expect(client.messages).toEqual(toAgUiMessages((await thread(base, "t1")).messages));
    expect(client.messages.at(-1)).toMatchObject({ role: "assistant", content: "parent done" });
  });
});

// ai 7's own stream reader (it loads on Node 20, where its Chat test above is skipped): the
// resumed response echoes the nested decision as a `tool-approval-response`, which ai 7 applies to
// the part that showed the approval.
describe("a nested approval, ai 7 readUIMessageStream", () => {
  it("the resumed response echoes the nested decision on the parent call's part", async () => {
    const { readUIMessageStream, parseJsonEventStream, uiMessageChunkSchema } = await import("ai");
    const { options, refunds } = tree([20]);
    const { base } = await startHost(options, aiSdkProtocol({ target: 7 }));
    const chat = (messages: unknown[]) =>
      fetch(`${base}/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "seven", trigger: "submit-message", messages }),
      });
    /** The assistant message ai 7 holds after reading `response` (continuing `message`). */
    const read = async (response: Response, message?: UIMessage) => {
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
    const user = { id: "u1", role: "user", parts: [{ type: "text", text: "refund 20" }] };
    const first = (await read(await chat([user]))).at(-1)!;
    const [asked] = first.parts.filter((p) => p.type === "dynamic-tool");
    expect(asked).toMatchObject({
      toolCallId: "p1",
      state: "approval-requested",
      approval: { id: "p1/r1/w1" },
    });

    // What ai 7's addToolApprovalResponse makes of the part.
    const answered = JSON.parse(JSON.stringify(first)) as UIMessage;
    const part = answered.parts.find((p) => p.type === "dynamic-tool")!;
    part.state = "approval-responded";
    part.approval = { ...(part.approval as object), approved: true };
    // Read on from the message as the request found it (a second tab, a reloaded page): the
    // stream's echo is what marks the part answered, before its output arrives.
    const seen = await read(await chat([user, answered]), first);
    const states = seen.map((m) => m.parts.find((p) => p.type === "dynamic-tool")!.state);
    expect(refunds).toEqual([20]);
    const echoed = states.indexOf("approval-responded");
    expect(echoed).toBeGreaterThanOrEqual(0);
    expect(echoed).toBeLessThan(states.indexOf("output-available"));
    expect(seen[echoed]!.parts.find((p) => p.type === "dynamic-tool")!.approval).toMatchObject({
      id: "p1/r1/w1",
      approved: true,
    });
    expect(states.at(-1)).toBe("output-available");
    expect(seen.at(-1)!.parts.at(-1)).toMatchObject({ type: "text", text: "parent done" });
  });
});
