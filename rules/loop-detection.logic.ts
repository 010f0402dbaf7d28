import { PROCESS_MESSAGE_IDS } from "../core/message-id.js";
import type { AgentMessage, CustomMessage, ToolCall, ToolResultMessage } from "../core/messages.js";
import type { LoopDetectionOptions } from "../core/options.js";
import { SKIPPED_TEXT } from "./tool-execution.logic.js";

/** Defaults of {@link LoopDetectionOptions}. */
export const LOOP_DETECTION_DEFAULTS: Required<LoopDetectionOptions> = {
  maxIdenticalCalls: 5,
  maxIdenticalFailures: 3,
};

/**
 * How many distinct calls a run remembers (the most recently made). A loop repeats the same call,
 * so a call not made among the last 64 distinct ones is not looping; the bound keeps the cost per
 * tool group and the snapshot's size constant however long the run.
 */
export const LOOP_MEMORY = 64;

/** What loop detection found: which call repeated, how, and how often. */
export interface LoopHit {
  toolName: string;
  /** The call (of this turn) that reached the threshold. */
  toolCallId: string;
  /** `"repeated"`: same call, same result; `"failing"`: same call, an error each time. */
  kind: "repeated" | "failing";
  count: number;
}

/** One remembered call: its key, the last result it got, and its counts in this run. */
export interface LoopRecord {
  /** Hash of the tool name and canonical arguments. */
  key: string;
  /** Hash of the last result (content and error flag). */
  result: string;
  /** Consecutive times (turns) this call got the same result. */
  same: number;
  /** Times this call failed in this run. */
  failures: number;
  /** The model was told about this call already; the next repeat ends the run. */
  warned: boolean;
  /** The turn that last counted this call (a call repeated inside one message counts once). */
  turn: number;
}

/** Loop detection's memory of a run (JSON-safe; lives in the run state, so it survives a restore). */
export interface LoopState {
  /** Most recent first, at most {@link LOOP_MEMORY}. */
  recent: LoopRecord[];
}

/** What recording a group of results decided. */
export interface LoopVerdict {
  state: LoopState;
  /** Calls the model is to be told about (first time over a threshold). */
  warnings: LoopHit[];
  /** A warned call repeated again: the run ends. */
  stop?: LoopHit;
}

/**
 * The thresholds in force: the defaults, `options` over them, or `undefined` when detection is off.
 *
 * @example
 * ```ts
 * resolveLoopDetection({ maxIdenticalCalls: 8 }); // { maxIdenticalCalls: 8, maxIdenticalFailures: 3 }
 * resolveLoopDetection(false); // undefined
 * ```
 */
export function resolveLoopDetection(
  options: LoopDetectionOptions | false | undefined,
): Required<LoopDetectionOptions> | undefined {
  if (options === false) return undefined;
  // No options (the usual case, checked once per tool group): the defaults themselves, no copy.
  return options === undefined ? LOOP_DETECTION_DEFAULTS : { ...LOOP_DETECTION_DEFAULTS, ...options };
}

/** Throws a clear error for thresholds that cannot work (they are counts of at least 2). */
export function checkLoopDetection(options: LoopDetectionOptions | false | undefined): void {
  if (options === undefined || options === false) return;
  if (typeof options !== "object" || options === null) {
    throw new TypeError("createAgent: loopDetection must be false or an object of thresholds");
  }
  for (const [name, value] of Object.entries(options)) {
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < 2)) {
      throw new TypeError(
        `createAgent: loopDetection.${name} must be an integer of at least 2, got ${value}`,
      );
    }
  }
}

