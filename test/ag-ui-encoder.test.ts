// The AG-UI encoder against the real clients' own checks (@ag-ui/client 1.0.0 and 0.0.59, fed in
// process): every response of a scripted agent passes their schema check and event-order verifier
// with nothing logged, really finishes, and leaves the client's transcript equal to the server's.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentEvent,
  type AgentMessage,
  createAgent,
  defineClientTool,
  defineTool,
  scripted,
  type ScriptedStep,
  subAgentTool,
} from "../index.js";
import { type AgUiEvent, agUiEncoder, type ResponseEnding, toAgUiMessages } from "../http.js";
import { type ClientRun, type ClientVersion, InProcessClient } from "./fixtures/ag-ui-clients.js";
import { deleteFile, weather } from "./fixtures/frontend-tools.js";

const failing = defineTool({
  name: "failing",
  description: "Always fails",
  parameters: z.object({}),
  execute: () => {
    throw new Error("disk on fire");
  },
});

/**
 * A thread as the session host keeps it, reduced to what the encoder needs: responses that end at
 * agent_end or when every unfinished call waits for the client.
 */
class Thread {
  private readonly unfinished = new Set<string>();
  runs = 0;
  constructor(readonly agent: Agent) {
    agent.events$.subscribe((e) => {
      if (e.type === "tool_execution_start") this.unfinished.add(e.toolCallId);
      if (e.type === "tool_execution_end") this.unfinished.delete(e.toolCallId);
    });
  }

  respond(start: () => void, client: ClientVersion): Promise<AgUiEvent[]> {
    const encoder = agUiEncoder({ runId: `run-${++this.runs}`, client: client === "1.0" ? "1.0" : "legacy" });
    let wire = encoder.open({
      kind: "run",
      threadId: "t1",
      runId: undefined,
      messages: this.agent.messages,
      transcript: () => this.agent.messages,
    });
    return new Promise((resolve) => {
      let done = false;
      const finish = (ending: ResponseEnding) => {
        if (done) return;
        done = true;
        subscription.unsubscribe();
        wire += encoder.close(ending);
        resolve(parseFrames(wire));
      };
      const checkQuiescent = () =>
        setTimeout(() => {
          const approvals = this.agent.pendingApprovals();
          const toolCalls = this.agent.pendingToolCalls();
          const waiting = new Set([...approvals, ...toolCalls].map((c) => c.toolCallId));
          if (this.unfinished.size > 0 && [...this.unfinished].every((id) => waiting.has(id))) {
            finish({ kind: "quiescent", approvals, toolCalls, messages: this.agent.messages });
          }
        }, 5);
      const subscription = this.agent.events$.subscribe((event: AgentEvent) => {
        wire += encoder.event(event, 0);
        if (event.type === "agent_end") finish({ kind: "end", event, messages: this.agent.messages });
        else if (event.type === "approval_requested" || event.type === "tool_result_requested")
          checkQuiescent();
      });
      start();
    });
  }
}

function parseFrames(wire: string): AgUiEvent[] {
  const frames = wire.split("\n\n");
  expect(frames.pop()).toBe("");
  return frames.map((frame) => {
    expect(frame.startsWith("data: ")).toBe(true);
    return JSON.parse(frame.slice(6)) as AgUiEvent;
  });
}

/** The client's transcript as the server would write it: what it shows, without client-only ids. */
const clientTranscript = (client: InProcessClient) =>
  (client.messages as { role: string }[]).filter((m) => m.role !== "activity");

function expectClean(run: ClientRun, outcome?: string) {
  expect(run.failures).toEqual([]);
  expect(run.logged).toEqual([]);
  // A cut stream is a quiet end for both clients: the run must really have finished.
  expect(run.types.at(-1)).toMatch(/^RUN_(FINISHED|ERROR)$/);
  if (outcome !== undefined) expect(run.finished?.outcome).toBe(outcome);
}

const userMessage = (id: string, content: string) => ({ id, role: "user" as const, content });

/** The client adds its user message, the server prompts with it (the same id), the client runs. */
async function turn(thread: Thread, client: InProcessClient, id: string, text: string, tools?: never[]) {
  (client.agent as { addMessage(m: unknown): void }).addMessage(userMessage(id, text));
  const events = await thread.respond(
    () =>
      void thread.agent.prompt(
        { role: "user", id, content: text, timestamp: Date.now() },
        tools && { tools },
      ),
    client.version,
  );
  return { events, run: await client.run(events) };
}

