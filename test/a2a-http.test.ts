// An agent served over A2A on 127.0.0.1 (agent-machine/a2a), driven by the official SDK's client
// (@a2a-js/sdk/client), and a remote A2A agent used as a tool.
import { type Message, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory } from "@a2a-js/sdk/client";
import { connect } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { a2aAgentTool, createA2aHandler, type A2aServerOptions } from "../a2a.js";
import { type NodeServer, serveNode } from "../http.js";
import { type Agent, createAgent, createPermissions, defineTool, scripted } from "../index.js";
import { runTool } from "../testing.js";
import { gateTool } from "./helpers.js";

const servers: NodeServer[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const server of servers.splice(0)) await server.close();
});

async function serve(agent: A2aServerOptions["agent"], extra: Partial<A2aServerOptions> = {}) {
  const handler = createA2aHandler({
    card: { name: "helper", description: "Helps with things" },
    agent,
    authorize: "none-local-only",
    ...extra,
  });
  closers.push(() => handler.close());
  const node = await serveNode(handler);
  servers.push(node);
  const client = await new ClientFactory().createFromUrl(node.url);
  return { url: node.url, client };
}

function message(text: string, over: Partial<Message> = {}) {
  return {
    tenant: "",
    message: {
      messageId: crypto.randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: "text" as const, value: text },
          metadata: undefined,
          filename: "",
          mediaType: "text/plain",
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
      ...over,
    },
    configuration: undefined,
    metadata: undefined,
  };
}

function decision(taskId: string, contextId: string, value: Record<string, unknown>) {
  return message("", {
    taskId,
    contextId,
    parts: [
      { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" },
    ],
  });
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const response of stream) out.push(response);
  return out;
}

const textOf = (parts: readonly { content?: { $case: string; value?: unknown } }[] | undefined) =>
  (parts ?? []).map((p) => (p.content?.$case === "text" ? String(p.content.value) : "")).join("");

function deployTool(ran: string[]) {
  return defineTool({
    name: "deploy",
    description: "Deploys",
    parameters: z.object({ env: z.string() }),
    execute: async ({ env }) => {
      ran.push(env);
      return `deployed to ${env}`;
    },
  });
}

function seenContext(events: readonly StreamResponse[]): string {
  const task = events.find((e) => e.payload?.$case === "task")?.payload;
  return task?.$case === "task" ? task.value.contextId : "";
}

async function taskState(client: Client, id: string): Promise<TaskState | undefined> {
  return (await client.getTask({ tenant: "", id, historyLength: 0 })).status?.state;
}

