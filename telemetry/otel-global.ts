import type {
  Context,
  ContextManager,
  Span,
  SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  TracerProvider,
} from "@opentelemetry/api";

// OpenTelemetry without importing `@opentelemetry/api` (issue 44): the API is ~40 CommonJS files a
// cold start pays for even when nothing is traced, and a dynamic import of it broke a bundler's
// one-file build. Everything an app registers with the API lives in one object on the global, under
// a key every copy of the API 1.x shares (`internal/global-utils.js`); span contexts carry the
// active span under a key made by `Symbol.for` (`trace/context-utils.js`), for the same reason. So
// tracing needs only what an app that traces has already put there: its tracer provider and its
// context manager. Only types are imported here.

/** Where `@opentelemetry/api` 1.x keeps what an app registered (`Symbol.for("opentelemetry.js.api.1")`). */
const REGISTRY = Symbol.for("opentelemetry.js.api.1");

/** The context key of the active span, as the API makes it. */
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

/** The registry's shape: the API's version and what was registered by kind. */
interface Registry {
  version?: string;
  trace?: TracerProvider & { getDelegateTracer?: (name: string) => unknown };
  context?: ContextManager;
}

function registry(): Registry | undefined {
  const found = (globalThis as Record<symbol, Registry | undefined>)[REGISTRY];
  // The key names the major version; a registry of another shape is not the API's.
  return typeof found === "object" && found !== null && typeof found.version === "string" ? found : undefined;
}

/** `SpanKind` values (the API's enum, which is runtime code there). */
export const SPAN_KIND = {
  INTERNAL: 0 as SpanKind.INTERNAL,
  CLIENT: 2 as SpanKind.CLIENT,
} as const;

/** `SpanStatusCode.ERROR`. */
export const STATUS_ERROR = 2 as SpanStatusCode.ERROR;

/** `TraceFlags.SAMPLED`. */
export const TRACE_FLAG_SAMPLED = 1 as TraceFlags.SAMPLED;

/** An immutable context, as the API's own `BaseContext` is (an app's SDK reads it by `getValue`). */
function contextOf(values: ReadonlyMap<symbol, unknown>): Context {
  return {
    getValue: (key) => values.get(key),
    setValue: (key, value) => contextOf(new Map(values).set(key, value)),
    deleteValue: (key) => {
      const next = new Map(values);
      next.delete(key);
      return contextOf(next);
    },
  };
}

/**
 * The empty context (the API's `ROOT_CONTEXT`): a span started in it starts a new trace.
 *
 * @example
 * ```ts
 * withContext(ROOT_CONTEXT, () => agent.prompt("A trace of its own"));
 * ```
 */
export const ROOT_CONTEXT: Context = contextOf(new Map());

/**
 * The tracer provider an app registered with `trace.setGlobalTracerProvider`, or `undefined` when
 * none is (then the API would hand out no-op tracers, and nothing needs tracing).
 *
 * @example
 * ```ts
 * const tracer = registeredTracerProvider()?.getTracer("agent-machine");
 * ```
 */
export function registeredTracerProvider(probeName: string): TracerProvider | undefined {
  const provider = registry()?.trace;
  if (!provider || typeof provider.getTracer !== "function") return undefined;
  // The API registers its own proxy and hands it the app's provider: a proxy without one traces nothing.
  if (typeof provider.getDelegateTracer === "function" && provider.getDelegateTracer(probeName) === undefined)
    return undefined;
  return provider;
}

/**
 * The active context: the registered context manager's, or the root one when none is registered.
 *
 * @example
 * ```ts
 * const parent = activeContext();
 * ```
 */
export function activeContext(): Context {
  return registry()?.context?.active() ?? ROOT_CONTEXT;
}

/**
 * Runs `fn` with `context` active (through the registered context manager; without one there is no
 * active context to set, and `fn` just runs).
 *
 * @example
 * ```ts
 * withContext(ROOT_CONTEXT, () => agent.prompt(message));
 * ```
 */
export function withContext<T>(context: Context, fn: () => T): T {
  const manager = registry()?.context;
  return manager ? manager.with(context, fn) : fn();
}

/**
 * `context` with `span` as its active span (the API's `trace.setSpan`).
 *
 * @example
 * ```ts
 * tracer.startSpan("child", {}, setSpan(activeContext(), parentSpan));
 * ```
 */
export function setSpan(context: Context, span: Span): Context {
  return context.setValue(SPAN_KEY, span);
}

/**
 * The span active now (the API's `trace.getActiveSpan()`), with a context manager registered.
 *
 * @example
 * ```ts
 * const traceparent = traceparentOf(activeSpan()?.spanContext());
 * ```
 */
export function activeSpan(): Span | undefined {
  return (activeContext().getValue(SPAN_KEY) as Span | undefined) || undefined;
}

const HEX = /^[0-9a-f]+$/i;

function validId(id: unknown, length: number): boolean {
  return typeof id === "string" && id.length === length && HEX.test(id) && !/^0+$/.test(id);
}

/**
 * Whether a span context names a real span (the API's `isSpanContextValid`): a 32-digit hex trace
 * id and a 16-digit hex span id, neither all zeros.
 *
 * @example
 * ```ts
 * isSpanContextValid(span.spanContext()); // false for a no-op span
 * ```
 */
export function isSpanContextValid(context: SpanContext): boolean {
  return validId(context.traceId, 32) && validId(context.spanId, 16);
}
