// Random transcripts for the compaction property tests: text, tool calls with results (parallel
// calls included), images, failed calls and earlier compaction summaries, all valid (every call
// answered right after its assistant message), with deterministic ids and timestamps.
import fc from "fast-check";
import type { AgentMessage, AssistantMessage, ContextConfig, ToolResultMessage } from "../index.js";
import {
  COMPACTION_MARKER_TEXT,
  COMPACTION_MARKER_TYPE,
  COMPACTION_SUMMARY_TYPE,
  emptyUsage,
  estimateMessageTokens,
} from "../index.js";

interface CallShape {
  name: string;
  argChars: number;
  outputLines: number;
  lineChars: number;
  isError: boolean;
}
interface StepShape {
  text: string;
  calls: CallShape[];
}
interface TurnShape {
  opener: "user" | "summary";
  text: string;
  textRepeat: number;
  images: number;
  steps: StepShape[];
  reply: string;
}

const callArb: fc.Arbitrary<CallShape> = fc.record({
  name: fc.constantFrom("read", "bash", "grep", "write"),
  argChars: fc.nat(200),
  outputLines: fc.nat(60),
  lineChars: fc.nat(60),
  isError: fc.boolean(),
});

const stepArb: fc.Arbitrary<StepShape> = fc.record({
  text: fc.string({ maxLength: 40 }),
  calls: fc.array(callArb, { maxLength: 3 }),
});

const turnArb: fc.Arbitrary<TurnShape> = fc.record({
  opener: fc.constantFrom("user", "user", "user", "summary"),
  text: fc.string({ maxLength: 30 }),
  textRepeat: fc.nat(20),
  images: fc.nat(2),
  steps: fc.array(stepArb, { maxLength: 3 }),
  reply: fc.string({ maxLength: 60 }),
});

function build(turns: TurnShape[]): AgentMessage[] {
  return buildTurns(turns).flat();
}

function buildTurns(turns: TurnShape[]): AgentMessage[][] {
  const byTurn: AgentMessage[][] = [];
  let messages: AgentMessage[];
  let clock = 1_700_000_000_000;
  let nextId = 0;
  const tick = () => {
    clock += 1_000;
    return clock;
  };
  for (const turn of turns) {
    messages = [];
    byTurn.push(messages);
    const text = `${turn.text} ${"word ".repeat(turn.textRepeat)}`;
    if (turn.opener === "summary") {
      messages.push({
        role: "custom",
        customType: COMPACTION_SUMMARY_TYPE,
        content: `[Summary of the earlier conversation, compacted to fit the context window]\n${text}`,
        display: "model",
        details: { summary: text, method: "digest" },
        timestamp: tick(),
      });
    } else if (turn.images > 0) {
      const images = Array.from({ length: turn.images }, (_, i) => ({
        type: "image" as const,
        data: "A".repeat(400 * (i + 1)),
        mimeType: "image/png",
      }));
      messages.push({ role: "user", content: [{ type: "text", text }, ...images], timestamp: tick() });
    } else {
      messages.push({ role: "user", content: text, timestamp: tick() });
    }
    for (const step of turn.steps) {
      const calls = step.calls.map((call) => ({ call, id: `call_${nextId++}` }));
      const assistant: AssistantMessage = {
        role: "assistant",
        content: [
          ...(step.text ? [{ type: "text" as const, text: step.text }] : []),
          ...calls.map(({ call, id }) => ({
            type: "toolCall" as const,
            id,
            name: call.name,
            arguments: { path: `src/${id}.ts`, body: "y".repeat(call.argChars) },
          })),
        ],
        stopReason: calls.length > 0 ? "toolUse" : "stop",
        usage: emptyUsage(),
        timestamp: tick(),
      };
      messages.push(assistant);
      for (const { call, id } of calls) {
        const output = Array.from(
          { length: call.outputLines },
          (_, i) => `${i}: ${"z".repeat(call.lineChars)}`,
        );
        const result: ToolResultMessage = {
          role: "toolResult",
          toolCallId: id,
          toolName: call.name,
          content: [
            { type: "text", text: output.join("\n") },
            // Some tools (screenshots, image reads) answer with an image as well.
            ...(call.lineChars % 5 === 0
              ? [{ type: "image" as const, data: "B".repeat(3_000), mimeType: "image/png" }]
              : []),
          ],
          isError: call.isError,
          timestamp: tick(),
        };
        messages.push(result);
      }
    }
    messages.push({
      role: "assistant",
      content: [{ type: "text", text: turn.reply }],
      stopReason: "stop",
      usage: emptyUsage(),
      timestamp: tick(),
    });
  }
  return byTurn;
}

