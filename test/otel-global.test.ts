import {
  context,
  isSpanContextValid as apiIsValid,
  ROOT_CONTEXT as API_ROOT,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { afterEach, describe, expect, it } from "vitest";
import {
  activeSpan,
  isSpanContextValid,
  registeredTracerProvider,
  ROOT_CONTEXT,
  setSpan,
  withContext,
} from "../telemetry/otel-global.js";
import { createTestTracing } from "./fixtures/otel.js";

// The core path reads OpenTelemetry's global registry instead of importing @opentelemetry/api
// (issue 44): what it reads and writes must be what the API itself reads and writes.

afterEach(() => {
  trace.disable();
  context.disable();
});

describe("OpenTelemetry through the API's global registry", () => {
  it("finds the tracer provider an app registered, and none before or after", () => {
    expect(registeredTracerProvider("agent-machine")).toBeUndefined();
    const tracing = createTestTracing();
    trace.setGlobalTracerProvider(tracing.provider);
    const tracer = registeredTracerProvider("agent-machine")!.getTracer("agent-machine");
    tracer.startSpan("probe").end();
    expect(tracing.spans().map((span) => span.name)).toEqual(["probe"]);
    trace.disable();
    expect(registeredTracerProvider("agent-machine")).toBeUndefined();
  });

  it("makes contexts the API reads, and reads the API's active span", () => {
    const span = trace.wrapSpanContext({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: 1,
    });
    expect(trace.getSpan(setSpan(ROOT_CONTEXT, span))).toBe(span);
    expect(trace.getSpan(ROOT_CONTEXT)).toBeUndefined();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    context.with(trace.setSpan(API_ROOT, span), () => {
      expect(activeSpan()).toBe(span);
      withContext(ROOT_CONTEXT, () => expect(trace.getActiveSpan()).toBeUndefined());
    });
  });

  it("judges span contexts as the API does", () => {
    const ids = [
      "4bf92f3577b34da6a3ce929d0e0e4736",
      "0".repeat(32),
      "4BF92F3577B34DA6A3CE929D0E0E4736",
      "xyz",
      "",
    ];
    const spans = ["00f067aa0ba902b7", "0".repeat(16), "00f067aa0ba902", "00f067aa0ba902bg"];
    for (const traceId of ids)
      for (const spanId of spans) {
        const spanContext = { traceId, spanId, traceFlags: 1 };
        expect(isSpanContextValid(spanContext), `${traceId}/${spanId}`).toBe(apiIsValid(spanContext));
      }
  });
});
