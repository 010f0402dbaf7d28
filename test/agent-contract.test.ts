// The AgentHandle contract (test/contract/agent-contract.ts) against every handle this repository
// serves without a Restate server: the agent in this process.
import { agentHandle, createAgent } from "../index.js";
import { describeAgentContract } from "./contract/agent-contract.js";

describeAgentContract("in process", ({ provider, tools }) => {
  const agent = createAgent({ provider, tools });
  return { handle: agentHandle(agent, { tools }), close: () => agent.stop() };
});
