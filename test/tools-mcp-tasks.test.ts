// mcpTools and what a 2026-07-28 server does besides answering: a Task (the Tasks extension),
// followed in the call or handed to the tools that answer later; and a request for input in band
// (input_required), asked as an approval of the agent. The servers are the v2 SDK's.
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { serveNode } from "../http.js";
import {
  type Agent,
  type AgentEvent,
  createAgent,
  createLaterResults,
  type McpToolSet,
  mcpTools,
  scripted,
  type Tool,
} from "../index.js";
import { runTool } from "../testing.js";
import { serveModernMcp } from "./fixtures/mcp-revision-servers.js";
import { resultText, toolResults } from "./helpers.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface TaskLog {
  calls: string[];
  polls: number;
  cancelled: string[];
}

/**
 * The v2 SDK's server with tools answered by tasks: `render` completes after two polls, `stuck`
 * never does (until cancelled).
 */
async function serveTasking(): Promise<{ url: string; log: TaskLog }> {
  const log: TaskLog = { calls: [], polls: 0, cancelled: [] };
  const tasks = new Map<string, { polls: number; done: number; cancelled: boolean }>();
  const stamp = { createdAt: "2026-11-28T12:00:00Z", lastUpdatedAt: "2026-11-28T12:00:00Z", ttlMs: 60_000 };
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: "tasking", version: "1.0.0" });
      const startTask = (name: string, done: number) => {
        log.calls.push(name);
        const taskId = `task-${tasks.size + 1}`;
        tasks.set(taskId, { polls: 0, done, cancelled: false });
        return { resultType: "task", taskId, status: "working", pollIntervalMs: 10, ...stamp } as never;
      };
      server.registerTool(
        "render",
        { description: "Renders (a task)", inputSchema: { scene: z.string() } },
        () => startTask("render", 2),
      );
      server.registerTool("stuck", { description: "Never ends (a task)", inputSchema: {} }, () =>
        startTask("stuck", Infinity),
      );
      const TaskId = z.looseObject({ taskId: z.string() });
      server.server.setRequestHandler("tasks/get", { params: TaskId }, ({ taskId }) => {
        log.polls++;
        const task = tasks.get(taskId);
        if (!task) throw new Error(`no task ${taskId}`);
        if (task.cancelled) return { taskId, status: "cancelled", ...stamp } as never;
        if (++task.polls < task.done)
          return { taskId, status: "working", statusMessage: `rendering ${task.polls}`, ...stamp } as never;
        return {
          taskId,
          status: "completed",
          ...stamp,
          result: { content: [{ type: "text", text: "intro.mp4, 12 s" }] },
        } as never;
      });
      server.server.setRequestHandler("tasks/cancel", { params: TaskId }, ({ taskId }) => {
        log.cancelled.push(taskId);
        tasks.get(taskId)!.cancelled = true;
        return {} as never;
      });
      return server;
    },
    { legacy: "reject" },
  );
  const node = await serveNode((request) => handler.fetch(request));
  cleanups.push(() => node.close());
  return { url: `${node.url}/mcp`, log };
}

async function connect(
  url: string,
  options: Partial<Parameters<typeof mcpTools>[0]> = {},
): Promise<McpToolSet> {
  const set = await mcpTools({ url, ...options } as Parameters<typeof mcpTools>[0]);
  cleanups.push(() => set.close());
  return set;
}

function byName(set: McpToolSet, name: string): Tool {
  return set.tools.find((t) => t.name === name)!;
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
}

