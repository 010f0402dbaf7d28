import { expect } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  defineTool,
  type ToolResultMessage,
} from "../index.js";

/** Collects every event an agent publishes. */
export function record(agent: Agent): AgentEvent[] {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((e) => events.push(e));
  return events;
}

/** The event types, with the tool call id or message role where one helps read the order. */
export function trace(events: readonly AgentEvent[], { updates = false } = {}): string[] {
  return events
    .filter((e) => updates || e.type !== "message_update")
    .map((e) => {
      if ("toolCallId" in e) return `${e.type}:${e.toolCallId}`;
      if (e.type === "message_start" || e.type === "message_end") return `${e.type}:${e.message.role}`;
      return e.type;
    });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A call of {@link sleepTool}'s `wait`: `ms` long, its result naming `id`. */
export const waitCall = (id: string, ms: number) => ({ id, name: "wait", arguments: { ms, label: id } });

/** A tool that waits `ms` (honouring its signal) and answers `done <label>`. */
export function sleepTool(
  opts: { name?: string; concurrencySafe?: boolean; readOnly?: boolean; onAbort?: () => void } = {},
) {
  return defineTool({
    name: opts.name ?? "wait",
    description: "Waits some milliseconds",
    parameters: z.object({ ms: z.number(), label: z.string() }),
    readOnly: opts.readOnly,
    concurrencySafe: opts.concurrencySafe,
    execute: ({ ms, label }, { signal }) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => resolve(`done ${label}`), ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          opts.onAbort?.();
          reject(new Error(`aborted ${label}`));
        });
      }),
  });
}

/**
 * A tool whose calls answer `answer` once the test opens its gate (or fail when the call is
 * aborted): the test decides when a call ends, with no timer to race on a loaded machine.
 */
export function gateTool(name = "gate", answer = "opened") {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const tool = defineTool({
    name,
    description: "Waits for the test",
    parameters: z.object({}).passthrough(),
    execute: (_args, { signal }) =>
      new Promise<string>((resolve, reject) => {
        void opened.then(() => resolve(answer));
        signal.addEventListener("abort", () => reject(new Error("stopped")));
      }),
  });
  return { tool, open };
}

/** Every tool call in the transcript has exactly one result, after it, and every result has its call. */
export function expectValidTranscript(messages: readonly AgentMessage[]): void {
  const open = new Map<string, string>();
  const answered = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant") {
      expect(open.size, `calls left unanswered before a new assistant message: ${[...open.keys()]}`).toBe(0);
      for (const c of m.content) if (c.type === "toolCall") open.set(c.id, c.name);
    }
    if (m.role === "toolResult") {
      expect(open.has(m.toolCallId), `result without an open call: ${m.toolCallId}`).toBe(true);
      expect(answered.has(m.toolCallId), `call answered twice: ${m.toolCallId}`).toBe(false);
      open.delete(m.toolCallId);
      answered.add(m.toolCallId);
    }
  }
  expect([...open.keys()], "calls never answered").toEqual([]);
}

/**
 * The invariants every run keeps: agent_end last; turn_start/turn_end paired; message_start/end
 * paired; one tool_execution_start and one tool_execution_end per call, start first.
 */
export function expectEventInvariants(events: readonly AgentEvent[], { lastRunOpen = false } = {}): void {
  const runs = splitRuns(events);
  for (const [index, run] of runs.entries()) {
    const open = lastRunOpen && index === runs.length - 1;
    expect(run[0]?.type).toBe("agent_start");
    if (!open) expect(run.at(-1)?.type).toBe("agent_end");
    expect(
      run.slice(0, -1).some((e) => e.type === "agent_end"),
      "agent_end is the run's last event",
    ).toBe(false);
    let openTurn: number | undefined;
    for (const e of run) {
      if (e.type === "turn_start") {
        expect(openTurn, "turn_start inside an open turn").toBeUndefined();
        openTurn = e.turn;
      }
      if (e.type === "turn_end") {
        expect(e.turn).toBe(openTurn);
        openTurn = undefined;
      }
    }
    if (!open) expect(openTurn, "a turn_start without its turn_end").toBeUndefined();
    let openMessage: AgentMessage | undefined;
    for (const e of run) {
      if (e.type === "message_start") {
        expect(openMessage, "message_start inside an open message").toBeUndefined();
        expect(e.message.id, "every message has an id from its message_start").toEqual(expect.any(String));
        openMessage = e.message;
      }
      if (e.type === "message_update") expect(e.message.id).toBe(openMessage?.id);
      if (e.type === "message_end") {
        expect(e.message.role).toBe(openMessage?.role);
        expect(e.message.id, "a message keeps its id from message_start to message_end").toBe(
          openMessage?.id,
        );
        openMessage = undefined;
      }
    }
    const starts = new Map<string, number>();
    const ends = new Map<string, number>();
    run.forEach((e, i) => {
      if (e.type === "tool_execution_start") {
        expect(starts.has(e.toolCallId), `two starts for ${e.toolCallId}`).toBe(false);
        starts.set(e.toolCallId, i);
      }
      if (e.type === "tool_execution_end") {
        expect(ends.has(e.toolCallId), `two ends for ${e.toolCallId}`).toBe(false);
        expect(starts.get(e.toolCallId), `end before start for ${e.toolCallId}`).toBeLessThan(i);
        ends.set(e.toolCallId, i);
      }
    });
    expect([...starts.keys()].sort()).toEqual([...ends.keys()].sort());
  }
}

function splitRuns(events: readonly AgentEvent[]): AgentEvent[][] {
  const runs: AgentEvent[][] = [];
  for (const e of events) {
    if (e.type === "agent_start") runs.push([]);
    runs.at(-1)?.push(e);
  }
  return runs;
}

export function toolResults(messages: readonly AgentMessage[]): ToolResultMessage[] {
  return messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
}

export function resultText(message: ToolResultMessage): string {
  return message.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("");
}

export function assistants(messages: readonly AgentMessage[]): AssistantMessage[] {
  return messages.filter((m): m is AssistantMessage => m.role === "assistant");
}

/** Waits until `predicate` holds for an event already seen or a later one. */
export function eventMatching(
  agent: Agent,
  seen: readonly AgentEvent[],
  predicate: (e: AgentEvent) => boolean,
): Promise<AgentEvent> {
  const found = seen.find(predicate);
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => {
    const sub = agent.events$.subscribe((e) => {
      if (predicate(e)) {
        sub.unsubscribe();
        resolve(e);
      }
    });
  });
}

/**
 * The JSON object of each `data: {…}` frame of a server-sent event stream, as the frames arrive
 * (other frames, such as the AI SDK stream's `data: [DONE]`, are passed over).
 *
 * @example
 * ```ts
 * for await (const frame of sseData<{ type: string }>(response)) if (frame.type === "close") break;
 * ```
 */
export async function* sseData<T = unknown>(response: Response): AsyncGenerator<T> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = text.indexOf("\n\n")) !== -1) {
      const frame = text.slice(0, end);
      text = text.slice(end + 2);
      if (frame.startsWith("data: {")) yield JSON.parse(frame.slice(6)) as T;
    }
  }
}
