import type { ProviderErrorKind } from "../core/provider.js";

export type {
  CacheRetention,
  ModelPlan,
  Provider,
  ProviderFailure,
  ProviderErrorKind,
  ProviderEvent,
  ProviderRequest,
  ToolSpec,
} from "../core/provider.js";

/** Provider error kinds worth retrying: the same request may well succeed a little later. */
export function isRetryableKind(kind: ProviderErrorKind): boolean {
  return kind === "rate_limit" || kind === "overloaded" || kind === "network";
}
