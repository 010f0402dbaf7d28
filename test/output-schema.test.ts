import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { type AgentEvent, createAgent, defineTool, parsePartialJson, scripted } from "../index.js";

const Triage = z.object({ severity: z.enum(["low", "high"]), summary: z.string() });

const lookup = defineTool({
  name: "lookup",
  description: "Looks an issue up",
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => `issue ${id}: the build is red`,
});

function recording(agent: { events$: { subscribe(fn: (e: AgentEvent) => void): unknown } }) {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((e) => events.push(e));
  return events;
}

describe("output schema", () => {
  it("returns the validated object after two tool turns, typed from the schema", async () => {
    const provider = scripted([
      { toolCalls: [{ name: "lookup", arguments: { id: "1" } }] },
      { toolCalls: [{ name: "lookup", arguments: { id: "2" } }] },
      { text: '{"severity":"high","summary":"red build"}' },
    ]);
    const agent = createAgent({ provider, tools: [lookup], output: Triage });
    const outcome = await agent.prompt("Triage issues 1 and 2");
    expectTypeOf(outcome.output).toEqualTypeOf<{ severity: "low" | "high"; summary: string } | undefined>();
    expect(outcome.reason).toBe("stop");
    expect(outcome.output).toEqual({ severity: "high", summary: "red build" });
    expect(provider.calls).toBe(3);
    // Every call was sent the schema.
    expect(provider.requests.map((r) => r.output?.name)).toEqual([
      "final_answer",
      "final_answer",
      "final_answer",
    ]);
    expect(provider.requests[0].output?.schema).toMatchObject({
      type: "object",
      required: ["severity", "summary"],
    });
  });

  it("types and validates a per-run schema given to prompt()", async () => {
    const agent = createAgent({ provider: scripted([{ text: '```json\n{"n": 3}\n```' }]) });
    const outcome = await agent.prompt("Count", { output: z.object({ n: z.number() }) });
    expectTypeOf(outcome.output).toEqualTypeOf<{ n: number } | undefined>();
    expect(outcome.output).toEqual({ n: 3 });
    const plain = await agent.prompt("Again?");
    expectTypeOf(plain.output).toEqualTypeOf<unknown>();
    expect("output" in plain).toBe(false);
  });

  it("tells the model why its JSON did not parse, then takes the repaired answer", async () => {
    const provider = scripted([
      { text: '{"severity": "high", "summary": ' },
      { text: '{"severity":"low","summary":"ok"}' },
    ]);
    const agent = createAgent({ provider, output: Triage });
    const events = recording(agent);
    const outcome = await agent.prompt("Triage");
    expect(outcome.output).toEqual({ severity: "low", summary: "ok" });
    const invalid = events.filter((e) => e.type === "output_invalid");
    expect(invalid).toEqual([
      expect.objectContaining({
        attempt: 1,
        maxRepairs: 2,
        action: "retry",
        raw: '{"severity": "high", "summary": ',
      }),
    ]);
    expect((invalid[0] as { error: string }).error).toMatch(/not valid JSON/);
    // The second request carries the correction, after the model's invalid answer.
    const sent = provider.requests[1].messages;
    expect(sent.at(-2)).toMatchObject({ role: "assistant" });
    expect(JSON.stringify(sent.at(-1))).toMatch(/not accepted.*not valid JSON/);
  });

  it("sends a schema failure back with the field that failed, then takes the repair", async () => {
    const provider = scripted([
      { text: '{"severity":"urgent","summary":"x"}' },
      { text: '{"severity":"high","summary":"x"}' },
    ]);
    const agent = createAgent({ provider, output: Triage });
    const events = recording(agent);
    const outcome = await agent.prompt("Triage");
    expect(outcome.output).toEqual({ severity: "high", summary: "x" });
    const invalid = events.find((e) => e.type === "output_invalid") as { error: string };
    expect(invalid.error).toMatch(/severity/);
    expect(JSON.stringify(provider.requests[1].messages.at(-1))).toMatch(/severity/);
  });

  it("ends with an error carrying the last raw answer once the repairs are used up", async () => {
    const provider = scripted([{ text: "nope" }, { text: "still no" }]);
    const agent = createAgent({ provider, output: { schema: Triage, maxRepairs: 1 } });
    const events = recording(agent);
    const outcome = await agent.prompt("Triage");
    expect(outcome.reason).toBe("error");
    expect(outcome.output).toBeUndefined();
    expect(outcome.rawOutput).toBe("still no");
    expect(outcome.errorMessage).toMatch(/No valid output after 2 attempts: The answer is not valid JSON/);
    expect(
      events.filter((e) => e.type === "output_invalid").map((e) => (e as { action: string }).action),
    ).toEqual(["retry", "fail"]);
    expect(provider.calls).toBe(2);
  });

  it("refuses a schema that is not one, clearly, at createAgent and at prompt", async () => {
    expect(() => createAgent({ provider: scripted([]), output: "json" as never })).toThrow(
      /output must be a zod 4 schema/,
    );
    const agent = createAgent({ provider: scripted([{ text: "x" }]) });
    await expect(agent.prompt("x", { output: 42 as never })).rejects.toThrow(/prompt: output must be/);
    expect(agent.state).toBe("idle");
  });

  it("validates with a JSON Schema object (outcome.output is unknown)", async () => {
    const agent = createAgent({
      provider: scripted([{ text: '{"ok": "yes"}' }, { text: '{"ok": true}' }]),
      output: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
    });
    const outcome = await agent.prompt("ok?");
    expectTypeOf(outcome.output).toEqualTypeOf<unknown>();
    expect(outcome.output).toEqual({ ok: true });
  });

  it("streams output_delta events with the partial object", async () => {
    const agent = createAgent({
      provider: scripted([{ text: '{"severity":"high","summary":"the build is red"}', chunkSize: 8 }]),
      output: Triage,
    });
    const events = recording(agent);
    await agent.prompt("Triage");
    const partials = events
      .filter((e) => e.type === "output_delta")
      .map((e) => (e as { partial: unknown }).partial);
    expect(partials.length).toBeGreaterThan(2);
    expect(partials[0]).toEqual({});
    expect(partials).toContainEqual({ severity: "high", summary: "th" });
    expect(partials.at(-1)).toEqual({ severity: "high", summary: "the build is red" });
  });
});