describe("an agent served over A2A", () => {
  it("serves its agent card at /.well-known/agent-card.json, naming its endpoint", async () => {
    const { url, client } = await serve(() => createAgent({ provider: scripted([{ text: "hi" }]) }));
    const card = await client.getAgentCard();
    expect(card).toMatchObject({
      name: "helper",
      description: "Helps with things",
      capabilities: { streaming: true },
      supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    });
  });

  it("SendMessage runs the agent and answers a completed task with the answer", async () => {
    const { client } = await serve(() => createAgent({ provider: scripted([{ text: "Hello there" }]) }));
    const task = (await client.sendMessage(message("hi"))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message?.parts)).toBe("Hello there");
    expect(task.artifacts.map((a) => textOf(a.parts))).toEqual(["Hello there"]);
  });

  it("SendStreamingMessage streams the task: submitted, working, the answer in artifact chunks, completed", async () => {
    const { client } = await serve(() =>
      createAgent({ provider: scripted([{ text: "Hello there, friend", chunkSize: 5 }]) }),
    );
    const events = await collect(client.sendMessageStream(message("hi")));
    const kinds = events.map((e) => e.payload?.$case);
    expect(kinds[0]).toBe("task");
    expect(kinds.at(-1)).toBe("statusUpdate");
    const states = events.flatMap((e) =>
      e.payload?.$case === "statusUpdate" ? [e.payload.value.status?.state] : [],
    );
    expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    const chunks = events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [e.payload.value] : []));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.append)).toEqual([false, ...chunks.slice(1).map(() => true)]);
    expect(chunks.map((c) => textOf(c.artifact?.parts)).join("")).toBe("Hello there, friend");
  });

  it("an approval is input-required; a bad answer is refused with nothing changed; approve runs the call", async () => {
    const ran: string[] = [];
    const { client } = await serve(() =>
      createAgent({
        provider: scripted([
          { toolCalls: [{ id: "d1", name: "deploy", arguments: { env: "prod" } }] },
          { text: "Deployed." },
        ]),
        tools: [deployTool(ran)],
        permissions: createPermissions(),
      }),
    );
    const first = await collect(client.sendMessageStream(message("deploy it")));
    const last = first.at(-1)!.payload;
    expect(last?.$case).toBe("statusUpdate");
    if (last?.$case !== "statusUpdate") throw new Error("unreachable");
    const { taskId, contextId, status } = last.value;
    expect(status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(status?.message?.parts.find((p) => p.content?.$case === "data")?.content?.value).toEqual({
      toolCallId: "d1",
      toolName: "deploy",
      args: { env: "prod" },
    });
    expect(ran).toEqual([]);

    // Neither a decision nor a call that waits: refused, the task still waits.
    await expect(client.sendMessage(message("maybe later", { taskId, contextId }))).rejects.toThrow(
      /approve/,
    );
    await expect(
      client.sendMessage(decision(taskId, contextId, { toolCallId: "d9", approve: true })),
    ).rejects.toThrow(/d9/);
    expect(await taskState(client, taskId)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(ran).toEqual([]);

    const done = (await client.sendMessage(decision(taskId, contextId, { approve: true }))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(done.status?.message?.parts)).toBe("Deployed.");
    expect(ran).toEqual(["prod"]);
  });

  it("a denial reaches the model with its reason, and the call never runs", async () => {
    const ran: string[] = [];
    const provider = scripted([
      { toolCalls: [{ id: "d1", name: "deploy", arguments: { env: "prod" } }] },
      { text: "Understood." },
    ]);
    const { client } = await serve(() =>
      createAgent({ provider, tools: [deployTool(ran)], permissions: createPermissions() }),
    );
    const waiting = (await client.sendMessage(message("deploy it"))) as Task;
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = (await client.sendMessage(
      decision(waiting.id, waiting.contextId, { approve: false, reason: "not on a Friday" }),
    )) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(ran).toEqual([]);
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain("not on a Friday");
  });

  it("CancelTask aborts a running run: the stream ends canceled and the tool sees its abort", async () => {
    const gate = gateTool("slow");
    let agent: Agent | undefined;
    const { client } = await serve(() => {
      agent = createAgent({
        provider: scripted([{ toolCalls: [{ id: "s1", name: "slow", arguments: {} }] }, { text: "never" }]),
        tools: [gate.tool],
        permissions: createPermissions({ mode: "bypass" }),
      });
      return agent;
    });
    const seen: StreamResponse[] = [];
    let taskId = "";
    const streaming = (async () => {
      for await (const event of client.sendMessageStream(message("go"))) {
        seen.push(event);
        if (event.payload?.$case === "task") taskId = event.payload.value.id;
      }
    })();
    while (
      !seen.some(
        (e) =>
          e.payload?.$case === "statusUpdate" &&
          textOf(e.payload.value.status?.message?.parts) === "running slow",
      )
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    // A message on a task that waits for nothing is refused; the task goes on.
    await expect(
      client.sendMessage(message("hurry", { taskId, contextId: seenContext(seen) })),
    ).rejects.toThrow(/waits for no input/);
    expect(await taskState(client, taskId)).toBe(TaskState.TASK_STATE_WORKING);
    const cancelled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await streaming;
    const last = seen.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await agent!.waitForIdle();
    expect(agent!.messages.some((m) => m.role === "toolResult" && m.isError)).toBe(true);
  });

  it("CancelTask on a task waiting for an approval cancels it and ends the run", async () => {
    const ran: string[] = [];
    let agent: Agent | undefined;
    const { client } = await serve(() => {
      agent = createAgent({
        provider: scripted([{ toolCalls: [{ id: "d1", name: "deploy", arguments: { env: "prod" } }] }]),
        tools: [deployTool(ran)],
        permissions: createPermissions(),
      });
      return agent;
    });
    const waiting = (await client.sendMessage(message("deploy"))) as Task;
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const cancelled = await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await agent!.waitForIdle();
    expect(agent!.pendingApprovals()).toEqual([]);
    expect(ran).toEqual([]);
  });

  it("a client that goes away mid-run leaves the task running, found again by GetTask", async () => {
    const gate = gateTool("slow", "slow done");
    const { client } = await serve(() =>
      createAgent({
        provider: scripted([
          { toolCalls: [{ id: "s1", name: "slow", arguments: {} }] },
          { text: "All done." },
        ]),
        tools: [gate.tool],
        permissions: createPermissions({ mode: "bypass" }),
      }),
    );
    let taskId = "";
    for await (const event of client.sendMessageStream(message("go"))) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      if (
        event.payload?.$case === "statusUpdate" &&
        textOf(event.payload.value.status?.message?.parts) === "running slow"
      ) {
        break; // the client closes its stream
      }
    }
    expect(await taskState(client, taskId)).toBe(TaskState.TASK_STATE_WORKING);
    gate.open();
    for (let i = 0; i < 200 && (await taskState(client, taskId)) !== TaskState.TASK_STATE_COMPLETED; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const task = await client.getTask({ tenant: "", id: taskId, historyLength: 0 });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message?.parts)).toBe("All done.");
  });

  it("keeps a context's agent for the next message in it, and forgets the least recently used beyond maxContexts", async () => {
    const made: string[] = [];
    const { client } = await serve(
      (contextId) => {
        made.push(contextId);
        return createAgent({ provider: scripted(() => ({ text: `turn in ${contextId}` })) });
      },
      { maxContexts: 1 },
    );
    const first = (await client.sendMessage(message("one"))) as Task;
    await client.sendMessage(message("again", { contextId: first.contextId }));
    expect(made).toEqual([first.contextId]);
    const second = (await client.sendMessage(message("two"))) as Task;
    await client.sendMessage(message("back", { contextId: first.contextId }));
    expect(made).toEqual([first.contextId, second.contextId, first.contextId]);
  });

  it("answers an unknown task and malformed JSON-RPC with the protocol's errors", async () => {
    const { url, client } = await serve(() => createAgent({ provider: scripted([{ text: "hi" }]) }));
    await expect(client.getTask({ tenant: "", id: "no-such-task", historyLength: 0 })).rejects.toThrow(
      /not found/i,
    );
    await expect(client.cancelTask({ tenant: "", id: "no-such-task", metadata: undefined })).rejects.toThrow(
      /not found/i,
    );
    const post = (body: string) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body,
      }).then(async (r) => (await r.json()) as { error?: { code: number } });
    expect((await post("{not json")).error?.code).toBe(-32700);
    // Without the A2A-Version header a request is v0.3's, which is not served: VersionNotSupported.
    const unversioned = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "x" } }),
    }).then(async (r) => (await r.json()) as { error?: { code: number } });
    expect(unversioned.error?.code).toBe(-32009);
    expect(
      (await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "NoSuchMethod", params: {} }))).error?.code,
    ).toBe(-32601);
  });
});

