// Floors for the durable bench: bare Restate virtual objects doing a turn's journal without
// agent-machine, served from the same process and measured in the same run as the durable agent.
//  - "same journal": what a durable run journals today (bench/durable-journal.ts lists it): its
//    record and transcript read, its record written, one call to an inbox object (the opening drain),
//    then per turn a slot written before each of its two ctx.run, and the transcript and record
//    written as it ends; payloads of about the size the agent writes;
//  - "minimal journal": what any durable turn needs (two ctx.run and one state write).
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as restate from "@restatedev/restate-sdk";
import type { ObjectContext } from "@restatedev/restate-sdk";
import { ensurePromiseWithResolvers } from "../durable/polyfill.js";

const floorInbox = restate.object({
  name: "FloorInbox",
  handlers: {
    drain: async (ctx: ObjectContext): Promise<unknown[]> => {
      const queue = (await ctx.get<unknown[]>("steering")) ?? [];
      if (queue.length) ctx.clear("steering");
      return queue;
    },
  },
});

/** A model step's and a tool step's result of about the size the agent journals. */
export const modelAnswer = (turn: number) => ({
  role: "assistant",
  content: [{ type: "toolCall", id: `c${turn}`, name: "noop", arguments: { turn } }],
  stopReason: "toolUse",
  at: Date.now(),
});
export const toolAnswer = (turn: number) => ({
  content: [{ type: "text", text: `ok ${turn}` }],
  at: Date.now(),
});

/** A slot's payload of about the size a durable run writes before a wait (durable/run-slots.ts). */
export const slotPayload = (turn: number, beforeTool: boolean) => ({
  run: "inv_floor",
  turn,
  count: 2 * turn + 1,
  ...(beforeTool
    ? { seq: 5 * turn, events: [{ answer: { type: "message_end", message: modelAnswer(turn) } }] }
    : {
        from: 2 * turn - 1,
        messages: [modelAnswer(turn), { role: "toolResult", toolCallId: `c${turn}`, ...toolAnswer(turn) }],
        seq: 5 * turn + 2,
        events: [
          { type: "tool_execution_end", toolCallId: `c${turn}`, result: toolAnswer(turn) },
          { type: "message_start", message: { role: "toolResult", ...toolAnswer(turn) } },
          { type: "message_end", message: { role: "toolResult", ...toolAnswer(turn) } },
          { type: "turn_end", turn, message: modelAnswer(turn), toolResults: [toolAnswer(turn)] },
          { type: "turn_start", turn: turn + 1 },
        ],
      }),
});

const floorSameJournal = restate.object({
  name: "FloorSameJournal",
  handlers: {
    run: async (ctx: ObjectContext, turns: number): Promise<number> => {
      // The run's start: its record and transcript read (eagerly sent), its record written, and the
      // opening drain of the inbox, which answers the steering queued before the run.
      await ctx.get("run");
      await ctx.get("m/0");
      ctx.set("run", { state: "running", runId: "inv_floor", turn: 0, slotted: true });
      await ctx.objectClient(floorInbox, ctx.key).drain();
      let slot = 0;
      for (let turn = 0; turn < turns; turn++) {
        ctx.set(`s/${slot++}`, slotPayload(turn, false));
        await ctx.run(`model:${turn}`, async () => modelAnswer(turn));
        ctx.set(`s/${slot++}`, slotPayload(turn, true));
        await ctx.run(`tool:c${turn}`, async () => toolAnswer(turn));
      }
      ctx.set(
        "m/0",
        Array.from({ length: 2 * turns + 1 }, (_, turn) => modelAnswer(turn)),
      );
      ctx.set("run", { state: "idle", runId: "inv_floor", count: 2 * turns + 1, slotCount: slot });
      return turns;
    },
  },
});

const floorMinimal = restate.object({
  name: "FloorMinimalJournal",
  handlers: {
    run: async (ctx: ObjectContext, turns: number): Promise<number> => {
      for (let turn = 0; turn < turns; turn++) {
        const model = await ctx.run(`model:${turn}`, async () => modelAnswer(turn));
        const tool = await ctx.run(`tool:c${turn}`, async () => toolAnswer(turn));
        ctx.set(`m/${turn}`, { model, tool });
      }
      return turns;
    },
  },
});

export type FloorName = "FloorSameJournal" | "FloorMinimalJournal";

/** Serves the floor objects on 127.0.0.1 (HTTP/2); register `url` with the Restate server. */
export async function serveFloors(): Promise<{ url: string; close(): Promise<void> }> {
  ensurePromiseWithResolvers();
  const handler = restate.createEndpointHandler({
    services: [floorInbox, floorSameJournal, floorMinimal],
    logger: () => {},
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}

/** Runs `turns` turns of a floor object through the ingress (one invocation, like one run). */
export async function runFloor(
  ingressUrl: string,
  floor: FloorName,
  key: string,
  turns: number,
): Promise<void> {
  const response = await fetch(`${ingressUrl}/${floor}/${encodeURIComponent(key)}/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(turns),
  });
  const text = await response.text();
  if (!response.ok || Number(text) !== turns)
    throw new Error(`${floor} answered ${response.status}: ${text}`);
}
