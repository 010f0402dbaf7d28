// One contract test suite for every AgentHandle: the agent in this process, a thread over HTTP, a
// durable session on Restate. Each implementation runs it with its own `makeHandle`, which gets the
// agent to serve (a scripted provider and tools, built fresh per test) and gives back a handle on it;
// what the suite asserts is what a user of any handle relies on, so the copies cannot drift.
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { afterEach, describe, expect, it as vitestIt } from "vitest";
import * as z from "zod";
import {
  AgentCallError,
  type AgentHandle,
  type AgentMessage,
  type AgentStatus,
  defineClientTool,
  defineTool,
  type ScriptedProvider,
  type ScriptedStep,
  type SequencedEvent,
  scripted,
  subAgentTool,
  type Tool,
  type UserMessage,
} from "../../index.js";

/** The agent a test needs served: a scripted provider and its tools. */
export interface ContractAgent {
  provider: ScriptedProvider;
  tools: Tool[];
}

/** A handle on the agent, and how to release what serves it (a host, a session). */
export interface ContractHandle {
  handle: AgentHandle;
  close?: () => void | Promise<void>;
}

/** Opens a handle on a fresh agent created with `agent`'s provider and tools. */
export type MakeHandle = (agent: ContractAgent) => ContractHandle | Promise<ContractHandle>;

/**
 * Runs the contract every AgentHandle keeps against the handles `makeHandle` opens.
 *
 * @example
 * ```ts
 * describeAgentContract("in process", ({ provider, tools }) => ({
 *   handle: agentHandle(createAgent({ provider, tools }), { tools }),
 * }));
 * ```
 */
