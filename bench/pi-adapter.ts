import { setMaxListeners } from "node:events";
import { createRequire } from "node:module";
import type * as PiCore from "@mariozechner/pi-agent-core";
import type { AgentTool as PiAgentTool, StreamFn } from "@mariozechner/pi-agent-core";
import type * as PiAi from "@mariozechner/pi-ai";
import type {
  AssistantMessageEventStream,
  AssistantMessage as PiAssistantMessage,
  TextContent as PiTextContent,
  ThinkingContent as PiThinkingContent,
  ToolCall as PiToolCall,
} from "@mariozechner/pi-ai";
import type { Message, Provider, ProviderRequest } from "../index.js";
import { sleep } from "./bench-tools.js";

/** The pi releases the bench compares with: 1.x needs Node ≥ 22.19, 0.73 runs on Node 20. */
export type PiRelease = "0.73" | "1.6";

/**
 * The pi release this process compares with: `BENCH_PI` (`0.73` or `1.6`) when set, otherwise
 * 1.6 where the running Node meets its `engines` (≥ 22.19) and 0.73 where it does not — so the
 * Node 20 run keeps a peer and the Node 24 run meets pi's current major.
 *
 * @example
 * ```ts
 * choosePiRelease("24.11.1", undefined); // "1.6"
 * choosePiRelease("20.19.0", undefined); // "0.73"
 * ```
 */
export function choosePiRelease(nodeVersion: string, override: string | undefined): PiRelease {
  if (override === "0.73" || override === "1.6") return override;
  if (override) throw new Error(`BENCH_PI must be 0.73 or 1.6, not ${override}`);
  const [major = 0, minor = 0] = nodeVersion.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 19) ? "1.6" : "0.73";
}

/** The pi release this process loaded (see {@link choosePiRelease}). */
export const piRelease: PiRelease = choosePiRelease(process.versions.node, process.env.BENCH_PI);

/** The npm packages behind each release. */
const packages = {
  "0.73": { core: "@mariozechner/pi-agent-core", ai: "@mariozechner/pi-ai" },
  "1.6": { core: "@earendil-works/pi-agent-core", ai: "@earendil-works/pi-ai" },
} as const;

/** pi's package and version as the bench output names it, e.g. `@earendil-works/pi-agent-core@1.6.0`. */
export const piName = `${packages[piRelease].core}@${
  (createRequire(import.meta.url)(`${packages[piRelease].core}/package.json`) as { version: string }).version
}`;

// Both majors keep the API the bench uses (Agent, subscribe, prompt, the AssistantMessageEvent
// stream); 0.73's types describe it. A variable specifier keeps tsc (on Node 20) off 1.x's types.
const core = (await import(packages[piRelease].core)) as typeof PiCore;
const ai = (await import(packages[piRelease].ai)) as typeof PiAi;

/**
 * An object schema with number properties, as each release's users write it: TypeBox's
 * `Type.Object` for 0.73 (which ships TypeBox), a plain JSON Schema for 1.x (which takes "any
 * JSON Schema object" and no longer re-exports TypeBox).
 */
function numbersObject(names: readonly string[]) {
  if (piRelease === "0.73") {
    return ai.Type.Object(Object.fromEntries(names.map((name) => [name, ai.Type.Number()])));
  }
  return {
    type: "object",
    properties: Object.fromEntries(names.map((name) => [name, { type: "number" }])),
    required: [...names],
  } as unknown as ReturnType<typeof ai.Type.Object>;
}

/** pi-agent-core's twin of {@link noopTool}. */
export const piNoopTool: PiAgentTool<any> = {
  name: "noop",
  label: "noop",
  description: "Does nothing and says ok",
  parameters: numbersObject([]),
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

const piSleepParameters = numbersObject(["ms"]);

/** pi-agent-core's twin of {@link sleepTool}. */
export const piSleepTool: PiAgentTool<typeof piSleepParameters> = {
  name: "sleep",
  label: "sleep",
  description: "Waits some milliseconds",
  parameters: piSleepParameters,
  execute: async (_id, params, signal) => {
    // pi hands every call of a run the same signal: 100 waiting calls are expected, not a leak.
    if (signal) setMaxListeners(0, signal);
    await sleep((params as { ms: number }).ms, signal);
    return { content: [{ type: "text", text: "slept" }], details: {} };
  },
};

/** The agent class of the loaded release. */
export type PiAgent = PiCore.Agent;

/**
 * A pi-agent-core `StreamFn` that plays one of our providers (in the benchmarks: the same
 * `scripted()` provider agent-machine runs on). It does what a pi-ai provider does with a network
 * stream: it mutates one partial AssistantMessage in place and pushes pi's
 * `AssistantMessageEvent`s (`start`, `text_start` / `text_delta` / `text_end`, `toolcall_*`,
 * `done` / `error`) into an `AssistantMessageEventStream` as the source yields. So both runtimes
 * consume the very same generator, and each pays its own provider-side bookkeeping.
 *
 * Like agent-machine's model-stream actor, it does not parse partial tool-call JSON: arguments
 * arrive whole with `toolcall_end`.
 *
 * @example
 * ```ts
 * const agent = createPiAgent(scripted([{ text: "Hi" }]), []); // or, by hand:
 * const streamFn = piStreamFn(scripted([{ text: "Hi" }]));
 * await agent.prompt("Hello");
 * ```
 */
export function piStreamFn(provider: Provider, agentTools: readonly PiAgentTool<any>[] = []): StreamFn {
  return (model, context, options) => {
    const stream = ai.createAssistantMessageEventStream();
    // 1.x puts the system prompt (and the tools' declarations) in a leading system message and
    // drops `systemPrompt` / `tools` from the context: read them where each release keeps them.
    const messages = context.messages as unknown as (Message | { role: "system"; content: unknown })[];
    const request: ProviderRequest = {
      systemPrompt: context.systemPrompt ?? systemText(messages),
      // A getter: the benches' lean provider never reads the transcript, so pi 1.x is not charged
      // for a copy here that 0.73 (its messages passed as they are) never made.
      get messages() {
        return messages.filter((message): message is Message => message.role !== "system");
      },
      tools: (context.tools ?? agentTools).map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters as unknown as Record<string, unknown>,
      })),
    };
    const output: PiAssistantMessage = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: Date.now(),
    };
    const signal = options?.signal ?? new AbortController().signal;
    void pump(provider.stream(request, signal), stream, output);
    return stream;
  };
}

