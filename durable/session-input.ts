import { TerminalError } from "@restatedev/restate-sdk";
import { z } from "zod";
import type { AgentMessage, CustomMessage, UserMessage } from "../core/messages.js";
import type { InboxKind } from "../core/effect-journal.js";

// What the handlers accept from outside, checked before anything is stored: a bad request gets a
// 400 that says what is wrong, and the session's state is not touched.

const text = z.object({ type: z.literal("text"), text: z.string() });
const image = z.object({ type: z.literal("image"), data: z.string(), mimeType: z.string() });
const content = z.union([z.string(), z.array(z.union([text, image]))], {
  error: 'must be text, or a list of { type: "text", text } and { type: "image", data, mimeType } parts',
});
const timestamp = z.number().finite().optional();
/** A client may name its own message (an AI SDK `UIMessage.id`, an AG-UI message id). */
const id = z.string().min(1).max(256).optional();

/**
 * What brought a message (a wake's `"schedule"`, `"event"`, `"laterResult"`): a label the UI and
 * the traces read, kept with the message; it grants nothing.
 */
const source = z
  .enum(["prompt", "steer", "followUp", "agent", "schedule", "event", "laterResult"])
  .optional();
const userMessage = z.object({ role: z.literal("user"), content, timestamp, id, source }).strict();
const customMessage = z
  .object({
    role: z.literal("custom"),
    customType: z.string().min(1),
    content,
    display: z.enum(["model", "ui-only"]).optional(),
    details: z.unknown().optional(),
    timestamp,
    id,
  })
  .strict();

const nonEmptyText = z.string().refine((s) => s.trim().length > 0, "the text is empty");
const PROMPT_SHAPES =
  'text, a user message ({ role: "user", content }), or a list of user and custom messages';
const QUEUED_SHAPES = 'text or a user message ({ role: "user", content })';

/** A 400 that names the handler and says what is wrong with its input. */
export function badRequest(what: string, detail: string): TerminalError {
  return new TerminalError(`${what}: ${detail}`, { errorCode: 400 });
}

function parse<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const result = schema.safeParse(input);
  if (!result.success) throw badRequest(what, issuesText(result.error));
  return result.data;
}

function issuesText(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length ? `${issue.path.join(".")} ${issue.message}` : issue.message))
    .join("; ");
}

/** Checks a message against the schema its role calls for, so the error names the field that is wrong. */
function parseMessage(
  input: unknown,
  what: string,
  shapes: string,
  allowCustom: boolean,
): UserMessage | CustomMessage {
  const role = input && typeof input === "object" ? (input as { role?: unknown }).role : undefined;
  if (role === "user") return withContent(parse(userMessage, input, what) as UserMessage, what);
  if (role === "custom" && allowCustom) return parse(customMessage, input, what) as CustomMessage;
  if (typeof role === "string")
    throw badRequest(what, `a message with role "${role}" cannot be sent; expected ${shapes}`);
  throw badRequest(what, `expected ${shapes}, got ${describe(input)}`);
}

/**
 * A user message says something: blank text or no parts is refused as the text form is, never
 * stored as a turn the model answers to nothing (the HTTP host refuses the same).
 */
function withContent(message: UserMessage, what: string): UserMessage {
  const { content } = message;
  if (typeof content === "string") checkedText(content, what);
  else if (content.length === 0) throw badRequest(what, "content has no parts");
  return message;
}

function describe(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "an array";
  if (typeof input === "object") return "an object without a role";
  return typeof input === "string" ? "text" : `a ${typeof input}`;
}

/**
 * `text` when it has more than whitespace: what {@link nonEmptyText} checks, without zod's parse on
 * every prompt's path (a run parses its input twice); the same 400 when it has not.
 */
function checkedText(text: string, what: string): string {
  if (text.trim().length > 0) return text;
  return parse(nonEmptyText, text, what);
}

type Stampable = { timestamp?: number };
const stamp = <T extends Stampable>(message: T, now: number): T & { timestamp: number } => ({
  ...message,
  timestamp: message.timestamp ?? now,
});

/**
 * The messages a prompt starts a run with: text, a user message, or a list of user / custom
 * messages. Assistant and tool-result messages are refused: only the run writes those.
 *
 * @example
 * ```ts
 * parsePromptInput("Hi", 1_700_000_000_000); // [{ role: "user", content: "Hi", timestamp: 1700000000000 }]
 * ```
 */
export function parsePromptInput(input: unknown, now: number): AgentMessage[] {
  const what = "Invalid prompt";
  if (typeof input === "string") return [{ role: "user", content: checkedText(input, what), timestamp: now }];
  if (Array.isArray(input)) {
    if (input.length === 0) throw badRequest(what, "the list has no messages");
    return input.map((m, i) => stamp(parseMessage(m, `${what} (message ${i})`, PROMPT_SHAPES, true), now));
  }
  return [stamp(parseMessage(input, what, PROMPT_SHAPES, true), now)];
}

/**
 * A steering or follow-up message: text or a user message.
 *
 * @example
 * ```ts
 * parseQueuedInput({ role: "user", content: "also check Porto" }, "steer", Date.now());
 * ```
 */
