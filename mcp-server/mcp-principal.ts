// Who a request to the agents' MCP server acts for: what `authorize` said of it, made into the key
// a task (and a 2025-era MCP session) is bound to, so a task id alone reads, answers or cancels
// nothing of another caller's.
import { createHash } from "node:crypto";

/**
 * What an MCP server's `authorize` hook answers for one request: `false` refuses it (403); a
 * principal (`"alice"` or `{ principal: "alice" }`) admits it as that caller, whose tasks and
 * sessions no other principal reaches; `true` admits it bound to the credentials it presented
 * (see {@link principalOfRequest}).
 *
 * @example
 * ```ts
 * const authorize = async (request: Request): Promise<McpAuthorization> => {
 *   const user = await users.byToken(request.headers.get("authorization"));
 *   return user ? { principal: user.id } : false;
 * };
 * ```
 */
export type McpAuthorization = boolean | string | { principal: string };

/** The principal every caller of a `"none-local-only"` server (or of stdio) shares: there is no identity to tell them apart. */
export const LOCAL_PRINCIPAL = "local";

/**
 * The principal a request acts for, from what `authorize` answered; `undefined` when it refused.
 * An explicit principal is used as given (an empty one refuses: it names nobody). A plain `true`
 * binds to a digest of the credentials the request presented (its `Authorization` header, else
 * its `Cookie` header), so callers with other credentials reach none of its tasks; a request
 * with neither shares the anonymous principal. Return a principal to keep tasks across a token
 * refresh.
 *
 * @example
 * ```ts
 * principalOfRequest({ principal: "alice" }, request); // "principal:alice"
 * principalOfRequest(true, request); // "authorization:<sha-256 of the header>"
 * principalOfRequest(false, request); // undefined (403)
 * ```
 */
export function principalOfRequest(decision: McpAuthorization, request: Request): string | undefined {
  if (decision === false) return undefined;
  if (decision === true) {
    for (const header of ["authorization", "cookie"]) {
      const value = request.headers.get(header);
      if (value) return `${header}:${createHash("sha256").update(value).digest("hex")}`;
    }
    return "anonymous";
  }
  const principal =
    typeof decision === "string" ? decision : (decision as { principal?: unknown })?.principal;
  if (typeof principal !== "string") {
    throw new TypeError(
      `authorize must answer true, false, a principal string or { principal: string }, got ${JSON.stringify(decision)}`,
    );
  }
  // Namespaced: an explicit principal never equals one derived from credentials.
  return principal === "" ? undefined : `principal:${principal}`;
}
