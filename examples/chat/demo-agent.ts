// The example's agent, created in the page: two tools (one that reports progress, one that asks for
// approval first) and, when no model is configured, a scripted model that plays a small deployment
// story and listens to what you steer in meanwhile. No network, no API key.
import { z } from "zod";
// In your app: `from "agent-machine/browser"`.
import {
  type Agent,
  type AgentOptions,
  type Message,
  type Provider,
  type ProviderRequest,
  type ScriptedStep,
  createAgent,
  defineTool,
  scripted,
} from "../../browser.js";

const checkService = defineTool({
  name: "check_service",
  description: "Checks that a service answers, reporting progress",
  parameters: z.object({ service: z.string(), ms: z.number() }),
  readOnly: true,
  execute: async ({ service, ms }, { signal, onProgress }) => {
    for (let done = 0; done < ms; done += 200) {
      if (signal.aborted) throw new Error("aborted");
      onProgress(`${service}: ${Math.round((done / ms) * 100)}%`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, ms - done)));
    }
    return `${service} is healthy`;
  },
});

const deploy = defineTool({
  name: "deploy",
  description: "Deploys the build to an environment",
  parameters: z.object({ target: z.enum(["staging", "production"]) }),
  needsApproval: true,
  execute: async ({ target }) => `Deployed to ${target}`,
});

const textOf = (message: Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : "")).join("");

/**
 * The scripted model's answer to a request: check three services in parallel, then deploy (the
 * approval card), then say what happened; a steered "don't deploy" (or "stop", "skip") cancels the
 * deployment instead.
 */
export function demoStep(request: ProviderRequest): ScriptedStep {
  const { messages } = request;
  // This run's messages: from the last prompt on (user messages keep their `source` on the way to
  // the model; the ones steered in meanwhile say "steer").
  const start = messages.findLastIndex((m) => m.role === "user" && (m.source ?? "prompt") === "prompt");
  const run = messages.slice(Math.max(0, start));
  const prompt = run[0] ? textOf(run[0]) : "";
  const steered = run.slice(1).flatMap((m) => (m.role === "user" ? [textOf(m)] : []));
  const results = run.filter((m) => m.role === "toolResult");
  const deployed = results.find((m) => m.toolName === "deploy");
  const stream = { delayMs: 25, chunkSize: 3 };
  const noted = steered.length ? ` You said meanwhile: "${steered.join('", "')}".` : "";
  if (steered.some((text) => /\b(don'?t|stop|skip|cancel)\b/i.test(text)) && !deployed) {
    return { ...stream, text: `Understood: I will not deploy.${noted}` };
  }
  if (results.length === 0) {
    return {
      ...stream,
      text: `Before I deploy (${JSON.stringify(prompt)}), let me check the three services.`,
      toolCalls: [
        { name: "check_service", arguments: { service: "api", ms: 800 } },
        { name: "check_service", arguments: { service: "database", ms: 1600 } },
        { name: "check_service", arguments: { service: "queue", ms: 2400 } },
      ],
    };
  }
  if (!deployed) {
    return {
      ...stream,
      text: "All three are healthy. Deploying to staging: approve it (or edit the target) on the card.",
      toolCalls: [{ name: "deploy", arguments: { target: "staging" } }],
    };
  }
  // The result of an edited call starts with a note for the model: say only what happened.
  const said = /Deployed to \w+/.exec(textOf(deployed))?.[0] ?? textOf(deployed);
  const outcome = deployed.isError ? `The deployment did not happen: ${said}.` : `${said}.`;
  return { ...stream, text: `${outcome}${noted} Anything else?` };
}

/**
 * The example agent's options: on `provider` when given, else on the scripted demo model. The page
 * creates its agent from them; the server (remote mode) gives them to its session host.
 *
 * @example
 * ```ts
 * const host = createSessionHost({ agent: demoAgentOptions(), protocols: [agentMachineProtocol()], authorize: "none-local-only" });
 * ```
 */
export function demoAgentOptions(provider?: Provider): AgentOptions {
  return {
    provider: provider ?? scripted((request) => demoStep(request), { model: "demo" }),
    systemPrompt:
      "You deploy builds. Check the api, database and queue services with check_service first (in parallel), then deploy to staging.",
    tools: [checkService, deploy],
  };
}

/**
 * The example's agent, in the page, on the scripted demo model.
 *
 * @example
 * ```ts
 * const agent = createDemoAgent();
 * await agent.prompt("Ship it");
 * ```
 */
export function createDemoAgent(): Agent {
  return createAgent({ id: "chat-example", ...demoAgentOptions() });
}
