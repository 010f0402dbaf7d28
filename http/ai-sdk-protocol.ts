// The AI SDK routes of the session host: `POST {base}/chat` takes what `DefaultChatTransport` sends
// (`{ id, messages, trigger }`) and answers with the UI message stream; `GET {base}/chat/{id}/stream`
// is the transport's resume. The client's resent history is read for two things only: the new user
// message (by its id) and the answers in its last assistant message (approval responses, outputs of
// client-run tools). Everything else comes from the server's transcript.
import type { UserMessage } from "../core/messages.js";
import { aiSdkStream, type AiSdkStreamOptions } from "./ai-sdk-stream.js";
import type { EncoderFactory } from "./encoder.js";
import { clientTargetOf } from "./internal/ai-sdk-client-version.js";
import type { AiSdkTarget } from "./ui-messages.js";
import { idOf, objectOf } from "./internal/json.js";
import { runInputOf } from "./internal/run-input.js";
import {
  type ApprovalAnswer,
  type HostedThread,
  type HostProtocol,
  type ThreadInput,
  type ToolCallAnswer,
} from "./protocol.js";
import { AgentCallError } from "../core/agent-handle.js";

/** Options of {@link aiSdkProtocol}. */
export interface AiSdkProtocolOptions extends AiSdkStreamOptions {
  /** The route of chat requests under the host's base path (default `"/chat"`; resume is `{chat}/{id}/stream`). */
  path?: string;
  /**
   * The `ai` major of every client (`6` or `7`). Leave it out: the host then tells them apart per
   * request (ai 7 sends back the reason of an approval request, ai 6 does not) and serves a client it
   * cannot tell yet the stream both accept.
   */
  target?: AiSdkTarget;
}

/**
 * The AI SDK UI message stream on the session host: `POST {base}/chat` and
 * `GET {base}/chat/{id}/stream`, for `useChat({ transport: new DefaultChatTransport({ api: "/api/chat" }) })`.
 *
 * @example
 * ```ts
 * const host = createSessionHost({ agent: { provider }, authorize, basePath: "/api", protocols: [aiSdkProtocol({ target: 6 })] });
 * ```
 */
export function aiSdkProtocol(options: AiSdkProtocolOptions = {}): HostProtocol {
  const path = options.path ?? "/chat";
  const encoders: Record<AiSdkTarget, EncoderFactory> = {
    6: aiSdkStream({ ...options, target: 6 }),
    7: aiSdkStream({ ...options, target: 7 }),
  };
  // The client of each thread's last chat request: a resume (a GET, no body) gets its format.
  const clients = createRecentTargets();
  return {
    name: "ai-sdk",
    routes: [
      {
        method: "POST",
        path,
        async handle(request, _params, host) {
          const body = objectOf(await host.readJson(request), "the body");
          const threadId = idOf(body.id, "id (the chat id)");
          if (!Array.isArray(body.messages))
            throw new AgentCallError(400, "bad_request", "messages must be an array");
          if (body.trigger === "regenerate-message") {
            throw new AgentCallError(
              400,
              "unsupported",
              "regenerating a message is not supported: the server's transcript is kept as it happened",
            );
          }
          if (body.trigger !== undefined && body.trigger !== "submit-message") {
            throw new AgentCallError(400, "bad_request", 'trigger must be "submit-message"');
          }
          const messages = body.messages.map((m, i) => objectOf(m, `messages[${i}]`));
          const thread = await host.thread(request, threadId, { create: true });
          const target = options.target ?? clientTargetOf(messages);
          clients.set(threadId, target);
          const encoder = encoders[target];
          // The same message sent again (a client retrying after its connection dropped) while its
          // run goes on: follow that run, as the resume route does, rather than refuse it.
          const last = messages.at(-1);
          if (last?.role === "user" && thread.agent.messages.some((m) => m.id === last.id)) {
            const resumed = thread.reconnect(encoder());
            if (resumed) return resumed;
          }
          const input = withBodyResults(chatInputOf(messages, thread, body.toolResults !== undefined), body);
          return thread.respond(input, encoder());
        },
      },
      {
        method: "GET",
        path: `${path}/:id/stream`,
        async handle(request, { id }, host) {
          let thread: HostedThread;
          try {
            thread = await host.thread(request, id);
          } catch (error) {
            // Nothing to resume for a chat the host never saw: what the transport reads as "no stream".
            if (error instanceof AgentCallError && error.status === 404)
              return new Response(null, { status: 204 });
            throw error;
          }
          const encoder = encoders[options.target ?? clients.get(id) ?? 6];
          return thread.reconnect(encoder()) ?? new Response(null, { status: 204 });
        },
      },
    ],
  };
}