describe.each(["1.0", "0.0.59"] as const)("AG-UI encoder with @ag-ui/client %s", (version) => {
  it("streams reasoning and text, and the client's transcript equals the server's", async () => {
    const agent = createAgent({
      provider: scripted([
        { thinking: "Let me think about it", text: "Hello there, how are you today?", chunkSize: 5 },
      ]),
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "hi");
    expectClean(run, "success");
    const types = events.map((e) => e.type);
    expect(types.slice(0, 5)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
    ]);
    expect(types.filter((t) => t === "TEXT_MESSAGE_CONTENT").length).toBeGreaterThan(3);
    expect(types.slice(-3)).toEqual(["STEP_FINISHED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]);
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
    expect(toAgUiMessages(agent.messages).map((m) => m.role)).toEqual(["user", "reasoning", "assistant"]);
  });

  it("parallel tool calls: whole calls after the message, results with the error flag in metadata", async () => {
    const agent = createAgent({
      provider: scripted([
        {
          text: "Checking.",
          toolCalls: [
            { id: "a", name: "weather", arguments: { city: "Paris" } },
            { id: "b", name: "failing", arguments: {} },
          ],
        },
        { text: "Paris is sunny." },
      ]),
      tools: [weather, failing],
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "weather?");
    expectClean(run, "success");
    const results = events.filter((e) => e.type === "TOOL_CALL_RESULT");
    expect(results.map((e) => [e.toolCallId, (e.metadata as { isError: boolean }).isError])).toEqual([
      ["a", false],
      ["b", true],
    ]);
    expect(events.filter((e) => e.type === "TOOL_CALL_START").map((e) => e.parentMessageId)).toEqual([
      agent.messages[1]!.id,
      agent.messages[1]!.id,
    ]);
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
    expect(
      toAgUiMessages(agent.messages).find((m) => m.role === "tool" && m.toolCallId === "b"),
    ).toMatchObject({
      error: expect.stringContaining("disk on fire"),
    });
  });

  it("two approvals in one turn are one interrupt outcome; resume approves one with edits and denies the other", async () => {
    const agent = createAgent({
      provider: scripted([
        {
          toolCalls: [
            { id: "d1", name: "delete_file", arguments: { path: "a.txt" } },
            { id: "d2", name: "delete_file", arguments: { path: "b.txt" } },
          ],
        },
        { text: "Done." },
      ]),
      tools: [deleteFile],
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "delete both");
    expectClean(run, "interrupt");
    expect(run.finished?.interrupts?.map((i) => i.id)).toEqual(["d1", "d2"]);
    expect(events.find((e) => e.type === "CUSTOM" && e.name === "on_interrupt")).toBeDefined();
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
    // The resumed response: approve d1 with edited arguments, deny d2.
    const resumed = await thread.respond(() => {
      agent.approve("d1", { args: { path: "c.txt" } });
      agent.deny("d2", "keep it");
    }, version);
    const second = await client.run(resumed, {
      resume: [
        { interruptId: "d1", status: "resolved", payload: { approved: true, editedArgs: { path: "c.txt" } } },
        { interruptId: "d2", status: "resolved", payload: { approved: false, reason: "keep it" } },
      ],
    });
    expectClean(second, "success");
    // The resumed run answers the original calls without repeating them.
    expect(resumed.filter((e) => e.type === "TOOL_CALL_START")).toEqual([]);
    expect(
      resumed.filter((e) => e.type === "TOOL_CALL_RESULT").map((e) => [e.toolCallId, e.content]),
    ).toEqual([
      ["d1", expect.stringContaining("deleted c.txt")],
      ["d2", expect.stringContaining("keep it")],
    ]);
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
    if (version === "1.0") expect(second.input.resume).toHaveLength(2);
  });

  it("a client-run tool from the request ends the response with the call pending; its result resumes the run", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "pick", name: "pick_color", arguments: { options: ["red", "blue"] } }] },
        { text: "Blue, then." },
      ]),
    });
    const pickColor = defineClientTool({
      name: "pick_color",
      description: "Asks the user",
      parameters: { type: "object", properties: { options: { type: "array" } } },
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "pick", [pickColor as never]);
    expectClean(run, "success");
    if (version === "1.0") expect(run.finished?.pendingToolCallIds).toEqual(["pick"]);
    expect(events.filter((e) => e.type === "TOOL_CALL_END").map((e) => e.toolCallId)).toEqual(["pick"]);
    (client.agent as { addMessage(m: unknown): void }).addMessage({
      id: "r1",
      role: "tool",
      toolCallId: "pick",
      content: "blue",
    });
    const resumed = await thread.respond(() => agent.resolveToolCall("pick", "blue"), version);
    expectClean(await client.run(resumed), "success");
    expect(clientTranscript(client).at(-1)).toMatchObject({ role: "assistant", content: "Blue, then." });
    // The client's own tool message (its id) is replaced by the server's, in place.
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages).filter(() => true));
  });

  it("a retry whose failed attempt streamed text and a tool call: the call never reaches the client", async () => {
    const agent = createAgent({
      provider: scripted([
        {
          text: "Let me check",
          toolCalls: [{ id: "ghost", name: "weather", arguments: { city: "Oslo" } }],
          error: { kind: "overloaded", message: "overloaded" },
        },
        { text: "It is sunny everywhere." },
      ]),
      tools: [weather],
      retry: { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 },
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "weather?");
    expectClean(run, "success");
    expect(events.some((e) => e.toolCallId === "ghost")).toBe(false);
    if (version === "1.0") expect(run.finished?.pendingToolCallIds).toEqual([]);
    const texts = events.filter((e) => e.type === "TEXT_MESSAGE_START").map((e) => e.messageId);
    const id = agent.messages[1]!.id!;
    // The failed attempt is withdrawn by a snapshot without it; the retry streams under the same id.
    expect(texts).toEqual([id, id]);
    const withdrawn = events.findIndex((e) => e.type === "MESSAGES_SNAPSHOT");
    expect(withdrawn).toBeLessThan(events.findLastIndex((e) => e.type === "TEXT_MESSAGE_START"));
    expect((events[withdrawn]!.messages as { id: string }[]).map((m) => m.id)).toEqual(["u1"]);
    expect(events.find((e) => e.name === "agent-machine.discarded")).toMatchObject({
      value: { messageId: id },
    });
    expect(events.find((e) => e.name === "agent-machine.retry")).toBeDefined();
    // The snapshot withdraws the failed attempt: the client shows the retried answer only.
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
    expect(clientTranscript(client).at(-1)).toMatchObject({ id, content: "It is sunny everywhere." });
  });

  it("a failed attempt's reasoning is emptied in place; a retry that reasons again fills the same message", async () => {
    const run = async (retryThinks: boolean) => {
      const agent = createAgent({
        provider: scripted([
          { thinking: "first idea", error: { kind: "overloaded", message: "busy" } },
          { ...(retryThinks && { thinking: "second idea" }), text: "answer" },
        ]),
        retry: { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 },
      });
      const client = new InProcessClient(version);
      const { run } = await turn(new Thread(agent), client, "u1", "think");
      expectClean(run, "success");
      return { agent, client };
    };
    const again = await run(true);
    expect(clientTranscript(again.client)).toEqual(toAgUiMessages(again.agent.messages));
    expect(clientTranscript(again.client)[1]).toMatchObject({ role: "reasoning", content: "second idea" });
    // A retry that does not reason: the snapshot cannot drop the emptied reasoning message (it
    // would need one of its own), so the client keeps it, empty. Documented in docs/frontends.md.
    const plain = await run(false);
    expect(clientTranscript(plain.client)).toEqual([
      toAgUiMessages(plain.agent.messages)[0],
      { id: `${plain.agent.messages[1]!.id}:reasoning`, role: "reasoning", content: "" },
      toAgUiMessages(plain.agent.messages)[1],
    ]);
  });

  it("a steered message shows as a user text message; a later prompt keeps the transcripts equal", async () => {
    const steps: ScriptedStep[] = [
      { toolCalls: [{ id: "w", name: "weather", arguments: { city: "Rome" } }] },
      { text: "Rome is sunny, and so is Milan." },
      { text: "Bye." },
    ];
    const agent: Agent = createAgent({
      provider: scripted((_request, call) => {
        if (call === 0) agent.steer("also Milan please");
        return steps[call]!;
      }),
      tools: [weather],
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "weather in Rome?");
    expectClean(run, "success");
    const steered = agent.messages.find((m) => m.role === "user" && m.source === "steer")!;
    expect(events.find((e) => e.type === "TEXT_MESSAGE_START" && e.role === "user")).toMatchObject({
      messageId: steered.id,
    });
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
    const next = await turn(thread, client, "u2", "thanks");
    expectClean(next.run, "success");
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
  });

  it("endings: abort, error, limit and loop each finish the run in a way the client accepts", async () => {
    // Abort mid-stream.
    const abortAgent = createAgent({
      provider: scripted([{ text: "x ".repeat(50), chunkSize: 2, delayMs: 2 }]),
    });
    const abortThread = new Thread(abortAgent);
    const client = new InProcessClient(version);
    (client.agent as { addMessage(m: unknown): void }).addMessage(userMessage("u1", "go"));
    const abortEvents = await abortThread.respond(() => {
      void abortAgent.prompt({ role: "user", id: "u1", content: "go", timestamp: Date.now() });
      setTimeout(() => abortAgent.abort(), 15);
    }, version);
    const abortRun = await client.run(abortEvents);
    expectClean(abortRun, version === "1.0" ? "cancelled" : "success");
    expect(clientTranscript(client)).toEqual(toAgUiMessages(abortAgent.messages));

    // A model error: RUN_ERROR with the error's kind as code.
    const broken = createAgent({
      provider: scripted([{ error: { kind: "auth", message: "bad key" } }]),
      retry: { maxRetries: 0 },
    });
    const errorRun = (await turn(new Thread(broken), new InProcessClient(version), "u1", "hi")).run;
    expect(errorRun.failures).toEqual([]);
    expect(errorRun.runError).toMatchObject({ code: "auth", message: expect.stringContaining("bad key") });

    // A turn limit, and a loop: success with the reason in the result.
    const looping = () =>
      createAgent({
        provider: scripted(() => ({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] })),
        tools: [weather],
        limits: { maxTurns: 2, onLimit: "stop" },
      });
    const limited = await turn(new Thread(looping()), new InProcessClient(version), "u1", "loop");
    expectClean(limited.run, "success");
    expect(limited.run.finished?.result).toEqual({ reason: "limit" });
    const looped = createAgent({
      provider: scripted(() => ({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] })),
      tools: [weather],
      loopDetection: { maxIdenticalCalls: 2 },
    });
    const loopRun = await turn(new Thread(looped), new InProcessClient(version), "u1", "loop");
    expectClean(loopRun.run, "success");
    expect(loopRun.run.finished?.result).toEqual({ reason: "loop" });
    expect(loopRun.events.some((e) => e.name === "agent-machine.loop_detected")).toBe(true);
  });

  it("a typed result: partial objects as CUSTOM events, the object in RUN_FINISHED's result; an output filter's refusal is a RUN_ERROR that says so", async () => {
    const Triage = z.object({ severity: z.enum(["low", "high"]), summary: z.string() });
    const typed = createAgent({
      provider: scripted([{ text: '{"severity":"high","summary":"the build is red"}', chunkSize: 8 }]),
      output: Triage,
    });
    const { events, run } = await turn(new Thread(typed), new InProcessClient(version), "u1", "triage");
    expectClean(run, "success");
    const partials = events.filter((e) => e.name === "agent-machine.output_delta");
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.at(-1)?.value).toEqual({ partial: { severity: "high", summary: "the build is red" } });
    expect(run.finished?.result).toEqual({ output: { severity: "high", summary: "the build is red" } });

    const refused = createAgent({
      provider: scripted([
        { text: '{"severity":"low","summary":"bad"}' },
        { text: '{"severity":"low","summary":"bad"}' },
      ]),
      output: Triage,
      outputFilters: [
        ({ output }) =>
          (output as { summary: string }).summary === "bad" ? { reject: "too vague" } : { pass: true },
      ],
      outputFilterRetries: 1,
    });
    const rejected = await turn(new Thread(refused), new InProcessClient(version), "u1", "triage");
    expect(rejected.run.failures).toEqual([]);
    expect(rejected.run.runError).toMatchObject({ code: "output_rejected", message: "too vague" });
    expect(
      rejected.events.filter((e) => e.name === "agent-machine.output_filter").map((e) => e.value),
    ).toEqual([
      { filter: expect.any(String), verdict: "reject", reason: "too vague", action: "retry" },
      { filter: expect.any(String), verdict: "reject", reason: "too vague", action: "end" },
    ]);
  });

  it("a sub-agent's call is a SUBAGENT_STARTED … SUBAGENT_FINISHED pair inside the parent's run", async () => {
    const researcher = subAgentTool({
      name: "research",
      description: "Researches a topic",
      provider: scripted([{ text: "Found it." }]),
    });
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "s1", name: "research", arguments: { task: "x" } }] },
        { text: "ok" },
      ]),
      tools: [researcher],
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "research");
    expectClean(run, "success");
    const sub = events.filter((e) => e.type.startsWith("SUBAGENT_"));
    expect(sub.map((e) => e.type)).toEqual(["SUBAGENT_STARTED", "SUBAGENT_FINISHED"]);
    expect(sub[0]).toMatchObject({ name: "research", parentToolCallId: "s1", subagentRunId: "research-s1" });
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
  });
});

