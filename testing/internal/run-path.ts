// One explored path, run: a fresh agent of the user's configuration driven by a scripted model,
// its approvals answered (or the run aborted) as the path says, every tool watched for what it ran
// and for what changed in the guarded places meanwhile — the tools of its sub-agents too, at every
// depth.
import type { Agent } from "../../agent/agent.js";
import { createAgent } from "../../agent/create-agent.js";
import { observeSubAgents, type SubAgentObserver } from "../../agent/sub-agent-observer.js";
import type { AgentEvent } from "../../core/events.js";
import type { AgentMessage } from "../../core/messages.js";
import type { AgentOptions } from "../../core/options.js";
import type { Tool } from "../../tools/define-tool.js";
import type { ExplorationPath, ExplorationSetup, ObservedCall, PathOutcome } from "../exploration-path.js";
import { scriptedModel } from "../scripted-model.js";
import { toolsOfEveryAgent } from "./agent-tools.js";
import { changesBetween, type SandboxTree } from "./sandbox-tree.js";

/** What running a path needs of the exploration's options. */
export interface RunPathOptions {
  agent: (setup: ExplorationSetup) => AgentOptions;
  runTimeoutMs?: number;
}

/** How long calls still running when their run ended get to finish, so what they do is this path's. */
const SETTLE_MS = 1_000;

type SubAgentRecord = PathOutcome["subAgents"][number];

