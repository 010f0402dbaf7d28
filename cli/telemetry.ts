import type { TracerProvider } from "@opentelemetry/api";
import { redactText } from "../core/redact.js";

/** The command's trace export, when `OTEL_EXPORTER_OTLP_ENDPOINT` asks for one. */
export interface CliTracing {
  /** Pass as `createAgent({ telemetry: { tracerProvider } })`. */
  provider: TracerProvider;
  /** Where spans go (`…/v1/traces`). */
  url: string;
  /** Sends what is buffered and stops; waits at most `timeoutMs`. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** What {@link startTracingForCli} decided: tracing, a notice for the user, or nothing to do. */
export type CliTracingSetup = { tracing?: CliTracing; notice?: string };

/** The OTLP/HTTP traces URL the standard variables name, or undefined when none is set. */
export function otlpTracesUrl(env: Record<string, string | undefined>): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

/**
 * Starts exporting traces over OTLP/HTTP (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, unless `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. The SDK and exporter are loaded only then; where they are not
 * installed the notice says how to add them and the command goes on without traces.
 * `OTEL_SERVICE_NAME` names the service (default `agent-machine`); `OTEL_EXPORTER_OTLP_HEADERS`
 * is read by the exporter.
 *
 * @example
 * ```ts
 * const { tracing, notice } = await startTracingForCli(process.env);
 * const agent = createAgent({ provider, telemetry: tracing && { tracerProvider: tracing.provider } });
 * ```
 */
export async function startTracingForCli(env: Record<string, string | undefined>): Promise<CliTracingSetup> {
  const url = otlpTracesUrl(env);
  if (!url) return {};
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === "true" || env.OTEL_TRACES_EXPORTER?.trim() === "none") {
    return {};
  }
  let modules;
  try {
    modules = await Promise.all([
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/api"),
    ]);
  } catch {
    return {
      notice:
        "OTEL_EXPORTER_OTLP_ENDPOINT is set, but the OpenTelemetry SDK is not installed; going on without traces. " +
        "Add it with: npm install @opentelemetry/sdk-trace-base @opentelemetry/exporter-trace-otlp-http @opentelemetry/resources",
    };
  }
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    api,
  ] = modules;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME?.trim() || "agent-machine" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  // Global too, so tools that trace themselves join the agent's trace.
  api.trace.setGlobalTracerProvider(provider);
  return {
    tracing: {
      provider,
      url,
      async shutdown(timeoutMs = 5_000) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          provider.shutdown().catch(() => undefined),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
        ]);
        clearTimeout(timer);
      },
    },
    // A collector's URL may carry its credentials (`https://user:token@…`): the notice leaves them out.
    notice: `Traces: OTLP/HTTP to ${redactText(url)}`,
  };
}
