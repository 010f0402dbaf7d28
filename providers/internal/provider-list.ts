import type { Provider } from "../../core/provider.js";
import { describeValue } from "../../core/option-values.js";

/** Throws a `TypeError` naming the entry unless `models` is a non-empty array of providers. */
export function checkProviderList(where: string, models: readonly Provider[]): void {
  if (!Array.isArray(models) || models.length === 0) {
    throw new TypeError(
      `${where}: models must be a non-empty array of providers, got ${describeValue(models)}`,
    );
  }
  models.forEach((model, index) => {
    const candidate = model as Partial<Provider> | null;
    if (candidate === null || typeof candidate !== "object" || typeof candidate.stream !== "function") {
      throw new TypeError(`${where}: models[${index}] is ${describeValue(model)}, not a provider`);
    }
  });
}
