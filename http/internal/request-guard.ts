// What the host checks of a request before any route sees it, against a hostile web page: a body
// is JSON by its media type (a browser sends text/plain, forms and no-cors requests cross-site
// without a preflight), a state-changing request comes from the app's own origin (or one it
// allowed), and a host that checks no identity answers only to a loopback name (DNS rebinding).
import { AgentCallError } from "../../core/agent-handle.js";

/** Methods that change nothing: no origin check for them (a page cannot read their answer cross-site). */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** An RFC 9110 token (a media type's type and subtype are tokens). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * The media type of a `content-type` header, lower case, without its parameters (`text/plain`
 * for `text/plain; charset=json`), or `undefined` when the header is missing or malformed.
 *
 * @example
 * ```ts
 * mediaTypeOf("Application/JSON; charset=utf-8"); // "application/json"
 * mediaTypeOf("multipart/form-data; boundary=json"); // "multipart/form-data"
 * ```
 */
export function mediaTypeOf(contentType: string | null): string | undefined {
  if (contentType === null) return undefined;
  const essence = contentType.split(";", 1)[0]!.trim().toLowerCase();
  const [type, subtype, extra] = essence.split("/");
  if (extra !== undefined || !type || !subtype || !TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  return `${type}/${subtype}`;
}

/**
 * Whether a `content-type` header names JSON: `application/json` or `application/<name>+json`,
 * by its media type alone (a parameter that says `json` does not count).
 *
 * @example
 * ```ts
 * isJsonContentType("application/json; charset=utf-8"); // true
 * isJsonContentType("application/vnd.api+json"); // true
 * isJsonContentType("text/plain; charset=json"); // false
 * ```
 */
export function isJsonContentType(contentType: string | null): boolean {
  const type = mediaTypeOf(contentType);
  if (type === undefined) return false;
  return (
    type === "application/json" || (/^application\/.+\+json$/.test(type) && type !== "application/+json")
  );
}

/** An AgentCallError 415 unless the request's content type is JSON; called before its body is read. */
export function checkJsonContentType(request: Request): void {
  const type = request.headers.get("content-type");
  if (isJsonContentType(type)) return;
  throw new AgentCallError(
    415,
    "unsupported_media_type",
    type === null
      ? "the request has no content-type: send its body as JSON with content-type: application/json"
      : `expected content-type application/json (or application/*+json), got ${type}`,
  );
}

/**
 * Whether `hostname` (as a URL gives it: `[::1]` in brackets) names this machine's loopback
 * interface: `localhost`, a name under `.localhost`, `127.0.0.0/8` or `::1`. No DNS name a web page
 * controls resolves here by the host's say-so (DNS rebinding points `evil.example` at 127.0.0.1;
 * its requests still carry `Host: evil.example`).
 *
 * @example
 * ```ts
 * isLoopbackHostname("127.0.0.1"); // true
 * isLoopbackHostname("evil.example"); // false
 * ```
 */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "[::1]" || name === "::1") return true;
  const octets = name.split(".");
  return (
    octets.length === 4 &&
    octets[0] === "127" &&
    octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) <= 255)
  );
}

/** An AgentCallError 403 unless the request was sent to a loopback name (a host that checks no identity). */
export function checkLoopbackHost(request: Request): void {
  const { hostname } = new URL(request.url);
  if (isLoopbackHostname(hostname)) return;
  throw new AgentCallError(
    403,
    "not_loopback",
    `this host checks no identity (authorize: "none-local-only") and answers only requests sent to ` +
      `localhost, 127.0.0.1 or [::1], not to ${hostname}: give createSessionHost an authorize hook to serve other names`,
  );
}

/**
 * An AgentCallError 403 when a state-changing request comes from another origin than the host's own
 * and not from one of `allowedOrigins` (exact origins, e.g. `https://app.example.com`). Browsers
 * say where a request comes from: `Sec-Fetch-Site` (when sent, it decides: `same-origin` and
 * `none`, a typed URL or a bookmark, pass), else `Origin` (`null`, a sandboxed page or a redirect,
 * never matches). A request with neither comes from no browser (curl, a server): the app's
 * `authorize` decides. The same rules as Go's `http.CrossOriginProtection`.
 *
 * @example
 * ```ts
 * checkSameOrigin(request, new Set(["https://app.example.com"]));
 * ```
 */
export function checkSameOrigin(request: Request, allowedOrigins: ReadonlySet<string>): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.get("origin");
  if (origin !== null && allowedOrigins.has(origin)) return;
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) {
    if (site === "same-origin" || site === "none") return;
    throw crossSite(origin ?? site);
  }
  if (origin === null) return;
  if (origin !== "null" && hostOf(origin) === new URL(request.url).host) return;
  throw crossSite(origin);
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

function crossSite(from: string): AgentCallError {
  return new AgentCallError(
    403,
    "cross_site",
    `a request from another site (${from}) may not act on this host: list the page's origin in ` +
      `createSessionHost's allowedOrigins to let it`,
  );
}
