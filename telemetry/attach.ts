import { type AnyActorRef } from "xstate";
import type { AgentEvent } from "../core/events.js";
import type { AgentOptions } from "../core/options.js";
import type { AgentRuntime } from "../core/runtime.js";
import { type AgentTracing, createAgentTracing } from "./agent-tracing.js";
import { registeredTracerProvider, ROOT_CONTEXT, setSpan } from "./otel-global.js";
import { traceparentOf, type WakeCause } from "./wake-cause.js";

/** The instrumentation scope of our spans. */
export const TRACER_NAME = "agent-machine";

/** Every agent by its root actor: its tracing, or `null` when it is not traced. */
const tracings = new WeakMap<object, AgentTracing | null>();

/** Every traced agent by the object `createAgent` returned (its key never moves, unlike the actor's). */
const agentTracings = new WeakMap<object, AgentTracing>();

/**
 * Whether a real tracer provider is registered globally. Without one the API hands out no-op
 * tracers, and agents are not traced at all (no subscription, no spans): zero cost.
 *
 * @example
 * ```ts
 * if (!globalTracingRegistered()) console.log("no OpenTelemetry SDK registered");
 * ```
 */
export function globalTracingRegistered(): boolean {
  return registeredTracerProvider(TRACER_NAME) !== undefined;
}

/**
 * Hands an agent's tracing to its new root actor: a hibernated agent gets one when it wakes (the
 * key before the first wake is the agent itself), and its sub-agents find the tracing through it.
 *
 * @example
 * ```ts
 * moveTelemetry(previousActor, wokenActor);
 * ```
 */
export function moveTelemetry(from: object, to: object): void {
  if (tracings.has(from)) tracings.set(to, tracings.get(from)!);
}

/** A tool call's actor (its id is the call's id), as the tool-call machine's context shows it. */
interface ToolCallActorContext {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/**
 * The agent above `actor` (the nearest) and its tool call that leads down to `actor`: the tracing
 * of that agent (`null` when it is not traced) and the call.
 */
function agentAbove(
  actor: AnyActorRef,
): { tracing: AgentTracing | null; call?: ToolCallActorContext } | undefined {
  let call: ToolCallActorContext | undefined;
  for (let current: unknown = actor; current; current = (current as { _parent?: unknown })._parent) {
    if (tracings.has(current as object)) return { tracing: tracings.get(current as object)!, call };
    const ref = current as AnyActorRef;
    const context = ref.getSnapshot?.()?.context as Partial<ToolCallActorContext> | undefined;
    if (context?.toolCallId === ref.id && typeof context.toolName === "string") {
      call = { toolCallId: context.toolCallId, toolName: context.toolName, args: context.args };
    }
  }
  return undefined;
}

/** What `createAgent` hands over: the agent's root actor, id, event stream and runtime. */
export interface TracedAgent {
  id: string;
  /** Its root actor, or (for an agent created hibernated) a key {@link moveTelemetry} later moves to it. */
  actor: AnyActorRef | object;
  runtime: AgentRuntime;
  subscribe(listener: (event: AgentEvent) => void, onComplete: () => void): void;
}

/**
 * Traces an agent when it should be: `telemetry: false` never; a sub-agent of a traced agent
 * always (its runs go below the `execute_tool` span of the call that runs it); otherwise when
 * `telemetry.tracerProvider` is given or a tracer provider is registered globally. Called once by
 * `createAgent`; an agent it does not trace costs nothing more.
 *
 * @example
 * ```ts
 * attachTelemetry({ id, actor, runtime, subscribe }, options);
 * ```
 */
export function attachTelemetry(agent: TracedAgent, options: AgentOptions): void {
  const above = options.parentActor ? agentAbove(options.parentActor) : undefined;
  const parent = above?.tracing ?? undefined;
  const own = options.telemetry === false ? undefined : options.telemetry;
  if (
    options.telemetry === false ||
    (!own?.tracerProvider && !parent && (above?.tracing === null || !globalTracingRegistered()))
  ) {
    tracings.set(agent.actor, null);
    return;
  }

  const tracer = own?.tracerProvider
    ? own.tracerProvider.getTracer(TRACER_NAME)
    : (parent?.tracer ?? registeredTracerProvider(TRACER_NAME)!.getTracer(TRACER_NAME));
  const recordContent =
    own?.recordContent ??
    parent?.recordContent ??
    envFlag("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT");

  // A sub-agent's runs hang below the span of the tool call that started it.
  const call = parent ? above?.call : undefined;
  const tracing = createAgentTracing({
    tracer,
    recordContent,
    agentId: agent.id,
    agentName: own?.agentName ?? call?.toolName ?? options.id ?? "agent",
    conversationId: own?.conversationId,
    runtime: agent.runtime,
    ...(call && parent && { parentContext: () => setSpan(ROOT_CONTEXT, parent.toolSpan(call)) }),
  });
  tracings.set(agent.actor, tracing);
  agentTracings.set(agent.actor, tracing);
  agent.subscribe(
    (event) => tracing.handle(event),
    () => tracing.close(),
  );
}

/**
 * Tells a traced agent what the message `messageId` it is about to take woke it for: the run that
 * takes it gets a span link to the cause and `agent_machine.wake.*` attributes. A no-op for an
 * agent that is not traced.
 *
 * @example
 * ```ts
 * noteWakeCause(agent, "event_gh_81", { source: "event", id: "gh_81", traceparent });
 * ```
 */
export function noteWakeCause(agent: object, messageId: string, cause: WakeCause): void {
  agentTracings.get(agent)?.wokenBy(messageId, cause);
}

/**
 * The `traceparent` of the `execute_tool` span of the call `actor` runs (a tool's `ctx.actor`), when
 * its agent is traced: what a result that comes later links back to.
 *
 * @example
 * ```ts
 * const traceparent = toolCallTraceparent(ctx.actor);
 * ```
 */
export function toolCallTraceparent(actor: AnyActorRef | undefined): string | undefined {
  if (!actor) return undefined;
  const above = agentAbove(actor);
  if (!above?.tracing || !above.call) return undefined;
  return traceparentOf(above.tracing.toolSpan(above.call).spanContext());
}

/** A `true` environment variable; in a browser (no `process`), never. */
function envFlag(name: string): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name]?.toLowerCase() === "true";
}