describe("an A2A server's guards", () => {
  it("refuses to start without authorize", () => {
    expect(() =>
      createA2aHandler({
        card: { name: "x", description: "x" },
        agent: () => createAgent({ provider: scripted([]) }),
      } as unknown as A2aServerOptions),
    ).toThrow(/authorize/);
  });

  it("answers 403 to a refused identity, a cross-site POST and a foreign Host; 413 and 415 to bad bodies", async () => {
    const handler = createA2aHandler({
      card: { name: "x", description: "x" },
      agent: () => createAgent({ provider: scripted([{ text: "hi" }]) }),
      authorize: (request) => request.headers.get("authorization") === "Bearer right",
      maxBodyBytes: 1000,
    });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } });
    const post = (headers: Record<string, string>, payload = body) =>
      handler(
        new Request("http://127.0.0.1:9/", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer right", ...headers },
          body: payload,
        }),
      );
    expect((await post({ authorization: "Bearer wrong" })).status).toBe(403);
    expect((await post({ origin: "https://evil.example" })).status).toBe(403);
    expect((await post({ "content-type": "text/plain" })).status).toBe(415);
    expect((await post({}, JSON.stringify({ pad: "x".repeat(2000) }))).status).toBe(413);
    expect((await post({})).status).toBe(200);

    const local = createA2aHandler({
      card: { name: "x", description: "x" },
      agent: () => createAgent({ provider: scripted([]) }),
      authorize: "none-local-only",
    });
    const foreign = await local(
      new Request("http://evil.example/", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    expect(foreign.status).toBe(403);
  });
});