type Json = Record<string, unknown>;

/** The client of each thread's last chat request, for the most recent threads (bounded). */
function createRecentTargets(limit = 10_000) {
  const targets = new Map<string, AiSdkTarget>();
  return {
    get: (threadId: string) => targets.get(threadId),
    set(threadId: string, target: AiSdkTarget) {
      targets.delete(threadId);
      targets.set(threadId, target);
      if (targets.size > limit) targets.delete(targets.keys().next().value!);
    },
  };
}

/**
 * What a chat request asks: the last message is either a new user message or the assistant
 * message the client answered approvals / client-run calls in.
 */
export function chatInputOf(messages: Json[], thread: HostedThread, bodyAnswers = false): ThreadInput {
  const last = messages.at(-1);
  if (!last) throw new AgentCallError(400, "no_input", "messages is empty");
  checkKnownHistory(messages.slice(0, -1), thread);
  if (last.role === "user") return { message: userMessageOfUI(last) };
  if (last.role !== "assistant")
    throw new AgentCallError(400, "bad_request", "the last message must be the user's or the assistant's");
  return answersOf(last, thread, bodyAnswers);
}

/**
 * The request body's own `toolResults` (`sendMessage(undefined, { body: { toolResults } })`):
 * results of client-run calls that have no part of their own to carry an output, a sub-agent's
 * (shown on its top call's part, `approval.descriptor.waitsFor === "result"`), by path id.
 */
function withBodyResults(input: ThreadInput, body: Json): ThreadInput {
  if (body.toolResults === undefined) return input;
  if (input.message)
    throw new AgentCallError(
      400,
      "bad_request",
      "a request carries either a new message or answers, not both",
    );
  const { toolResults = [] } = runInputOf({ toolResults: body.toolResults });
  return { ...input, toolResults: [...(input.toolResults ?? []), ...toolResults] };
}

/**
 * Every earlier user message of the client must be in the server's thread (a forged or stale
 * history is refused), except those after the last message the thread has: messages the host
 * refused (`run_active`) or never got (a dropped request), which `useChat` keeps in its list and
 * resends. The host never took them, so the model never reads them; refusing them would refuse
 * every later message of that chat.
 */
function checkKnownHistory(earlier: Json[], thread: HostedThread): void {
  const known = new Set(thread.agent.messages.map((m) => m.id));
  const lastKnown = earlier.findLastIndex((message) => known.has(message.id as string));
  for (const message of earlier.slice(0, lastKnown + 1)) {
    if (message.role === "user" && !known.has(message.id as string)) {
      throw new AgentCallError(
        409,
        "history_mismatch",
        `the client's history has a user message (${String(message.id)}) this thread does not: load the thread from GET .../threads/{id}`,
      );
    }
  }
}

