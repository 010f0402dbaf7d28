// Values a durable run cannot journal (a real Restate server): a tool's result with a BigInt or a
// cycle, a permission checker or `convertToLlm` that throws, an output JSON cannot hold, seed
// messages that cannot be stored, an inspection observer that throws mid-run. Before, each one
// failed the run's journal entry on every retry, for ever, its status reading "running". Now each
// is answered as in process (the same agent, no Restate, side by side) or, where a process has
// nothing to store, ends the run with a clear error; never an endless retry.
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentMessage, type AgentOptions, createAgent, defineTool, scripted } from "../index.js";
import { durableHandle, type RunResult } from "../restate.js";
import { eventually, useSessionsPerSession } from "./fixtures/durable-harness.js";

const agents = new Map<string, AgentOptions>();
const harness = useSessionsPerSession(agents);

/** The run's result, or a failure saying it never ended (what an endless retry looks like). */
async function resultWithin(sessionId: string, input: string, ms = 20_000): Promise<RunResult> {
  const run = await harness.client.send(sessionId, input);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      harness.client.result(run),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the run of ${sessionId} did not end in ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The same agent on Restate and in process: their run's outcome and what the model read of the call. */
async function bothWays(name: string, options: () => AgentOptions, input = "go") {
  const sessionId = `${name}-${Date.now()}`;
  agents.set(sessionId, options());
  const durable = await resultWithin(sessionId, input);
  const local = createAgent(options());
  const inProcess = await local.prompt(input);
  return { sessionId, durable, inProcess, durableMessages: await harness.client.transcript(sessionId) };
}

const toolResultText = (messages: readonly AgentMessage[]) =>
  messages
    .filter((m) => m.role === "toolResult")
    .map((m) => ({ text: (m.content as { text: string }[])[0]!.text, isError: m.isError === true }));

function returning(name: string, result: () => unknown) {
  return defineTool({
    name,
    description: "Answers with what it is given",
    parameters: z.object({}),
    execute: () => result() as string,
  });
}

const callingOnce = (tool: string) =>
  scripted([{ toolCalls: [{ id: "c1", name: tool, arguments: {} }] }, { text: "noted" }]);

describe("durable sessions: values a run cannot journal", () => {
  it("a tool result with a BigInt: the call answers an error the model reads, as in process; the run goes on", async () => {
    const tool = returning("count_rows", () => ({
      content: [{ type: "text", text: "42 rows" }],
      details: { rows: 42n },
    }));
    const { sessionId, durable, inProcess, durableMessages } = await bothWays("bigint", () => ({
      provider: callingOnce("count_rows"),
      tools: [tool],
    }));
    const expected = [
      {
        text: "Tool count_rows returned a result that cannot be stored as JSON: Do not know how to serialize a BigInt",
        isError: true,
      },
    ];
    expect(durable.reason).toBe("stop");
    expect(toolResultText(durableMessages)).toEqual(expected);
    expect(toolResultText(inProcess.messages)).toEqual(expected);
    expect(await harness.client.status(sessionId)).toMatchObject({
      state: "idle",
      lastRun: { reason: "stop" },
    });
  }, 60_000);

  it("a tool result with a cycle: the same", async () => {
    const tool = returning("load_user", () => {
      const user: Record<string, unknown> = { name: "Ada" };
      user.self = user;
      return { content: [{ type: "text", text: "Ada" }], details: { user } };
    });
    const { durable, inProcess, durableMessages } = await bothWays("cycle", () => ({
      provider: callingOnce("load_user"),
      tools: [tool],
    }));
    expect(durable.reason).toBe("stop");
    const [result] = toolResultText(durableMessages);
    expect(result!.isError).toBe(true);
    expect(result!.text).toMatch(
      /^Tool load_user returned a result that cannot be stored as JSON: Converting circular/,
    );
    expect(toolResultText(inProcess.messages)).toEqual([result]);
  }, 60_000);

  it("a permission checker that throws: the call answers its error, as in process (not retried for ever)", async () => {
    const tool = returning("deploy", () => "deployed");
    const { durable, inProcess, durableMessages } = await bothWays("permission", () => ({
      provider: callingOnce("deploy"),
      tools: [tool],
      permissions: {
        check: () => {
          throw new Error("the policy service is down");
        },
      },
    }));
    expect(durable.reason).toBe("stop");
    expect(toolResultText(durableMessages)).toEqual([{ text: "the policy service is down", isError: true }]);
    expect(toolResultText(inProcess.messages)).toEqual(toolResultText(durableMessages));
  }, 60_000);

  it("convertToLlm that throws: the model call fails with its message, as in process", async () => {
    const { durable, inProcess } = await bothWays("convert", () => ({
      provider: scripted([{ text: "never" }]),
      convertToLlm: () => {
        throw new Error("cannot convert");
      },
    }));
    expect(durable).toMatchObject({ reason: "error", errorMessage: "Model stream failed: cannot convert" });
    expect(inProcess).toMatchObject({ reason: "error", errorMessage: "Model stream failed: cannot convert" });
  }, 60_000);

  it("an output JSON cannot hold (a schema that makes a BigInt): the run ends with reason error and says why", async () => {
    const sessionId = `output-${Date.now()}`;
    agents.set(sessionId, {
      provider: scripted([{ text: '{"rows":"42"}' }]),
      output: z.object({ rows: z.string().transform((text) => BigInt(text)) }),
    });
    const result = await resultWithin(sessionId, "count");
    const errorMessage = "The run's output cannot be stored as JSON: Do not know how to serialize a BigInt";
    expect(result).toMatchObject({ reason: "error", errorMessage });
    expect(result.output).toBeUndefined();
    expect(await harness.client.status(sessionId)).toMatchObject({
      state: "idle",
      lastRun: { reason: "error", errorMessage },
    });
    // The model's answer stays in the transcript.
    expect((await harness.client.transcript(sessionId)).at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: '{"rows":"42"}' }],
    });
  }, 60_000);

  it("seed messages that cannot be stored: the run is refused (500) and the session left as it was", async () => {
    const sessionId = `seed-${Date.now()}`;
    agents.set(sessionId, {
      provider: scripted([{ text: "hi" }]),
      messages: [
        { role: "user", content: "earlier", timestamp: 1, meta: { n: 1n } } as unknown as AgentMessage,
      ],
    });
    const run = await harness.client.send(sessionId, "hello");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const failure = await Promise.race([
      harness.client.result(run).then(
        () => undefined,
        (error: unknown) => error as Error,
      ),
      new Promise<Error>((resolve) => {
        timer = setTimeout(() => resolve(new Error("the run did not end")), 20_000);
      }),
    ]);
    clearTimeout(timer);
    expect(failure?.message).toMatch(
      /The agent of session "seed-\d+" could not be created: its messages cannot be stored as JSON: Do not know how to serialize a BigInt/,
    );
  }, 60_000);

  it("an approval whose edited arguments JSON cannot hold is refused at the caller; the call still waits", async () => {
    const sessionId = `approval-${Date.now()}`;
    const tool = defineTool({
      name: "pay",
      description: "Pays",
      parameters: z.object({ cents: z.number() }),
      needsApproval: true,
      execute: ({ cents }) => `paid ${cents}`,
    });
    agents.set(sessionId, {
      provider: scripted([
        { toolCalls: [{ id: "c1", name: "pay", arguments: { cents: 5 } }] },
        { text: "done" },
      ]),
      tools: [tool],
    });
    const run = await harness.client.send(sessionId, "pay");
    await eventually(
      async () => (await harness.client.status(sessionId)).pendingApprovals.length > 0 || undefined,
      "the approval request",
    );
    await expect(harness.client.approve(sessionId, "c1", { args: { cents: 5n } })).rejects.toThrow(
      "Do not know how to serialize a BigInt",
    );
    expect((await harness.client.status(sessionId)).pendingApprovals).toMatchObject([{ toolCallId: "c1" }]);
    await harness.client.approve(sessionId, "c1", { args: { cents: 7 } });
    expect((await harness.client.result(run)).reason).toBe("stop");
    const paid = (await harness.client.transcript(sessionId)).find((m) => m.role === "toolResult");
    expect(JSON.stringify(paid)).toContain("paid 7");
  }, 60_000);

  it("a tool update JSON cannot hold: the live channel skips it, its follower sees the rest of the run", async () => {
    const sessionId = `update-${Date.now()}`;
    const tool = defineTool({
      name: "count",
      description: "Counts, with progress",
      parameters: z.object({}),
      execute: (_args, { onUpdate }) => {
        onUpdate({ content: [{ type: "text", text: "halfway" }], details: { rows: 21n } });
        return "42";
      },
    });
    agents.set(sessionId, { provider: callingOnce("count"), tools: [tool] });
    const handle = durableHandle(harness.client, sessionId, {
      pollIntervalMs: 50,
      live: [harness.server.liveUrl!],
    });
    const { runId } = await handle.run({ role: "user", content: "count", timestamp: Date.now() });
    const events = await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    expect(events.map(({ event }) => event.type)).toContain("tool_execution_end");
    expect(events.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "stop" });
  }, 60_000);

  it("an inspection observer that throws mid-run: the run finishes (the observer's error is contained)", async () => {
    const sessionId = `inspect-${Date.now()}`;
    const tool = returning("echo", () => "echoed");
    agents.set(sessionId, {
      provider: callingOnce("echo"),
      tools: [tool],
      inspect: (event: { type: string; event?: { type?: string } }) => {
        if (event.type === "@xstate.event" && event.event?.type === "TOOL_EXECUTED") {
          throw new Error("the inspector is down");
        }
      },
    });
    const result = await resultWithin(sessionId, "go");
    expect(result.reason).toBe("stop");
    expect(toolResultText(await harness.client.transcript(sessionId))).toEqual([
      { text: "echoed", isError: false },
    ]);
    expect(await harness.client.status(sessionId)).toMatchObject({
      state: "idle",
      lastRun: { reason: "stop" },
    });
  }, 60_000);
});
