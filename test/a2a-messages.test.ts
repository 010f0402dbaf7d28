// Messages an A2A client sends that the agent cannot take: one with no text (nothing to prompt
// with), and a new task in a context whose task is still running or waiting for a decision. Each
// gets the protocol's error before anything changes: no task is made, nothing fails on the server.
import { Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createA2aHandler, type A2aServerOptions } from "../a2a.js";
import { type NodeServer, serveNode } from "../http.js";
import { createAgent, scripted } from "../index.js";
import { gateTool } from "./helpers.js";

const servers: NodeServer[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const close of closers.splice(0)) await close();
  for (const server of servers.splice(0)) await server.close();
});

async function serve(agent: A2aServerOptions["agent"]) {
  const handler = createA2aHandler({
    card: { name: "helper", description: "Helps with things" },
    agent,
    authorize: "none-local-only",
  });
  closers.push(() => handler.close());
  const node = await serveNode(handler);
  servers.push(node);
  return new ClientFactory().createFromUrl(node.url);
}

function message(parts: { $case: "text"; value: string }[] | [], contextId = "") {
  return {
    tenant: "",
    message: {
      messageId: crypto.randomUUID(),
      contextId,
      taskId: "",
      role: Role.ROLE_USER,
      parts: parts.map((content) => ({
        content,
        metadata: undefined,
        filename: "",
        mediaType: "text/plain",
      })),
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

describe("A2A messages the agent cannot take", () => {
  it("a message with no text is refused as malformed; no task is made and no run starts", async () => {
    const provider = scripted([{ text: "hi" }]);
    const errors = vi.spyOn(console, "error");
    const client = await serve(() => createAgent({ provider }));
    await expect(client.sendMessage(message([]))).rejects.toThrow(/text/i);
    await expect(client.sendMessage(message([{ $case: "text", value: "  " }]))).rejects.toThrow(/text/i);
    expect(provider.calls).toBe(0);
    expect(errors).not.toHaveBeenCalled();
    // The agent still answers a message it can take.
    const task = (await client.sendMessage(message([{ $case: "text", value: "hello" }]))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("a new task in a context whose task still runs is refused, naming that task; the running task ends as it would", async () => {
    const gate = gateTool();
    const errors = vi.spyOn(console, "error");
    const client = await serve(() =>
      createAgent({
        provider: scripted([{ toolCalls: [{ name: "gate" }] }, { text: "first done" }, { text: "second" }]),
        tools: [gate.tool],
      }),
    );
    const stream = client.sendMessageStream(message([{ $case: "text", value: "start" }]));
    const first = (await stream.next()).value as StreamResponse;
    const task = first.payload?.$case === "task" ? first.payload.value : undefined;
    expect(task).toBeDefined();
    await expect(
      client.sendMessage(message([{ $case: "text", value: "again" }], task!.contextId)),
    ).rejects.toThrow(new RegExp(task!.id));
    expect(errors).not.toHaveBeenCalled();
    gate.open();
    const rest: StreamResponse[] = [];
    for await (const response of stream) rest.push(response);
    const last = rest.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Once it ended, the context takes a new task.
    const next = (await client.sendMessage(
      message([{ $case: "text", value: "again" }], task!.contextId),
    )) as Task;
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("two new tasks sent at once in one context: one runs, the other is refused; nothing fails on the server", async () => {
    const gate = gateTool();
    const errors = vi.spyOn(console, "error");
    const provider = scripted([{ text: "hello" }, { toolCalls: [{ name: "gate" }] }, { text: "done" }]);
    const client = await serve(() => createAgent({ provider, tools: [gate.tool] }));
    const first = (await client.sendMessage(message([{ $case: "text", value: "hi" }]))) as Task;
    const both = [
      client.sendMessage(message([{ $case: "text", value: "one" }], first.contextId)),
      client.sendMessage(message([{ $case: "text", value: "two" }], first.contextId)),
    ].map((sent) =>
      sent.then(
        (task) => task as Task,
        (error: Error) => error,
      ),
    );
    // The refused one answers at once; the other waits on the gate.
    const refused = await Promise.race(both);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/one task runs at a time in a context/);
    gate.open();
    const settled = await Promise.all(both);
    const ran = settled.filter((value): value is Task => !(value instanceof Error));
    expect(ran).toHaveLength(1);
    expect(ran[0]!.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(provider.calls).toBe(3);
    expect(errors).not.toHaveBeenCalled();
  });
});