describe("a server's Task (io.modelcontextprotocol/tasks)", () => {
  it("is followed in the call (tasks/get at the interval it suggests) when no later results are given: the model reads the task's result", async () => {
    const { url, log } = await serveTasking();
    const set = await connect(url);
    const run = await runTool(byName(set, "render"), { scene: "intro" });
    expect(run.isError).toBe(false);
    expect(run.text).toBe("intro.mp4, 12 s");
    expect(run.result.details).toMatchObject({ mcpTool: "render", taskId: "task-1" });
    expect(log.polls).toBe(2);
    expect(run.progress).toContain("rendering 1");
  });

  it("is cancelled (tasks/cancel) when the call is aborted", async () => {
    const { url, log } = await serveTasking();
    const set = await connect(url);
    const controller = new AbortController();
    const running = runTool(byName(set, "stuck"), {}, { signal: controller.signal });
    await until(() => log.polls >= 2);
    controller.abort();
    const run = await running;
    expect(run.aborted).toBe(true);
    await until(() => log.cancelled.length === 1);
    expect(log.cancelled).toEqual(["task-1"]);
  });

  it("goes through the tools that answer later with `later`: the call is answered with a handle, the result wakes the agent as a message", async () => {
    const { url } = await serveTasking();
    const agents = new Map<string, Agent>();
    const later = createLaterResults({ agents });
    await later.start();
    cleanups.push(async () => later.stop());
    const set = await connect(url, { later: { results: later, agentId: "ada" } });
    const provider = scripted((request) => {
      const last = request.messages.at(-1)!;
      return last.role === "user" && last.content === "Render the intro"
        ? { toolCalls: [{ name: "render", arguments: { scene: "intro" } }] }
        : { text: "ok" };
    });
    const agent = createAgent({ id: "ada", provider, tools: set.tools });
    agents.set("ada", agent);
    await agent.prompt("Render the intro");
    const [started] = toolResults(agent.messages);
    expect(resultText(started!)).toMatch(/^Started render in the background \(handle later_/);
    expect(started!.isError).toBeFalsy();
    // The task's result arrives as a follow-up message of its own, which wakes the agent.
    await until(() => agent.messages.some((m) => m.role === "user" && m.source === "laterResult"));
    const woken = agent.messages.find((m) => m.role === "user" && m.source === "laterResult")!;
    expect(JSON.stringify(woken.content)).toContain("intro.mp4, 12 s");
    await until(() => provider.requests.length === 3);
    expect(later.list("ada")).toEqual([]);
  });
});

describe("a server's request for input in band (input_required), as an approval", () => {
  async function confirmingAgent(
    decide: (agent: Agent, event: Extract<AgentEvent, { type: "approval_requested" }>) => void,
  ) {
    const modern = await serveModernMcp();
    cleanups.push(() => modern.close());
    const set = await connect(modern.url);
    const agent = createAgent({
      provider: scripted((request) => {
        const last = request.messages.at(-1)!;
        if (last.role === "toolResult")
          return {
            text: `server said: ${last.content.map((c) => (c.type === "text" ? c.text : "")).join("")}`,
          };
        return { toolCalls: [{ id: "c1", name: "confirm", arguments: {} }] };
      }),
      tools: set.tools,
    });
    const asked: { id: string; pending: string[]; args: unknown }[] = [];
    agent.events$.subscribe((event) => {
      if (event.type !== "approval_requested") return;
      asked.push({
        id: event.toolCallId,
        pending: agent.pendingApprovals().map((p) => p.toolCallId),
        args: event.args,
      });
      decide(agent, event);
    });
    const outcome = await agent.prompt("Go");
    return { modern, asked, outcome };
  }

  it("waits in the agent's pending approvals under the call's id; approving answers accept", async () => {
    const { modern, asked, outcome } = await confirmingAgent((agent, event) =>
      agent.approve(event.toolCallId),
    );
    expect(asked).toEqual([
      {
        id: "c1/input-1",
        pending: ["c1/input-1"],
        args: {
          question: "Go on?",
          form: expect.objectContaining({ properties: { ok: expect.anything() } }),
        },
      },
    ]);
    expect(modern.log.calls).toEqual(["confirm", "confirm:accept"]);
    expect(outcome.reason).toBe("stop");
    expect(toolResults(outcome.messages).map(resultText)).toEqual(["went on"]);
  });

  it("denying answers decline: the server's own answer reaches the model", async () => {
    const { modern, outcome } = await confirmingAgent((agent, event) => agent.deny(event.toolCallId, "no"));
    expect(modern.log.calls).toEqual(["confirm", "confirm:decline"]);
    expect(toolResults(outcome.messages).map(resultText)).toEqual(["stopped"]);
  });
});