describe.each(["1.0", "0.0.59"] as const)("AG-UI encoder and compaction, @ag-ui/client %s", (version) => {
  it("a compaction mid-run resynchronises the client: its transcript equals the server's, in order", async () => {
    const read = defineTool({
      name: "read",
      description: "Reads a file",
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => `${path}: ${"lorem ipsum ".repeat(300)}`,
    });
    const steps: ScriptedStep[] = [
      ...Array.from({ length: 6 }, (_, i) => ({
        thinking: `next file ${i}`,
        toolCalls: [{ id: `r${i}`, name: "read", arguments: { path: `f${i}.txt` } }],
      })),
      { text: "All read." },
    ];
    const agent = createAgent({
      provider: scripted(steps),
      tools: [read],
      context: { maxContextTokens: 4_000, keepRecent: 2 },
    });
    const thread = new Thread(agent);
    const client = new InProcessClient(version);
    const { events, run } = await turn(thread, client, "u1", "read them all");
    expectClean(run, "success");
    expect(events.some((e) => e.name === "agent-machine.compaction")).toBe(true);
    expect(clientTranscript(client)).toEqual(toAgUiMessages(agent.messages));
  });
});

describe("AG-UI encoder, a reconnect's replay", () => {
  it("does not send again the tool results and messages the client holds; the others it does", () => {
    const result = (id: string, toolCallId: string): AgentMessage => ({
      role: "toolResult",
      id,
      toolCallId,
      toolName: "weather",
      content: [{ type: "text", text: "sunny" }],
      isError: false,
      timestamp: 0,
    });
    const steer: AgentMessage = {
      role: "user",
      id: "s1",
      source: "steer",
      content: [{ type: "text", text: "and be quick" }],
      timestamp: 0,
    };
    const encoder = agUiEncoder({ runId: "again", heldMessageIds: new Set(["r1", "s1"]) });
    let wire = encoder.open({ kind: "replay", threadId: "t1", runId: "run-1", messages: [] });
    [result("r1", "a"), steer, result("r2", "b")].forEach((message, seq) => {
      wire += encoder.event({ type: "message_end", message }, seq);
    });
    wire += encoder.close({ kind: "gone", messages: [] });
    const events = parseFrames(wire);
    expect(events.filter((e) => e.type === "TOOL_CALL_RESULT").map((e) => e.messageId)).toEqual(["r2"]);
    expect(events.some((e) => e.type === "TEXT_MESSAGE_START")).toBe(false);
  });
  it("a replay to a page that holds none of the thread (reloaded) gives it the transcript as the response began, before the replayed results", () => {
    const user: AgentMessage = {
      role: "user",
      id: "u1",
      content: [{ type: "text", text: "deploy" }],
      timestamp: 0,
    };
    const asking: AgentMessage = {
      role: "assistant",
      id: "a1",
      content: [{ type: "toolCall", id: "c1", name: "deploy", arguments: {} }],
      stopReason: "toolUse",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      provider: "scripted",
      model: "scripted",
      timestamp: 0,
    };
    const replayOf = (heldMessageIds?: Set<string>) =>
      parseFrames(
        agUiEncoder({ runId: "again", ...(heldMessageIds && { heldMessageIds }) }).open({
          kind: "replay",
          threadId: "t1",
          runId: "run-1",
          messages: [user, asking],
          continues: { messages: [user, asking], pendingApprovals: [], finishedCalls: [] },
        }),
      );
    const reloaded = replayOf();
    expect(reloaded.map((e) => e.type)).toEqual(["RUN_STARTED", "MESSAGES_SNAPSHOT"]);
    expect(reloaded[1]).toMatchObject({ messages: toAgUiMessages([user, asking]) });
    // A client that holds them all (a reconnect, not a reload) gets nothing it has again.
    expect(replayOf(new Set(["u1", "a1"])).map((e) => e.type)).toEqual(["RUN_STARTED"]);
  });
});
