import { Agent as PiAgent, type AgentTool as PiAgentTool, type StreamFn } from "@mariozechner/pi-agent-core";
import {
  type AssistantMessageEventStream,
  createAssistantMessageEventStream,
  type AssistantMessage as PiAssistantMessage,
  type TextContent as PiTextContent,
  type ThinkingContent as PiThinkingContent,
  type ToolCall as PiToolCall,
} from "@mariozechner/pi-ai";
import type { Message, Provider, ProviderRequest } from "../index.js";

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
 * const agent = new PiAgent({ streamFn: piStreamFn(scripted([{ text: "Hi" }])) });
 * await agent.prompt("Hello");
 * ```
 */
export function piStreamFn(provider: Provider): StreamFn {
  return (model, context, options) => {
    const stream = createAssistantMessageEventStream();
    const request: ProviderRequest = {
      systemPrompt: context.systemPrompt,
      messages: context.messages as unknown as Message[],
      tools: (context.tools ?? []).map((tool) => ({
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
  return new PiAgent({
    initialState: { systemPrompt, tools },
    streamFn: piStreamFn(provider),
  });
}
