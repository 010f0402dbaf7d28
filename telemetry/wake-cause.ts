import type { SpanContext } from "@opentelemetry/api";
import { activeSpan, isSpanContextValid, TRACE_FLAG_SAMPLED } from "./otel-global.js";

/**
 * What woke a run: the wake's kind and id (a schedule's, an event's, a late result's handle), and
 * the span that caused it as a W3C `traceparent` (the span that made the schedule, the request that
 * delivered the event, the tool call that started the work), kept as text so a store can hold it.
 */
export interface WakeCause {
  source: "schedule" | "event" | "laterResult";
  /** The schedule's id, the sender's event id, or the late result's handle. */
  id: string;
  /** The causing span, `00-<trace id>-<span id>-<flags>`; absent when nothing was traced. */
  traceparent?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` of a span context; `undefined` for none or an invalid one.
 *
 * @example
 * ```ts
 * traceparentOf(span.spanContext()); // "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
 * ```
 */
export function traceparentOf(context: SpanContext | undefined): string | undefined {
  if (!context || !isSpanContextValid(context)) return undefined;
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/**
 * The span context a `traceparent` names, marked remote; `undefined` for text that is not one
 * (a sender's header is input: a bad one costs the link, never the wake).
 *
 * @example
 * ```ts
 * spanContextOf("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")?.spanId; // "00f067aa0ba902b7"
 * ```
 */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const match = typeof traceparent === "string" ? TRACEPARENT.exec(traceparent.trim()) : null;
  if (!match) return undefined;
  const context: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16) & TRACE_FLAG_SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(context) ? context : undefined;
}

/**
 * The `traceparent` of the span active now (with a context manager registered, as the SDKs do):
 * what a schedule made or an event delivered inside a traced request links to.
 *
 * @example
 * ```ts
 * const record = { ...schedule, traceparent: activeTraceparent() };
 * ```
 */
export function activeTraceparent(): string | undefined {
  return traceparentOf(activeSpan()?.spanContext());
}
