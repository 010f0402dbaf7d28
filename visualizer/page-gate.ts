// What the visualizer's and the inspector relay's loopback servers do at their door: check the
// token a request carries (whatever its target looks like) and refuse an upgrade without leaving a
// socket behind. Node hands an upgrade's socket over with no error listener: a client that resets
// it while the refusal is written would otherwise throw out of the process that runs the agent.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

/**
 * Whether `request` carries `expected` as its `?token=` (compared in constant time). A request
 * target no URL can be made of (`GET http://[ HTTP/1.1`) carries none: it is refused, never thrown.
 *
 * @example
 * ```ts
 * if (!carriesToken(request, Buffer.from(token))) return refuseUpgrade(socket);
 * ```
 */
export function carriesToken(request: IncomingMessage, expected: Buffer): boolean {
  let given: Buffer;
  try {
    given = Buffer.from(new URL(request.url ?? "/", "http://x").searchParams.get("token") ?? "");
  } catch {
    return false;
  }
  const { timingSafeEqual } = process.getBuiltinModule("node:crypto"); // on first use (issue 44)
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Answers a WebSocket upgrade 403 and closes its socket once that is written, or at once when the
 * client already went away: the socket's errors go nowhere (not to the process), and a client that
 * keeps its side open holds no socket afterwards.
 *
 * @example
 * ```ts
 * server.on("upgrade", (request, socket, head) => {
 *   if (!allowed(request)) return refuseUpgrade(socket);
 *   wss.handleUpgrade(request, socket, head, (ws) => wss.emit("connection", ws, request));
 * });
 * ```
 */
export function refuseUpgrade(socket: Duplex): void {
  socket.on("error", () => socket.destroy());
  if (socket.destroyed || !socket.writable) return void socket.destroy();
  socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", () =>
    socket.destroy(),
  );
}
