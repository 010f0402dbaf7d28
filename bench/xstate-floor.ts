// The floor of a turn: the design's shape in bare XState, on the same scripted provider and in the
// same process as the turn benchmark (a). Nothing of agent-machine runs here except the provider and
// the tool; what agent-machine costs above it is its own.
import { Subject } from "rxjs";
import { assign, createActor, fromPromise, sendTo, setup, stopChild } from "xstate";
import type {
  AgentEvent,
  AgentMessage,
  AssistantMessage,
  Provider,
  ToolCall,
  ToolResultMessage,
} from "../index.js";
import { AssistantBuilder } from "../actors/assistant-builder.js";
import type { Tool } from "../tools/define-tool.js";
import { measure, type Sample } from "./harness.js";

/** Which parts of the design the floor keeps. */
export interface FloorShape {
  /** One child actor per tool call: a promise actor, or a machine that runs the tool in an entry action and ends on its own event, as the design's call actor does. */
  call: "promise" | "machine";
  /** The resting `steeringCheck` / `followUpCheck` states, each left on a `CHECK` the machine sends itself. */
  restingChecks: boolean;
}

interface FloorContext {
  messages: AgentMessage[];
  turnMessage?: AssistantMessage;
}

type FloorEvent =
  | { type: "PROMPT"; message: AgentMessage }
  | { type: "CHECK" }
  | { type: `xstate.done.actor.${string}`; output: unknown };

/**
 * One agent of the floor: a statechart `idle → streaming → executing → (steeringCheck →
 * followUpCheck) → idle` with a model actor per turn and a child actor per tool call, every event a
 * user sees published on an rxjs `Subject`, the transcript grown in place. Nothing else: no limits,
 * no compaction, no hooks, no abort, no loop detection, no snapshots kept.
 */