describe("parsePartialJson", () => {
  it.each([
    ['{"a": "he', { a: "he" }],
    ['{"a": 1, "b', { a: 1 }],
    ['{"a": [1, 2', { a: [1, 2] }],
    ['{"a": tr', {}],
    ['{"a": {"b": "x\\', { a: { b: "x" } }],
    ['Sure! ```json\n{"a":', {}],
    ["plain text", undefined],
  ])("%s", (text, expected) => {
    expect(parsePartialJson(text)).toEqual(expected);
  });
});

describe("output filters", () => {
  it("sends a reject back to the model and takes the corrected answer; a warning is kept", async () => {
    const provider = scripted([{ text: "The password is hunter2" }, { text: "I cannot share it" }]);
    const noSecrets = ({ text }: { text: string }) =>
      text.includes("password") ? { reject: "it leaks a password" } : { pass: true as const };
    const polite = () => ({ warn: "not very polite" });
    const agent = createAgent({ provider, outputFilters: [noSecrets, polite] });
    const events = recording(agent);
    const outcome = await agent.prompt("What is the password?");
    expect(outcome.reason).toBe("stop");
    expect(outcome.outputWarnings).toEqual(["not very polite"]);
    expect(events.filter((e) => e.type === "output_filter")).toEqual([
      {
        type: "output_filter",
        filter: "noSecrets",
        verdict: "reject",
        reason: "it leaks a password",
        action: "retry",
      },
      { type: "output_filter", filter: "noSecrets", verdict: "pass" },
      { type: "output_filter", filter: "polite", verdict: "warn", reason: "not very polite" },
    ]);
    expect(JSON.stringify(provider.requests[1].messages.at(-1))).toMatch(/rejected: it leaks a password/);
  });

  it("ends the run with reason rejected and withholds the answer when retries run out", async () => {
    const provider = scripted([
      { text: '{"severity":"high","summary":"bad"}' },
      { text: '{"severity":"high","summary":"bad"}' },
    ]);
    const agent = createAgent({
      provider,
      output: Triage,
      outputFilters: [
        ({ output }) =>
          (output as { summary: string }).summary === "bad" ? { reject: "too vague" } : { pass: true },
      ],
      outputFilterRetries: 1,
    });
    const outcome = await agent.prompt("Triage");
    expect(outcome.reason).toBe("rejected");
    expect(outcome.rejection).toBe("too vague");
    expect(outcome.output).toBeUndefined();
    expect(outcome.rawOutput).toBe('{"severity":"high","summary":"bad"}');
    expect(provider.calls).toBe(2);
  });
});

