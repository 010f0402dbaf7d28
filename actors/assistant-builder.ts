import type { AssistantMessage, TextContent, ThinkingContent, ToolCall } from "../core/messages.js";
import { newMessageId } from "../core/message-id.js";
import { emptyUsage } from "../core/messages.js";
import type { ProviderEvent } from "../providers/provider.js";

/**
 * Builds an assistant message from provider events, in place: deltas are appended to the open
 * block, so a long answer costs linear time, never a copy per delta.
 */
export class AssistantBuilder {
  readonly message: AssistantMessage;
  private openText?: TextContent;
  private openThinking?: ThinkingContent;
  private readonly completedCalls = new Set<string>();
  /** The first call block of each id that started (a lookup per `toolcall_end`, not a scan). */
  private readonly startedCalls = new Map<string, ToolCall>();
  done = false;

  constructor(provider: string, model: string, timestamp = Date.now(), id = newMessageId()) {
    this.message = {
      role: "assistant",
      content: [],
      stopReason: "stop",
      usage: emptyUsage(),
      provider,
      model,
      timestamp,
      id,
    };
  }

  /** Applies one event; returns the finished tool call for `toolcall_end`. */
  apply(event: ProviderEvent): ToolCall | undefined {
    switch (event.type) {
      case "text_delta":
        this.openThinking = undefined;
        if (!this.openText) {
          this.openText = { type: "text", text: "" };
          this.message.content.push(this.openText);
        }
        this.openText.text += event.delta;
        return;
      case "thinking_delta":
        this.applyThinking(event);
        return;
      case "toolcall_start": {
        this.openText = undefined;
        this.openThinking = undefined;
        const block: ToolCall = { type: "toolCall", id: event.id, name: event.name, arguments: {} };
        this.message.content.push(block);
        if (!this.startedCalls.has(event.id)) this.startedCalls.set(event.id, block);
        return;
      }
      case "toolcall_end": {
        this.openText = undefined;
        this.openThinking = undefined;
        let call = this.completedCalls.has(event.id) ? undefined : this.startedCalls.get(event.id);
        if (!call) {
          call = { type: "toolCall", id: event.id, name: event.name, arguments: {} };
          this.message.content.push(call);
        }
        call.name = event.name;
        call.arguments = event.arguments;
        this.completedCalls.add(call.id);
        return call;
      }
      case "done":
        this.done = true;
        this.message.stopReason = event.stopReason;
        if (event.usage) this.message.usage = event.usage;
        return;
      default:
        return;
    }
  }

  /**
   * Thinking arrives as deltas, then the block's signature (Anthropic signs a block last; a later
   * signature event replaces the earlier one). Text after a signature starts a new block, and
   * redacted thinking is always a block of its own, so every signature stays with its own text.
   */
  private applyThinking(event: Extract<ProviderEvent, { type: "thinking_delta" }>): void {
    this.openText = undefined;
    if (event.redacted) {
      this.message.content.push({
        type: "thinking",
        thinking: event.delta,
        signature: event.signature,
        redacted: true,
      });
      this.openThinking = undefined;
      return;
    }
    const isSignature = event.delta === "" && event.signature !== undefined;
    if (this.openThinking && this.openThinking.signature !== undefined && !isSignature)
      this.openThinking = undefined;
    if (!this.openThinking) {
      this.openThinking = { type: "thinking", thinking: "" };
      this.message.content.push(this.openThinking);
    }
    this.openThinking.thinking += event.delta;
    if (event.signature !== undefined) this.openThinking.signature = event.signature;
  }

  /** Ends the message as failed: keeps what arrived, drops tool calls whose arguments never completed. */
  fail(stopReason: "error" | "aborted", errorMessage: string): AssistantMessage {
    this.message.content = this.message.content.filter(
      (c) => c.type !== "toolCall" || this.completedCalls.has(c.id),
    );
    this.message.stopReason = stopReason;
    this.message.errorMessage = errorMessage;
    this.done = true;
    return this.message;
  }
}