export async function runPath(
  options: RunPathOptions,
  path: ExplorationPath,
  tree: SandboxTree,
): Promise<PathOutcome> {
  const steps = path.turns.map((turn, t) => ({
    toolCalls: turn.map((call, i) => ({
      id: `p${t + 1}_${i + 1}`,
      name: call.name,
      arguments: placed(call.arguments, tree) as Record<string, unknown>,
    })),
  }));
  const model = scriptedModel([...steps, { text: "done" }], {
    requireAllSteps: false,
    whenExhausted: "error",
  });
  const config = options.agent({ provider: model, cwd: tree.cwd, outside: tree.outside });
  const book = createCallBook();

  // Changes to the guarded places are looked for whenever a call finishes, and blamed on the
  // calls that ran since the last look.
  const guardedChanges: PathOutcome["guardedChanges"] = [];
  let last = tree.snapshot();
  const running = new Set<ObservedCall>();
  let sinceLast = new Set<ObservedCall>();
  const executions = new Set<Promise<unknown>>();
  const look = () => {
    const now = tree.snapshot();
    const changes = changesBetween(last, now);
    last = now;
    for (const change of changes) guardedChanges.push({ change, calls: [...sinceLast] });
    sinceLast = new Set(running);
  };
  const watch = (tool: Tool, parent: ObservedCall | undefined): Tool => {
    const copy: Tool = Object.create(tool);
    copy.execute = (args, ctx) => {
      const call = book.observe(parent, ctx.toolCallId, tool.name, args as Record<string, unknown>, tool);
      call.executed = true;
      if (path.abortAt === "execution" && !aborted) {
        aborted = true;
        queueMicrotask(() => agent.abort());
      }
      running.add(call);
      sinceLast.add(call);
      const execution = (async () => {
        try {
          return await tool.execute(args, ctx);
        } finally {
          running.delete(call);
          look();
        }
      })();
      const settled = execution.catch(() => undefined).finally(() => executions.delete(settled));
      executions.add(settled);
      return execution;
    };
    return copy;
  };

  // Each sub-agent's tools are watched like the agent's own; its calls are kept under the call that started it.
  const subAgents: SubAgentRecord[] = [];
  const subscriptions: { unsubscribe(): void }[] = [];
  const observer =
    (parent: ObservedCall | undefined): SubAgentObserver =>
    ({ toolName, toolCallId, tools }) => {
      const call = book.observe(parent, toolCallId, toolName, {}, undefined);
      const record: SubAgentRecord = { call, events: [], transcript: [] };
      subAgents.push(record);
      const byName = new Map(tools.map((t) => [t.name, t] as const));
      return {
        tools: tools.map((t) => watch(t, call)),
        observer: observer(call),
        agent: (child: Agent) => {
          subscriptions.push(
            child.events$.subscribe((event) => {
              record.events.push(event);
              book.note(event, call, byName);
              if (event.type === "agent_end") record.transcript = [...event.messages];
            }),
          );
        },
      };
    };

  // A handoff agent's tools are watched as the agent's own (its calls are in the same transcript).
  const rootTools = new Map(toolsOfEveryAgent(config).map((t) => [t.name, t] as const));
  const agent = createAgent(
    observeSubAgents(
      {
        ...config,
        provider: model,
        tools: config.tools?.map((t) => watch(t, undefined)),
        ...(config.handoffs && {
          handoffs: config.handoffs.map((h) =>
            Object.freeze({ ...h, tools: h.tools?.map((t) => watch(t, undefined)) }),
          ),
        }),
        ...(path.strategy !== undefined && { toolExecution: path.strategy }),
      },
      observer(undefined),
    ),
  );
  const events: AgentEvent[] = [];
  let aborted = false;
  let asked = 0;
  let ended = false;
  let kitAbortedAt: number | undefined;
  subscriptions.push(
    agent.events$.subscribe((event) => {
      events.push(event);
      if (event.type === "agent_end") ended = true;
      if (event.type === "approval_requested" && path.abortAt === "approval" && !aborted) {
        aborted = true;
        asked++;
        agent.abort();
      } else if (event.type === "approval_requested") {
        const approve = path.decisions[asked++] ?? path.otherwise !== "deny";
        if (approve) agent.approve(event.toolCallId);
        else agent.deny(event.toolCallId, "Denied by the exploration");
      }
      book.note(event, undefined, rootTools);
    }),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  let endedInTime: boolean;
  try {
    const done = agent.prompt("Explore").catch(() => undefined);
    const timeout = new Promise<void>(
      (resolve) => (timer = setTimeout(resolve, options.runTimeoutMs ?? 10_000)),
    );
    await Promise.race([done, timeout]);
    endedInTime = ended;
    if (!ended) {
      kitAbortedAt = events.length;
      agent.abort();
      await Promise.race([done, delay(1_000)]);
    }
    for (const call of running) call.outlivedRun = true;
    // A call the run no longer waits for (a tool that ignores its abort signal) may still be at
    // work: what it does now is this path's, so it gets a moment to finish here, in this path's folders.
    if (executions.size > 0) await Promise.race([Promise.allSettled([...executions]), delay(SETTLE_MS)]);
  } finally {
    clearTimeout(timer);
    for (const subscription of subscriptions) subscription.unsubscribe();
  }
  for (const call of running) call.unfinished = true;
  sinceLast = new Set([...sinceLast, ...book.all().filter((c) => c.executed)]);
  look();
  const transcript = [...agent.messages];
  agent.stop();

  // Every call the model made, in order, whether or not it ran; each sub-agent's after its call.
  for (const m of transcript) {
    if (m.role !== "assistant") continue;
    for (const c of m.content) {
      if (c.type === "toolCall") book.observe(undefined, c.id, c.name, c.arguments, rootTools.get(c.name));
    }
  }
  return {
    path,
    events,
    subAgents,
    transcript,
    calls: book.ordered(transcript),
    ended: endedInTime,
    ...(kitAbortedAt !== undefined && { kitAbortedAt }),
    approvalsAsked: asked,
    guardedChanges,
    cwd: tree.cwd,
    outside: tree.outside,
  };
}

/** The calls of a run at every depth, each under the sub-agent call it was made inside. */
function createCallBook() {
  const byKey = new Map<string, ObservedCall>();
  const children = new Map<ObservedCall | undefined, ObservedCall[]>();
  const keyOf = (parent: ObservedCall | undefined, id: string): string =>
    parent ? `${keyOf(parent.parent, parent.id)}/${id}` : id;

  const observe = (
    parent: ObservedCall | undefined,
    id: string,
    name: string,
    args: Record<string, unknown>,
    tool: Tool | undefined,
  ): ObservedCall => {
    const key = keyOf(parent, id);
    let call = byKey.get(key);
    if (!call) {
      call = { id, name, args, executed: false, tool, depth: parent ? parent.depth + 1 : 0 };
      if (parent) call.parent = parent;
      byKey.set(key, call);
      children.set(parent, [...(children.get(parent) ?? []), call]);
    }
    if (Object.keys(call.args).length === 0) call.args = args;
    call.tool ??= tool;
    return call;
  };

  /** What an agent's events say of its calls: the calls its model made, the approvals' answers. */
  const note = (event: AgentEvent, parent: ObservedCall | undefined, tools: ReadonlyMap<string, Tool>) => {
    if (event.type === "message_end" && event.message.role === "assistant") {
      for (const c of event.message.content) {
        if (c.type === "toolCall") observe(parent, c.id, c.name, c.arguments, tools.get(c.name));
      }
    }
    if (event.type === "approval_decided") {
      const call = observe(parent, event.toolCallId, event.toolName, {}, tools.get(event.toolName));
      call.approval = event.approved ? "approved" : "denied";
    }
  };

  /** The top-level calls in the transcript's order, each followed by the calls made inside it. */
  const ordered = (transcript: readonly AgentMessage[]): ObservedCall[] => {
    const out: ObservedCall[] = [];
    const add = (call: ObservedCall) => {
      out.push(call);
      for (const child of children.get(call) ?? []) add(child);
    };
    for (const m of transcript) {
      if (m.role !== "assistant") continue;
      for (const c of m.content) if (c.type === "toolCall") add(byKey.get(c.id)!);
    }
    return out;
  };

  return { observe, note, ordered, all: () => [...byKey.values()] };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The arguments with `$CWD` / `$OUTSIDE` replaced by this path's folders. */
function placed(value: unknown, tree: SandboxTree): unknown {
  if (typeof value === "string")
    return value.replaceAll("$OUTSIDE", tree.outside).replaceAll("$CWD", tree.cwd);
  if (Array.isArray(value)) return value.map((v) => placed(v, tree));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, placed(v, tree)]));
  }
  return value;
}
