import type { ModelPlan, Provider, ProviderRequest } from "../core/provider.js";
import { checkProviderList } from "./internal/provider-list.js";

/** The models a {@link route} chooses from, and how it chooses. */
export interface RouteOptions {
  /** Every model the router may choose (a `fallback` chain counts as one). The first is the default. */
  models: readonly Provider[];
  /**
   * Chooses the model of one call from its request: its size, its tools, whether images are
   * attached, or anything your app knows (a user's tier). Must return one of `models`.
   */
  choose(request: ProviderRequest): Provider;
}

/**
 * A provider that chooses the model per call, by a function of the request. The message records
 * the model that answered, like any other; a chosen `fallback` chain fails over as usual.
 *
 * @example
 * ```ts
 * const cheap = openai({ model: "gpt-5-mini" });
 * const strong = anthropic({ model: "claude-sonnet-4-5" });
 * const provider = route({
 *   models: [cheap, strong],
 *   choose: (request) => (request.tools.length > 5 || hasImages(request) ? strong : cheap),
 * });
 * ```
 */
export function route(options: RouteOptions): Provider {
  if (options === null || typeof options !== "object" || typeof options.choose !== "function") {
    throw new TypeError("route: options must be { models, choose } with choose a function of the request");
  }
  const { models, choose } = options;
  checkProviderList("route", models);
  const allowed = new Set(models);
  const single = new Map<Provider, ModelPlan>();
  const first = models[0]!;
  const chosen = (request: ProviderRequest): Provider => {
    const model = choose(request);
    if (!allowed.has(model)) {
      throw new TypeError(`route: choose returned ${describeChoice(model)}, which is not one of its models`);
    }
    return model;
  };
  return {
    id: first.id,
    model: first.model,
    members: models,
    plan(request) {
      const model = chosen(request);
      if (model.plan) return model.plan(request);
      let plan = single.get(model);
      if (!plan) single.set(model, (plan = { models: [model], fallsOver: () => false }));
      return plan;
    },
    stream(request, signal) {
      return chosen(request).stream(request, signal);
    },
  };
}

function describeChoice(model: unknown): string {
  const candidate = model as Partial<Provider> | null;
  return candidate && typeof candidate === "object" && typeof candidate.model === "string"
    ? `a provider of model "${candidate.model}"`
    : String(model);
}
