// One explored path, run: a fresh agent of the user's configuration driven by a scripted model,
// its approvals answered (or the run aborted) as the path says, every tool watched for what it ran
// and for what changed in the guarded places meanwhile.
import { createAgent } from "../../agent/create-agent.js";
import type { AgentEvent } from "../../core/events.js";
import type { Tool } from "../../tools/define-tool.js";
import type { ExplorationPath, ExploreOptions } from "../explore.js";
import type { ObservedCall, PathOutcome } from "../properties.js";
import { scriptedModel } from "../scripted-model.js";
import { changesBetween, type SandboxTree } from "./sandbox-tree.js";

export async function runPath(
  options: Pick<ExploreOptions, "agent" | "runTimeoutMs">,
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
  const tools = new Map((config.tools ?? []).map((t) => [t.name, t] as const));
  const observed = new Map<string, ObservedCall>();
  const observe = (id: string, name: string, args: Record<string, unknown>) => {
    let call = observed.get(id);
    if (!call) {
      call = { id, name, args, executed: false, tool: tools.get(name) };
      observed.set(id, call);
    }
    return call;
  };

  // Changes to the guarded places are looked for whenever a call finishes, and blamed on the
  // calls that ran since the last look.
  const guardedChanges: PathOutcome["guardedChanges"] = [];
  let last = tree.snapshot();
  const running = new Set<ObservedCall>();
  let sinceLast = new Set<ObservedCall>();
  const look = () => {
    const now = tree.snapshot();
    const changes = changesBetween(last, now);
    last = now;
    for (const change of changes) guardedChanges.push({ change, calls: [...sinceLast] });
    sinceLast = new Set(running);
  };
  const watch = (tool: Tool): Tool => {
    const copy: Tool = Object.create(tool);
    copy.execute = async (args, ctx) => {
      const call = observe(ctx.toolCallId, tool.name, args as Record<string, unknown>);
      call.executed = true;
      if (path.abortAt === "execution" && !aborted) {
        aborted = true;
        queueMicrotask(() => agent.abort());
      }
      running.add(call);
      sinceLast.add(call);
      try {
        return await tool.execute(args, ctx);
      } finally {
        running.delete(call);
        look();
      }
    };
    return copy;
  };

  const agent = createAgent({
    ...config,
    provider: model,
    tools: config.tools?.map(watch),
    ...(path.strategy !== undefined && { toolExecution: path.strategy }),
  });
  const events: AgentEvent[] = [];
  const decisions = new Map<string, boolean>();
  let aborted = false;
  let asked = 0;
  let ended = false;
  const subscription = agent.events$.subscribe((event) => {
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
    if (event.type === "approval_decided") {
      const call = observed.get(event.toolCallId);
      decisions.set(event.toolCallId, event.approved);
      if (call) call.approval = event.approved ? "approved" : "denied";
    }
  });
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
      agent.abort();
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    }
  } finally {
    clearTimeout(timer);
    subscription.unsubscribe();
  }
  sinceLast = new Set([...sinceLast, ...[...observed.values()].filter((c) => c.executed)]);
  look();
  const transcript = [...agent.messages];
  agent.stop();

  // Every call the model made, in order, whether or not it ran.
  const calls: ObservedCall[] = [];
  for (const m of transcript) {
    if (m.role !== "assistant") continue;
    for (const c of m.content) {
      if (c.type !== "toolCall") continue;
      const call = observe(c.id, c.name, c.arguments);
      const decision = decisions.get(c.id);
      if (decision !== undefined) call.approval = decision ? "approved" : "denied";
      calls.push(call);
    }
  }
  return {
    path,
    events,
    transcript,
    calls,
    ended: endedInTime,
    approvalsAsked: asked,
    guardedChanges,
    cwd: tree.cwd,
    outside: tree.outside,
  };
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
