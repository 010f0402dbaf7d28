// The ACP server bench/acp.ts measures: an agent on a provider whose first (and only) delta is the
// moment it was yielded (epoch milliseconds, sub-millisecond precision), served over stdio.
import { createAgent, type Provider } from "../index.js";
import { serveAcp } from "../acp.js";

const stamping: Provider = {
  id: "stamp",
  model: "stamp",
  async *stream() {
    yield { type: "start" };
    // A pause first, so the client is idle when the delta comes (as with a real model's latency).
    await new Promise((resolve) => setTimeout(resolve, 2));
    yield { type: "text_delta", delta: String(performance.timeOrigin + performance.now()) };
    yield { type: "done", stopReason: "stop" };
  },
};

let n = 0;
const connection = serveAcp({
  newSession: ({ cwd }) => ({ id: `bench-${++n}`, cwd, agent: createAgent({ provider: stamping }) }),
});
await connection.closed;
process.exit(0);
