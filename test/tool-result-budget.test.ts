import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  codingTools,
  createAgent,
  defineTool,
  INVALID_JSON_ARGUMENTS_KEY,
  type ProviderRequest,
  scripted,
  textOf,
  type ToolResultMessage,
} from "../index.js";
import { cutText } from "../tools/result-budget.js";
import { tempDir } from "./fixtures/tools-helpers.js";
import { expectEventInvariants, expectValidTranscript, record, resultText, toolResults } from "./helpers.js";

/** 5 MB of numbered log lines: the start and the end of it are recognisable. */
const HUGE = Array.from(
  { length: 100_000 },
  (_, i) => `log line ${String(i).padStart(6, "0")} ${"x".repeat(33)}`,
).join("\n");

const hugeTool = (extra: { maxResultChars?: number; details?: unknown; throws?: boolean } = {}) =>
  defineTool({
    name: "dump",
    description: "Dumps a huge log",
    parameters: z.object({}),
    maxResultChars: extra.maxResultChars,
    execute: () => {
      if (extra.throws) throw new Error(HUGE);
      return { content: [{ type: "text" as const, text: HUGE }], details: extra.details };
    },
  });

const callDump = { toolCalls: [{ id: "c1", name: "dump" }] };

/** What the provider is sent of a request: its messages as the wire carries them (no `details`). */
function wireChars(request: ProviderRequest): number {
  return JSON.stringify(
    request.messages.map((m) =>
      m.role === "toolResult" ? { role: m.role, toolCallId: m.toolCallId, content: m.content } : m,
    ),
  ).length;
}

