import type * as Api from "@opentelemetry/api";

/** The `@opentelemetry/api` module, as `import * as api from "@opentelemetry/api"` gives it. */
export type OtelApi = typeof Api;

/**
 * Where `@opentelemetry/api` 1.x keeps what an app registered (its tracer provider under `trace`,
 * its context manager under `context`): one object on the global, shared by every copy of the API
 * (see its `internal/global-utils`). An app that registered either has loaded the API already.
 */
const REGISTRY = Symbol.for("opentelemetry.js.api.1");

interface Registry {
  trace?: unknown;
  context?: unknown;
}

let api: OtelApi | undefined;
let loading: Promise<OtelApi | undefined> | undefined;

/** What the app registered with the API, without loading it. */
function registry(): Registry | undefined {
  return (globalThis as Record<symbol, Registry | undefined>)[REGISTRY];
}

/**
 * Whether an app registered a tracer provider with `@opentelemetry/api` (the API itself still
 * decides whether that registration counts): when not, and no agent was handed a provider, nothing
 * is traced and the API need not load (a cold start saves its ~40 files).
 *
 * @example
 * ```ts
 * if (!tracerProviderRegistered()) return; // nothing to trace
 * ```
 */
export function tracerProviderRegistered(): boolean {
  return registry()?.trace !== undefined;
}

/**
 * Whether an app registered a context manager: without one the active context is always the root
 * one (no active span, and `context.with` only calls its function).
 *
 * @example
 * ```ts
 * const traceparent = contextManagerRegistered() ? otelApi()?.trace.getActiveSpan() : undefined;
 * ```
 */
export function contextManagerRegistered(): boolean {
  return registry()?.context !== undefined;
}

/** Node's `require` for this file, where the runtime hands out its `module` built-in without an import. */
function nodeRequire(): ((id: string) => unknown) | undefined {
  const process = (
    globalThis as {
      process?: {
        getBuiltinModule?: (id: string) => { createRequire?: (from: string) => (id: string) => unknown };
      };
    }
  ).process;
  return process?.getBuiltinModule?.("module")?.createRequire?.(import.meta.url);
}

/**
 * `@opentelemetry/api`, loaded the first time tracing needs it: synchronously where the runtime can
 * (Node 20.16+, Deno, Bun: the same module an `import` gives, as Node loads the API's CommonJS build
 * either way); elsewhere (a browser) `undefined` until {@link loadOtelApi} resolves.
 *
 * @example
 * ```ts
 * const otel = otelApi();
 * if (otel) otel.context.with(otel.ROOT_CONTEXT, run);
 * ```
 */
export function otelApi(): OtelApi | undefined {
  if (api) return api;
  const require = nodeRequire();
  if (require) api = require("@opentelemetry/api") as OtelApi;
  else void loadOtelApi();
  return api;
}

/**
 * `@opentelemetry/api` by a dynamic import, for a runtime that cannot load it synchronously;
 * `undefined` when it is not installed.
 *
 * @example
 * ```ts
 * const otel = await loadOtelApi();
 * ```
 */
export function loadOtelApi(): Promise<OtelApi | undefined> {
  if (api) return Promise.resolve(api);
  loading ??= import("@opentelemetry/api").then(
    (module) => (api = module),
    () => undefined,
  );
  return loading;
}
