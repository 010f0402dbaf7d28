// The AgentHandle contract (test/contract/agent-contract.ts) against a durable session on a real
// Restate server: durableHandle(client, sessionId) with the live channel of the process serving
// the agent (this one). Each test's agent is served under a session id of its own.
import { afterAll } from "vitest";
import { agentMachineProtocol, createSessionHost, remoteAgentHandle, type SessionHost } from "../http.js";
import type { AgentOptions } from "../index.js";
import { durableHandle } from "../restate.js";
import { describeAgentContract } from "./contract/agent-contract.js";
import { useSessionsPerSession } from "./fixtures/durable-harness.js";

/** The agent of each session a test opened (the services ask for it by session id). */
const agents = new Map<string, AgentOptions>();
const harness = useSessionsPerSession(agents);

let sessions = 0;
describeAgentContract(
  "durable (durableHandle on Restate, with the live channel)",
  ({ provider, tools }) => {
    const sessionId = `contract-${Date.now()}-${sessions++}`;
    agents.set(sessionId, { provider, tools });
    return {
      handle: durableHandle(harness.client, sessionId, {
        pollIntervalMs: 20,
        live: [harness.server.liveUrl!],
      }),
    };
  },
  // A sub-agent is a journaled child of the run: its waiting call is kept in the session under its
  // path id and answered there, so the contract holds whole, nested approvals included.
);

// Over HTTP on durable threads: a session host serving each session's durable handle, and the
// page's handle on it (remoteAgentHandle), so the HTTP client meets a durable agent too.
const hosts: SessionHost[] = [];
afterAll(async () => {
  for (const host of hosts.splice(0)) await host.close();
});
describeAgentContract(
  "over HTTP on durable threads (remoteAgentHandle on a session host of durableHandles)",
  ({ provider, tools }) => {
    const sessionId = `contract-http-${Date.now()}-${sessions++}`;
    agents.set(sessionId, { provider, tools });
    const host = createSessionHost({
      threads: (threadId) =>
        durableHandle(harness.client, threadId, { pollIntervalMs: 20, live: [harness.server.liveUrl!] }),
      protocols: [agentMachineProtocol()],
      basePath: "/api",
      authorize: "none-local-only",
    });
    hosts.push(host);
    const fetchHost = (input: RequestInfo | URL, init?: RequestInit) => host.handle(new Request(input, init));
    return {
      handle: remoteAgentHandle({ url: "http://localhost/api", threadId: sessionId, fetch: fetchHost }),
      close: () => host.close(),
    };
  },
);
