import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { scripted } from "../index.js";
import { createAgentServices, serveAgents } from "../restate.js";

/** A GET to the live channel with the Host header a browser would send for `name`. */
function get(url: string, hostHeader: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host: hostHeader } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the durable live channel (serveAgents' liveUrl) attacked by the web", () => {
  it("answers no page whose name was rebound to 127.0.0.1, and still answers this machine's names", async () => {
    const services = createAgentServices({ agent: { provider: scripted(() => ({ text: "hi" })) } });
    const server = await serveAgents({ services, port: 0 });
    try {
      const url = `${server.liveUrl}/runs/s1/inv_1`;
      const port = new URL(server.liveUrl!).port;
      expect(await get(url, `attacker.example:${port}`)).toBe(403);
      // Loopback names get through to the route (no such run here: 404).
      expect(await get(url, `127.0.0.1:${port}`)).toBe(404);
      expect(await get(url, `localhost:${port}`)).toBe(404);
    } finally {
      await server.close();
    }
  });
});
