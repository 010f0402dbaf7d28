import type { WebSocket } from "ws";

/**
 * Sends `data` to a WebSocket client unless it already has more than `maxBuffered` bytes waiting:
 * then it is cut off (terminated) instead, so one slow client never holds unbounded memory. A
 * client whose `send` throws is cut off the same way: the error stays with that client, not with
 * the agent's run that produced the data or the other clients. Returns whether it was sent.
 *
 * @example
 * ```ts
 * for (const socket of sockets) if (!sendOrDrop(socket, data, 32 << 20)) sockets.delete(socket);
 * ```
 */
export function sendOrDrop(socket: WebSocket, data: string, maxBuffered: number): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  if (socket.bufferedAmount > maxBuffered) {
    socket.terminate();
    return false;
  }
  try {
    socket.send(data);
  } catch {
    socket.terminate();
    return false;
  }
  return true;
}
