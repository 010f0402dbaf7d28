// The parts of the Stately inspector hook-up that run in a browser: the sanitizers and
// `createStatelyBrowserInspector`. Nothing here imports from Node (the `agent-machine/browser` entry).
import type { StatelyInspectionEvent } from "@statelyai/inspect";
import type { AnyEventObject, InspectionEvent, MachineContext, Observer } from "xstate";
import { type SanitizeOptions, sanitize } from "./sanitize.js";

/** Limits for a whole inspection event: loose, since the sanitizers already cut contexts and events. */
const ENVELOPE_LIMITS: SanitizeOptions = {
  maxStringLength: 1_000_000,
  maxArrayLength: 10_000,
  maxDepth: 32,
};

/**
 * The last line of defence before an inspection event leaves: secrets redacted by key name at any
 * depth, the machine definition of an actor registration included (it travels as a JSON string, whose
 * initial `context` a key-based pass over the event would not see).
 *
 * @example
 * ```ts
 * sanitizeInspectionEvent({ type: "@xstate.actor", definition: '{"context":{"apiKey":"sk-…"}}' });
 * // → { type: "@xstate.actor", definition: '{"context":{"apiKey":"[redacted]"}}' }
 * ```
 */
export function sanitizeInspectionEvent<T>(event: T): T {
  // The definition is redacted as the JSON it is, not as a text (which is for prose and commands).
  const definition = (event as { definition?: unknown } | undefined)?.definition;
  const rest =
    typeof definition === "string" ? { ...(event as object), definition: undefined } : (event as unknown);
  const clean = sanitize(rest, ENVELOPE_LIMITS) as T & { definition?: unknown };
  if (typeof definition === "string") {
    try {
      clean.definition = JSON.stringify(sanitize(JSON.parse(definition), ENVELOPE_LIMITS));
    } catch {
      clean.definition = undefined;
    }
  }
  return clean;
}

/** How much of each machine context and event reaches the inspector. */
export interface InspectorSanitizeOptions {
  /** Longest string kept in contexts and events (messages are cut). Default 500. */
  maxStringLength?: number;
  /** Longest array kept (a transcript keeps its first and last messages). Default 20. */
  maxArrayLength?: number;
  /** Deepest nesting kept. Default 8. */
  maxDepth?: number;
}

const inspectorLimits = (options: InspectorSanitizeOptions): SanitizeOptions => ({
  maxStringLength: options.maxStringLength ?? 500,
  maxArrayLength: options.maxArrayLength ?? 20,
  maxDepth: options.maxDepth ?? 8,
});

/**
 * The `sanitizeContext` / `sanitizeEvent` pair given to `@statelyai/inspect`: transcripts shrink to
 * their first and last messages with long texts cut, and anything named like a secret (`apiKey`,
 * `authorization`, `token`, `password`…) becomes `"[redacted]"`.
 *
 * @example
 * ```ts
 * const inspector = createBrowserInspector({ ...inspectorSanitizers({ maxStringLength: 200 }) });
 * ```
 */
export function inspectorSanitizers(options: InspectorSanitizeOptions = {}): {
  sanitizeContext: (context: MachineContext) => MachineContext;
  sanitizeEvent: (event: AnyEventObject) => AnyEventObject;
} {
  const limits = inspectorLimits(options);
  return {
    sanitizeContext: (context) => sanitize(context, limits) as MachineContext,
    sanitizeEvent: (event) => {
      const clean = sanitize(event, limits) as AnyEventObject;
      return { ...clean, type: String(event.type) };
    },
  };
}

/**
 * Cuts contexts and events down before `@statelyai/inspect` serializes them: it stringifies each
 * snapshot whole (a long transcript, every time) before its own `sanitizeContext` runs. Cutting first
 * keeps the cost per inspection event bounded by the limits, not by the transcript's length.
 */
export function shrinkingObserver(
  target: Observer<InspectionEvent>,
  sanitizers: ReturnType<typeof inspectorSanitizers>,
): Observer<InspectionEvent> {
  return {
    next(event) {
      if (event.type === "@xstate.snapshot") {
        const snapshot = event.snapshot as { context?: MachineContext };
        const shrunk =
          snapshot && typeof snapshot === "object" && snapshot.context !== undefined
            ? { ...snapshot, context: sanitizers.sanitizeContext(snapshot.context) }
            : snapshot;
        target.next?.({
          ...event,
          snapshot: shrunk as typeof event.snapshot,
          event: sanitizers.sanitizeEvent(event.event),
        });
        return;
      }
      if (event.type === "@xstate.event") {
        target.next?.({ ...event, event: sanitizers.sanitizeEvent(event.event) });
        return;
      }
      target.next?.(event);
    },
  };
}

/** Options of {@link createStatelyBrowserInspector}. */
export interface StatelyBrowserInspectorOptions extends InspectorSanitizeOptions {
  /** The inspector UI to open. Default `https://stately.ai/inspect`. */
  url?: string;
  /** Show the inspector in this iframe instead of a new window. */
  iframe?: HTMLIFrameElement | null;
  /** The window to run in (default: the global `window`). */
  window?: Window;
}

/**
 * The browser variant, for apps that run agents in a web page: `@statelyai/inspect`'s
 * `createBrowserInspector` (it opens the Stately inspector in a window or an iframe) with the same
 * sanitizers. Import it from `agent-machine/browser`, which pulls in nothing from Node, so a bundler
 * needs no stand-ins. Throws outside a browser; use `createStatelyInspector` in Node.
 *
 * @example
 * ```ts
 * import { createStatelyBrowserInspector } from "agent-machine/browser";
 * const inspector = await createStatelyBrowserInspector();
 * const actor = createActor(machine, { inspect: inspector.inspect }).start();
 * ```
 */
export async function createStatelyBrowserInspector(
  options: StatelyBrowserInspectorOptions = {},
): Promise<{ inspect: Observer<InspectionEvent>; stop(): void }> {
  const targetWindow = options.window ?? (typeof window === "undefined" ? undefined : window);
  if (!targetWindow) {
    throw new Error(
      "createStatelyBrowserInspector needs a browser window; in Node use createStatelyInspector()",
    );
  }
  // Loaded on first use: the browser entry (and a page's first paint) should not carry the inspector.
  const { createBrowserInspector } = await import("@statelyai/inspect");
  const sanitizers = inspectorSanitizers(options);
  const inspector = createBrowserInspector({
    ...sanitizers,
    // The last line of defence, as in Node: nothing named like a secret leaves, at any depth.
    serialize: (event) => sanitizeInspectionEvent(event) as StatelyInspectionEvent,
    window: targetWindow,
    ...(options.url !== undefined && { url: options.url }),
    ...(options.iframe !== undefined && { iframe: options.iframe }),
  });
  return { inspect: shrinkingObserver(inspector.inspect, sanitizers), stop: () => inspector.stop() };
}