const endOf = (events: AgentEvent[], id: string) =>
  events.find(
    (e): e is Extract<AgentEvent, { type: "tool_execution_end" }> =>
      e.type === "tool_execution_end" && e.toolCallId === id,
  )!;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("tool result budget", () => {
  it("a 5 MB result of a user's tool: head and tail with a marker, the full output in details", async () => {
    expect(HUGE.length).toBeGreaterThan(4_900_000);
    const provider = scripted([callDump, { text: "Seen it." }]);
    const agent = createAgent({ provider, tools: [hugeTool()] });
    const events = record(agent);
    await agent.prompt("dump the log");

    const [result] = toolResults(agent.messages);
    const text = resultText(result!);
    expect(text.length).toBeLessThanOrEqual(50_000);
    expect(text.startsWith("log line 000000 ")).toBe(true);
    expect(text.endsWith(`log line 099999 ${"x".repeat(33)}`)).toBe(true);
    expect(text).toMatch(
      /\n\[\.\.\. [\d,]+ of 4,999,999 characters \([\d,]+ of 100,000 lines\) cut from the middle of this output; only its start and end are shown \.\.\.\]\n/,
    );
    // The full output is still reachable by the app, and what was cut is stated.
    const details = result!.details as { fullOutput: string; outputCut: Record<string, number> };
    expect(details.fullOutput).toBe(HUGE);
    expect(details.outputCut).toMatchObject({
      totalChars: HUGE.length,
      totalLines: 100_000,
      maxChars: 50_000,
    });
    const [head, tail] = text.split(/\[\.\.\. .* \.\.\.\]\n/);
    expect(HUGE.startsWith(head!) && HUGE.endsWith(tail!)).toBe(true);
    expect(details.outputCut.cutChars).toBe(HUGE.length - head!.length - tail!.length);
    // The cut is visible in events, exactly as it entered the history.
    expect(endOf(events, "c1").result).toEqual({ content: result!.content, details: result!.details });

    // The next request carries the cut result, not 5 MB.
    const next = provider.requests[1]!;
    expect(wireChars(next)).toBeLessThan(52_000);
    expectEventInvariants(events);
  });

  it("with a workspace, the full output is spilled to a file the model pages with read_file", async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    let spilled = "";
    const provider = scripted((request, call) => {
      if (call === 0) return callDump;
      if (call === 1) {
        const marker = textOf((request.messages.at(-1) as ToolResultMessage).content);
        spilled = /The full output is in (\S+): read it with read_file/.exec(marker)?.[1] ?? "";
        return {
          toolCalls: [
            { id: "c2", name: "read_file", arguments: { path: spilled, offset: 50_001, limit: 3 } },
          ],
        };
      }
      return { text: "Found the middle." };
    });
    const agent = createAgent({ provider, tools: [hugeTool(), ...codingTools({ cwd: dir })] });
    await agent.prompt("dump the log and read its middle");

    expect(spilled).toMatch(/^\.agent-machine\/tool-output\/dump-c1-[0-9a-f]{6}\.txt$/);
    expect(readFileSync(path.join(dir, spilled), "utf8")).toBe(HUGE);
    expect(readFileSync(path.join(dir, ".agent-machine/.gitignore"), "utf8")).toBe("*\n");
    const [dump, page] = toolResults(agent.messages);
    expect(dump!.details).toMatchObject({ fullOutputPath: spilled, outputCut: { path: spilled } });
    expect(dump!.details).not.toHaveProperty("fullOutput");
    expect(resultText(page!)).toContain("log line 050000");
    expect(resultText(page!)).toContain("log line 050002");
    expect(resultText(page!)).not.toContain("log line 050003");
    expectValidTranscript(agent.messages);
  });

  it("a .agent-machine folder that links out of the workspace is not written through", async () => {
    const { dir, cleanup } = await tempDir();
    const { dir: outside, cleanup: cleanupOutside } = await tempDir();
    cleanups.push(cleanup, cleanupOutside);
    symlinkSync(outside, path.join(dir, ".agent-machine"));
    const agent = createAgent({
      provider: scripted([callDump, { text: "ok" }]),
      tools: [hugeTool(), ...codingTools({ cwd: dir })],
    });
    await agent.prompt("go");
    const [result] = toolResults(agent.messages);
    expect((result!.details as { fullOutput: string }).fullOutput).toBe(HUGE);
    expect(resultText(result!)).toContain("only its start and end are shown");
    expect(readdirSync(outside)).toEqual([]);
  });

  it("the budget is per agent and per tool; false or Infinity turns it off", async () => {
    const run = async (options: Parameters<typeof createAgent>[0]) => {
      const agent = createAgent(options);
      await agent.prompt("go");
      return resultText(toolResults(agent.messages)[0]!);
    };
    const steps = () => scripted([callDump, { text: "ok" }]);
    expect(
      (await run({ provider: steps(), tools: [hugeTool()], toolResultBudget: { maxChars: 10_000 } })).length,
    ).toBeLessThanOrEqual(10_000);
    expect(
      (await run({ provider: steps(), tools: [hugeTool({ maxResultChars: 2_000 })] })).length,
    ).toBeLessThanOrEqual(2_000);
    // The tool's own budget wins over the agent's.
    expect(
      (
        await run({
          provider: steps(),
          tools: [hugeTool({ maxResultChars: 200_000 })],
          toolResultBudget: { maxChars: 10_000 },
        })
      ).length,
    ).toBeGreaterThan(100_000);
    expect(await run({ provider: steps(), tools: [hugeTool()], toolResultBudget: false })).toBe(HUGE);
    expect(await run({ provider: steps(), tools: [hugeTool({ maxResultChars: Infinity })] })).toBe(HUGE);
  });

  it("a budget too small to hold the marker is refused where it is set", () => {
    expect(() => createAgent({ provider: scripted([]), toolResultBudget: { maxChars: 10 } })).toThrow(
      "createAgent toolResultBudget.maxChars must be a number of characters ≥ 1000 (or Infinity), got 10",
    );
    expect(() => hugeTool({ maxResultChars: 0 })).toThrow('Tool "dump" maxResultChars must be a number');
    expect(() =>
      createAgent({ provider: scripted([]), toolResultBudget: { maxchars: 5000 } as never }),
    ).toThrow(/unknown option "maxchars" \(did you mean "maxChars"\?\)/);
  });

  it("the tool's own details stay; errors are cut too", async () => {
    const withDetails = createAgent({
      provider: scripted([callDump, { text: "ok" }]),
      tools: [hugeTool({ details: { source: "server-7", bytes: 5 } })],
    });
    await withDetails.prompt("go");
    expect(toolResults(withDetails.messages)[0]!.details).toMatchObject({
      source: "server-7",
      bytes: 5,
      fullOutput: HUGE,
    });

    const scalar = createAgent({
      provider: scripted([callDump, { text: "ok" }]),
      tools: [hugeTool({ details: "raw" })],
    });
    await scalar.prompt("go");
    expect(toolResults(scalar.messages)[0]!.details).toMatchObject({ toolDetails: "raw", fullOutput: HUGE });

    const failing = createAgent({
      provider: scripted([callDump, { text: "ok" }]),
      tools: [hugeTool({ throws: true })],
    });
    await failing.prompt("go");
    const [error] = toolResults(failing.messages);
    expect(error!.isError).toBe(true);
    expect(resultText(error!).length).toBeLessThanOrEqual(50_000);
    expect((error!.details as { fullOutput: string }).fullOutput).toBe(HUGE);
  });

  it("broken arguments quoted back in a validation error are cut too", async () => {
    const broken = `{"content": "${"z".repeat(300_000)}`;
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "v1", name: "dump", arguments: { [INVALID_JSON_ARGUMENTS_KEY]: broken } }] },
        { text: "ok" },
      ]),
      tools: [hugeTool()],
    });
    await agent.prompt("go");
    const text = resultText(toolResults(agent.messages)[0]!);
    expect(
      text.startsWith(
        'Validation failed for tool "dump": the arguments are not valid JSON: {"content": "zzz',
      ),
    ).toBe(true);
    expect(text.length).toBeLessThanOrEqual(50_000);
    expect(text).toMatch(/\[\.\.\. \d+ characters of the arguments cut \.\.\.\]/);
  });

  it("read_file pages a long file by the budget instead of cutting it", async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const lines = Array.from({ length: 1_500 }, (_, i) => `line ${i + 1} ${"y".repeat(90)}`);
    writeFileSync(path.join(dir, "big.txt"), `${lines.join("\n")}\n`);
    const provider = scripted((request, call) => {
      if (call === 0) return { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "big.txt" } }] };
      if (call === 1) {
        const text = textOf((request.messages.at(-1) as ToolResultMessage).content);
        const offset = Number(/Read on with offset=(\d+)/.exec(text)?.[1]);
        return { toolCalls: [{ id: "r2", name: "read_file", arguments: { path: "big.txt", offset } }] };
      }
      return { text: "read it all" };
    });
    const agent = createAgent({
      provider,
      tools: codingTools({ cwd: dir }),
      toolResultBudget: { maxChars: 100_000 },
    });
    await agent.prompt("read big.txt");
    const [first, second] = toolResults(agent.messages).map(resultText);
    expect(first!.length).toBeLessThanOrEqual(100_000);
    expect(first).toContain("This page is as long as a result may be; more lines follow.");
    expect(first).not.toContain("cut from the middle");
    // Every line exactly once across the two pages, in order.
    const shown = [first!, second!].flatMap((page) =>
      [...page.matchAll(/^\s*\d+\t(line \d+) /gm)].map((m) => m[1]),
    );
    expect(shown).toEqual(lines.map((l) => l.split(" ").slice(0, 2).join(" ")));
    expect(existsSync(path.join(dir, ".agent-machine"))).toBe(false);
  });
});

describe("cutText", () => {
  it("fits the budget, keeps a real head and tail, and never splits a character", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "é", "\n", "😀", " "), minLength: 0, maxLength: 4_000 }),
        fc.integer({ min: 300, max: 3_000 }),
        (text, maxChars) => {
          const { text: out, cutChars } = cutText(text, maxChars, ({ cutChars: c }) => `[${c} cut]`);
          if (text.length <= maxChars) {
            expect(out).toBe(text);
            return;
          }
          expect(out.length).toBeLessThanOrEqual(maxChars);
          const marker = /\n?\[(\d+) cut\]\n?/.exec(out)!;
          expect(Number(marker[1])).toBe(cutChars);
          const head = out.slice(0, marker.index);
          const tail = out.slice(marker.index + marker[0].length);
          expect(text.startsWith(head)).toBe(true);
          expect(text.endsWith(tail)).toBe(true);
          expect(/[\uD800-\uDBFF]$/.test(head) || /^[\uDC00-\uDFFF]/.test(tail)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});