export function parseQueuedInput(input: unknown, what: string, now: number): UserMessage {
  const label = `Invalid ${what} message`;
  if (typeof input === "string") return { role: "user", content: checkedText(input, label), timestamp: now };
  return stamp(parseMessage(input, label, QUEUED_SHAPES, false) as UserMessage, now);
}

// The handlers' request shapes, built once: a zod schema compiles its checks on first use, which
// costs more than the parse itself (the run's drain and closeBell calls are on every run's path).
const toolCallId = z.string().min(1);
const DECISION_SCHEMAS = {
  approve: z.object({ toolCallId, args: z.unknown().optional(), dryRun: z.boolean().optional() }).strict(),
  deny: z.object({ toolCallId, reason: z.string().optional() }).strict(),
};
const CLIENT_ANSWER_SCHEMAS: Record<
  "resolveToolCall" | "rejectToolCall",
  z.ZodType<{ toolCallId: string; result?: unknown; reason?: string }>
> = {
  resolveToolCall: z.object({ toolCallId, result: z.unknown() }).strict(),
  rejectToolCall: z.object({ toolCallId, reason: z.string() }).strict(),
};
const FROM_SCHEMA = z.object({ from: z.number().int().min(0).optional() }).strict();
const EVENTS_SCHEMA = z
  .object({
    runId: z.string().min(1),
    since: z.number().int().min(0).optional(),
  })
  .strict();
const UPDATES_SCHEMA = z
  .object({
    from: z.number().int().min(0).optional(),
    runId: z.string().min(1).optional(),
    since: z.number().int().min(0).optional(),
    events: EVENTS_SCHEMA.optional(),
  })
  .strict();
const inboxKind = z.enum(["steering", "followUp"]);
const queueMode = z.enum(["one-at-a-time", "all"]);
const DRAIN_SCHEMA = z
  .object({
    kind: inboxKind,
    mode: queueMode,
    bell: z
      .object({ id: z.string().min(1), runId: z.string().min(1) })
      .strict()
      .optional(),
    peek: z.boolean().optional(),
    wake: z.object({ steeringMode: queueMode, followUpMode: queueMode }).strict().optional(),
    first: z.literal(true).optional(),
  })
  .strict();
const BELL_SCHEMA = z.object({ bell: z.string().min(1), ran: z.boolean().optional() }).strict();
const REQUEUE_SCHEMA = z.object({ kind: inboxKind, messages: z.array(z.any()) }).strict();

/** The tool call id an approval or denial names. */
export function parseDecision(
  input: unknown,
  what: "approve" | "deny",
): { toolCallId: string; reason?: string; args?: unknown; dryRun?: boolean } {
  return parse(DECISION_SCHEMAS[what], input, `Invalid ${what} request`) as {
    toolCallId: string;
    reason?: string;
    args?: unknown;
    dryRun?: boolean;
  };
}

/** The call a client answers, with its result (`resolveToolCall`) or the reason it failed (`rejectToolCall`). */
export function parseClientAnswer(
  input: unknown,
  what: "resolveToolCall" | "rejectToolCall",
): { toolCallId: string; result?: unknown; reason?: string } {
  return parse(CLIENT_ANSWER_SCHEMAS[what], input, `Invalid ${what} request`) as {
    toolCallId: string;
    result?: unknown;
    reason?: string;
  };
}

/** Where a reader of the transcript starts (`{ from }`, default 0). */
export function parseFrom(input: unknown): number {
  if (input === undefined || input === null) return 0;
  return parse(FROM_SCHEMA, input, "Invalid request").from ?? 0;
}

/** What a follower asks `updates` for: messages from `from`, or run `runId`'s from its seq `since`. */
export function parseUpdatesRequest(input: unknown): {
  from: number;
  runId?: string;
  since?: number;
  events?: { runId: string; since?: number };
} {
  const parsed = parse(UPDATES_SCHEMA, input ?? {}, "Invalid updates request");
  if (parsed.since !== undefined && parsed.runId === undefined)
    throw badRequest("Invalid updates request", "since needs the runId it counts in");
  return { ...parsed, from: parsed.from ?? 0 };
}

/** What `AgentSession.events` takes: a run, and the seq of the first event wanted (default 0). */
export function parseEventsRequest(input: unknown): { runId: string; since: number } {
  const parsed = parse(EVENTS_SCHEMA, input, "Invalid events request");
  return { runId: parsed.runId, since: parsed.since ?? 0 };
}

/** What the run asks the inbox for at a check (with the doorbell it hands over). */
export function parseDrain(input: unknown): DrainInput {
  return parse(DRAIN_SCHEMA, input, "Invalid drain request");
}

type DrainInput = z.infer<typeof DRAIN_SCHEMA>;

/** The doorbell a run takes back as it ends. */
export function parseBell(input: unknown): { bell: string; ran?: boolean } {
  return parse(BELL_SCHEMA, input, "Invalid closeBell request");
}

/** Messages a run hands back to the inbox (taken by a check the run did not reach). */
export function parseRequeue(input: unknown): { kind: InboxKind; messages: AgentMessage[] } {
  return parse(REQUEUE_SCHEMA, input, "Invalid requeue request") as {
    kind: InboxKind;
    messages: AgentMessage[];
  };
}
