import type { WebSocket } from "ws";

/**
 * Sends `data` to a WebSocket client unless it already has more than `maxBuffered` bytes waiting:
 * then it is cut off (terminated) instead, so one slow client never holds unbounded memory.
 * Returns whether it was sent.
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
  socket.send(data);
  return true;
}
