import type { AssistantMessage, ImageContent, Message, TextContent } from "../../core/messages.js";
import type { ProviderRequest } from "../provider.js";
import { normalizeTranscript } from "./transcript.js";

/** One part of a Gemini `Content`, as the `generateContent` REST API spells it. */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}

/** A turn of a Gemini conversation. */
export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** The prefix of the ids we give calls the Gemini API sent without one; they are not sent back. */
export const GENERATED_CALL_ID_PREFIX = "gemini_call_";

/** Whether an assistant message came from a Gemini model, so its thought signatures are valid there. */
function fromGemini(message: AssistantMessage): boolean {
  return message.provider === undefined || message.provider.startsWith("gemini");
}

function userParts(content: string | (TextContent | ImageContent)[]): GeminiPart[] {
  if (typeof content === "string") return [{ text: content }];
  return content.map((c) =>
    c.type === "text" ? { text: c.text } : { inlineData: { mimeType: c.mimeType, data: c.data } },
  );
}

/**
 * The parts of a model turn. Thought summaries go back as `thought` parts with their signature.
 * A signature that came on a text or function call part arrived as an empty thinking block right
 * after that part (see `geminiStreamEvents`), and goes back on that part: the API checks that each
 * step's first function call carries the signature it was given.
 */
function modelParts(message: AssistantMessage): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const sameModelFamily = fromGemini(message);
  for (const block of message.content) {
    if (block.type === "text") {
      if (block.text !== "") parts.push({ text: block.text });
    } else if (block.type === "toolCall") {
      const id = block.id.startsWith(GENERATED_CALL_ID_PREFIX) ? undefined : block.id;
      parts.push({ functionCall: { ...(id ? { id } : {}), name: block.name, args: block.arguments } });
    } else if (sameModelFamily && !block.redacted) {
      if (block.thinking === "" && block.signature) {
        const previous = parts[parts.length - 1];
        if (previous && !previous.thoughtSignature) previous.thoughtSignature = block.signature;
        else parts.push({ text: "", thoughtSignature: block.signature });
      } else if (block.thinking !== "") {
        parts.push({
          thought: true,
          text: block.thinking,
          ...(block.signature ? { thoughtSignature: block.signature } : {}),
        });
      }
    }
  }
  return parts;
}

/**
 * Converts our request to Gemini `contents`, `systemInstruction` and `tools`. Consecutive tool
 * results become one user turn of `functionResponse` parts (in call order, the way the API pairs
 * parallel calls); images a tool returned follow in that turn as inline data. Thinking and
 * signatures from other providers are not sent (Gemini would reject their signatures).
 *
 * @example
 * ```ts
 * const { contents, systemInstruction, tools } = toGeminiRequest(request);
 * ```
 */
export function toGeminiRequest(request: ProviderRequest): {
  contents: GeminiContent[];
  systemInstruction?: string;
  tools?: { functionDeclarations: { name: string; description: string; parametersJsonSchema: unknown }[] }[];
  toolConfig?: { functionCallingConfig: { mode: "NONE" | "ANY" } };
} {
  const contents: GeminiContent[] = [];
  let results: GeminiPart[] | undefined; // the open user turn of function responses
  let images: GeminiPart[] = [];
  const closeResults = () => {
    if (!results) return;
    contents.push({ role: "user", parts: [...results, ...images] });
    results = undefined;
    images = [];
  };

  for (const message of normalizeTranscript(request.messages) as Message[]) {
    if (message.role === "toolResult") {
      results ??= [];
      const text = message.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      const id = message.toolCallId.startsWith(GENERATED_CALL_ID_PREFIX) ? undefined : message.toolCallId;
      results.push({
        functionResponse: {
          ...(id ? { id } : {}),
          name: message.toolName,
          response: message.isError ? { error: text } : { output: text === "" ? "(no output)" : text },
        },
      });
      for (const c of message.content)
        if (c.type === "image") images.push({ inlineData: { mimeType: c.mimeType, data: c.data } });
      continue;
    }
    closeResults();
    if (message.role === "user") {
      contents.push({ role: "user", parts: userParts(message.content) });
    } else if (message.role === "assistant") {
      const parts = modelParts(message);
      if (parts.length > 0) contents.push({ role: "model", parts });
    }
  }
  closeResults();

  const out: ReturnType<typeof toGeminiRequest> = { contents };
  if (request.systemPrompt) out.systemInstruction = request.systemPrompt;
  if (request.tools.length > 0) {
    out.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
    if (request.toolChoice === "none") out.toolConfig = { functionCallingConfig: { mode: "NONE" } };
    if (request.toolChoice === "required") out.toolConfig = { functionCallingConfig: { mode: "ANY" } };
  }
  return out;
}