/**
 * JSON with object keys sorted at every depth, so `{a:1,b:2}` and `{b:2,a:1}` are the same call.
 *
 * @example
 * ```ts
 * canonicalJson({ b: [1, { d: 1, c: 2 }], a: "x" }); // '{"a":"x","b":[1,{"c":2,"d":1}]}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  // Built by concatenation, without the arrays and closures of filter/sort/map/join: this runs
  // for every tool call, and the arguments are usually an object of a few plain fields.
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      // A hole stays empty, as `map` and `join` leave it.
      if (i in value) out += canonicalJson(value[i]);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = "{";
  for (const key of keys) {
    const field = record[key];
    if (field === undefined) continue;
    if (out.length > 1) out += ",";
    out += `${JSON.stringify(key)}:${canonicalJson(field)}`;
  }
  return `${out}}`;
}

/** A 53-bit string hash (cyrb53), in base 36: enough to tell calls apart, cheap to compute. */
export function hashText(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return base36(4294967296 * (2097151 & h2) + (h1 >>> 0));
}

const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * `value.toString(36)` for an integer below 2^53, digit by digit: the same string, several times
 * faster than V8's conversion of a large number to base 36 (this runs twice per tool call).
 * Division by 36 and `Math.floor` are exact below 2^53.
 */
function base36(value: number): string {
  let out = "";
  do {
    const quotient = Math.floor(value / 36);
    out = DIGITS[value - quotient * 36]! + out;
    value = quotient;
  } while (value > 0);
  return out;
}

/** The identity of a call: its tool name and canonical arguments, hashed. */
export function callKey(name: string, args: unknown): string {
  return hashText(`${name}\u0000${canonicalJson(args)}`);
}

function resultKey(result: ToolResultMessage): string {
  const { content } = result;
  let text = result.isError ? "error" : "ok";
  for (const part of content) {
    text += `\u0000${part.type === "text" ? part.text : `${part.mimeType}:${part.data}`}`;
  }
  // With no parts the separator after the outcome stays, as the key has always been made.
  return hashText(content.length === 0 ? `${text}\u0000` : text);
}

/**
 * Records a group of tool results (in call order) and says whether a call now loops: the same
 * call (tool + canonical arguments) got the same result `maxIdenticalCalls` times in this run, or
 * failed `maxIdenticalFailures` times. The first time a call crosses a threshold it is a warning;
 * if the model makes that call again and it still loops, it is the stop. Calls skipped for a
 * steering message do not count (the model did not choose that outcome), and a call repeated
 * inside one message counts once.
 *
 * @example
 * ```ts
 * const verdict = recordToolResults(state, limits, calls, results, turn);
 * if (verdict.stop) endRun("loop");
 * ```
 */
export function recordToolResults(
  state: LoopState | undefined,
  limits: Required<LoopDetectionOptions>,
  calls: readonly ToolCall[],
  results: readonly ToolResultMessage[],
  turn: number,
): LoopVerdict {
  let recent = state ? state.recent : [];
  const warnings: LoopHit[] = [];
  let stop: LoopHit | undefined;
  // A turn usually has one call or a few: a scan finds it; a large group gets a map.
  const callsById = calls.length > 8 ? new Map(calls.map((call) => [call.id, call])) : undefined;
  for (const result of results) {
    if (isSkipped(result)) continue;
    const call = callsById
      ? callsById.get(result.toolCallId)
      : calls.find((candidate) => candidate.id === result.toolCallId);
    if (!call) continue;
    const key = callKey(call.name, call.arguments);
    const index = indexOfKey(recent, key);
    const previous = index >= 0 ? recent[index]! : undefined;
    if (previous?.turn === turn) continue;
    const outcome = resultKey(result);
    const record: LoopRecord = {
      key,
      result: outcome,
      same: previous && previous.result === outcome ? previous.same + 1 : 1,
      failures: (previous?.failures ?? 0) + (result.isError ? 1 : 0),
      warned: previous?.warned ?? false,
      turn,
    };
    recent = withFirst(recent, record, index);

    const hit = loopHit(record, limits, call, result);
    if (!hit) continue;
    if (record.warned) stop ??= hit;
    else {
      record.warned = true;
      warnings.push(hit);
    }
  }
  const next: LoopState = { recent };
  mayStop.set(next, anyWarned(recent));
  return stop ? { state: next, warnings, stop } : { state: next, warnings };
}

/**
 * Whether a state has a warned call, for each state {@link recordToolResults} made: the guard
 * that asks it runs every turn, and would otherwise scan the whole memory each time. A state
 * restored from a snapshot is scanned once.
 */
