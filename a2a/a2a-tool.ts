// A remote A2A agent as a tool of ours (a sub-agent across the network): the model writes a
// prompt, the remote agent's task runs, its answer (the artifacts' text, else the final status
// message) comes back. The official SDK's client does the protocol.
import { randomUUID } from "node:crypto";
import { type AgentCard, type Part, Role, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { z } from "zod";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "../tools/define-tool.js";
import { serverText } from "../tools/server-text.js";

/**
 * Options of {@link a2aAgentTool}.
 *
 * @example
 * ```ts
 * const options: A2aAgentToolOptions = { url: "https://agents.example.com/researcher", headers: { authorization: `Bearer ${token}` } };
 * ```
 */
export interface A2aAgentToolOptions {
  /** The agent's base URL: its card is read at `<url>/.well-known/agent-card.json`. */
  url: string;
  /** The tool's name. Default: the card's name, cleaned to `[a-zA-Z0-9_-]`. */
  name?: string;
  /** The tool's description. Default: the card's. */
  description?: string;
  /** Headers sent with every request (the card's too), e.g. an authorization header. */
  headers?: Record<string, string>;
  /**
   * Believe the remote agent changes nothing: the tool is then read-only (allowed without approval
   * by the default permissions). Default `false`: a remote agent may do anything it is able to.
   */
  readOnly?: boolean;
}

const A2A_TOOL_KEYS: OptionKeys<A2aAgentToolOptions> = {
  url: true,
  name: true,
  description: true,
  headers: true,
  readOnly: true,
};

/** `details` of an {@link a2aAgentTool} result. */
export interface A2aToolDetails {
  taskId?: string;
  /** The task's last state, as the protocol names it (`TASK_STATE_COMPLETED`, ...). */
  state?: string;
}

/** How long an aborted call waits for the remote task's stream to end after cancelling it. */
const CANCEL_GRACE_MS = 5_000;

const parameters = z.object({ prompt: z.string().describe("What to ask the agent") });

function partsText(parts: readonly Part[] | undefined): string {
  return (parts ?? [])
    .map((part) => {
      if (part.content?.$case === "text") return part.content.value;
      if (part.content?.$case === "data") return JSON.stringify(part.content.value);
      return "";
    })
    .join("");
}

function withHeaders(headers: Record<string, string> | undefined): typeof fetch {
  if (!headers) return (...args) => fetch(...args);
  return (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return fetch(input, { ...init, headers: merged });
  };
}

/** The state names a model reads. */
function stateName(state: TaskState | undefined): string {
  return state === undefined ? "unknown" : (TaskState[state] ?? String(state));
}

/**
 * Reads a remote A2A agent's card and makes it a tool: a call sends the model's `prompt` as a
 * message and streams the task (status messages become progress), the answer is the text of the
 * task's artifacts (else of its final status message). A task that fails, is rejected or ends
 * otherwise is an error result; one that asks for input (an approval on the remote side) is
 * cancelled and answered as an error the model reads, since nobody here can answer for it.
 * Aborting the call cancels the remote task.
 *
 * @example
 * ```ts
 * const researcher = await a2aAgentTool({ url: "http://127.0.0.1:3002" });
 * const agent = createAgent({ provider, tools: [researcher] });
 * ```
 */
export async function a2aAgentTool(
  options: A2aAgentToolOptions,
): Promise<Tool<{ prompt: string }, A2aToolDetails>> {
  checkOptionKeys("a2aAgentTool", options, A2A_TOOL_KEYS);
  const fetchImpl = withHeaders(options.headers);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  const client = await factory.createFromUrl(options.url);
  const card: AgentCard = await client.getAgentCard();
  const name =
    (options.name ?? serverText(card.name)).replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "remote_agent";
  return defineTool({
    name,
    description: options.description ?? serverText(card.description || `The remote agent ${card.name}`),
    parameters,
    readOnly: options.readOnly === true,
    concurrencySafe: false,
    execute: (args, ctx) => callRemote(client, args.prompt, ctx),
  });
}

async function callRemote(
  client: Client,
  prompt: string,
  ctx: { signal: AbortSignal; onProgress(text: string): void },
): Promise<ToolResult<A2aToolDetails>> {
  let taskId: string | undefined;
  let state: TaskState | undefined;
  let statusText = "";
  const artifacts = new Map<string, string>();
  let cancelled = false;
  const cancelRemote = () => {
    if (!taskId || cancelled) return;
    cancelled = true;
    void client.cancelTask({ tenant: "", id: taskId, metadata: undefined }).catch(() => undefined);
  };
  // The stream is not given the call's signal: an abort before the task's first event would leave
  // a task nobody cancels. The abort cancels the task (once its id is known), whose stream then
  // ends; a remote that does not end it is left after a grace period.
  const streamStop = new AbortController();
  let grace: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => {
    cancelRemote();
    grace = setTimeout(() => streamStop.abort(ctx.signal.reason), CANCEL_GRACE_MS);
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const stream = client.sendMessageStream(
      {
        tenant: "",
        message: {
          messageId: randomUUID(),
          contextId: "",
          taskId: "",
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: "text", value: prompt },
              metadata: undefined,
              filename: "",
              mediaType: "text/plain",
            },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      },
      { signal: streamStop.signal },
    );
    for await (const response of stream) {
      const payload = response.payload;
      if (!payload) continue;
      if (payload.$case === "task") {
        taskId = payload.value.id;
        state = payload.value.status?.state;
        readTask(payload.value, artifacts);
        if (ctx.signal.aborted) cancelRemote();
      } else if (payload.$case === "message") {
        statusText = partsText(payload.value.parts);
        state = TaskState.TASK_STATE_COMPLETED;
      } else if (payload.$case === "statusUpdate") {
        state = payload.value.status?.state;
        const text = partsText(payload.value.status?.message?.parts);
        if (text) {
          statusText = text;
          if (state === TaskState.TASK_STATE_WORKING) ctx.onProgress(text);
        }
        if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED)
          break;
      } else if (payload.$case === "artifactUpdate" && payload.value.artifact) {
        const { artifactId, parts } = payload.value.artifact;
        const before = payload.value.append ? (artifacts.get(artifactId) ?? "") : "";
        artifacts.set(artifactId, before + partsText(parts));
      }
    }
  } catch (error) {
    if (!ctx.signal.aborted) throw error;
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
    clearTimeout(grace);
  }
  if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error("aborted");
  const details: A2aToolDetails = { ...(taskId && { taskId }), state: stateName(state) };
  const answer = [...artifacts.values()].join("\n") || statusText;
  if (state === TaskState.TASK_STATE_COMPLETED) return { content: [{ type: "text", text: answer }], details };
  if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED) {
    cancelRemote();
    return {
      content: [
        {
          type: "text",
          text: `The remote agent stopped to ask for input, which cannot be given from here; its task was cancelled. It asked: ${statusText}`,
        },
      ],
      details,
      isError: true,
    };
  }
  return {
    content: [
      {
        type: "text",
        text: `The remote agent's task ended ${stateName(state)}${statusText ? `: ${statusText}` : ""}`,
      },
    ],
    details,
    isError: true,
  };
}

function readTask(task: Task, artifacts: Map<string, string>): void {
  for (const artifact of task.artifacts) artifacts.set(artifact.artifactId, partsText(artifact.parts));
}
