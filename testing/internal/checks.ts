// The checks behind the assertions, the vitest matchers and the exploration's properties: each
// returns what is wrong (an empty list when nothing is), so every caller words its failure its way.
import type { AgentEvent } from "../../core/events.js";
import type { AgentMessage } from "../../core/messages.js";

/** Every tool call answered exactly once, after it and before the next assistant message; no result without its call. */
export function transcriptProblems(messages: readonly AgentMessage[]): string[] {
  const problems: string[] = [];
  const open = new Map<string, string>();
  const answered = new Set<string>();
  messages.forEach((m, index) => {
    if (m.role === "assistant") {
      if (open.size > 0) {
        problems.push(
          `message ${index}: a new assistant message while calls are unanswered: ${[...open.keys()].join(", ")}`,
        );
        open.clear();
      }
      for (const c of m.content) if (c.type === "toolCall") open.set(c.id, c.name);
    }
    if (m.role === "toolResult") {
      if (answered.has(m.toolCallId)) problems.push(`message ${index}: call ${m.toolCallId} answered twice`);
      else if (!open.has(m.toolCallId))
        problems.push(`message ${index}: a result for ${m.toolCallId}, which is not an open call`);
      open.delete(m.toolCallId);
      answered.add(m.toolCallId);
    }
  });
  if (open.size > 0) problems.push(`calls never answered: ${[...open.keys()].join(", ")}`);
  return problems;
}

/**
 * The invariants every run keeps on `events$`: `agent_start` first and `agent_end` last;
 * turn_start/turn_end and message_start/message_end paired; one tool_execution_start and one
 * tool_execution_end per call, start first.
 */
export function eventProblems(events: readonly AgentEvent[], { lastRunOpen = false } = {}): string[] {
  const problems: string[] = [];
  const runs: AgentEvent[][] = [];
  for (const e of events) {
    if (e.type === "agent_start" || runs.length === 0) runs.push([]);
    runs.at(-1)!.push(e);
  }
  runs.forEach((run, index) => {
    const open = lastRunOpen && index === runs.length - 1;
    const where = runs.length > 1 ? `run ${index + 1}: ` : "";
    if (run[0]?.type !== "agent_start")
      problems.push(`${where}the first event is ${run[0]?.type}, not agent_start`);
    if (!open && run.at(-1)?.type !== "agent_end")
      problems.push(`${where}the run does not end with agent_end`);
    if (run.slice(0, -1).some((e) => e.type === "agent_end"))
      problems.push(`${where}agent_end is not the last event`);
    let turn: number | undefined;
    let message: AgentMessage | undefined;
    const starts = new Set<string>();
    const ends = new Set<string>();
    for (const e of run) {
      if (e.type === "turn_start") {
        if (turn !== undefined) problems.push(`${where}turn_start ${e.turn} inside open turn ${turn}`);
        turn = e.turn;
      } else if (e.type === "turn_end") {
        if (e.turn !== turn) problems.push(`${where}turn_end ${e.turn} without its turn_start`);
        turn = undefined;
      } else if (e.type === "message_start") {
        if (message) problems.push(`${where}message_start inside an open ${message.role} message`);
        message = e.message;
      } else if (e.type === "message_end") {
        if (message?.role !== e.message.role)
          problems.push(`${where}message_end (${e.message.role}) without its message_start`);
        message = undefined;
      } else if (e.type === "tool_execution_start") {
        if (starts.has(e.toolCallId)) problems.push(`${where}two tool_execution_start for ${e.toolCallId}`);
        starts.add(e.toolCallId);
      } else if (e.type === "tool_execution_end") {
        if (ends.has(e.toolCallId)) problems.push(`${where}two tool_execution_end for ${e.toolCallId}`);
        if (!starts.has(e.toolCallId))
          problems.push(`${where}tool_execution_end before its start for ${e.toolCallId}`);
        ends.add(e.toolCallId);
      }
    }
    if (!open && turn !== undefined) problems.push(`${where}turn ${turn} never ended`);
    if (!open) {
      const unended = [...starts].filter((id) => !ends.has(id));
      if (unended.length > 0) problems.push(`${where}calls started but never ended: ${unended.join(", ")}`);
    }
  });
  return problems;
}

/**
 * Does `actual` match `expected`? Objects match when every key of `expected` matches (extra keys
 * in `actual` are fine), arrays element by element, a RegExp tests a string, a function is a
 * predicate, anything else must be equal.
 */
export function matches(actual: unknown, expected: unknown): boolean {
  if (expected instanceof RegExp) return typeof actual === "string" && expected.test(actual);
  if (typeof expected === "function") return Boolean((expected as (value: unknown) => unknown)(actual));
  if (isAsymmetricMatcher(expected)) return expected.asymmetricMatch(actual);
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => matches(actual[i], e))
    );
  }
  if (expected && typeof expected === "object") {
    if (!actual || typeof actual !== "object") return false;
    return Object.entries(expected).every(([key, value]) =>
      matches((actual as Record<string, unknown>)[key], value),
    );
  }
  return Object.is(actual, expected);
}

/** vitest's / jest's `expect.any(...)`, `expect.stringContaining(...)`: they work inside `matches` too. */
function isAsymmetricMatcher(value: unknown): value is { asymmetricMatch(actual: unknown): boolean } {
  return typeof (value as { asymmetricMatch?: unknown } | null)?.asymmetricMatch === "function";
}

/** Where each expected event (a type, or a partial event to match) was found, in order; `missing` is the first not found after the previous one. */
export function orderProblems(
  events: readonly AgentEvent[],
  expected: readonly (string | Record<string, unknown>)[],
): string[] {
  let from = 0;
  for (const [i, want] of expected.entries()) {
    const found = events.findIndex(
      (e, index) => index >= from && (typeof want === "string" ? e.type === want : matches(e, want)),
    );
    if (found === -1) {
      const seen = events.map((e) => e.type).join(", ");
      return [
        `expected ${describe(want)} (#${i + 1} of the order) after event ${from}, but it never came; the events were: ${seen}`,
      ];
    }
    from = found + 1;
  }
  return [];
}

export function describe(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof RegExp) return String(value);
  try {
    return JSON.stringify(value, (_, v) =>
      v instanceof RegExp ? String(v) : typeof v === "function" ? "<predicate>" : v,
    );
  } catch {
    return String(value);
  }
}

/** Strings that look like API keys of the usual providers. */
export const API_KEY_PATTERNS: readonly RegExp[] = [
  /sk-ant-[A-Za-z0-9_-]{16,}/,
  /sk-(?:proj-)?[A-Za-z0-9_-]{20,}/,
  /AIza[0-9A-Za-z_-]{30,}/,
  /gsk_[A-Za-z0-9]{20,}/,
  /xai-[A-Za-z0-9]{20,}/,
];

/** Where a secret (one of `secrets`, or anything that looks like an API key) appears in `value`. */
export function secretProblems(value: unknown, secrets: readonly string[], label: string): string[] {
  let json: string;
  try {
    json = JSON.stringify(value) ?? "";
  } catch {
    json = String(value);
  }
  const problems: string[] = [];
  for (const secret of secrets) {
    if (secret.length > 0 && json.includes(secret))
      problems.push(`${label} contains the secret ${mask(secret)}`);
  }
  for (const pattern of API_KEY_PATTERNS) {
    const found = pattern.exec(json)?.[0];
    if (found && !secrets.includes(found))
      problems.push(`${label} contains something shaped like an API key: ${mask(found)}`);
  }
  return problems;
}

function mask(secret: string): string {
  return `${secret.slice(0, 6)}…(${secret.length} characters)`;
}
