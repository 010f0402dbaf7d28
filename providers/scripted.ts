import type { Usage } from "../core/messages.js";
import type { Provider, ProviderErrorKind, ProviderEvent, ProviderRequest } from "./provider.js";

/** A tool call a scripted step asks for. */
export interface ScriptedToolCall {
  name: string;
  arguments?: Record<string, unknown>;
  /** Defaults to `call_<call>_<index>`. */
  id?: string;
}

/** One scripted model answer. */
export interface ScriptedStep {
  thinking?: string;
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Ends the stream with this error; whatever text/thinking/tool calls the step has stream first. */
  error?: { kind: ProviderErrorKind; message: string; retryAfterMs?: number };
  /** Wait this long before each delta (and before the first event). */
  delayMs?: number;
  /** Characters per text / thinking delta. Default 16. */
  chunkSize?: number;
  /** Default: `toolUse` when the step has tool calls, else `stop`. */
  stopReason?: "stop" | "length" | "toolUse";
  /** Default: estimated from the request and the answer at 4 characters a token. */
  usage?: Partial<Usage>;
}

/** A list of steps (one per model call), or a function of the request and the call's index (0-based). */
export type Script =
  | readonly ScriptedStep[]
  | ((request: ProviderRequest, call: number) => ScriptedStep | Promise<ScriptedStep>);

export interface ScriptedOptions {
  id?: string;
  model?: string;
  /** Keep every request in `provider.requests` (default true; turn off for long benchmarks). */
  record?: boolean;
}

/** A provider that plays a script. `requests` holds what the model was sent, call by call. */
export interface ScriptedProvider extends Provider {
  readonly requests: ProviderRequest[];
  /** Model calls made so far. */
  readonly calls: number;
}

/**
 * A provider that streams scripted answers exactly as a real one would (start, deltas, tool-call
 * fragments, done or error) and honours the abort signal. For tests, examples and the demo.
 *
 * @example
 * ```ts
 * const provider = scripted([
 *   { toolCalls: [{ name: "read_file", arguments: { path: "README.md" } }] },
 *   { text: "The README says hello." },
 * ]);
 * const agent = createAgent({ provider, tools: [readFile] });
 * ```
 */
export function scripted(script: Script, options: ScriptedOptions = {}): ScriptedProvider {
  const requests: ProviderRequest[] = [];
  let calls = 0;
  const provider: ScriptedProvider = {
    id: options.id ?? "scripted",
    model: options.model ?? "scripted-model",
    requests,
    get calls() {
      return calls;
    },
    stream(request, signal) {
      const call = calls++;
      if (options.record !== false) requests.push(request);
      return playStep(script, request, call, signal);
    },
  };
  return provider;
}

async function* playStep(
  script: Script,
  request: ProviderRequest,
  call: number,
  signal: AbortSignal,
): AsyncGenerator<ProviderEvent> {
  const step = typeof script === "function" ? await script(request, call) : script[call];
  if (!step) {
    yield { type: "error", kind: "api", message: `Scripted provider has no step for call ${call + 1}` };
    return;
  }
  const wait = step.delayMs ?? 0;
  const chunk = Math.max(1, step.chunkSize ?? 16);
  const aborted: ProviderEvent = { type: "error", kind: "aborted", message: "Request aborted" };

  if (!(await pause(wait, signal))) return yield aborted;
  yield { type: "start" };
  for (const [kind, text] of [
    ["thinking_delta", step.thinking],
    ["text_delta", step.text],
  ] as const) {
    if (!text) continue;
    for (let i = 0; i < text.length; i += chunk) {
      if (!(await pause(wait, signal))) return yield aborted;
      yield { type: kind, delta: text.slice(i, i + chunk) };
    }
  }
  const toolCalls = step.toolCalls ?? [];
  for (const [index, toolCall] of toolCalls.entries()) {
    const id = toolCall.id ?? `call_${call}_${index}`;
    const args = toolCall.arguments ?? {};
    if (!(await pause(wait, signal))) return yield aborted;
    yield { type: "toolcall_start", id, name: toolCall.name };
    const json = JSON.stringify(args);
    for (let i = 0; i < json.length; i += 32)
      yield { type: "toolcall_delta", id, delta: json.slice(i, i + 32) };
    yield { type: "toolcall_end", id, name: toolCall.name, arguments: args };
  }
  if (signal.aborted) return yield aborted;
  const usage = scriptedUsage(request, step);
  if (step.error) {
    yield {
      type: "error",
      kind: step.error.kind,
      message: step.error.message,
      retryAfterMs: step.error.retryAfterMs,
    };
    return;
  }
  yield { type: "done", stopReason: step.stopReason ?? (toolCalls.length ? "toolUse" : "stop"), usage };
}

/** Waits `ms` (no timer at all for 0); false when the signal fired. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> | boolean {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function scriptedUsage(request: ProviderRequest, step: ScriptedStep): Usage {
  const input = step.usage?.input ?? Math.ceil(requestChars(request) / 4);
  const output = step.usage?.output ?? Math.ceil(answerChars(step) / 4);
  const cacheRead = step.usage?.cacheRead ?? 0;
  const cacheWrite = step.usage?.cacheWrite ?? 0;
  const usage: Usage = {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
  };
  if (step.usage?.cacheWriteLong) usage.cacheWriteLong = step.usage.cacheWriteLong;
  return usage;
}

/** Measured only when a step gives no usage of its own: it walks the whole request. */
function requestChars(request: ProviderRequest): number {
  let chars = request.systemPrompt?.length ?? 0;
  for (const m of request.messages) {
    chars += typeof m.content === "string" ? m.content.length : JSON.stringify(m.content).length;
  }
  return chars;
}

function answerChars(step: ScriptedStep): number {
  return (
    (step.text?.length ?? 0) + (step.thinking?.length ?? 0) + JSON.stringify(step.toolCalls ?? []).length
  );
}