/** A random valid transcript of up to `maxTurns` turns. */
export function transcriptArb(maxTurns = 12): fc.Arbitrary<AgentMessage[]> {
  return fc.array(turnArb, { maxLength: maxTurns }).map(build);
}

/** Random turns (one message array each), for growing a transcript in a simulated agent loop. */
export function turnsArb(maxTurns: number): fc.Arbitrary<AgentMessage[][]> {
  return fc.array(turnArb, { minLength: 1, maxLength: maxTurns }).map(buildTurns);
}

/** A random context configuration, small enough that most transcripts are over budget. */
export const configArb: fc.Arbitrary<ContextConfig> = fc.record({
  maxContextTokens: fc.integer({ min: 60, max: 4_000 }),
  systemPromptTokens: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
  keepFirst: fc.integer({ min: 0, max: 3 }),
  keepRecent: fc.integer({ min: 0, max: 6 }),
  toolOutputMaxLines: fc.integer({ min: 3, max: 20 }),
  toolOutputMaxChars: fc.integer({ min: 200, max: 1_000 }),
  targetRatio: fc.double({ min: 0.3, max: 1, noNaN: true }),
  summaryMaxTokens: fc.integer({ min: 10, max: 300 }),
});

/** Every tool call answered by exactly one later result, and every result answering an earlier call. */
export function pairingProblems(messages: readonly AgentMessage[]): string[] {
  const problems: string[] = [];
  const open = new Map<string, number>();
  const answered = new Set<string>();
  messages.forEach((message, index) => {
    if (message.role === "assistant") {
      for (const block of message.content) if (block.type === "toolCall") open.set(block.id, index);
    } else if (message.role === "toolResult") {
      if (!open.has(message.toolCallId)) problems.push(`result ${message.toolCallId} without its call`);
      else if (answered.has(message.toolCallId)) problems.push(`result ${message.toolCallId} twice`);
      answered.add(message.toolCallId);
    }
  });
  for (const id of open.keys()) if (!answered.has(id)) problems.push(`call ${id} without its result`);
  return problems;
}

/**
 * Tokens of the smallest context the invariants allow: the first `keepFirst` and last `keepRecent`
 * messages, plus whatever is paired with them, plus the marker when anything is dropped.
 */
export function smallestAnswerTokens(messages: readonly AgentMessage[], config: ContextConfig): number {
  const n = messages.length;
  const keepFirst = config.keepFirst ?? 1;
  const keepRecent = config.keepRecent ?? 6;
  const keep = new Set<number>();
  for (let i = 0; i < n; i++) if (i < keepFirst || i >= n - keepRecent) keep.add(i);
  const owner = new Map<string, number>();
  const results = new Map<number, number[]>();
  messages.forEach((m, i) => {
    if (m.role === "assistant") for (const b of m.content) if (b.type === "toolCall") owner.set(b.id, i);
    if (m.role === "toolResult") {
      const o = owner.get(m.toolCallId)!;
      results.set(o, [...(results.get(o) ?? []), i]);
    }
  });
  let grew = true;
  while (grew) {
    grew = false;
    for (const i of [...keep]) {
      const m = messages[i];
      const linked = m.role === "toolResult" ? [owner.get(m.toolCallId)!] : (results.get(i) ?? []);
      for (const j of linked) if (!keep.has(j)) grew = keep.add(j) !== undefined;
    }
  }
  const marker: AgentMessage = {
    role: "custom",
    customType: COMPACTION_MARKER_TYPE,
    content: COMPACTION_MARKER_TEXT,
    display: "model",
    timestamp: 0,
  };
  let tokens = keep.size < n ? estimateMessageTokens(marker) : 0;
  for (const i of keep) tokens += estimateMessageTokens(messages[i]);
  return tokens;
}
