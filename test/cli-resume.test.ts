import { describe, expect, it } from "vitest";
import { z } from "zod";
import { planRecovery, planResume } from "../cli/resume.js";
import {
  type AgentEvent,
  type AgentMessage,
  createAgent,
  defineTool,
  type ProviderRequest,
  scripted,
} from "../index.js";

/** A tool that never finishes on its own (a long command the process dies in). */
function slowTool(name: string, log: string[]) {
  return defineTool({
    name,
    description: "waits until aborted",
    parameters: z.object({}),
    execute: (_args, ctx) =>
      new Promise<string>((_resolve, reject) => {
        log.push(`${name} started`);
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted")));
      }),
  });
}

const fastTool = defineTool({
  name: "fast",
  description: "answers at once",
  parameters: z.object({}),
  execute: async () => "fast result",
});

function lastToolResultTexts(request: ProviderRequest): string[] {
  return request.messages
    .filter((m) => m.role === "toolResult")
    .map((m) =>
      m.role === "toolResult" ? m.content.map((c) => (c.type === "text" ? c.text : "")).join("") : "",
    );
}

describe("planResume (the CLI's restore after a crash)", () => {
  it("answers a call that was running when the process died as interrupted, and the model is told", async () => {
    const started: string[] = [];
    const events: AgentEvent[] = [];
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ name: "fast" }, { name: "slow" }] }]),
      tools: [fastTool, slowTool("slow", started)],
    });
    agent.events$.subscribe((event) => events.push(event));
    void agent.prompt("do both");
    await new Promise<void>((resolve) => {
      const sub = agent.events$.subscribe((e) => {
        if (e.type === "tool_execution_end" && e.toolName === "fast") {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    // "The process dies": all we have is what was saved — the snapshot and the event log.
    const snapshot = JSON.parse(JSON.stringify(agent.getPersistedSnapshot()));
    const log = JSON.parse(JSON.stringify(events));
    agent.stop();

    const plan = planResume(snapshot, log, 42);
    expect(plan.wasRunning).toBe(true);
    expect(plan.recovered.map((c) => c.name)).toEqual(["fast"]);
    expect(plan.interrupted.map((c) => c.name)).toEqual(["slow"]);
    expect(plan.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "toolResult"]);
    const [fast, slow] = plan.messages.slice(2) as Extract<AgentMessage, { role: "toolResult" }>[];
    expect(fast).toMatchObject({
      toolName: "fast",
      isError: false,
      content: [{ type: "text", text: "fast result" }],
    });
    expect(slow).toMatchObject({
      toolName: "slow",
      isError: true,
      details: { interrupted: true },
      timestamp: 42,
    });
    expect(plan.added).toEqual([fast, slow]);

    // A new agent continues from the plan: the tool is not run again, the model sees the notice.
    const provider = scripted([{ text: "ok, I will check" }]);
    const resumed = createAgent({
      provider,
      tools: [fastTool, slowTool("slow", started)],
      messages: plan.messages,
    });
    await resumed.continue();
    expect(started).toEqual(["slow started"]);
    expect(lastToolResultTexts(provider.requests[0]!)).toEqual([
      "fast result",
      expect.stringMatching(/^Tool slow was interrupted: the agent process stopped while it ran/),
    ]);
    expect(resumed.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "ok, I will check" }],
    });
  });

  it("keeps queued steering messages and leaves an idle session's transcript as it was", () => {
    const user: AgentMessage = { role: "user", content: "hi", timestamp: 1 };
    const answer: AgentMessage = {
      role: "assistant",
      content: [{ type: "text", text: "hello" }],
      stopReason: "stop",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
      timestamp: 2,
    };
    const steer: AgentMessage = { role: "user", content: "also this", timestamp: 3 };
    const plan = planResume(
      {
        value: "idle",
        context: { messages: [user, answer], pending: [], steeringQueue: [steer], followUpQueue: [] },
      },
      [],
    );
    expect(plan).toMatchObject({
      wasRunning: false,
      messages: [user, answer],
      steering: [steer],
      interrupted: [],
    });
  });

  it("tolerates a session with no snapshot yet (killed before the first save)", () => {
    expect(planResume(undefined, [])).toMatchObject({ messages: [], wasRunning: false, interrupted: [] });
  });
});

describe("recovering a damaged session", () => {
  const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
  const call: AgentMessage = {
    role: "assistant",
    content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "make" } }],
    stopReason: "toolUse",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    timestamp: 2,
  };

  it("takes the intact snapshot when there is one, with the window it had learned", () => {
    const snapshot = { value: "idle", context: { messages: [user("hi")], learnedMaxContextTokens: 15_000 } };
    const recovery = planRecovery({ snapshot, events: [] })!;
    expect(recovery.source).toBe("snapshot");
    expect(recovery.plan.messages).toEqual([user("hi")]);
    expect(recovery.plan.learnedMaxContextTokens).toBe(15_000);
  });

  it("else rebuilds the transcript from the event log, answering the calls left open", () => {
    const events = [
      { type: "agent_start" },
      { type: "message_end", message: user("build it") },
      { type: "message_end", message: call },
      { type: "tool_execution_start", toolCallId: "c1" },
    ];
    const recovery = planRecovery({ events }, 5)!;
    expect(recovery.source).toBe("event log");
    expect(recovery.plan.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(recovery.plan.interrupted.map((c) => c.id)).toEqual(["c1"]);
    expect(recovery.plan.wasRunning).toBe(false);
  });

  it("leaves out a retried attempt's message (message_end marked discarded)", () => {
    const failed = { ...call, content: [{ type: "text", text: "half an ans" }], stopReason: "error" };
    const answer = { ...call, content: [{ type: "text", text: "done" }], stopReason: "stop" };
    const events = [
      { type: "agent_start" },
      { type: "message_end", message: user("build it") },
      { type: "retry", attempt: 1, delayMs: 1, error: "Overloaded" },
      { type: "message_end", message: failed, discarded: true },
      { type: "message_end", message: answer },
    ];
    const recovery = planRecovery({ events }, 5)!;
    expect(recovery.plan.messages).toEqual([user("build it"), answer]);
  });

  it("finds nothing in an empty log", () => {
    expect(planRecovery({ events: [{ type: "agent_start" }] })).toBeUndefined();
  });
});
