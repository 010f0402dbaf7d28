// The AgentHandle contract (test/contract/agent-contract.ts) against every handle this repository
// serves without a Restate server: the agent in this process, and a thread of the session host seen
// over HTTP.
import { agentMachineProtocol, createSessionHost, remoteAgentHandle } from "../http.js";
import { agentHandle, createAgent } from "../index.js";
import { describeAgentContract } from "./contract/agent-contract.js";

describeAgentContract("in process", ({ provider, tools }) => {
  const agent = createAgent({ provider, tools });
  return { handle: agentHandle(agent, { tools }), close: () => agent.stop() };
});

// The host's kind of agent: it hibernates whenever it is idle (its snapshot as JSON, no actor).
describeAgentContract('in process, hibernate: "whenIdle"', ({ provider, tools }) => {
  const agent = createAgent({ provider, tools, hibernate: "whenIdle" });
  return { handle: agentHandle(agent, { tools }), close: () => agent.stop() };
});

// Over HTTP: a session host on in-process agents, and the page's handle on one of its threads.
let threads = 0;
describeAgentContract("over HTTP (remoteAgentHandle on a session host)", ({ provider, tools }) => {
  const host = createSessionHost({
    agent: { provider, tools },
    protocols: [agentMachineProtocol()],
    basePath: "/api",
    authorize: "none-local-only",
  });
  const fetchHost = (input: RequestInfo | URL, init?: RequestInit) => host.handle(new Request(input, init));
  return {
    handle: remoteAgentHandle({
      url: "http://localhost/api",
      threadId: `t${++threads}`,
      fetch: fetchHost as typeof fetch,
    }),
    close: () => host.close(),
  };
});
