/**
 * Loads an optional peer dependency (an SDK only the users of one provider install) on first use,
 * once. Importing agent-machine never loads it, so a user of another provider needs none of them.
 *
 * @example
 * ```ts
 * const genai = await loadOptionalPeer<typeof import("@google/genai")>("@google/genai", () => import("@google/genai"));
 * ```
 */
export async function loadOptionalPeer<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new MissingPeerError(`This provider needs the package ${name}: npm install ${name}`);
    throw error;
  }
}

/** Thrown by {@link loadOptionalPeer} when the package is not installed. */
export class MissingPeerError extends Error {
  override name = "MissingPeerError";
}
