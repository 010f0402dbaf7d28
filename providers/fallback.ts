import type {
  ModelPlan,
  Provider,
  ProviderErrorKind,
  ProviderEvent,
  ProviderFailure,
  ProviderRequest,
} from "../core/provider.js";
import { type CircuitBreakerOptions, createCircuitBreaker } from "./circuit-breaker.js";
import { checkProviderList } from "./internal/provider-list.js";

/**
 * What hands a call to the next model: a failure kind, or (narrower than `network`) a stream the
 * stall watchdog gave up (`stall`) or a server that could not be reached (`unreachable`).
 */
export type FallbackTrigger = ProviderErrorKind | "stall" | "unreachable";

/** How a {@link fallback} chain moves from one model to the next. */
export interface FallbackOptions {
  /**
   * The failures that hand the call to the next model. Default `["overloaded", "rate_limit",
   * "network"]`: overload and 5xx, a rate limit, a dropped, stalled or refused connection. An auth
   * error or a context overflow fails the call unless you name it; an abort never falls over.
   */
  on?: readonly FallbackTrigger[];
  /** Retries of a model (with the agent's backoff) before such a failure falls over. Default 0: at once. */
  retries?: number;
  /**
   * Keeps a model that keeps failing out of the chain for a while, and a model whose server asked
   * for a wait (`retry-after`) out for that wait; `false`: never. Default `{}`.
   */
  breaker?: CircuitBreakerOptions | false;
}

const DEFAULT_TRIGGERS: readonly FallbackTrigger[] = ["overloaded", "rate_limit", "network"];
const TRIGGERS = new Set<FallbackTrigger>([
  "context_overflow",
  "rate_limit",
  "overloaded",
  "auth",
  "network",
  "api",
  "stall",
  "unreachable",
]);

/**
 * A provider made of an ordered list of models (different vendors allowed). Each call goes to the
 * first model; a failure `on` names hands it to the next: the agent withdraws the failed attempt's
 * partial answer exactly as a retry does (`message_end` with `discarded: true`, so the UI protocols
 * show one answer), then streams the next model. The message records the model that answered
 * (`provider`, `model`, its usage and cost). Thinking signatures of one vendor are never sent to
 * another. A circuit breaker skips a model that failed `failures` calls in a row for `cooldownMs`.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider: fallback([anthropic({ model: "claude-sonnet-4-5" }), openai({ model: "gpt-5" })], {
 *     on: ["overloaded", "rate_limit", "network"],
 *     breaker: { failures: 3, cooldownMs: 60_000 },
 *   }),
 * });
 * ```
 */
export function fallback(models: readonly Provider[], options: FallbackOptions = {}): Provider {
  checkProviderList("fallback", models);
  const on = new Set(checkTriggers(options.on ?? DEFAULT_TRIGGERS));
  const retries = options.retries ?? 0;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new TypeError(`fallback: retries must be a whole number ≥ 0, got ${String(options.retries)}`);
  }
  const breaker = options.breaker === false ? undefined : createCircuitBreaker(options.breaker ?? {});
  const keys = new Map(models.map((model, index) => [model, String(index)]));
  const matches = (failure: ProviderFailure) => fallbackMatches(failure, on);

  const everyModel: ModelPlan = {
    models,
    fallsOver: (failure, _index, tried) => tried >= retries && matches(failure),
    settled(model, failure) {
      if (!breaker) return;
      if (!failure) breaker.record(keys.get(model)!, true);
      else if (matches(failure)) breaker.record(keys.get(model)!, false, failure.retryAfterMs);
    },
  };
  const first = models[0]!;
  return {
    id: first.id,
    model: first.model,
    ...(maxOutputOf(models) !== undefined && { maxOutputTokens: maxOutputOf(models)! }),
    members: models,
    plan() {
      if (!breaker) return everyModel;
      let open = false;
      for (const model of models) if (!breaker.allows(keys.get(model)!)) open = true;
      if (!open) return everyModel;
      const allowed = models.filter((model) => breaker.allows(keys.get(model)!));
      // Every model is out: trying them all beats failing without asking any.
      return allowed.length === 0 ? everyModel : { ...everyModel, models: allowed };
    },
    stream(request, signal) {
      return streamChain(models, request, signal, matches);
    },
  };
}

/**
 * Whether a failure is one `on` names. `aborted` never is: the user stopped the call.
 *
 * @example
 * ```ts
 * fallbackMatches({ type: "error", kind: "overloaded", message: "529" }, new Set(["overloaded"])); // true
 * ```
 */
export function fallbackMatches(failure: ProviderFailure, on: ReadonlySet<FallbackTrigger>): boolean {
  if (failure.kind === "aborted") return false;
  if (on.has(failure.kind)) return true;
  if (failure.stalled && on.has("stall")) return true;
  return failure.unreachable === true && on.has("unreachable");
}

function checkTriggers(on: readonly FallbackTrigger[]): readonly FallbackTrigger[] {
  if (!Array.isArray(on)) throw new TypeError(`fallback: on must be an array of failure kinds`);
  for (const trigger of on) {
    if (!TRIGGERS.has(trigger)) {
      throw new TypeError(
        `fallback: on has ${JSON.stringify(trigger)}, not one of ${[...TRIGGERS].map((t) => `"${t}"`).join(", ")}`,
      );
    }
  }
  return on;
}

function maxOutputOf(models: readonly Provider[]): number | undefined {
  let max: number | undefined;
  for (const model of models) {
    if (model.maxOutputTokens === undefined) return undefined;
    max = Math.max(max ?? 0, model.maxOutputTokens);
  }
  return max;
}

/**
 * The chain streamed by whoever calls `stream()` itself (a summarizer, not the agent): a model
 * that fails before it said anything hands over to the next; once one spoke, its failure stands,
 * since what it said cannot be withdrawn here.
 */
async function* streamChain(
  models: readonly Provider[],
  request: ProviderRequest,
  signal: AbortSignal,
  matches: (failure: ProviderFailure) => boolean,
): AsyncGenerator<ProviderEvent> {
  for (let index = 0; index < models.length; index++) {
    const last = index === models.length - 1;
    let spoke = false;
    let failure: ProviderFailure | undefined;
    try {
      for await (const event of models[index]!.stream(request, signal)) {
        if (event.type === "error" && !spoke && !last && matches(event)) {
          failure = event;
          break;
        }
        if (event.type !== "start") spoke = true;
        yield event;
        if (event.type === "done" || event.type === "error") return;
      }
    } catch (error) {
      if (spoke || last || signal.aborted) throw error;
      continue;
    }
    if (!failure) return;
  }
}