async function pump(
  source: AsyncIterable<import("../index.js").ProviderEvent>,
  stream: AssistantMessageEventStream,
  output: PiAssistantMessage,
): Promise<void> {
  let open: PiTextContent | PiThinkingContent | undefined;
  const closeOpen = () => {
    if (!open) return;
    const contentIndex = output.content.length - 1;
    if (open.type === "text") {
      stream.push({ type: "text_end", contentIndex, content: open.text, partial: output });
    } else {
      stream.push({ type: "thinking_end", contentIndex, content: open.thinking, partial: output });
    }
    open = undefined;
  };
  const fail = (reason: "aborted" | "error", message: string) => {
    closeOpen();
    output.stopReason = reason;
    output.errorMessage = message;
    stream.push({ type: "error", reason, error: output });
    stream.end(output);
  };
  try {
    for await (const event of source) {
      switch (event.type) {
        case "start":
          stream.push({ type: "start", partial: output });
          break;
        case "text_delta": {
          if (open?.type !== "text") {
            closeOpen();
            open = { type: "text", text: "" };
            output.content.push(open);
            stream.push({ type: "text_start", contentIndex: output.content.length - 1, partial: output });
          }
          open.text += event.delta;
          const contentIndex = output.content.length - 1;
          stream.push({ type: "text_delta", contentIndex, delta: event.delta, partial: output });
          break;
        }
        case "thinking_delta": {
          if (open?.type !== "thinking") {
            closeOpen();
            open = { type: "thinking", thinking: "" };
            output.content.push(open);
            stream.push({ type: "thinking_start", contentIndex: output.content.length - 1, partial: output });
          }
          open.thinking += event.delta;
          const contentIndex = output.content.length - 1;
          stream.push({ type: "thinking_delta", contentIndex, delta: event.delta, partial: output });
          break;
        }
        case "toolcall_start": {
          closeOpen();
          output.content.push({ type: "toolCall", id: event.id, name: event.name, arguments: {} });
          stream.push({ type: "toolcall_start", contentIndex: output.content.length - 1, partial: output });
          break;
        }
        case "toolcall_delta": {
          const contentIndex = output.content.length - 1;
          stream.push({ type: "toolcall_delta", contentIndex, delta: event.delta, partial: output });
          break;
        }
        case "toolcall_end": {
          const contentIndex = output.content.findLastIndex(
            (c) => c.type === "toolCall" && c.id === event.id,
          );
          const toolCall = output.content[contentIndex] as PiToolCall;
          toolCall.arguments = event.arguments;
          stream.push({ type: "toolcall_end", contentIndex, toolCall, partial: output });
          break;
        }
        case "done": {
          closeOpen();
          output.stopReason = event.stopReason;
          if (event.usage) output.usage = { ...output.usage, ...event.usage, cost: output.usage.cost };
          stream.push({ type: "done", reason: event.stopReason, message: output });
          stream.end(output);
          return;
        }
        case "error":
          return fail(event.kind === "aborted" ? "aborted" : "error", event.message);
      }
    }
    fail("error", "The stream ended before the model finished its answer");
  } catch (error) {
    fail("error", error instanceof Error ? error.message : String(error));
  }
}

/**
 * A pi-agent-core Agent on one of our providers, with the given tools and system prompt.
 *
 * @example
 * ```ts
 * const agent = createPiAgent(scripted([{ text: "Hi" }]), []);
 * await agent.prompt("Hello");
 * ```
 */
export function createPiAgent(provider: Provider, tools: PiAgentTool<any>[], systemPrompt = ""): PiAgent {
  return new core.Agent({
    initialState: { systemPrompt, tools },
    streamFn: piStreamFn(provider, tools),
  });
}

/** The text of the leading system message (1.x), or "" when there is none. */
function systemText(messages: readonly { role: string; content?: unknown }[]): string {
  const first = messages[0];
  if (first?.role !== "system") return "";
  const content = first.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: { text?: string }) => part.text ?? "").join("") : "";
}

/**
 * The agent's transcript without system messages: 1.x keeps its system prompt as the first
 * message, 0.73 beside the transcript; the benches count what both runtimes hold alike.
 *
 * @example
 * ```ts
 * await agent.prompt("go");
 * piTranscript(agent).length; // prompt, answers and tool results
 * ```
 */
export function piTranscript(agent: PiAgent): PiCore.AgentMessage[] {
  return agent.state.messages.filter((message) => (message as { role: string }).role !== "system");
}
