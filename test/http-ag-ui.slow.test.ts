// The session host's AG-UI routes driven by the real clients over HTTP: `HttpAgent` of
// @ag-ui/client 1.0.0 and 0.0.59 (what CopilotKit ships), against a host on 127.0.0.1 around
// agents with scripted providers. The clients' own schema check and verifier are the oracle: no
// failure, nothing logged, RUN_FINISHED (or RUN_ERROR) really arrived, and after every request the
// client's messages equal the server's transcript as AG-UI messages.
import fc from "fast-check";
import * as z from "zod";
import { afterEach, describe, expect, it } from "vitest";
import {
  agUiProtocol,
  createSessionHost,
  type SessionHostOptions,
  serveNode,
  toAgUiMessages,
  type AgUiMessage,
} from "../http.js";
import { type AgentMessage, type AgentOptions, defineTool, scripted, type ScriptedStep } from "../index.js";
import { type ClientRun, type ClientVersion, httpClient, runClient } from "./fixtures/ag-ui-clients.js";
import { deleteFile, weather } from "./fixtures/frontend-tools.js";

const slow = defineTool({
  name: "slow",
  description: "Takes a while",
  parameters: z.object({}),
  execute: async (_args, { signal }) => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    signal?.throwIfAborted();
    return "slow done";
  },
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function startHost(agent: SessionHostOptions["agent"], more: Partial<SessionHostOptions> = {}) {
  const host = createSessionHost({
    agent,
    basePath: "/api",
    protocols: [agUiProtocol()],
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

async function serverMessages(base: string, threadId: string): Promise<AgUiMessage[]> {
  const response = await fetch(`${base}/threads/${threadId}`);
  expect(response.status).toBe(200);
  const status = (await response.json()) as { messages: AgentMessage[] };
  return toAgUiMessages(status.messages);
}

function expectClean(run: ClientRun, outcome?: string) {
  expect(run.failures).toEqual([]);
  expect(run.logged).toEqual([]);
  expect(run.types.at(-1)).toMatch(/^RUN_(FINISHED|ERROR)$/);
  if (outcome !== undefined) expect(run.finished?.outcome).toBe(outcome);
}

async function expectSameTranscript(client: { messages: unknown[] }, base: string, threadId: string) {
  expect(client.messages.filter((m) => !isWithdrawnReasoning(m))).toEqual(
    await serverMessages(base, threadId),
  );
}

/**
 * The one thing a snapshot cannot take back (docs/frontends.md, AG-UI): the emptied reasoning of a
 * failed attempt whose retry reasoned no more, in a thread with no other reasoning. It is empty.
 */
const isWithdrawnReasoning = (m: unknown) =>
  (m as { role: string }).role === "reasoning" && (m as { content: string }).content === "";

const VERSIONS: ClientVersion[] = ["1.0", "0.0.59"];

describe.each(VERSIONS)("AG-UI over the session host, @ag-ui/client %s HttpAgent", (version) => {
  const say = (client: { addMessage(m: unknown): void }, id: string, content: string) =>
    client.addMessage({ id, role: "user", content });

  it("streams text and reasoning; parallel tool calls; the transcripts agree after every request", async () => {
    const { base } = await startHost({
      provider: scripted([
        { thinking: "The user wants weather", text: "Let me look.", chunkSize: 4 },
        {
          toolCalls: [
            { id: "a", name: "weather", arguments: { city: "Paris" } },
            { id: "b", name: "weather", arguments: { city: "Rome" } },
          ],
        },
        { text: "Both sunny." },
      ]),
      tools: [weather],
    });
    const client = httpClient(version, `${base}/ag-ui`, "t1");
    say(client, "u1", "hello");
    const first = await runClient(client);
    expectClean(first, "success");
    expect(first.types).toContain("REASONING_MESSAGE_CONTENT");
    expect(first.types.filter((t) => t === "TEXT_MESSAGE_CONTENT").length).toBeGreaterThan(1);
    await expectSameTranscript(client, base, "t1");

    say(client, "u2", "weather in Paris and Rome?");
    const second = await runClient(client);
    expectClean(second, "success");
    expect(second.types.filter((t) => t === "TOOL_CALL_RESULT")).toHaveLength(2);
    await expectSameTranscript(client, base, "t1");
  });

  it("two approvals in one turn: one interrupt outcome; resume approves one with edits and denies the other", async () => {
    const { base, host } = await startHost({
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
    const client = httpClient(version, `${base}/ag-ui`, "t2");
    say(client, "u1", "delete both");
    const first = await runClient(client);
    expectClean(first, "interrupt");
    expect(first.finished?.interrupts?.map((i) => i.id)).toEqual(["d1", "d2"]);
    await expectSameTranscript(client, base, "t2");
    const resume = [
      { interruptId: "d1", status: "resolved", payload: { approved: true, editedArgs: { path: "c.txt" } } },
      { interruptId: "d2", status: "resolved", payload: { approved: false, reason: "keep it" } },
    ];
    // Edited arguments the tool's schema refuses: a 4xx, and both calls still wait.
    const refused = await fetch(`${base}/ag-ui`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        threadId: "t2",
        runId: "bad-edit",
        messages: client.messages,
        tools: [],
        context: [],
        resume: [
          { interruptId: "d1", status: "resolved", payload: { editedArgs: { path: 42 } } },
          { interruptId: "d2", status: "resolved" },
        ],
      }),
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(
      host
        .agent("t2")!
        .pendingApprovals()
        .map((c) => c.toolCallId),
    ).toEqual(["d1", "d2"]);
    // The same through the client, with the valid answer first: the request is refused whole,
    // the approval of d1 is not applied either (the transcript unchanged, the run still waits).
    const agent = host.agent("t2")!;
    const before = JSON.stringify(agent.messages);
    const decided: string[] = [];
    const watch = agent.events$.subscribe((event) => decided.push(event.type));
    const partly = await runClient(client, {
      resume: [
        { interruptId: "d1", status: "resolved", payload: { approved: true } },
        { interruptId: "d2", status: "resolved", payload: { approved: true, editedArgs: { path: 42 } } },
      ],
    });
    watch.unsubscribe();
    expect(partly.failures.join("\n")).toMatch(/400/);
    expect(agent.pendingApprovals().map((c) => c.toolCallId)).toEqual(["d1", "d2"]);
    expect(JSON.stringify(agent.messages)).toBe(before);
    expect(agent.state).toBe("running.executing");
    expect(decided).toEqual([]);
    // A reconnect while it waits gets the same interrupts again.
    const reconnect = await sse(`${base}/ag-ui/connect`, {
      threadId: "t2",
      runId: "again",
      protocolVersion: "1.0",
    });
    expect(reconnect.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt" } });
    expect(
      (reconnect.at(-1)!.outcome as { interrupts: { id: string }[] }).interrupts.map((i) => i.id),
    ).toEqual(["d1", "d2"]);

    const second = await runClient(client, { resume });
    expectClean(second, "success");
    const results = host.agent("t2")!.messages.filter((m) => m.role === "toolResult");
    expect(results.map((r) => [r.toolCallId, r.isError, r.editedArgs])).toEqual([
      ["d1", false, { path: "c.txt" }],
      ["d2", true, undefined],
    ]);
    await expectSameTranscript(client, base, "t2");
  });

  it("a client-run tool from RunAgentInput.tools: the run ends with the call pending, the tool message resumes it", async () => {
    const { base } = await startHost({
      provider: scripted([
        { toolCalls: [{ id: "pick", name: "pick_color", arguments: { options: ["red", "blue"] } }] },
        { text: "Blue it is." },
      ]),
    });
    const client = httpClient(version, `${base}/ag-ui`, "t3");
    const tools = [
      { name: "pick_color", description: "Asks the user", parameters: { type: "object", properties: {} } },
    ];
    say(client, "u1", "pick a color");
    const first = await runClient(client, { tools });
    expectClean(first, "success");
    if (version === "1.0") expect(first.finished?.pendingToolCallIds).toEqual(["pick"]);
    await expectSameTranscript(client, base, "t3");
    client.addMessage({ id: "r1", role: "tool", toolCallId: "pick", content: "blue" });
    const second = await runClient(client, { tools });
    expectClean(second, "success");
    await expectSameTranscript(client, base, "t3");
    expect(client.messages.at(-1)).toMatchObject({ role: "assistant", content: "Blue it is." });
  });

  it("a retry whose failed attempt streamed a tool call: no pending frontend tool, the retried answer only", async () => {
    const { base } = await startHost({
      provider: scripted([
        {
          text: "Let me check",
          toolCalls: [{ id: "ghost", name: "weather", arguments: { city: "Oslo" } }],
          error: { kind: "overloaded", message: "overloaded" },
        },
        { text: "Sunny everywhere." },
      ]),
      tools: [weather],
      retry: { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 },
    });
    const client = httpClient(version, `${base}/ag-ui`, "t4");
    say(client, "u1", "weather?");
    const run = await runClient(client);
    expectClean(run, "success");
    if (version === "1.0") expect(run.finished?.pendingToolCallIds).toEqual([]);
    expect(JSON.stringify(client.messages)).not.toContain("ghost");
    await expectSameTranscript(client, base, "t4");
  });

  it("a steer sent mid-run over the side route shows as a user message in the stream", async () => {
    const { base } = await startHost({
      provider: scripted([{ toolCalls: [{ id: "s", name: "slow", arguments: {} }] }, { text: "Noted." }]),
      tools: [slow],
    });
    const client = httpClient(version, `${base}/ag-ui`, "t5");
    say(client, "u1", "do the slow thing");
    const running = runClient(client);
    await until(async () => (await status(base, "t5")).state === "running.executing");
    const steer = await fetch(`${base}/threads/t5/steer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "s1", text: "and be quick" }),
    });
    expect(steer.status).toBe(202);
    const run = await running;
    expectClean(run, "success");
    expect(client.messages).toContainEqual({ id: "s1", role: "user", content: "and be quick" });
    await expectSameTranscript(client, base, "t5");
  });

  it("endings: an abort over the side route, a model error, a limit and a loop", async () => {
    const options = (
      steps: ScriptedStep[] | ((r: unknown, call: number) => ScriptedStep),
      more: Partial<AgentOptions> = {},
    ) => ({ provider: scripted(steps as never), tools: [slow, weather], ...more }) as AgentOptions;
    const agents: Record<string, AgentOptions> = {
      abort: options([{ toolCalls: [{ name: "slow", arguments: {} }] }, { text: "never" }]),
      error: options([{ error: { kind: "auth", message: "bad key" } }], { retry: { maxRetries: 0 } }),
      limit: options(() => ({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] }), {
        limits: { maxTurns: 2, onLimit: "stop" },
      }),
      loop: options(() => ({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] }), {
        loopDetection: { maxIdenticalCalls: 2 },
      }),
    };
    const { base } = await startHost((threadId) => agents[threadId]!);

    const aborting = httpClient(version, `${base}/ag-ui`, "abort");
    say(aborting, "u1", "go");
    const running = runClient(aborting);
    await until(async () => (await status(base, "abort")).state === "running.executing");
    expect(
      (
        await fetch(`${base}/threads/abort/abort`, {
          method: "POST",
          headers: { "content-type": "application/json" },
        })
      ).status,
    ).toBe(200);
    const aborted = await running;
    // 0.0.59 (CopilotKit's) fails a run on a cancelled outcome: it gets a plain RUN_FINISHED.
    expectClean(aborted, version === "1.0" ? "cancelled" : "success");
    await expectSameTranscript(aborting, base, "abort");

    const failing = httpClient(version, `${base}/ag-ui`, "error");
    say(failing, "u1", "hi");
    const failed = await runClient(failing);
    expect(failed.runError).toMatchObject({ code: "auth", message: expect.stringContaining("bad key") });
    expect(failed.types.at(-1)).toBe("RUN_ERROR");

    for (const reason of ["limit", "loop"]) {
      const client = httpClient(version, `${base}/ag-ui`, reason);
      say(client, "u1", "go");
      const run = await runClient(client);
      expectClean(run, "success");
      expect(run.finished?.result).toEqual({ reason });
      await expectSameTranscript(client, base, reason);
    }
  });

  it("a fuzz pass: random scripted runs, 0 client errors, transcripts equal after each", async () => {
    const step = fc.record(
      {
        thinking: fc.constantFrom(undefined, "hmm, let me see"),
        text: fc.constantFrom(undefined, "", "ok", 'a longer answer with\nnewlines and "quotes"'),
        toolCalls: fc.constantFrom(
          undefined,
          [{ name: "weather", arguments: { city: "Oslo" } }],
          [
            { name: "weather", arguments: { city: "A" } },
            { name: "delete_file", arguments: { path: "x" } },
          ],
        ),
        error: fc.constantFrom(undefined, undefined, undefined, {
          kind: "overloaded" as const,
          message: "busy",
        }),
        chunkSize: fc.integer({ min: 1, max: 8 }),
      },
      { requiredKeys: ["chunkSize"] },
    );
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 4 }), async (steps) => {
        const threadId = `fuzz-${runs++}`;
        const { base } = await startHost({
          provider: scripted([
            ...(steps as ScriptedStep[]),
            { text: "final" },
            { text: "final" },
            { text: "final" },
          ]),
          tools: [weather, deleteFile],
          retry: { baseDelayMs: 1, maxDelayMs: 2, jitter: 0, maxRetries: 1 },
        });
        const client = httpClient(version, `${base}/ag-ui`, threadId);
        say(client, "u1", "go");
        let run = await runClient(client);
        for (let round = 0; round < 4 && run.finished?.outcome === "interrupt"; round++) {
          const interrupts = run.finished.interrupts ?? [];
          const resume = interrupts.map((i, n) => ({
            interruptId: i.id,
            status: "resolved",
            payload: { approved: n % 2 === 0 },
          }));
          run = await runClient(client, { resume });
        }
        expect(run.failures).toEqual([]);
        expect(run.logged).toEqual([]);
        expect(run.types.at(-1)).toMatch(/^RUN_(FINISHED|ERROR)$/);
        await expectSameTranscript(client, base, threadId);
        await closers.pop()!();
      }),
      { numRuns: 12, seed: 24 },
    );
  });

  it("bad input gets a clear 4xx and stores nothing", async () => {
    let created = 0;
    const { base } = await startHost(
      () => {
        created++;
        return { provider: scripted([{ text: "hi" }]) };
      },
      { authorize: (_request, threadId) => !threadId.startsWith("private") },
    );
    const post = (body: unknown) =>
      fetch(`${base}/ag-ui`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const input = (more: Record<string, unknown>) => ({
      threadId: "bad",
      runId: "r",
      messages: [],
      tools: [],
      context: [],
      ...more,
    });

    const cases: [unknown, number, RegExp][] = [
      ["{not json", 400, /json/i],
      [{ runId: "r", messages: [] }, 400, /threadId/],
      [input({ messages: "hi" }), 400, /messages must be an array/],
      [
        input({
          messages: [
            { id: "a1", role: "assistant", content: "I said this" },
            { id: "u1", role: "user", content: "hi" },
          ],
        }),
        400,
        /not in the thread's transcript/,
      ],
      [
        input({ messages: [{ id: "x", role: "tool", toolCallId: "nope", content: "r" }] }),
        400,
        /waits for no client result/,
      ],
      [input({ threadId: "private-1", messages: [{ id: "u1", role: "user", content: "hi" }] }), 403, /./],
    ];
    for (const [body, status, message] of cases) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      const json = (await response.json()) as { error: { code: string; message: string } };
      expect(json.error.message).toMatch(message);
    }
    // Nothing was created for any of them.
    expect(created).toBe(0);
    expect((await fetch(`${base}/threads/bad`)).status).toBe(404);

    // Approving an unknown call on a thread that waits for nothing: refused, the agent unharmed.
    const client = httpClient(version, `${base}/ag-ui`, "ok");
    say(client, "u1", "hi");
    expectClean(await runClient(client), "success");
    const refused = await post(
      input({
        threadId: "ok",
        messages: client.messages,
        resume: [{ interruptId: "nope", status: "resolved" }],
      }),
    );
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    await expectSameTranscript(client, base, "ok");
  });

  if (version === "0.0.59") {
    it("CopilotKit's legacy resume channel: forwardedProps.command.resume answers the one waiting call", async () => {
      const { base, host } = await startHost({
        provider: scripted([
          { toolCalls: [{ id: "d1", name: "delete_file", arguments: { path: "a.txt" } }] },
          { text: "Done." },
        ]),
        tools: [deleteFile],
      });
      const client = httpClient(version, `${base}/ag-ui`, "legacy");
      say(client, "u1", "delete it");
      const first = await runClient(client);
      expectClean(first, "interrupt");
      // What a legacy client posts: no protocolVersion, no resume[], the answer in forwardedProps.
      const events = await sse(`${base}/ag-ui`, {
        threadId: "legacy",
        runId: "r2",
        messages: client.messages,
        tools: [],
        context: [],
        forwardedProps: { command: { resume: { approved: true } } },
      });
      expect(events.map((e) => e.type)).toContain("TOOL_CALL_RESULT");
      expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
      expect(host.agent("legacy")!.messages.find((m) => m.role === "toolResult")).toMatchObject({
        toolCallId: "d1",
        isError: false,
      });
    });
  }

  // Both clients (1.0.0 and CopilotKit's 0.0.59) have connectAgent(), which calls connect();
  // neither HttpAgent implements it, and the fixture's clients post to the connect route instead
  // (as docs/frontends.md shows apps).
  it("a message refused while the run goes on (after abortRun) does not lock the thread: the next one is answered", async () => {
    const { base, host } = await startHost({
      provider: scripted([{ text: "word ".repeat(60), chunkSize: 5, delayMs: 5 }, { text: "Hello again." }]),
    });
    const client = httpClient(version, `${base}/ag-ui`, "t12");
    say(client, "u1", "talk");
    let contents = 0;
    const controller = new AbortController();
    const dropped = client.runAgent({ abortController: controller } as never, {
      onTextMessageContentEvent: () => {
        if (++contents === 3) controller.abort(); // what abortRun() does: a disconnect, the run goes on
      },
    });
    await dropped.catch(() => undefined);
    // The user sends on while the run still streams: refused, and the client keeps the message.
    say(client, "u2", "are you there?");
    const refused = await runClient(client, {});
    // (The partial assistant message the client holds is not in the transcript until it ends.)
    expect(refused.failures.join()).toMatch(/HTTP (400|409)/);
    await until(async () => host.agent("t12")!.state === "idle");
    say(client, "u3", "hello?");
    const answered = await runClient(client, {});
    expectClean(answered, "success");
    expect(client.messages.at(-1)).toMatchObject({ role: "assistant", content: "Hello again." });
    // The refused message was never taken: the thread has the messages that were answered.
    const users = host
      .agent("t12")!
      .messages.filter((m) => m.role === "user")
      .map((m) => m.id);
    expect(users).toEqual(["u1", "u3"]);
  });

  it("drop and reconnect mid-run: the connect route replays the response, nothing lost or doubled", async () => {
    const text = "word ".repeat(60);
    const { base } = await startHost({ provider: scripted([{ text, chunkSize: 5, delayMs: 5 }]) });
    const client = httpClient(version, `${base}/ag-ui`, "t9");
    say(client, "u1", "talk");
    let contents = 0;
    const controller = new AbortController();
    const dropped = client.runAgent({ abortController: controller } as never, {
      onTextMessageContentEvent: () => {
        if (++contents === 5) controller.abort();
      },
    });
    await dropped.catch(() => undefined);
    // The run was not aborted by the dropped connection.
    expect((await status(base, "t9")).state).not.toBe("idle");
    const again = await runClient(client, {}, "connectAgent");
    expectClean(again, "success");
    expect(again.types).toContain("TEXT_MESSAGE_CONTENT"); // the replay, not only a snapshot
    await expectSameTranscript(client, base, "t9");
    expect(client.messages.filter((m) => (m as { role: string }).role === "assistant")).toEqual([
      expect.objectContaining({ content: text }),
    ]);
    // A second reconnect after the end says the run is over and sends the transcript.
    const late = await runClient(client, {}, "connectAgent");
    expectClean(late, "success");
    await expectSameTranscript(client, base, "t9");
  });

  it("drop and reconnect during a resumed response: the tool message once, the client still resumes", async () => {
    const text = "word ".repeat(60);
    const { base } = await startHost({
      provider: scripted([
        { toolCalls: [{ id: "d1", name: "delete_file", arguments: { path: "a.txt" } }] },
        { text, chunkSize: 5, delayMs: 5 },
      ]),
      tools: [deleteFile],
    });
    const client = httpClient(version, `${base}/ag-ui`, "t10");
    say(client, "u1", "delete it");
    expectClean(await runClient(client), "interrupt");
    const resume = [{ interruptId: "d1", status: "resolved", payload: { approved: true } }];
    const controller = new AbortController();
    const dropped = client.runAgent({ resume, abortController: controller } as never, {
      onTextMessageContentEvent: () => controller.abort(),
    });
    await dropped.catch(() => undefined);
    expect(client.messages.filter((m) => (m as { role: string }).role === "tool")).toHaveLength(1);
    expect((await status(base, "t10")).state).not.toBe("idle");
    // The client still holds the interrupt (the resumed run never finished for it): connectAgent()
    // as docs/frontends.md shows it names it in `resume`, and the connect route applies nothing.
    const again = await runClient(client, {}, "connectAgent");
    expectClean(again, "success");
    expect(again.types).toContain("TEXT_MESSAGE_CONTENT");
    await expectSameTranscript(client, base, "t10");
    expect(client.messages.filter((m) => (m as { role: string }).role === "tool")).toEqual([
      expect.objectContaining({ toolCallId: "d1" }),
    ]);
  });

  it("reconnect while an approval waits: a reloaded page and the same client get the interrupt again, nothing applied", async () => {
    const { base, host } = await startHost({
      provider: scripted([
        { toolCalls: [{ id: "d1", name: "delete_file", arguments: { path: "a.txt" } }] },
        { text: "Done." },
      ]),
      tools: [deleteFile],
    });
    const client = httpClient(version, `${base}/ag-ui`, "t11");
    say(client, "u1", "delete it");
    expectClean(await runClient(client), "interrupt");
    // A reloaded page: a new client holds nothing and no interrupt; connectAgent() brings both.
    const reloaded = httpClient(version, `${base}/ag-ui`, "t11");
    const fresh = await runClient(reloaded, {}, "connectAgent");
    expectClean(fresh, "interrupt");
    expect(fresh.finished?.interrupts?.map((i) => i.id)).toEqual(["d1"]);
    await expectSameTranscript(reloaded, base, "t11");
    // The same client holds the interrupt (the clients refuse connectAgent() while it stands
    // unaddressed): as docs/frontends.md shows it, the connect goes through and applies nothing,
    // not even resume entries that approve.
    expect(client.pendingInterrupts.map((i) => i.id)).toEqual(["d1"]);
    expectClean(await runClient(client, {}, "connectAgent"), "interrupt");
    const pending = [{ interruptId: "d1", status: "resolved", payload: { approved: true } }];
    const again = await runClient(client, { resume: pending }, "connectAgent");
    expectClean(again, "interrupt");
    expect(
      host
        .agent("t11")!
        .pendingApprovals()
        .map((c) => c.toolCallId),
    ).toEqual(["d1"]);
    await expectSameTranscript(client, base, "t11");
    expectClean(await runClient(reloaded, { resume: pending }), "success");
    await expectSameTranscript(reloaded, base, "t11");
  });
});

/** Posts `body` and reads the SSE answer as AG-UI events. */
async function sse(url: string, body: unknown): Promise<{ type: string; [key: string]: unknown }[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => JSON.parse(frame.slice(6)) as { type: string });
}

async function status(base: string, threadId: string): Promise<{ state: string; status: string }> {
  const response = await fetch(`${base}/threads/${threadId}`);
  return (await response.json()) as { state: string; status: string };
}

async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
