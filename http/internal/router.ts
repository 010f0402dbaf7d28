// Matching a request's path to a protocol's or the host's route (`/chat/:id/stream`).
import type { HostRoute } from "../protocol.js";

/** The route for `method` and `path` with its parameters; `"method"` when only the method is wrong. */
export function matchRoute(
  routes: readonly HostRoute[],
  method: string,
  path: string,
): { route: HostRoute; params: Record<string, string> } | "method" | undefined {
  const segments = splitPath(path);
  if (!segments) return undefined;
  let wrongMethod = false;
  for (const route of routes) {
    const params = matchSegments(splitPath(route.path) ?? [], segments);
    if (!params) continue;
    if (route.method === method) return { route, params };
    wrongMethod = true;
  }
  return wrongMethod ? "method" : undefined;
}

function splitPath(path: string): string[] | undefined {
  const parts = path.split("/").filter((part) => part !== "");
  try {
    return parts.map((part) => decodeURIComponent(part));
  } catch {
    return undefined;
  }
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(":")) params[pattern[i].slice(1)] = segments[i];
    else if (pattern[i] !== segments[i]) return undefined;
  }
  return params;
}