export function describeAgentContract(
  name: string,
  makeHandle: MakeHandle,
  /**
   * Cases this implementation is known to fail, by the start of their name, with why: each runs as
   * `it.fails`, so the suite says so and turns red the day the divergence is fixed.
   */
  divergences: Record<string, string> = {},
): void {
  const it = (title: string, test: () => Promise<void>) => {
    const known = Object.entries(divergences).find(([start]) => title.startsWith(start));
    if (known) vitestIt.fails(`${title} [known divergence: ${known[1]}]`, test);
    else vitestIt(title, test);
  };
  describe(`AgentHandle contract: ${name}`, () => {
    const opened: ContractHandle[] = [];
    afterEach(async () => {
      while (opened.length) await opened.pop()!.close?.();
    });
    const open = async (steps: readonly ScriptedStep[], tools: Tool[] = []) => {
      const provider = scripted(steps);
      const made = await makeHandle({ provider, tools });
      opened.push(made);
      return { handle: made.handle, provider };
    };

    it("run: the events from seq 0 in order, from agent_start to agent_end; the transcript has the answer", async () => {
      const { handle } = await open([{ text: "Hello there." }]);
      const { runId } = await handle.run(user("hi"));
      const events = await allEvents(handle, runId, 0);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
      expect(events.every((e) => e.runId === runId)).toBe(true);
      expect(events[0]!.event.type).toBe("agent_start");
      expect(events.at(-1)!.event.type).toBe("agent_end");
      expect(events.filter((e) => e.event.type === "agent_end")).toHaveLength(1);
      expect(textOf(await handle.messages())).toEqual(["user: hi", "assistant: Hello there."]);
    });

    it("eventsSince resumes from a seq in the middle of a live run with the same events", async () => {
      const { handle } = await open(approvalScript(), [writeFile()]);
      const { runId } = await handle.run(user("write it"));
      const whole = allEvents(handle, runId, 0);
      await statusWhen(handle, (s) => s.status === "waiting");
      const sofar = await firstValueFrom(
        handle.eventsSince(runId, 0).pipe(
          takeWhile((e) => e.event.type !== "approval_requested", true),
          toArray(),
        ),
      );
      const middle = Math.floor(sofar.length / 2);
      expect(middle).toBeGreaterThan(1);
      const resumed = allEvents(handle, runId, middle);
      await handle.answer([{ toolCallId: "call_w", approve: {} }]);
      const all = await whole;
      expect(all.at(-1)!.event.type).toBe("agent_end");
      expect(await resumed).toEqual(all.slice(middle));
    });

    it("after the run, once the agent is idle (resting, hibernating), status names the last run and eventsSince gives its events again", async () => {
      const { handle } = await open([{ text: "Hello there." }]);
      const { runId } = await handle.run(user("hi"));
      const events = await allEvents(handle, runId, 0);
      // Let the agent go idle in its own way (an in-process agent rests or hibernates a moment after).
      await statusWhen(handle, (s) => s.status === "idle");
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await handle.status()).runId).toBe(runId);
      expect(await allEvents(handle, runId, 0)).toEqual(events);
      expect(await allEvents(handle, runId, events.length - 1)).toEqual(events.slice(-1));
    });

    it("eventsSince a run the handle does not know errors with events_unavailable", async () => {
      const { handle } = await open([{ text: "Hi." }]);
      const { runId } = await handle.run(user("hi"));
      await allEvents(handle, runId, 0);
      const error = await firstValueFrom(handle.eventsSince("no-such-run", 0)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentCallError);
      expect(error).toMatchObject({ code: "events_unavailable" });
    });

    it("steer and followUp queued between runs are taken by the next: steering right after its prompt, the follow-up when it would stop", async () => {
      const { handle } = await open([{ text: "First." }, { text: "Brief answer." }, { text: "And more." }]);
      const first = await handle.run(user("hi"));
      await allEvents(handle, first.runId, 0);
      await handle.steer("be brief");
      await handle.followUp(user("anything else?"));
      expect((await handle.status()).queued).toEqual({ steering: 1, followUp: 1 });
      const { runId } = await handle.run(user("hello again"));
      await allEvents(handle, runId, 0);
      expect(textOf(await handle.messages())).toEqual([
        "user: hi",
        "assistant: First.",
        "user: hello again",
        "user: be brief",
        "assistant: Brief answer.",
        "user: anything else?",
        "assistant: And more.",
      ]);
      expect((await handle.status()).queued).toEqual({ steering: 0, followUp: 0 });
    });

    it("status: idle before a run; waiting with the pending call, the run id and the state while an approval waits", async () => {
      const { handle } = await open(approvalScript(), [writeFile()]);
      const before = await handle.status();
      expect(before).toMatchObject({
        status: "idle",
        state: "idle",
        pendingApprovals: [],
        pendingToolCalls: [],
      });
      expect(before.queued).toEqual({ steering: 0, followUp: 0 });
      const { runId } = await handle.run(user("write it"));
      const waiting = await statusWhen(handle, (s) => s.status === "waiting");
      expect(waiting.runId).toBe(runId);
      expect(waiting.state).not.toBe("idle");
      expect(waiting.pendingApprovals).toEqual([
        { toolCallId: "call_w", toolName: "write_file", args: { path: "a.txt" } },
      ]);
      expect(waiting.pendingToolCalls).toEqual([]);
    });

    it("status: waiting while only a sub-agent's call waits for approval; the nested call is answered by its path", async () => {
      const helper = subAgentTool({
        name: "helper",
        description: "Writes files for the parent",
        tools: [writeFile()],
        provider: scripted(approvalScript()),
      });
      const { handle } = await open(
        [
          { toolCalls: [{ name: "helper", id: "call_h", arguments: { task: "write a.txt" } }] },
          { text: "All done." },
        ],
        [helper],
      );
      const { runId } = await handle.run(user("delegate it"));
      const whole = allEvents(handle, runId, 0);
      // The parent's call runs (its sub-agent); what it waits on is the sub-agent's approval.
      const waiting = await statusWhen(handle, (s) => s.status === "waiting");
      expect(waiting.pendingApprovals).toMatchObject([
        { toolCallId: "call_h/call_w", toolName: "write_file", args: { path: "a.txt" } },
      ]);
      await handle.answer([{ toolCallId: "call_h/call_w", approve: {} }]);
      expect((await whole).at(-1)!.event).toMatchObject({ type: "agent_end" });
      expect(textOf(await handle.messages()).at(-1)).toBe("assistant: All done.");
    });

    it("a second run while one is active is refused busy, changing nothing", async () => {
      const { handle } = await open(approvalScript(), [writeFile()]);
      await handle.run(user("write it"));
      await statusWhen(handle, (s) => s.status === "waiting");
      const before = await handle.messages();
      const error = await handle.run(user("again")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentCallError);
      expect(error).toMatchObject({ code: "busy" });
      expect(await handle.messages()).toEqual(before);
    });

    it("approve with edited arguments: invalid ones are refused and the call still waits; valid ones run", async () => {
      const tool = writeFile();
      const { handle } = await open(approvalScript(), [tool]);
      const { runId } = await handle.run(user("write it"));
      const following = allEvents(handle, runId, 0);
      await statusWhen(handle, (s) => s.status === "waiting");
      const bad = [{ toolCallId: "call_w", approve: { args: { path: 42 } } }];
      // One after the other: started together, the second's refusal would wait unhandled on the first.
      for (const refused of [() => handle.check(bad), () => handle.answer(bad)]) {
        const error = await refused().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(AgentCallError);
        expect(error).toMatchObject({ code: "refused" });
        expect((error as Error).message).toMatch(/schema of tool write_file/);
      }
      expect((await handle.status()).pendingApprovals.map((c) => c.toolCallId)).toEqual(["call_w"]);
      expect(tool.written).toEqual([]);
      const good = [{ toolCallId: "call_w", approve: { args: { path: "b.txt" } } }];
      await handle.check(good);
      await handle.answer(good);
      await following;
      expect(tool.written).toEqual(["b.txt"]);
      const result = (await handle.messages()).find((m) => m.role === "toolResult");
      expect(result).toMatchObject({ toolCallId: "call_w", isError: false, editedArgs: { path: "b.txt" } });
    });

    it("deny: the model reads the reason; a second decision on the same call is not_found", async () => {
      const tool = writeFile();
      const { handle, provider } = await open(approvalScript(), [tool]);
      const { runId } = await handle.run(user("write it"));
      const following = allEvents(handle, runId, 0);
      await statusWhen(handle, (s) => s.status === "waiting");
      await handle.answer([{ toolCallId: "call_w", deny: { reason: "not on main" } }]);
      const again = await handle.answer([{ toolCallId: "call_w", approve: {} }]).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(AgentCallError);
      expect(again).toMatchObject({ code: "not_found" });
      await following;
      expect(tool.written).toEqual([]);
      const lastRequest = JSON.stringify(provider.requests.at(-1)!.messages);
      expect(lastRequest).toContain("not on main");
    });

    it("a client-run tool: a result of the wrong shape is refused, the result given is the call's; a rejection is an error the model reads", async () => {
      const { handle, provider } = await open(
        [
          { toolCalls: [{ name: "pick_color", id: "call_c1", arguments: { options: ["red", "blue"] } }] },
          { toolCalls: [{ name: "pick_color", id: "call_c2", arguments: { options: ["green"] } }] },
          { text: "Blue it is." },
        ],
        [pickColor()],
      );
      const { runId } = await handle.run(user("pick one"));
      const following = allEvents(handle, runId, 0);
      const first = await statusWhen(handle, (s) => s.status === "waiting");
      expect(first.pendingToolCalls).toEqual([
        { toolCallId: "call_c1", toolName: "pick_color", args: { options: ["red", "blue"] } },
      ]);
      const wrong = await handle
        .answer([{ toolCallId: "call_c1", result: { content: "blue" } as never }])
        .catch((e: unknown) => e);
      expect(wrong).toMatchObject({ code: "refused" });
      await handle.answer([{ toolCallId: "call_c1", result: "blue" }]);
      await statusWhen(handle, (s) => s.pendingToolCalls.some((c) => c.toolCallId === "call_c2"));
      await handle.answer([{ toolCallId: "call_c2", reject: { reason: "the picker was closed" } }]);
      await following;
      const results = (await handle.messages()).filter((m) => m.role === "toolResult");
      expect(results.map((r) => [r.toolCallId, r.isError, JSON.stringify(r.content)])).toEqual([
        ["call_c1", false, JSON.stringify([{ type: "text", text: "blue" }])],
        ["call_c2", true, expect.stringContaining("the picker was closed")],
      ]);
      expect(JSON.stringify(provider.requests.at(-1)!.messages)).toContain("the picker was closed");
    });

    it("abort mid-tool ends the run and answers every call; abort on an idle agent says none was active", async () => {
      const { handle } = await open(
        [
          {
            toolCalls: [
              { name: "wait", id: "call_a" },
              { name: "wait", id: "call_b" },
            ],
          },
          { text: "never" },
        ],
        [waitTool()],
      );
      const { runId } = await handle.run(user("wait twice"));
      const following = allEvents(handle, runId, 0);
      await statusWhen(handle, (s) => s.state.includes("executing"));
      expect(await handle.abort()).toBe(true);
      const events = await following;
      expect(events.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "aborted" });
      const messages = await handle.messages();
      const results = messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId);
      expect(results.sort()).toEqual(["call_a", "call_b"]);
      expect((await handle.status()).status).toBe("idle");
      expect(await handle.abort()).toBe(false);
    });
  });
}