function createFloorAgent(provider: Provider, tools: Tool[], shape: FloorShape) {
  const events = new Subject<AgentEvent>();
  const publish = (event: AgentEvent) => events.next(event);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const specs = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.jsonSchema }));

  const runTool = async (call: ToolCall): Promise<ToolResultMessage> => {
    publish({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
    const tool = byName.get(call.name)!;
    const parsed = tool.parameters.safeParse(call.arguments);
    const output = parsed.success ? await tool.execute(parsed.data, {} as never) : parsed.error.message;
    const result = { content: [{ type: "text" as const, text: String(output) }], isError: !parsed.success };
    publish({
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: call.name,
      result,
      isError: result.isError,
    });
    return { role: "toolResult", toolCallId: call.id, toolName: call.name, ...result, timestamp: Date.now() };
  };

  const model = fromPromise<AssistantMessage, { messages: AgentMessage[] }>(async ({ input, signal }) => {
    const builder = new AssistantBuilder(provider.id, provider.model, Date.now());
    let started = false;
    const request = { systemPrompt: "bench", messages: input.messages as never, tools: specs };
    for await (const event of provider.stream(request, signal)) {
      if (!started) {
        started = true;
        publish({ type: "message_start", message: builder.message });
      }
      builder.apply(event);
      if (event.type === "text_delta") {
        publish({ type: "message_update", message: builder.message, delta: event.delta, kind: event.type });
      } else if (
        event.type === "toolcall_delta" ||
        event.type === "toolcall_start" ||
        event.type === "toolcall_end"
      ) {
        publish({
          type: "message_update",
          message: builder.message,
          delta: "delta" in event ? event.delta : "",
          kind: event.type,
          toolCallId: event.id,
        });
      }
    }
    return builder.message;
  });
  const promiseCall = fromPromise<ToolResultMessage, ToolCall>(({ input }) => runTool(input));
  const machineCall = setup({
    types: {} as {
      input: ToolCall;
      context: { call: ToolCall; result?: ToolResultMessage };
      events: { type: "DONE"; result: ToolResultMessage };
    },
  }).createMachine({
    context: ({ input }) => ({ call: input }),
    initial: "executing",
    states: {
      executing: {
        entry: ({ context, self }) =>
          void runTool(context.call).then((result) => self.send({ type: "DONE", result })),
        on: { DONE: { target: "done", actions: assign({ result: ({ event }) => event.result }) } },
      },
      done: { type: "final" },
    },
    output: ({ context }) => context.result!,
  });

  const callsOf = (message: AssistantMessage | undefined) =>
    (message?.content ?? []).filter((block): block is ToolCall => block.type === "toolCall");
  const append = (messages: AgentMessage[], message: AgentMessage) => {
    publish({ type: "message_start", message });
    publish({ type: "message_end", message });
    messages.push(message);
  };
  const turnEnd = ({ context }: { context: FloorContext }) =>
    publish({ type: "turn_end", turn: 0, message: context.turnMessage!, toolResults: [] });
  const afterTurn = shape.restingChecks ? "steeringCheck" : undefined;

  const machine = setup({
    types: {} as { context: FloorContext; events: FloorEvent },
    actors: { model, call: shape.call === "promise" ? promiseCall : machineCall },
    guards: {
      hasCalls: ({ event }) => callsOf((event as { output: AssistantMessage }).output).length > 0,
      turnHadCalls: ({ context }) => callsOf(context.turnMessage).length > 0,
    },
    actions: {
      startTurn: () => publish({ type: "turn_start", turn: 0 }),
      recordAssistant: assign(({ context, event }) => {
        const message = (event as { output: AssistantMessage }).output;
        publish({ type: "message_end", message });
        context.messages.push(message);
        return { turnMessage: message };
      }),
      spawnCall: assign(({ context, spawn }) => {
        const [call] = callsOf(context.turnMessage);
        spawn("call", { id: call!.id, input: call! });
        return {};
      }),
      appendResult: ({ context, event }) =>
        append(context.messages, (event as { output: ToolResultMessage }).output),
      stopCall: stopChild(({ event }) => event.type.slice("xstate.done.actor.".length)),
      turnEnd,
      check: sendTo(({ self }) => self, { type: "CHECK" }),
      agentEnd: () => publish({ type: "agent_end", messages: [], reason: "stop", usage: undefined as never }),
    },
  }).createMachine({
    context: { messages: [] },
    initial: "idle",
    states: {
      idle: {
        on: {
          PROMPT: {
            target: "streaming",
            actions: [({ context, event }) => append(context.messages, event.message), "startTurn"],
          },
        },
      },
      streaming: {
        invoke: {
          src: "model",
          input: ({ context }) => ({ messages: context.messages }),
          onDone: [
            { guard: "hasCalls", target: "executing", actions: "recordAssistant" },
            {
              target: afterTurn ?? "idle",
              actions: ["recordAssistant", "turnEnd", ...(afterTurn ? [] : ["agentEnd" as const])],
            },
          ],
        },
      },
      executing: {
        entry: "spawnCall",
        on: {
          "xstate.done.actor.*": afterTurn
            ? { target: "steeringCheck", actions: ["appendResult", "stopCall", "turnEnd"] }
            : { target: "streaming", actions: ["appendResult", "stopCall", "turnEnd", "startTurn"] },
        },
      },
      steeringCheck: {
        entry: "check",
        on: {
          CHECK: [
            { guard: "turnHadCalls", target: "streaming", actions: "startTurn" },
            { target: "followUpCheck" },
          ],
        },
      },
      followUpCheck: {
        entry: "check",
        on: { CHECK: { target: "idle", actions: "agentEnd" } },
      },
    },
  });

  const actor = createActor(machine).start();
  return {
    events,
    messages: () => actor.getSnapshot().context.messages,
    prompt(text: string): Promise<void> {
      const done = new Promise<void>((resolve) => {
        const subscription = events.subscribe((event) => {
          if (event.type !== "agent_end") return;
          subscription.unsubscribe();
          resolve();
        });
      });
      actor.send({ type: "PROMPT", message: { role: "user", content: text, timestamp: Date.now() } });
      return done;
    },
    stop: () => actor.stop(),
  };
}

/**
 * One run of the floor over a scripted provider, as `runOurs` / `runPi` of the turn benchmark run
 * theirs: one event subscriber that counts, the transcript checked afterwards.
 *
 * @example
 * ```ts
 * const sample = await runFloor(oneToolTurns(2000), [noopTool], { call: "machine", restingChecks: true }, 3998);
 * ```
 */
export async function runFloor(
  provider: Provider,
  tools: Tool[],
  shape: FloorShape,
  expectedMessages: number,
): Promise<Sample> {
  const agent = createFloorAgent(provider, tools, shape);
  let events = 0;
  agent.events.subscribe(() => {
    events++;
  });
  const sample = await measure(() => agent.prompt("go"));
  if (agent.messages().length !== expectedMessages || events === 0) {
    throw new Error(`the floor ended with ${agent.messages().length} messages`);
  }
  agent.stop();
  return sample;
}
