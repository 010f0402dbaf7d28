// Reading request bodies and answering with JSON, within limits, for the host and its protocols.
import { checkJsonContentType } from "./request-guard.js";
import { AgentCallError } from "../../core/agent-handle.js";

/** Reads a JSON body of at most `maxBytes` bytes; AgentCallError 413 / 415 / 400 otherwise. */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  checkJsonContentType(request);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const text = await readText(request, maxBytes);
  if (text.trim() === "") throw new AgentCallError(400, "bad_request", "the request has no body");
  try {
    return JSON.parse(text);
  } catch {
    throw new AgentCallError(400, "bad_request", "the body is not valid JSON");
  }
}

async function readText(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch(cutShort);
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(concat(chunks, size));
}

/**
 * A body that could not be read to its end (its client closed the connection mid-upload) is the
 * client's doing: a 400, not a server failure logged for every client that goes away.
 */
function cutShort(error: unknown): never {
  throw new AgentCallError(
    400,
    "bad_request",
    `the request body could not be read to its end: ${error instanceof Error ? error.message : String(error)}`,
  );
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

function tooLarge(maxBytes: number): AgentCallError {
  return new AgentCallError(413, "payload_too_large", `the body is larger than ${maxBytes} bytes`);
}

/** A JSON response. */
export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/** The response for an AgentCallError: `{ error: { code, message } }`. */
export function errorResponse(error: AgentCallError): Response {
  return jsonResponse({ error: { code: error.code, message: error.message } }, error.status);
}

/** `value` as a plain object, or an AgentCallError 400 naming `what`. */
export function objectOf(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AgentCallError(400, "bad_request", `${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** A thread / call id: a non-empty string of at most 256 characters. */
export function idOf(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 256) {
    throw new AgentCallError(
      400,
      "bad_request",
      `${what} must be a non-empty string of at most 256 characters`,
    );
  }
  return value;
}

/** An optional string field. */
export function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new AgentCallError(400, "bad_request", `${what} must be a string`);
  return value;
}