/**
 * Sends a SendStreamingMessage over a raw socket and stops reading once its first frame (the task)
 * came: a client that reads no more. Its task's ids, and the socket.
 */
async function stalledStream(port: number, text: string) {
  const socket = connect(port, "127.0.0.1");
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "SendStreamingMessage",
    params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text }] } },
  });
  socket.write(
    `POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\nA2A-Version: 1.0\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.on("error", () => undefined);
  let received = "";
  const ids = await new Promise<{ taskId: string; contextId: string }>((resolve) => {
    const onData = (chunk: Buffer) => {
      received += chunk.toString();
      const taskId = /"task":\{"id":"([^"]+)"/.exec(received)?.[1];
      const contextId = /"contextId":"([^"]+)"/.exec(received)?.[1];
      if (!taskId || !contextId) return;
      socket.pause();
      socket.off("data", onData);
      resolve({ taskId, contextId });
    };
    socket.on("data", onData);
  });
  return { ...ids, socket };
}

describe("an A2A stream's slow reader", () => {
  it("holds up no one: others see the task wait for its approval and give it", async () => {
    const ran: string[] = [];
    const handler = createA2aHandler({
      card: { name: "helper", description: "Helps" },
      agent: () =>
        createAgent({
          provider: scripted([
            // 4 MB of answer before the call: far more than the socket and the bound take.
            {
              text: "0123456789".repeat(400_000),
              chunkSize: 100_000,
              toolCalls: [{ id: "d1", name: "deploy", arguments: { env: "prod" } }],
            },
            { text: "Deployed." },
          ]),
          tools: [deployTool(ran)],
          permissions: createPermissions(),
        }),
      authorize: "none-local-only",
      maxResponseBufferBytes: 256 * 1024,
    });
    closers.push(() => handler.close());
    const node = await serveNode(handler);
    servers.push(node);
    const stalled = await stalledStream(node.port, "deploy it");
    closers.push(async () => void stalled.socket.destroy());

    const other = await new ClientFactory().createFromUrl(node.url);
    await expect
      .poll(() => taskState(other, stalled.taskId), { timeout: 15_000 })
      .toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = (await other.sendMessage(
      decision(stalled.taskId, stalled.contextId, { approve: true }),
    )) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(ran).toEqual(["prod"]);
  }, 30_000);

  it("is cut off once more than maxResponseBufferBytes waited for it; the run and the task go on", async () => {
    const handler = createA2aHandler({
      card: { name: "helper", description: "Helps" },
      agent: () =>
        createAgent({ provider: scripted([{ text: "0123456789".repeat(100_000), chunkSize: 1_000 }]) }),
      authorize: "none-local-only",
      maxResponseBufferBytes: 64 * 1024,
    });
    closers.push(() => handler.close());
    const node = await serveNode(handler);
    servers.push(node);
    const stalled = await handler(
      new Request(`${node.url}/`, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendStreamingMessage",
          params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "talk" }] } },
        }),
      }),
    );
    const reader = stalled.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const taskId = /"task":\{"id":"([^"]+)"/.exec(first)![1]!;
    // The client reads no more while the run writes 1 MB of answer.
    const other = await new ClientFactory().createFromUrl(node.url);
    await expect
      .poll(() => taskState(other, taskId), { timeout: 15_000 })
      .toBe(TaskState.TASK_STATE_COMPLETED);
    await expect(reader.read()).rejects.toThrow(/read too slowly: more than 65536 bytes waited/);
  }, 30_000);
});

describe("an A2A server's failures", () => {
  it("an authorize hook that throws quoting the token it was shown: logged with the token redacted, the answer plain", async () => {
    const leaked = "sk-ant-api03-LEAKEDleakedLEAKED0123456789";
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const handler = createA2aHandler({
        card: { name: "x", description: "x" },
        agent: () => createAgent({ provider: scripted([]) }),
        authorize: (request) => {
          throw new Error(`rejected credentials ${request.headers.get("authorization")}`);
        },
      });
      const node = await serveNode(handler);
      servers.push(node);
      const response = await fetch(node.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${leaked}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }),
      });
      const answer = await response.text();
      expect(answer).toContain("the request failed on the server");
      expect(answer).not.toContain("LEAKED");
      const log = logged.mock.calls.flat().map(String).join("\n");
      // The operator learns what failed (it was swallowed), without the token.
      expect(log).toContain("rejected credentials Bearer [redacted]");
      expect(log).not.toContain("LEAKED");
    } finally {
      logged.mockRestore();
    }
  });
});

describe("a remote A2A agent as a tool", () => {
  it("answers with the remote agent's answer, and asks before running (it is not read-only)", async () => {
    const { url } = await serve(() => createAgent({ provider: scripted([{ text: "42, from afar" }]) }));
    const remote = await a2aAgentTool({ url });
    expect(remote.name).toBe("helper");
    expect(remote.description).toBe("Helps with things");
    const provider = scripted([
      { toolCalls: [{ id: "r1", name: "helper", arguments: { prompt: "the answer?" } }] },
      { text: "It says 42." },
    ]);
    const agent = createAgent({ provider, tools: [remote], permissions: createPermissions() });
    const run = agent.prompt("ask the helper");
    while (agent.pendingApprovals().length === 0) await new Promise((r) => setTimeout(r, 5));
    agent.approve("r1");
    await run;
    const result = agent.messages.find((m) => m.role === "toolResult");
    expect(
      result?.role === "toolResult" &&
        textOf(
          result.content.map((c) => ({ content: { $case: c.type, value: c.type === "text" ? c.text : "" } })),
        ),
    ).toBe("42, from afar");
  });

  it("a remote task that asks for input is cancelled and answered as an error the model reads", async () => {
    const ran: string[] = [];
    const { url, client } = await serve(() =>
      createAgent({
        provider: scripted([{ toolCalls: [{ id: "d1", name: "deploy", arguments: { env: "prod" } }] }]),
        tools: [deployTool(ran)],
        permissions: createPermissions(),
      }),
    );
    const remote = await a2aAgentTool({ url });
    const run = await runTool(remote, { prompt: "deploy" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/ask for input.*deploy/s);
    const { taskId } = run.result.details as { taskId: string };
    for (let i = 0; i < 100 && (await taskState(client, taskId)) !== TaskState.TASK_STATE_CANCELED; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await taskState(client, taskId)).toBe(TaskState.TASK_STATE_CANCELED);
    expect(ran).toEqual([]);
  });

  it("aborting the call cancels the remote task", async () => {
    const gate = gateTool("slow");
    let remoteAgent: Agent | undefined;
    const { url } = await serve(() => {
      remoteAgent = createAgent({
        provider: scripted([{ toolCalls: [{ id: "s1", name: "slow", arguments: {} }] }, { text: "never" }]),
        tools: [gate.tool],
        permissions: createPermissions({ mode: "bypass" }),
      });
      return remoteAgent;
    });
    const remote = await a2aAgentTool({ url });
    const controller = new AbortController();
    const running = runTool(remote, { prompt: "go" }, { signal: controller.signal });
    for (let i = 0; i < 100 && !remoteAgent?.state.startsWith("running.executing"); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    controller.abort(new Error("user pressed stop"));
    const run = await running;
    expect(run.isError).toBe(true);
    await remoteAgent!.waitForIdle();
    expect(remoteAgent!.messages.some((m) => m.role === "toolResult" && m.isError)).toBe(true);
  });
});
