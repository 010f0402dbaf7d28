// The session host serving AgentHandles it did not make: `createSessionHost({ threads })` opens a
// handle per thread id and speaks only the handle's contract (chat, approvals over the side routes,
// status, a thread its handle does not know).
import { throwError } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionHost, type SessionHost } from "../http.js";
import {
  AgentCallError,
  type Agent,
  type AgentHandle,
  agentHandle,
  createAgent,
  scripted,
} from "../index.js";
import { deleteFile } from "./fixtures/frontend-tools.js";
import { gateTool } from "./helpers.js";

const hosts: SessionHost[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  while (hosts.length) await hosts.pop()!.close();
  while (agents.length) agents.pop()!.stop();
});

/** A host whose threads are handles on agents this test made (`known` ids only; others are 404). */
function handleHost(known: string[]): { host: SessionHost; opened: string[] } {
  const opened: string[] = [];
  const handles = new Map<string, AgentHandle>();
  const host = createSessionHost({
    threads: (threadId) => {
      opened.push(threadId);
      if (!known.includes(threadId)) return unknownHandle(threadId);
      let handle = handles.get(threadId);
      if (!handle) {
        const agent = createAgent({
          provider: scripted([
            { text: "Deleting.", toolCalls: [{ name: "delete_file", arguments: { path: "a.txt" } }] },
            { text: "Done." },
          ]),
          tools: [deleteFile],
        });
        agents.push(agent);
        handle = agentHandle(agent, { tools: [deleteFile] });
        handles.set(threadId, handle);
      }
      return handle;
    },
    basePath: "/api",
    authorize: "none-local-only",
  });
  hosts.push(host);
  return { host, opened };
}

/** A handle whose side does not know the thread: every call refuses with a 404. */
function unknownHandle(id: string): AgentHandle {
  const refuse = async (): Promise<never> => {
    throw new AgentCallError(404, "not_found", `no session ${id}`);
  };
  return {
    id,
    status: refuse,
    messages: refuse,
    eventsSince: () => throwError(() => new AgentCallError(404, "not_found", `no session ${id}`)),
    run: refuse,
    steer: refuse,
    followUp: refuse,
    check: refuse,
    answer: refuse,
    abort: refuse,
  };
}

const post = (host: SessionHost, path: string, body: unknown) =>
  host.handle(
    new Request(`http://localhost/api${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
const get = (host: SessionHost, path: string) => host.handle(new Request(`http://localhost/api${path}`));

async function chunkTypes(response: Response): Promise<string[]> {
  return (await response.text())
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: ") && frame !== "data: [DONE]")
    .map((frame) => (JSON.parse(frame.slice(6)) as { type: string }).type);
}

describe("createSessionHost({ threads })", () => {
  it("takes exactly one of agent, threads and durable, and no store with threads", () => {
    const threads = () => unknownHandle("x");
    expect(() =>
      createSessionHost({ threads, agent: { provider: scripted([]) }, authorize: "none-local-only" }),
    ).toThrow(/either agent .*threads.* or durable/);
    expect(() =>
      createSessionHost({
        threads,
        store: { load: () => undefined, save: () => undefined },
        authorize: "none-local-only",
      }),
    ).toThrow(/drop the store option/);
  });

  it("streams a chat on a handle it opened, waits for the approval, and the side route's approve ends the run", async () => {
    const { host, opened } = handleHost(["t1"]);
    const first = await post(host, "/chat", {
      id: "t1",
      trigger: "submit-message",
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "delete a.txt" }] }],
    });
    expect(first.status).toBe(200);
    const types = await chunkTypes(first);
    expect(types).toContain("tool-approval-request");
    expect(types.at(-1)).toBe("finish");
    // The host made no agent of its own: it holds none.
    expect(host.agent("t1")).toBeUndefined();
    const waiting = (await (await get(host, "/threads/t1")).json()) as Record<string, unknown>;
    expect(waiting).toMatchObject({ status: "waiting", pendingApprovals: [{ toolCallId: "call_0_0" }] });

    const approved = await post(host, "/threads/t1/approve", { toolCallId: "call_0_0" });
    expect(approved.status).toBe(200);
    await expect
      .poll(async () => ((await (await get(host, "/threads/t1")).json()) as { status: string }).status)
      .toBe("idle");
    const done = (await (await get(host, "/threads/t1")).json()) as { messages: { role: string }[] };
    expect(done.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(opened).toEqual(["t1"]);
  });

  it("a thread whose handle answers 404 is unknown: 404 unknown_thread, nothing kept", async () => {
    const { host } = handleHost([]);
    const response = await get(host, "/threads/nope");
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unknown_thread");
  });
});

describe("in-process threads behind the handle", () => {
  it("an agent its app stops mid-run ends the thread's open response", async () => {
    const { tool: wait } = gateTool("wait");
    const host = createSessionHost({
      agent: { provider: scripted([{ toolCalls: [{ name: "wait" }] }, { text: "never" }]), tools: [wait] },
      basePath: "/api",
      authorize: "none-local-only",
    });
    hosts.push(host);
    const response = await post(host, "/chat", {
      id: "t1",
      trigger: "submit-message",
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "wait" }] }],
    });
    await expect.poll(() => host.agent("t1")?.state).toBe("running.executing");
    host.agent("t1")!.stop();
    const types = await chunkTypes(response);
    expect(types).toContain("tool-input-available");
  });
});

describe("in-process threads: a run the app starts on the agent itself", () => {
  it("is followed at once, with no request: its end saves the thread to the store", async () => {
    const saved: unknown[] = [];
    const host = createSessionHost({
      agent: { provider: scripted([{ text: "First." }, { text: "Second." }]) },
      store: { load: () => undefined, save: (_id, snapshot) => void saved.push(snapshot) },
      basePath: "/api",
      authorize: "none-local-only",
    });
    hosts.push(host);
    const first = await post(host, "/chat", {
      id: "t1",
      trigger: "submit-message",
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
    });
    expect((await chunkTypes(first)).at(-1)).toBe("finish");
    await expect.poll(() => saved.length).toBe(1);
    const outcome = await host.agent("t1")!.prompt("again");
    expect(outcome.reason).toBe("stop");
    await expect.poll(() => saved.length).toBe(2);
    expect(JSON.stringify(saved[1])).toContain("Second.");
  });
});
