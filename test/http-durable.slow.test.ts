// The session host over durable sessions: `createSessionHost({ durable })` in front of Restate (one
// real server for the file, from the npm package), the agent served as Restate services, driven by
// the real clients (`ai` 6/7 `Chat` + `DefaultChatTransport`, `@ag-ui/client` HttpAgent 1.0 and
// 0.0.59). The test agent answers from the first user message (test/fixtures/durable-agent.ts).
// After each exchange the client's messages must equal the server's transcript as the protocol's
// messages, and the client must report no error.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  agentMachineProtocol,
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
import { firstValueFrom, toArray } from "rxjs";
import { createRemoteAgentStore, remoteAgentHandle } from "../react.js";
import {
  createSessionClient,
  registerDeployment,
  type RestateServer,
  type SessionClient,
  startRestateServer,
} from "../restate.js";
import { type ClientRun, httpClient, runClient } from "./fixtures/ag-ui-clients.js";
import { AI_SDK_CLIENTS, type ChatLike, type ChatOptions } from "./fixtures/ai-sdk-clients.js";
import { eventually } from "./fixtures/durable-harness.js";

let restate: RestateServer;
let client: SessionClient;
let service: Service;

// The agent's services run in a process of their own (test/fixtures/durable-service.ts), on one
// port for the whole file, so a test can kill it and start it again where Restate expects it.
const SERVICE = fileURLToPath(new URL("./fixtures/durable-service.ts", import.meta.url));

interface Service {
  port: number;
  kill(): Promise<void>;
}

async function startService(port = 0): Promise<Service> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVICE, String(port), ""], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the service process exited (${code}) before serving`)));
  });
  return {
    port: ready,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

beforeAll(async () => {
  restate = await startRestateServer();
  service = await startService();
  await registerDeployment({ adminUrl: restate.adminUrl, uri: `http://127.0.0.1:${service.port}` });
  client = createSessionClient({ url: restate.ingressUrl });
});