function userMessageOfUI(message: Json): UserMessage {
  const id = idOf(message.id, "the user message's id");
  const parts = Array.isArray(message.parts) ? message.parts : undefined;
  if (!parts) throw new AgentCallError(400, "bad_request", "the user message has no parts");
  const content: Exclude<UserMessage["content"], string> = [];
  for (const raw of parts) {
    const part = objectOf(raw, "a message part");
    if (part.type === "text" && typeof part.text === "string")
      content.push({ type: "text", text: part.text });
    else if (part.type === "file" && typeof part.url === "string" && typeof part.mediaType === "string") {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
      if (!match || !part.mediaType.startsWith("image/")) {
        throw new AgentCallError(
          400,
          "unsupported",
          "only images given as base64 data URLs are taken as files",
        );
      }
      content.push({ type: "image", mimeType: match[1], data: match[2] });
    }
  }
  if (content.length === 0) throw new AgentCallError(400, "bad_request", "the user message has no text");
  const onlyText = content.every((c) => c.type === "text");
  return {
    role: "user",
    id,
    timestamp: Date.now(),
    content: onlyText ? content.map((c) => (c as { text: string }).text).join("") : content,
  };
}

/**
 * The call a tool part's answer is for: the part's own call, or a call waiting in a sub-agent under
 * it, which the stream asked about on this part with the nested call's id as the approval's id
 * (`"p1/r1/w1"` on part `"p1"`). Only an id under the part's own call is taken from the approval.
 */
function answeredIdOf(part: Json, toolCallId: string): string {
  const approvalId = (part.approval as Json | undefined)?.id;
  return typeof approvalId === "string" && approvalId.startsWith(`${toolCallId}/`) ? approvalId : toolCallId;
}

/**
 * A sub-agent's client-run call answered on its card with a decision: a denial tells the model the
 * client will not run it (`rejectToolCall`); an approval carries no result, so it is refused.
 */
function declinedCall(toolCallId: string, approval: Json): ToolCallAnswer {
  if (approval.approved === false)
    return {
      toolCallId,
      error: typeof approval.reason === "string" ? approval.reason : "the user declined to run it",
    };
  throw new AgentCallError(
    400,
    "bad_request",
    `call ${toolCallId} waits for a client-run tool's result, not an approval: send it in the request body, sendMessage(undefined, { body: { toolResults: [{ toolCallId: "${toolCallId}", result }] } })`,
  );
}

/** The answers in the client's last assistant message to what the thread waits for. */
function answersOf(message: Json, thread: HostedThread, bodyAnswers: boolean): ThreadInput {
  const parts = Array.isArray(message.parts) ? message.parts.map((p) => objectOf(p, "a message part")) : [];
  const approvable = new Set(thread.agent.pendingApprovals().map((p) => p.toolCallId));
  const resolvable = new Set(thread.agent.pendingToolCalls().map((p) => p.toolCallId));
  const approvals: ApprovalAnswer[] = [];
  const toolResults: ToolCallAnswer[] = [];
  for (const part of parts) {
    if (typeof part.toolCallId !== "string") continue;
    const id = answeredIdOf(part, part.toolCallId);
    if (part.state === "approval-responded") {
      const approval = objectOf(part.approval, "a tool part's approval");
      if (typeof approval.approved !== "boolean")
        throw new AgentCallError(400, "bad_request", "approval.approved must be a boolean");
      if (resolvable.has(id)) {
        toolResults.push(declinedCall(id, approval));
        continue;
      }
      approvals.push({
        toolCallId: id,
        approved: approval.approved,
        ...(typeof approval.reason === "string" ? { reason: approval.reason } : {}),
      });
    } else if (resolvable.has(id) && part.state === "output-available") {
      toolResults.push({
        toolCallId: id,
        result: typeof part.output === "string" ? part.output : JSON.stringify(part.output ?? null),
      });
    } else if (resolvable.has(id) && part.state === "output-error") {
      toolResults.push({
        toolCallId: id,
        error: typeof part.errorText === "string" ? part.errorText : "the client's tool failed",
      });
    } else if (approvable.has(id) && part.state === "output-denied") {
      approvals.push({ toolCallId: id, approved: false });
    }
  }
  if (approvals.length + toolResults.length === 0 && !bodyAnswers) {
    throw new AgentCallError(
      400,
      "no_input",
      "the request has no new user message and no answer to a pending call",
    );
  }
  return { approvals, toolResults };
}
