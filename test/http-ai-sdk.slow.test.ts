// The session host's AI SDK routes driven by the real clients: `Chat` + `DefaultChatTransport` of
// `ai` 7 (skipped on Node 20: it needs Node >= 22) and of `ai` 6, against a host on 127.0.0.1
// around agents with scripted providers. After every request the client's messages must equal the
// server's transcript as UIMessages (toUIMessages), and the client must report no error.
import fc from "fast-check";
import * as z from "zod";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AiSdkTarget,
  createSessionHost,
  type SessionHostOptions,
  serveNode,
  type ThreadStatus,
  toUIMessages,
  type UIMessage,
} from "../http.js";
import { type AgentOptions, defineClientTool, defineTool, type ScriptedStep, scripted } from "../index.js";
import { AI_SDK_CLIENTS, type ChatLike, type ChatOptions } from "./fixtures/ai-sdk-clients.js";
import { deleteFile, weather } from "./fixtures/frontend-tools.js";
import { gateTool } from "./helpers.js";

const pickColor = defineClientTool({
  name: "pick_color",
  description: "Asks the user for a color",
  parameters: z.object({ options: z.array(z.string()) }),
});
// Runs until its call is aborted: an abort test must not race a timer on a loaded machine.
const hang = defineTool({
  name: "hang",
  description: "Waits for the abort",
  parameters: z.object({}),
  execute: (_args, { signal }) =>
    new Promise<string>((_resolve, reject) =>
      signal?.addEventListener("abort", () => reject(new Error("aborted"))),
    ),
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function startHost(
  agent: SessionHostOptions["agent"],
  target: AiSdkTarget,
  more: Partial<SessionHostOptions> = {},
) {
  const { aiSdkProtocol } = await import("../http.js");
  const host = createSessionHost({
    agent,
    basePath: "/api",
    protocols: [aiSdkProtocol({ target })],
    authorize: "none-local-only",
    ...more,
  });
  const server = await serveNode(host.handle);
  closers.push(async () => {
    await host.close();
    await server.close();
  });
  return { host, base: `${server.url}/api` };
}

async function threadStatus(base: string, id: string): Promise<ThreadStatus & { messages: never[] }> {
  const response = await fetch(`${base}/threads/${id}`);
  expect(response.status).toBe(200);
  return response.json();
}

/** Waits until the client is done (automatic requests included) and the server's run rests or waits. */
async function settle(chat: ChatLike, base: string): Promise<void> {
  let stable = 0;
  for (let i = 0; i < 500 && stable < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const done = chat.status === "ready" || chat.status === "error";
    const server = done ? (await threadStatus(base, chat.id)).status : "running";
    stable = done && server !== "running" ? stable + 1 : 0;
  }
  expect(stable, "the client and the server settled").toBe(3);
}

/**
 * The client's messages, without what the transcript does not record: a decided call's approval id,
 * and the reason ai 7 keeps from a live approval request (the host sends it to tell ai 7 from ai 6;
 * a reloaded page does not need it).
 */
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

async function expectSameTranscript(chat: ChatLike, base: string, target: AiSdkTarget): Promise<void> {
  const status = await threadStatus(base, chat.id);
  const server = toUIMessages(status.messages, {
    target,
    pendingApprovals: status.pendingApprovals,
    finishedCalls: status.finishedCalls,
  });
  expect(clientView(chat.messages)).toEqual(JSON.parse(JSON.stringify(server)));
}

const partTypes = (message: UIMessage | undefined) => (message?.parts ?? []).map((p) => p.type);
const toolStates = (message: UIMessage | undefined) =>
  Object.fromEntries(
    (message?.parts ?? []).filter((p) => p.type === "dynamic-tool").map((p) => [p.toolName, p.state]),
  );

for (const client of AI_SDK_CLIENTS) {
  describe.skipIf(client.skip !== undefined)(
    `${client.name} Chat + DefaultChatTransport${client.skip ? ` (${client.skip})` : ""}`,
    () => {
      const target = client.target;
      const newChat = async (base: string, options: Partial<ChatOptions> & { id: string }) => {
        const errors: string[] = [];
        const chat = await client.createChat({ api: `${base}/chat`, errors, ...options });
        return { chat, errors };
      };

      it("streams reasoning and text into one assistant message; the transcripts agree", async () => {
        const options: AgentOptions = {
          provider: scripted([
            { thinking: "The user greets me.", text: "Hello there, how can I help?", chunkSize: 5 },
          ]),
        };
        const { base } = await startHost(() => options, target);
        const { chat, errors } = await newChat(base, { id: "greet" });
        await chat.sendMessage({ text: "Hi" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
        expect(partTypes(chat.messages[1])).toEqual(["step-start", "reasoning", "text"]);
        expect(chat.messages[1].parts[2]).toMatchObject({
          text: "Hello there, how can I help?",
          state: "done",
        });
        await expectSameTranscript(chat, base, target);
      });

      it("two approvals beside a parallel call: approve one, deny the other, the same run ends", async () => {
        const provider = scripted([
          {
            text: "On it.",
            toolCalls: [
              { name: "weather", arguments: { city: "Paris" } },
              { name: "delete_file", arguments: { path: "a.txt" } },
              { name: "delete_file", arguments: { path: "b.txt" } },
            ],
          },
          { text: "Deleted a.txt; b.txt stays." },
        ]);
        const { base, host } = await startHost(() => ({ provider, tools: [weather, deleteFile] }), target);
        const { chat, errors } = await newChat(base, { id: "approvals", auto: true });
        await chat.sendMessage({ text: "weather, then delete a.txt and b.txt" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        const runId = host.agent("approvals")!.runId;
        expect((await threadStatus(base, "approvals")).status).toBe("waiting");
        const parts = chat.messages[1].parts.filter((p) => p.type === "dynamic-tool");
        expect(parts.map((p) => [p.toolName, p.state])).toEqual([
          ["weather", "output-available"],
          ["delete_file", "approval-requested"],
          ["delete_file", "approval-requested"],
        ]);
        await expectSameTranscript(chat, base, target);

        const [a, b] = parts.slice(1).map((p) => (p.approval as { id: string }).id);
        await chat.addToolApprovalResponse({ id: a, approved: true });
        await chat.addToolApprovalResponse({ id: b, approved: false, reason: "keep it" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.messages).toHaveLength(2); // appended to the same assistant message
        expect(chat.messages[1].parts.filter((p) => p.type === "dynamic-tool").map((p) => p.state)).toEqual([
          "output-available",
          "output-available",
          "output-denied",
        ]);
        expect(partTypes(chat.messages[1]).at(-1)).toBe("text");
        const agent = host.agent("approvals")!;
        expect(agent.state).toBe("idle");
        expect(agent.runId ?? runId).toBe(runId); // one run, resumed; not a new one
        const denied = agent.messages.find((m) => m.role === "toolResult" && m.toolCallId === b);
        expect(denied).toMatchObject({
          isError: true,
          content: [{ text: expect.stringContaining("keep it") }],
        });
        await expectSameTranscript(chat, base, target);
      });

      it("with the docs' defaults (no target): the first Approve works and the answer shows", async () => {
        const provider = scripted([
          { toolCalls: [{ name: "delete_file", arguments: { path: "a.txt" } }] },
          { text: "Deleted a.txt." },
        ]);
        // The host as docs/frontends.md sets it up: default protocols, no `target` to discover.
        const host = createSessionHost({
          agent: () => ({ provider, tools: [deleteFile] }),
          basePath: "/api",
          authorize: () => true,
        });
        const server = await serveNode(host.handle);
        closers.push(async () => {
          await host.close();
          await server.close();
        });
        const base = `${server.url}/api`;
        const { chat, errors } = await newChat(base, { id: "defaults", auto: true });
        await chat.sendMessage({ text: "delete a.txt" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        const [call] = chat.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");
        expect(call).toMatchObject({ state: "approval-requested" });
        await chat.addToolApprovalResponse({ id: (call!.approval as { id: string }).id, approved: true });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.messages).toHaveLength(2);
        expect(toolStates(chat.messages[1])).toEqual({ delete_file: "output-available" });
        expect(chat.messages[1]!.parts.filter((p) => p.type === "text").map((p) => p.text)).toEqual([
          "Deleted a.txt.",
        ]);
        await expectSameTranscript(chat, base, target);
      });

      it("a page reloaded while the answer after an Approve streams gets the whole message back", async () => {
        const answer = "Deleted a.txt, and here is a long account of it. ".repeat(4);
        const provider = scripted([
          { text: "Deleting.", toolCalls: [{ name: "delete_file", arguments: { path: "a.txt" } }] },
          { text: answer, chunkSize: 4, delayMs: 10 },
        ]);
        const { base } = await startHost(() => ({ provider, tools: [deleteFile] }), target);
        const first = await newChat(base, { id: "reload", auto: true });
        await first.chat.sendMessage({ text: "delete a.txt" });
        await settle(first.chat, base);
        const [call] = first.chat.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");
        await first.chat.addToolApprovalResponse({
          id: (call!.approval as { id: string }).id,
          approved: true,
        });
        await until(() =>
          first.chat.messages[1]!.parts.some(
            (p) => p.type === "text" && (p.text as string).startsWith("Deleted"),
          ),
        );
        await first.chat.stop(); // the page goes away mid-answer (a disconnect: the run goes on)
        expect(first.errors).toEqual([]);

        // The reloaded page: its messages from GET /threads/{id} (the documented conversion), then resume.
        const status = await threadStatus(base, "reload");
        expect(status.status).toBe("running");
        const messages = toUIMessages(status.messages, {
          target,
          pendingApprovals: status.pendingApprovals,
          finishedCalls: status.finishedCalls,
        });
        const { chat, errors } = await newChat(base, { id: "reload", messages });
        await chat.resumeStream();
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
        expect(toolStates(chat.messages[1])).toEqual({ delete_file: "output-available" });
        expect(chat.messages[1]!.parts.filter((p) => p.type === "text").map((p) => p.text)).toEqual([
          "Deleting.",
          answer,
        ]);
        await expectSameTranscript(chat, base, target);
      });

      it("a page reloaded while an approval waits: toUIMessages(GET /threads/{id}) alone brings the card back", async () => {
        const provider = scripted([
          { toolCalls: [{ name: "delete_file", arguments: { path: "a.txt" } }] },
          { text: "Deleted a.txt." },
        ]);
        const { base } = await startHost(() => ({ provider, tools: [deleteFile] }), target);
        const first = await newChat(base, { id: "card", auto: true });
        await first.chat.sendMessage({ text: "delete a.txt" });
        await settle(first.chat, base);
        // The reloaded page: the thread's JSON as the host answers it, converted as documented.
        const thread = await (await fetch(`${base}/threads/card`)).json();
        const messages = toUIMessages(thread, { target });
        const { chat, errors } = await newChat(base, { id: "card", auto: true, messages });
        expect(toolStates(chat.messages[1])).toEqual({ delete_file: "approval-requested" });
        const [call] = chat.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");
        await chat.addToolApprovalResponse({ id: (call!.approval as { id: string }).id, approved: true });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(toolStates(chat.messages[1])).toEqual({ delete_file: "output-available" });
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "Deleted a.txt." });
        await expectSameTranscript(chat, base, target);
      });

      it("an approval with edited arguments (side route), then resumeStream(): what shows is what toUIMessages gives", async () => {
        const provider = scripted([
          { toolCalls: [{ name: "delete_file", arguments: { path: "a.txt" } }] },
          { text: "Done.", chunkSize: 2, delayMs: 10 },
        ]);
        const { base } = await startHost(() => ({ provider, tools: [deleteFile] }), target);
        const { chat, errors } = await newChat(base, { id: "edited" });
        await chat.sendMessage({ text: "delete a.txt" });
        await settle(chat, base);
        const [call] = chat.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");
        const approved = await fetch(`${base}/threads/edited/approve`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ toolCallId: call!.toolCallId, args: { path: "c.txt" } }),
        });
        expect(approved.status).toBe(200);
        await chat.resumeStream();
        await settle(chat, base);
        expect(errors).toEqual([]);
        const [done] = chat.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");
        expect(done).toMatchObject({ state: "output-available", output: "deleted c.txt" });
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "Done." });
        await expectSameTranscript(chat, base, target);
      });

      it("a client-run tool: the response ends with the call open, the client's output resumes the run", async () => {
        const provider = scripted([
          { toolCalls: [{ name: "pick_color", arguments: { options: ["red", "blue"] } }] },
          { text: "You picked blue." },
        ]);
        const { base, host } = await startHost(() => ({ provider, tools: [pickColor] }), target);
        const calls: string[] = [];
        const answer: { chat?: ChatLike } = {};
        const made = await newChat(base, {
          id: "client-tool",
          auto: true,
          onToolCall: (call) => {
            calls.push(call.toolName);
            // What an app's onToolCall does: answer after the UI asked the user.
            setTimeout(
              () =>
                void answer.chat!.addToolOutput({
                  toolCallId: call.toolCallId,
                  tool: call.toolName,
                  output: "blue",
                }),
              20,
            );
          },
        });
        const chat = made.chat;
        answer.chat = chat;
        await chat.sendMessage({ text: "pick a color" });
        await settle(chat, base);
        expect(made.errors).toEqual([]);
        expect(calls).toEqual(["pick_color"]);
        expect(toolStates(chat.messages[1])).toEqual({ pick_color: "output-available" });
        expect(partTypes(chat.messages[1]).at(-1)).toBe("text");
        const result = host.agent("client-tool")!.messages.find((m) => m.role === "toolResult");
        expect(result).toMatchObject({ toolName: "pick_color", content: [{ text: "blue" }], isError: false });
        await expectSameTranscript(chat, base, target);
      });

      it("a retried attempt that had streamed a tool call", async () => {
        const provider = scripted([
          {
            text: "Checking",
            toolCalls: [{ name: "weather", arguments: { city: "Rome" } }],
            error: { kind: "overloaded", message: "overloaded, try again" },
          },
          { text: "It is sunny in Rome.", toolCalls: [] },
        ]);
        const { base } = await startHost(
          () => ({ provider, tools: [weather], retry: { baseDelayMs: 1, jitter: 0 } }),
          target,
        );
        const { chat, errors } = await newChat(base, { id: "retry" });
        await chat.sendMessage({ text: "weather in Rome?" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.status).toBe("ready");
        if (target === 7) {
          // reset-step withdrew the failed attempt's text and tool call: exactly the transcript.
          expect(partTypes(chat.messages[1])).toEqual(["step-start", "text"]);
          await expectSameTranscript(chat, base, target);
        } else {
          // ai 6 has no reset-step: the failed attempt stays on screen, the retry follows it.
          expect(chat.messages[1].parts.at(-1)).toMatchObject({ type: "text", text: "It is sunny in Rome." });
        }
      });

      it("a steer sent over the side route mid-run shows inside the assistant message", async () => {
        const provider = scripted([
          { toolCalls: [{ name: "gated", arguments: {} }] },
          { text: "Noted: in French." },
        ]);
        // The call ends only once the steer is queued: no race with a timer on a loaded machine.
        const { tool: gated, open: release } = gateTool("gated", "done");
        const { base, host } = await startHost(() => ({ provider, tools: [gated] }), target);
        const { chat, errors } = await newChat(base, { id: "steer" });
        const sent = chat.sendMessage({ text: "do the slow thing" });
        await until(() => host.agent("steer")?.state === "running.executing");
        const steer = await fetch(`${base}/threads/steer/steer`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ text: "answer in French", id: "steer-1" }),
        });
        expect(steer.status).toBe(202);
        release();
        await sent;
        await settle(chat, base);
        expect(errors).toEqual([]);
        const steering = chat.messages[1].parts.find((p) => p.id === "steer-1")!;
        expect(steering.type).toBe(target === 7 ? "steering-message" : "data-agent-machine-steering");
        expect(host.agent("steer")!.messages.find((m) => m.id === "steer-1")).toMatchObject({
          source: "steer",
        });
        await expectSameTranscript(chat, base, target);
      });

      it("abort (side route), error, limit and loop endings reach the client as such", async () => {
        const scripts: Record<string, AgentOptions> = {
          abort: {
            provider: scripted([{ toolCalls: [{ name: "hang", arguments: {} }] }, { text: "never" }]),
            tools: [hang],
          },
          error: { provider: scripted([{ text: "Partial", error: { kind: "auth", message: "bad key" } }]) },
          limit: {
            provider: scripted([
              { toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] },
              { text: "Cold." },
            ]),
            tools: [weather],
            limits: { maxTurns: 1, onLimit: "stop" },
          },
          loop: {
            provider: scripted(() => ({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] })),
            tools: [weather],
            loopDetection: { maxIdenticalCalls: 2 },
          },
        };
        const { base, host } = await startHost((id) => scripts[id], target);
        const ended: Record<string, unknown> = {};
        for (const id of Object.keys(scripts)) {
          const { chat, errors } = await newChat(base, {
            id,
            onData: (part) => {
              if (part.type === "data-agent-machine-end")
                ended[id] = (part.data as { reason: string }).reason;
            },
          });
          const sent = chat.sendMessage({ text: "go" });
          if (id === "abort") {
            await until(() => host.agent("abort")?.state === "running.executing");
            expect(
              (
                await fetch(`${base}/threads/abort/abort`, {
                  method: "POST",
                  headers: { "content-type": "application/json" },
                })
              ).status,
            ).toBe(200);
          }
          await sent;
          await settle(chat, base);
          if (id === "error") {
            expect(chat.status).toBe("error");
            expect(errors).toEqual(["bad key"]);
          } else {
            expect(errors).toEqual([]);
            expect(chat.status).toBe("ready");
          }
        }
        expect(ended).toEqual({ abort: "aborted", error: "error", limit: "limit", loop: "loop" });
      });

      it("fuzz: random runs (text, thinking, server / approval / client-run calls, retries) give 0 client errors", async () => {
        const step = fc.record({
          thinking: fc.option(fc.constantFrom("Hmm.", "Let me see, step by step."), { nil: undefined }),
          text: fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }),
          calls: fc.array(fc.constantFrom("weather", "delete_file", "pick_color"), { maxLength: 2 }),
          fails: fc.boolean(),
        });
        const runs = fc.array(step, { minLength: 1, maxLength: 3 });
        const scripts = new Map<string, ScriptedStep[]>();
        const { base } = await startHost(
          (id) => ({
            provider: scripted(scripts.get(id)!),
            tools: [weather, deleteFile, pickColor],
            retry: { baseDelayMs: 1, jitter: 0 },
          }),
          target,
        );
        let n = 0;
        await fc.assert(
          fc.asyncProperty(runs, fc.infiniteStream(fc.boolean()), async (steps, approvals) => {
            const id = `fuzz-${n++}`;
            const script: ScriptedStep[] = [];
            let retried = false;
            for (const s of steps) {
              const toolCalls = s.calls.map((name, i) => ({
                name,
                id: `c${script.length}_${i}`,
                arguments:
                  name === "weather"
                    ? { city: "Oslo" }
                    : name === "delete_file"
                      ? { path: "x" }
                      : { options: ["a"] },
              }));
              const answer: ScriptedStep = {
                thinking: s.thinking,
                text: s.text ?? (toolCalls.length ? undefined : "ok"),
                toolCalls,
              };
              if (s.fails) {
                retried = true;
                script.push({
                  ...answer,
                  toolCalls: toolCalls.map((c) => ({ ...c, id: `${c.id}x` })),
                  error: { kind: "overloaded", message: "try again" },
                });
              }
              script.push(answer);
            }
            script.push({ text: "Final." }, { text: "Final." }, { text: "Final." });
            scripts.set(id, script);
            const answer: { chat?: ChatLike } = {};
            const { chat, errors } = await newChat(base, {
              id,
              auto: true,
              // As an app's onToolCall does: it runs the tools the page owns (it sees every call).
              onToolCall: (call) => {
                if (call.toolName !== "pick_color") return;
                const output = { toolCallId: call.toolCallId, tool: call.toolName, output: "a" };
                setTimeout(() => void answer.chat!.addToolOutput(output), 1);
              },
            });
            answer.chat = chat;
            await chat.sendMessage({ text: "go" });
            const choices = approvals[Symbol.iterator]();
            for (let round = 0; round < 10; round++) {
              await settle(chat, base);
              const waiting = chat.messages.at(-1)!.parts.filter((p) => p.state === "approval-requested");
              if (waiting.length === 0) break;
              for (const part of waiting) {
                await chat.addToolApprovalResponse({
                  id: (part.approval as { id: string }).id,
                  approved: choices.next().value as boolean,
                });
              }
            }
            await settle(chat, base);
            expect(errors).toEqual([]);
            expect((await threadStatus(base, id)).status).toBe("idle");
            if (target === 7 || !retried) await expectSameTranscript(chat, base, target);
          }),
          { numRuns: 12, seed: 24 },
        );
      });

      it("a message refused while the run goes on (after stop()) does not lock the chat: the next one is answered", async () => {
        const provider = scripted([
          { text: "A long answer. ".repeat(30), chunkSize: 4, delayMs: 5 },
          { text: "Hello again." },
        ]);
        const { base, host } = await startHost(() => ({ provider }), target);
        const { chat, errors } = await newChat(base, { id: "refused" });
        const sent = chat.sendMessage({ text: "tell me a long story" });
        await until(() => chat.messages[1]?.parts.some((p) => p.type === "text") ?? false);
        await chat.stop(); // a disconnect: the run goes on
        await sent;
        // The user types on while the run still streams: refused (run_active), and useChat keeps
        // the refused message in its list.
        await chat.sendMessage({ text: "are you there?" });
        expect(chat.status).toBe("error");
        expect(errors.join()).toContain("run_active");
        await until(() => host.agent("refused")!.state === "idle");
        errors.length = 0;
        await chat.sendMessage({ text: "hello?" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.status).toBe("ready");
        expect(
          chat.messages
            .at(-1)!
            .parts.filter((p) => p.type === "text")
            .map((p) => p.text),
        ).toEqual(["Hello again."]);
        // The refused message was never taken: the thread has the message that was answered.
        const users = host
          .agent("refused")!
          .messages.filter((m) => m.role === "user")
          .map((m) => m.content);
        expect(users).toEqual(["tell me a long story", "hello?"]);
      });

      it("a dropped connection does not abort the run; the resumed stream replaces the partial message", async () => {
        const text =
          "A long answer that streams in many small pieces so the client can drop halfway. ".repeat(3);
        const provider = scripted([{ text, chunkSize: 4, delayMs: 10 }]);
        const { base, host } = await startHost(() => ({ provider }), target);
        const { chat, errors } = await newChat(base, { id: "drop" });
        const sent = chat.sendMessage({ text: "tell me a long story" });
        await until(
          () => (chat.messages[1]?.parts.find((p) => p.type === "text")?.text as string)?.length > 20,
        );
        await chat.stop(); // the transport's connection is cut: a disconnect, not an abort
        await sent;
        expect(host.agent("drop")!.state).not.toBe("idle");
        await chat.resumeStream();
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
        expect(chat.messages[1].parts.filter((p) => p.type === "text").map((p) => p.text)).toEqual([text]);
        const agent = host.agent("drop")!;
        expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
        await expectSameTranscript(chat, base, target);
        // After the end there is nothing to resume: 204, the transport's "no stream".
        const again = await fetch(`${base}/chat/drop/stream`);
        expect(again.status).toBe(204);
      });
    },
  );
}

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