afterAll(async () => {
  await service?.kill();
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
    protocols: [aiSdkProtocol({ target }), agUiProtocol(), agentMachineProtocol()],
    authorize: "none-local-only",
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
      // The reason ai 7 keeps from a live approval request (how the host tells it from ai 6).
      else if (part.type === "dynamic-tool")
        delete (part.approval as { requestReason?: string }).requestReason;
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

/** The JSON frames of an agent-machine event stream. */
const framesOf = (text: string) =>
  text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data:"))
    .map(
      (frame) =>
        JSON.parse(frame.slice(5)) as {
          type: string;
          runId?: string;
          seq: number;
          event: { type: string };
        },
    );

const toolStates = (message: UIMessage | undefined) =>
  (message?.parts ?? []).filter((p) => p.type === "dynamic-tool").map((p) => [p.toolName, p.state]);

const runningClients = AI_SDK_CLIENTS.filter((c) => c.skip === undefined);

// A client this Node cannot run (ai 7 on Node 20) is reported skipped, with why, not left out.
for (const chatClient of AI_SDK_CLIENTS) {
  const target = chatClient.target;
  const newChat = async (base: string, options: Partial<ChatOptions> & { id: string }) => {
    const errors: string[] = [];
    const chat = await chatClient.createChat({ api: `${base}/chat`, errors, ...options });
    return { chat, errors };
  };

  const suffix = chatClient.skip ? ` (${chatClient.skip})` : "";
  describe.skipIf(chatClient.skip !== undefined)(
    `durable threads with ${chatClient.name} Chat + DefaultChatTransport${suffix}`,
    () => {
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

      it("a steer over the side route reaches the running durable run and shows in the answer", async () => {
        const { base } = await startHost({}, target);
        const id = `steer-${target}`;
        const { chat, errors } = await newChat(base, { id });
        const sent = chat.sendMessage({ text: "steer" });
        await eventually(async () => (await threadStatus(base, id)).status === "running", "the run");
        const steer = await post(`${base}/threads/${id}/steer`, { text: "in French, please", id: "steer-1" });
        expect(steer.status).toBe(202);
        await sent;
        await settle(chat, base);
        expect(errors).toEqual([]);
        const transcript = await client.transcript(id);
        expect(transcript.find((m) => m.id === "steer-1")).toMatchObject({ role: "user", source: "steer" });
        // The model's second step saw it: the answer after it counts two assistant messages.
        expect(transcript.at(-1)).toMatchObject({ role: "assistant", content: [{ text: "answer 1" }] });
        const steering = chat.messages[1].parts.find((p) => p.id === "steer-1");
        expect(steering?.type).toBe(target === 7 ? "steering-message" : "data-agent-machine-steering");
        await expectSameUI(chat, base, target);
      });

      it("abort over the side route ends the durable run; the client sees an aborted run", async () => {
        const { base } = await startHost({}, target);
        const id = `abort-${target}`;
        const { chat, errors } = await newChat(base, { id });
        const sent = chat.sendMessage({ text: "long" });
        await eventually(
          async () => (await client.status(id).catch(() => undefined))?.state === "running",
          "run",
        );
        const aborted = await post(`${base}/threads/${id}/abort`, {});
        expect(await aborted.json()).toEqual({ aborted: true });
        await sent;
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(await client.status(id)).toMatchObject({ state: "idle", lastRun: { reason: "aborted" } });
        expect((await threadStatus(base, id)).status).toBe("idle");
        // Nothing runs any more: a second abort finds no run.
        expect(await (await post(`${base}/threads/${id}/abort`, {})).json()).toEqual({ aborted: false });
        await expectSameUI(chat, base, target);
      });

      it("a dropped connection leaves the durable run going; the resumed stream has it all, once", async () => {
        const { base } = await startHost({}, target);
        const id = `drop-${target}`;
        const { chat, errors } = await newChat(base, { id });
        const sent = chat.sendMessage({ text: "long" });
        await eventually(
          () =>
            chat.messages[1]?.parts.some((p) => p.type === "dynamic-tool" && p.state === "output-available"),
          "the first call's output",
        );
        await chat.stop(); // the connection is cut: a disconnect, not an abort
        await sent;
        expect((await client.status(id)).state).toBe("running");
        await chat.resumeStream();
        await settle(chat, base);
        expect(errors).toEqual([]);
        expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
        expect(toolStates(chat.messages[1])).toEqual([
          ["slow", "output-available"],
          ["slow", "output-available"],
          ["slow", "output-available"],
        ]);
        expect(chat.messages[1].parts.at(-1)).toMatchObject({ type: "text", text: "finished" });
        await expectSameUI(chat, base, target);
        // After the end there is nothing to resume: 204, the transport's "no stream".
        expect((await fetch(`${base}/chat/${id}/stream`)).status).toBe(204);
      });

      it("a page reloaded while a call waits gets its approval card from the server, and its answer resumes the run", async () => {
        const { base } = await startHost({}, target);
        const id = `reload-${target}`;
        const { chat, errors } = await newChat(base, { id });
        await chat.sendMessage({ text: "approval" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        // The reload: the page's messages come from GET /threads/{id}, not from the old client.
        const status = await threadStatus(base, id);
        const reloaded = await newChat(base, {
          id,
          auto: true,
          messages: toUIMessages(status.messages, { target, pendingApprovals: status.pendingApprovals }),
        });
        expect(clientView(reloaded.chat.messages)).toEqual(clientView(chat.messages));
        const part = reloaded.chat.messages[1]!.parts.find((p) => p.type === "dynamic-tool")!;
        expect(part.state).toBe("approval-requested");
        await reloaded.chat.addToolApprovalResponse({
          id: (part.approval as { id: string }).id,
          approved: true,
        });
        await settle(reloaded.chat, base);
        expect(reloaded.errors).toEqual([]);
        expect(toolStates(reloaded.chat.messages[1])).toEqual([["guarded", "output-available"]]);
        expect(reloaded.chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "Deployed." });
        await expectSameUI(reloaded.chat, base, target);
      });

      it("a decision another app takes through the durable client: the host's thread follows it to the end", async () => {
        const { base } = await startHost({}, target);
        const id = `elsewhere-${target}`;
        const { chat, errors } = await newChat(base, { id });
        await chat.sendMessage({ text: "approval" });
        await settle(chat, base);
        expect(errors).toEqual([]);
        await client.deny(id, "g1", "another app said no");
        const resumed = chat.resumeStream();
        await eventually(async () => (await threadStatus(base, id)).status === "idle", "the run's end");
        await resumed;
        expect(errors).toEqual([]);
        const status = await threadStatus(base, id);
        expect(status.pendingApprovals).toEqual([]);
        expect(status.messages.find((m) => m.role === "toolResult")).toMatchObject({
          isError: true,
          content: [{ text: expect.stringContaining("another app said no") }],
        });
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
                void answer.chat!.addToolOutput({
                  toolCallId: call.toolCallId,
                  tool: "pick",
                  output: "blue",
                }),
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
    },
  );
}

describe.each(["1.0", "0.0.59"] as const)("durable threads with @ag-ui/client %s HttpAgent", (version) => {
  const tag = version === "1.0" ? "ag10" : "ag059";

  function expectClean(run: ClientRun, outcome?: string) {
    expect(run.failures).toEqual([]);
    expect(run.logged).toEqual([]);
    expect(run.types.at(-1)).toMatch(/^RUN_(FINISHED|ERROR)$/);
    if (outcome !== undefined) expect(run.finished?.outcome).toBe(outcome);
  }

  async function expectSameAgUi(agent: { messages: unknown[] }, base: string, id: string) {
    const status = await threadStatus(base, id);
    expect(agent.messages).toEqual(toAgUiMessages(status.messages));
  }

  it("an approval as an interrupt, resumed with edited arguments; the transcripts agree", async () => {
    const { base } = await startHost();
    const id = `ag-approval-${tag}`;
    const agent = httpClient(version, `${base}/ag-ui`, id);
    agent.addMessage({ id: "u1", role: "user", content: `approval #${tag}` });
    const first = await runClient(agent);
    expectClean(first, "interrupt");
    const call = `g1-${tag}`;
    expect(first.finished?.interrupts?.map((i) => i.id)).toEqual([call]);
    await expectSameAgUi(agent, base, id);

    const resume = [
      {
        interruptId: call,
        status: "resolved",
        payload: { approved: true, editedArgs: { action: "rollback" } },
      },
    ];
    const second = await runClient(agent, { resume });
    expectClean(second, "success");
    expect(second.types).toContain("TEXT_MESSAGE_CONTENT");
    const result = (await client.transcript(id)).find((m) => m.role === "toolResult");
    expect(result).toMatchObject({ isError: false, editedArgs: { action: "rollback" } });
    expect(result?.content.at(-1)).toMatchObject({ text: "did rollback" });
    await expectSameAgUi(agent, base, id);
  });

  it("a resume whose second answer is an edit the schema refuses applies neither; a correct one goes on", async () => {
    const { base } = await startHost();
    const id = `ag-two-${tag}`;
    const agent = httpClient(version, `${base}/ag-ui`, id);
    agent.addMessage({ id: "u1", role: "user", content: `two approvals #${tag}` });
    expectClean(await runClient(agent), "interrupt");
    const [g1, g2] = [`g1-${tag}`, `g2-${tag}`];
    const before = await client.transcript(id);
    const partly = await runClient(agent, {
      resume: [
        { interruptId: g1, status: "resolved", payload: { approved: true } },
        { interruptId: g2, status: "resolved", payload: { approved: true, editedArgs: { action: 42 } } },
      ],
    });
    expect(partly.failures.join("\n")).toMatch(/400/);
    // Nothing reached Restate: both calls still wait, the transcript is the same, the run goes on.
    const status = await client.status(id);
    expect(status.state).toBe("running");
    // (In the order the parallel calls asked, which Restate does not fix.)
    const ids = (pending: { toolCallId: string }[]) => pending.map((p) => p.toolCallId).sort();
    expect(ids(status.pendingApprovals)).toEqual([g1, g2]);
    expect(await client.transcript(id)).toEqual(before);
    const host = await threadStatus(base, id);
    expect([host.status, ids(host.pendingApprovals)]).toEqual(["waiting", [g1, g2]]);

    const second = await runClient(agent, {
      resume: [
        { interruptId: g1, status: "resolved", payload: { approved: true } },
        {
          interruptId: g2,
          status: "resolved",
          payload: { approved: true, editedArgs: { action: "rollback" } },
        },
      ],
    });
    expectClean(second, "success");
    const results = (await client.transcript(id)).filter((m) => m.role === "toolResult");
    expect(results.map((r) => [r.toolCallId, r.isError, r.editedArgs])).toEqual([
      [g1, false, undefined],
      [g2, false, { action: "rollback" }],
    ]);
    await expectSameAgUi(agent, base, id);
  });

  it("a denial over the side route while the client is away; the client reconnects to the result", async () => {
    const { base } = await startHost();
    const id = `ag-deny-${tag}`;
    const agent = httpClient(version, `${base}/ag-ui`, id);
    agent.addMessage({ id: "u1", role: "user", content: `approval #${tag}x` });
    expectClean(await runClient(agent), "interrupt");
    // An edit the tool's schema refuses: 400, and the call still waits.
    const bad = await post(`${base}/threads/${id}/approve`, {
      toolCallId: `g1-${tag}x`,
      args: { action: 42 },
    });
    expect(bad.status).toBe(400);
    expect((await threadStatus(base, id)).pendingApprovals.map((p) => p.toolCallId)).toEqual([`g1-${tag}x`]);
    const denied = await post(`${base}/threads/${id}/deny`, { toolCallId: `g1-${tag}x`, reason: "not now" });
    expect(denied.status).toBe(200);
    await eventually(async () => (await client.status(id)).state === "idle", "the run's end");
    const result = (await client.transcript(id)).find((m) => m.role === "toolResult");
    expect(result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("not now") }] });
    // The page reloads and connects: nothing in progress any more, so the transcript and a
    // finished run.
    const reloaded = httpClient(version, `${base}/ag-ui`, id);
    const reconnect = await runClient(reloaded, {}, "connectAgent");
    expectClean(reconnect, "success");
    await expectSameAgUi(reloaded, base, id);
  });
});

describe("durable threads: maxThreads", () => {
  it("drops resting durable threads past the bound; the next request reads them again from Restate", async () => {
    const { base } = await startHost({ maxThreads: 1 });
    const user = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });
    const chat = async (id: string, messages: unknown[]) => {
      const response = await post(`${base}/chat`, { id, trigger: "submit-message", messages });
      expect(response.status).toBe(200);
      const chunks = (await response.text())
        .split("\n\n")
        .filter((frame) => frame.startsWith("data: {"))
        .map((frame) => JSON.parse(frame.slice(6)) as { type: string; delta?: string });
      expect(chunks.at(-1)).toMatchObject({ type: "finish" });
      return chunks;
    };
    await chat("max-a", [user("a1", "first")]);
    await chat("max-b", [user("b1", "second")]); // over the bound: max-a is dropped
    // Read again from Restate (and max-b dropped in turn): the transcript as Restate has it.
    const a = await threadStatus(base, "max-a");
    expect(a.status).toBe("idle");
    expect(a.messages).toEqual(await client.transcript("max-a"));
    expect(a.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    // A new prompt on a thread read again: one run, its own answer once (nothing of the last run).
    const again = await chat("max-b", [user("b1", "second"), user("b2", "third")]);
    expect(again.filter((c) => c.type === "text-delta").map((c) => c.delta)).toEqual(["You said: second"]);
    const b = await client.transcript("max-b");
    expect(b.map((m) => (m.id?.startsWith("b") ? m.id : m.role))).toEqual([
      "b1",
      "assistant",
      "b2",
      "assistant",
    ]);
    expect((await threadStatus(base, "max-b")).messages).toEqual(b);
  });
});

describe("durable threads: authentication and restarts", () => {
  it("an event over the host's route wakes an idle durable thread once per sender id (source event)", async () => {
    const { base } = await startHost();
    await client.prompt("evented", "Hello");
    const delivered = await post(`${base}/threads/evented/events`, {
      id: "gh_81",
      text: "CI failed on main",
    });
    expect(delivered.status).toBe(202);
    expect(await delivered.json()).toEqual({ started: true, id: "event_gh_81" });
    const transcript = await eventually(async () => {
      const messages = await client.transcript("evented");
      return messages.length === 4 && messages;
    }, "the event's run");
    expect(transcript[2]).toMatchObject({ role: "user", id: "event_gh_81", source: "event" });
    const again = await post(`${base}/threads/evented/events`, { id: "gh_81", text: "CI failed on main" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ duplicate: true, id: "event_gh_81" });
  });

  it("a request the auth hook refuses gets 403 and stores nothing in Restate", async () => {
    const { base } = await startHost({
      authorize: (request, threadId) => threadId.startsWith(`${request.headers.get("x-user") ?? "nobody"}:`),
    });
    const chat = {
      id: "alice:1",
      messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "tools" }] }],
      trigger: "submit-message",
    };
    const refused = await fetch(`${base}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-user": "bob" },
      body: JSON.stringify(chat),
    });
    expect(refused.status).toBe(403);
    for (const path of ["threads/alice:1", "chat/alice:1/stream"]) {
      expect((await fetch(`${base}/${path}`, { headers: { "x-user": "bob" } })).status).toBe(403);
    }
    expect((await post(`${base}/threads/alice:1/steer`, { text: "hi" })).status).toBe(403);
    // Nothing reached Restate: the session does not exist.
    const status = await client.status("alice:1").catch((error: { status?: number }) => error.status);
    expect(status).toBe(404);
    // Alice herself is served.
    const allowed = await fetch(`${base}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-user": "alice" },
      body: JSON.stringify(chat),
    });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain("Both noted.");
  });

  it("agent-machine/react's remote store follows a durable thread: approve from the page, the views agree", async () => {
    const { base } = await startHost();
    const remote = createRemoteAgentStore({ url: base, threadId: "remote" });
    const outcome = remote.actions.prompt("approval #remote");
    await eventually(
      () => remote.getSnapshot().pendingApprovals.map((p) => p.toolCallId)[0] === "g1-remote",
      "the approval in the page's view",
    );
    expect(remote.getSnapshot().running).toBe(true);
    await remote.actions.approve("g1-remote");
    expect((await outcome).reason).toBe("stop");
    await eventually(() => !remote.getSnapshot().running, "the page's view to rest");
    const view = remote.getSnapshot();
    expect(view).toMatchObject({ pendingApprovals: [], toolCalls: [] });
    expect(view.error).toBeUndefined();
    expect(view.messages).toEqual(await client.transcript("remote"));
  });

  it("the host restarts mid-run (Restate and the service go on): a reconnect to the new host replays the run from agent_start, then live; eventsSince over HTTP resumes it from a seq", async () => {
    const first = await startHost();
    const id = "host-restart";
    const started = await post(`${first.base}/threads/${id}/run`, {
      message: { text: "long #hr", id: "u-hr" },
    });
    expect(started.status).toBe(200);
    // Read the run's stream until its first call has ended, then the host goes away.
    const reader = started.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes('"tool_execution_end"')) text += (await reader.read()).value ?? "";
    await reader.cancel();
    const runId = framesOf(text).find((f) => f.type === "event" && f.runId)!.runId!;
    await closers.pop()!();

    const second = await startHost();
    const handle = remoteAgentHandle({ url: second.base, threadId: id });
    const resumed = firstValueFrom(handle.eventsSince(runId, 2).pipe(toArray()));
    const replayed = await fetch(`${second.base}/threads/${id}/events`);
    expect(replayed.status).toBe(200);
    const frames = framesOf(await replayed.text());
    expect(frames[0]).toMatchObject({ type: "open", kind: "replay", runId });
    const events = frames.filter((f) => f.type === "event");
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events[0]!.event.type).toBe("agent_start");
    expect(events.filter((e) => e.event.type === "agent_end")).toHaveLength(1);
    expect(events.filter((e) => e.event.type === "tool_execution_end")).toHaveLength(3);
    expect(frames.at(-1)).toMatchObject({ type: "close", ending: { kind: "end" } });
    // The same events, by run and seq, through the contract over HTTP.
    expect((await resumed).map(({ seq, event }) => ({ seq, event }))).toEqual(
      events.slice(2).map(({ seq, event }) => ({ seq, event })),
    );
    expect(await handle.messages()).toEqual(await client.transcript(id));
  });

  it("agent-machine/react's remote store on a restarted host: a page reloaded mid-run follows the run from its start to its end", async () => {
    const first = await startHost();
    const id = "store-restart";
    const page = createRemoteAgentStore({ url: first.base, threadId: id });
    void page.actions.prompt("long #sr").catch(() => undefined);
    await eventually(() => page.getSnapshot().toolCalls.length > 0, "the first call in the page");
    await closers.pop()!();

    const second = await startHost();
    const reloaded = createRemoteAgentStore({ url: second.base, threadId: id });
    const seen: string[] = [];
    reloaded.subscribe(() => {
      for (const call of reloaded.getSnapshot().toolCalls)
        if (!seen.includes(call.toolCallId)) seen.push(call.toolCallId);
    });
    await eventually(
      () => reloaded.getSnapshot().outcome?.reason === "stop",
      "the run's end in the reloaded page",
    );
    // The calls it showed in flight: each of the run's, the one before the restart included.
    expect(seen).toEqual(["l0-sr", "l1-sr", "l2-sr"]);
    const view = reloaded.getSnapshot();
    expect(view).toMatchObject({ state: "idle", running: false, toolCalls: [], pendingApprovals: [] });
    expect(view.error).toBeUndefined();
    expect(view.messages).toEqual(await client.transcript(id));
  });

  // Last in the file: it restarts the service process every other test uses.
  it("the serving side restarts mid-run (service and host): a new host follows the run to its end", async () => {
    const target = runningClients[0]!.target;
    const first = await startHost({}, target);
    const id = "restart";
    const errors: string[] = [];
    const chat = await runningClients[0]!.createChat({ id, api: `${first.base}/chat`, errors });
    const sent = chat.sendMessage({ text: "long" });
    await eventually(
      () => chat.messages[1]?.parts.some((p) => p.type === "dynamic-tool" && p.state === "output-available"),
      "the first call's output",
    );
    // The whole serving side goes: the service process is killed, the host closed.
    await service.kill();
    await chat.stop();
    await sent;
    await closers.pop()!();
    service = await startService(service.port);

    const second = await startHost({}, target);
    const resumed = await runningClients[0]!.createChat({
      id,
      api: `${second.base}/chat`,
      errors,
      messages: chat.messages,
    });
    await resumed.resumeStream();
    await settle(resumed, second.base);
    expect(errors).toEqual([]);
    expect(await client.status(id)).toMatchObject({ state: "idle", lastRun: { reason: "stop" } });
    expect(toolStates(resumed.messages[1])).toEqual([
      ["slow", "output-available"],
      ["slow", "output-available"],
      ["slow", "output-available"],
    ]);
    expect(resumed.messages[1].parts.at(-1)).toMatchObject({ type: "text", text: "finished" });
    await expectSameUI(resumed, second.base, target);
  });
});
