// A scripted agent to look at: `npx tsx visualizer/demo.ts [port]` serves the visualizer page and runs a
// turn with three parallel tools of different lengths, a call that needs approval, and a streamed answer,
// again and again until you stop it (Ctrl+C). No network, no API key.
import { z } from "zod";
import { createAgent } from "../agent/create-agent.js";
import { scripted } from "../providers/scripted.js";
import { defineTool } from "../tools/define-tool.js";
import { visualize } from "./server.js";

const wait = defineTool({
  name: "wait",
  description: "Waits, reporting progress",
  parameters: z.object({ ms: z.number(), label: z.string() }),
  readOnly: true,
  execute: async ({ ms, label }, { signal, onProgress }) => {
    for (let done = 0; done < ms; done += 250) {
      if (signal.aborted) throw new Error("aborted");
      onProgress(`${label}: ${Math.round((done / ms) * 100)}%`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, ms - done)));
    }
    return `${label} finished after ${ms} ms`;
  },
});

const deploy = defineTool({
  name: "deploy",
  description: "Deploys (asks first)",
  parameters: z.object({ target: z.string() }),
  execute: async ({ target }) => `Deployed to ${target}`,
});

const agent = createAgent({
  id: "demo",
  provider: scripted((_request, call) =>
    call % 3 === 0
      ? {
          text: "Let me look at the three services in parallel.",
          toolCalls: [
            { name: "wait", arguments: { ms: 1200, label: "api" } },
            { name: "wait", arguments: { ms: 2500, label: "database" } },
            { name: "wait", arguments: { ms: 4000, label: "queue" } },
          ],
          delayMs: 40,
          chunkSize: 4,
        }
      : call % 3 === 1
        ? {
            text: "All healthy. Deploying now.",
            toolCalls: [{ name: "deploy", arguments: { target: "staging" } }],
            delayMs: 40,
          }
        : {
            text: "Done: the three services are healthy and staging runs the new build.",
            delayMs: 40,
            chunkSize: 3,
          },
  ),
  tools: [wait, deploy],
  permissions: {
    check: ({ tool }) => (tool.name === "deploy" ? { behavior: "ask" } : { behavior: "allow" }),
  },
});

const server = await visualize(agent, { port: Number(process.argv[2] ?? 0) });
console.log(
  `agent-machine visualizer demo: open ${server.url} (approve the deploy on the page; Ctrl+C to stop)`,
);
process.on("SIGINT", () => {
  agent.stop();
  void server.close().then(() => process.exit(0));
});
for (;;) {
  await agent.prompt("Check the services, then deploy to staging");
  await new Promise((resolve) => setTimeout(resolve, 3000));
}