describe("output schema across a snapshot", () => {
  it("a run restored mid-way keeps its per-run schema (as JSON Schema) and still repairs and validates", async () => {
    const Count = z.object({ n: z.number().int() });
    const askFirst = { check: () => ({ behavior: "ask" as const }) };
    const provider = scripted([{ toolCalls: [{ id: "c1", name: "lookup", arguments: { id: "7" } }] }]);
    const first = createAgent({ provider, tools: [lookup], permissions: askFirst });
    const asked = new Promise<void>((resolve) =>
      first.events$.subscribe((e) => e.type === "approval_requested" && resolve()),
    );
    void first.prompt("Count the issues", { output: Count });
    await asked;
    const saved = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();

    // A new process: the agent has no output option of its own; the run's schema comes from the snapshot.
    const resumed = createAgent({
      provider: scripted([{ text: '{"n": 2.5}' }, { text: '{"n": 3}' }]),
      tools: [lookup],
      permissions: askFirst,
      snapshot: saved,
    });
    const events = recording(resumed);
    const ended = new Promise<unknown>((resolve) =>
      resumed.events$.subscribe((e) => e.type === "agent_end" && resolve(e)),
    );
    resumed.approve("c1");
    const end = (await ended) as { reason: string; output: unknown };
    expect(end.reason).toBe("stop");
    expect(end.output).toEqual({ n: 3 });
    const invalid = events.find((e) => e.type === "output_invalid") as { error: string };
    expect(invalid.error).toMatch(/does not match the schema[\s\S]*expected int/);
  });
});

describe("output over the AI SDK UI message stream", () => {
  it("carries the partial objects, the checks and the final object as agent-machine data parts", async () => {
    const { encodeUIMessageChunks } = await import("../http.js");
    const agent = createAgent({
      provider: scripted([
        { text: '{"severity":"hi' },
        { text: '{"severity":"high","summary":"red"}', chunkSize: 10 },
      ]),
      output: Triage,
    });
    const events = recording(agent);
    await agent.prompt("Triage");
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    const chunks = encodeUIMessageChunks(
      { kind: "run", threadId: "t", runId: undefined, messages: [] },
      events.slice(0, -1),
      { kind: "end", event: end, messages: agent.messages },
    ) as { type: string; data?: Record<string, unknown> }[];
    const data = chunks.filter((c) => c.type.startsWith("data-agent-machine-"));
    expect(data.filter((c) => c.type === "data-agent-machine-output-invalid")).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ attempt: 1, action: "retry" }) }),
    ]);
    const partials = data
      .filter((c) => c.type === "data-agent-machine-output-delta")
      .map((c) => c.data!.partial);
    expect(partials.at(-1)).toEqual({ severity: "high", summary: "red" });
    expect(data.at(-1)).toMatchObject({
      type: "data-agent-machine-end",
      data: { reason: "stop", output: { severity: "high", summary: "red" } },
    });
  });
});