const mayStop = new WeakMap<LoopState, boolean>();

function anyWarned(recent: readonly LoopRecord[]): boolean {
  for (const record of recent) if (record.warned) return true;
  return false;
}

function indexOfKey(recent: readonly LoopRecord[], key: string): number {
  for (let i = 0; i < recent.length; i++) if (recent[i]!.key === key) return i;
  return -1;
}

/**
 * Whether recording more results could end the run: only a call the model was warned about can
 * (see {@link recordToolResults}), so a run with no warning yet cannot stop for a loop this turn.
 *
 * @example
 * ```ts
 * loopMayStop(undefined); // false: nothing recorded yet
 * loopMayStop(recordToolResults(state, limits, calls, results, turn).state);
 * ```
 */
export function loopMayStop(state: LoopState | undefined): boolean {
  if (!state) return false;
  let known = mayStop.get(state);
  if (known === undefined) mayStop.set(state, (known = anyWarned(state.recent)));
  return known;
}

/** A new list: `record` first, then `recent` without its entry at `index` (-1: none), at most `LOOP_MEMORY` long. */
function withFirst(recent: readonly LoopRecord[], record: LoopRecord, index: number): LoopRecord[] {
  const next = [record];
  for (let i = 0; i < recent.length && next.length < LOOP_MEMORY; i++) {
    if (i !== index) next.push(recent[i]!);
  }
  return next;
}

function loopHit(
  record: LoopRecord,
  limits: Required<LoopDetectionOptions>,
  call: ToolCall,
  result: ToolResultMessage,
): LoopHit | undefined {
  const base = { toolName: call.name, toolCallId: call.id };
  if (result.isError && record.failures >= limits.maxIdenticalFailures) {
    return { ...base, kind: "failing", count: record.failures };
  }
  if (record.same >= limits.maxIdenticalCalls) return { ...base, kind: "repeated", count: record.same };
  return undefined;
}

function isSkipped(result: ToolResultMessage): boolean {
  return result.isError && result.content.length === 1 && result.content[0]!.type === "text"
    ? result.content[0]!.text === SKIPPED_TEXT
    : false;
}

/** How a loop is described to the model and the user. */
export function describeLoop(hit: LoopHit): string {
  return hit.kind === "failing"
    ? `${hit.toolName} failed ${hit.count} times with the same arguments`
    : `${hit.toolName} was called ${hit.count} times with the same arguments and got the same result each time`;
}

/** `customType` of the notice that tells the model it loops. */
export const LOOP_NOTICE_TYPE = "loop_notice";

/**
 * The notice that tells the model it loops, which the next turn appends: a custom message with
 * `source: "agent"`, like the limit notice, so an app tells it from what the user steered in. The
 * model reads it as a user message (the default `convertToLlm`).
 *
 * @example
 * ```ts
 * loopNotice({ toolName: "bash", toolCallId: "c7", kind: "failing", count: 3 });
 * // { role: "custom", customType: "loop_notice", source: "agent", content: "[Loop detected: bash failed 3 times ...]" }
 * ```
 */
export function loopNotice(
  hit: LoopHit,
  timestamp = Date.now(),
  id = PROCESS_MESSAGE_IDS.next(),
): CustomMessage {
  return {
    role: "custom",
    customType: LOOP_NOTICE_TYPE,
    content:
      `[Loop detected: ${describeLoop(hit)}. Repeating it will not help: change the arguments, ` +
      "try another approach, or stop and say what blocks you. If this call repeats again, the run is stopped.]",
    display: "model",
    details: { toolName: hit.toolName, toolCallId: hit.toolCallId, kind: hit.kind, count: hit.count },
    timestamp,
    id,
    source: "agent",
  };
}

/** The text after `[Agent stopped: ` when a loop ends the run. */
export function loopStopText(hit: LoopHit): string {
  return `Loop detected (${describeLoop(hit)}, after a warning)`;
}

/** Whether a transcript message is a loop notice. */
export function isLoopNotice(message: AgentMessage): boolean {
  return message.role === "custom" && message.customType === LOOP_NOTICE_TYPE;
}
