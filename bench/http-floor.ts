// The floor under a call over HTTP on localhost: one fetch POST of a small JSON body to a
// serveNode handler that reads it and answers JSON. A protocol's call costs this much at least.
import { serveNode } from "../http.js";

/** Sorted samples (ms) of `calls` round trips after `warmup` unmeasured ones. */
export async function httpFloor(calls: number, warmup = 30): Promise<number[]> {
  const server = await serveNode(async (request) => Response.json({ echoed: await request.json() }));
  const samples: number[] = [];
  try {
    for (let i = 0; i < warmup + calls; i++) {
      const started = performance.now();
      const response = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping", params: {} }),
      });
      await response.json();
      if (i >= warmup) samples.push(performance.now() - started);
    }
  } finally {
    await server.close();
  }
  return samples.sort((a, b) => a - b);
}