function user(text: string): UserMessage {
  return { role: "user", content: text, timestamp: Date.now() };
}

/** A run that asks to write a.txt (approval needed), then says it is done. */
function approvalScript(): ScriptedStep[] {
  return [
    { text: "Writing.", toolCalls: [{ name: "write_file", id: "call_w", arguments: { path: "a.txt" } }] },
    { text: "Done." },
  ];
}

/** Needs approval; remembers the paths it wrote. */
function writeFile(): Tool<{ path: string }> & { written: string[] } {
  const written: string[] = [];
  const tool = defineTool({
    name: "write_file",
    description: "Writes a file",
    parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: ({ path }) => {
      written.push(path);
      return `wrote ${path}`;
    },
  });
  return Object.assign(tool, { written });
}

function pickColor(): Tool {
  return defineClientTool({
    name: "pick_color",
    description: "Asks the user to pick a color",
    parameters: z.object({ options: z.array(z.string()) }),
  });
}

/** Runs until aborted. */
function waitTool(): Tool {
  return defineTool({
    name: "wait",
    description: "Waits until aborted",
    parameters: z.object({}).passthrough(),
    execute: (_args, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(new Error("stopped")));
      }),
  });
}

/** The run's events from `seq` to its agent_end. */
async function allEvents(handle: AgentHandle, runId: string, seq: number): Promise<SequencedEvent[]> {
  return firstValueFrom(handle.eventsSince(runId, seq).pipe(toArray()));
}

/** The handle's status once `condition` holds (polled; a test fails after 5 s). */
async function statusWhen(
  handle: AgentHandle,
  condition: (status: AgentStatus) => boolean,
): Promise<AgentStatus> {
  const end = Date.now() + 5000;
  for (;;) {
    const status = await handle.status();
    if (condition(status)) return status;
    if (Date.now() > end) throw new Error(`timed out waiting; last status ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function textOf(messages: readonly AgentMessage[]): string[] {
  return messages
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => {
      const content =
        typeof m.content === "string"
          ? m.content
          : m.content
              .filter((c) => c.type === "text")
              .map((c) => (c as { text: string }).text)
              .join("");
      return `${m.role}: ${content}`;
    });
}
