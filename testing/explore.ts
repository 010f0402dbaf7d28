import type { AgentOptions, ToolExecutionStrategy } from "../core/options.js";
import type { Tool } from "../tools/define-tool.js";
import {
  type AdversarialCallOptions,
  adversarialCalls,
  type ExplorationPlace,
  type ExploredCall,
} from "./adversarial-calls.js";
import {
  describeCall,
  type ExplorationPath,
  type ExplorationSetup,
  type PathOutcome,
} from "./exploration-path.js";
import { layouts, representative, sequences, split } from "./internal/path-space.js";
import { runPath } from "./internal/run-path.js";
import { toolsOfEveryAgent } from "./internal/agent-tools.js";
import { createSandboxTree, type SandboxTree } from "./internal/sandbox-tree.js";
import { defaultProperties, type PathProperty } from "./properties.js";
import { scriptedModel } from "./scripted-model.js";
import { TestKitError } from "./test-kit-error.js";

/** Options of {@link exploreAgent}. */
export interface ExploreOptions {
  /** Your agent's options for one path: your tools, permissions, approvals, limits, with the setup's provider and folders. */
  agent: (setup: ExplorationSetup) => AgentOptions;
  /** The properties checked on every path. Default {@link defaultProperties}. */
  properties?: readonly PathProperty[];
  /**
   * The calls the model tries, from your agent's tools (`place` holds `$CWD` and `$OUTSIDE`, which
   * each path replaces with its own folders). Default: {@link adversarialCalls} of your tools. Use it
   * to add calls of your own (`[...adversarialCalls(tools, place), { name: "refund", arguments: {
   * amount: 101 }, label: "just over the limit" }]`) or to narrow the exploration to a few.
   */
  calls?: (tools: readonly Tool[], place: ExplorationPlace) => ExploredCall[];
  /** Options of the default calls (the size of the huge input). */
  adversarial?: AdversarialCallOptions;
  /** Most calls in one path. Every call is tried alone; longer paths combine `combine`'s calls. Default 2. */
  maxCalls?: number;
  /** Most calls in one turn. Default 2. */
  maxCallsPerTurn?: number;
  /**
   * Which calls paths of two or more calls combine, in every order: `"representative"` (default:
   * per tool the plain call and its first adversarial one) or `"all"`.
   */
  combine?: "representative" | "all";
  /** Run every path under each of these strategies. Default: your configuration's own. */
  strategies?: readonly ToolExecutionStrategy[];
  /** How approvals are answered: `"both"` (default: every path with approve, then each denial), `"approve"`, `"deny"`. */
  approvals?: "both" | "approve" | "deny";
  /** Files the workspace starts with, besides a notes.txt, src/app.ts, .git/ and node_modules/. */
  files?: Record<string, string>;
  /** Paths at most (shortest first). Default 5000. */
  maxPaths?: number;
  /** Real time a run may take before it counts as never ending. Default 10 000 ms. */
  runTimeoutMs?: number;
  /**
   * Also run each path aborted (`agent.abort()`) when its first call starts running and when its
   * first approval is asked: where calls are most often left unanswered. Default `true`.
   */
  aborts?: boolean;
  /** Keep exploring after a failure (each property keeps its shortest failing path). Default `false`. */
  keepGoing?: boolean;
}

/** A property that failed, with the shortest path that breaks it. */
export interface PropertyFailure {
  property: string;
  problems: string[];
  path: ExplorationPath;
  /** The path's events, by type (with the call id where there is one; `(the kit aborts the run)` marks where the kit aborted a run that did not end). */
  events: string[];
  /** The failure, the path step by step, and how to replay it. */
  description: string;
}

/** What an exploration covered and found. */
export interface Exploration {
  /** Paths run. */
  paths: number;
  /** Paths by number of calls. */
  pathsByCalls: Record<number, number>;
  /** Distinct calls tried. */
  calls: number;
  durationMs: number;
  /** `maxPaths` stopped the exploration before it ran every path. */
  truncated: boolean;
  failures: PropertyFailure[];
  /** Throws a `TestKitError` describing the first failure, if any. */
  assertHolds(): void;
}

/**
 * Explores the paths of your agent: its tools, permission rules and modes, approval settings,
 * strategy and limits, driven by scripted models that call every tool with adversarial arguments
 * (`..`, absolute paths, a symlink that leads out, `.git/`, `node_modules/`, a shell that writes
 * outside, huge inputs), alone and combined in every order, each approval approved and denied —
 * and checks properties on every path: no tool that needs approval runs unapproved, no write
 * outside the workspace, every run ends, every call is answered once. Shortest paths run first, so
 * the failure reported is the shortest path that breaks a property; `replayPath` runs it again.
 * Each path runs in a fresh temporary workspace.
 *
 * @example
 * ```ts
 * const exploration = await exploreAgent({
 *   agent: ({ provider, cwd }) => ({
 *     provider,
 *     tools: codingTools({ cwd }),
 *     permissions: createPermissions({ cwd, mode: "default" }),
 *   }),
 * });
 * exploration.assertHolds();
 * ```
 */
export async function exploreAgent(options: ExploreOptions): Promise<Exploration> {
  const started = performance.now();
  const properties = options.properties ?? defaultProperties();
  const maxPaths = options.maxPaths ?? 5000;
  const all = callsOf(options);
  const combined = options.combine === "all" ? all : representative(all);
  const strategies: (ToolExecutionStrategy | undefined)[] = options.strategies
    ? [...options.strategies]
    : [undefined];
  const failures = new Map<string, PropertyFailure>();
  const pathsByCalls: Record<number, number> = {};
  let paths = 0;
  let truncated = false;
  // Trees whose path left a call running (a tool that ignores its abort signal) stay until the end:
  // whatever that call still does lands there, never in a later path's folders.
  const lingering: SandboxTree[] = [];
  const removals: Promise<void>[] = [];
  try {
    explore: for (let size = 1; size <= (options.maxCalls ?? 2); size++) {
      const pool = size === 1 ? all : combined;
      for (const layout of layouts(size, options.maxCallsPerTurn ?? 2)) {
        for (const sequence of sequences(pool, size)) {
          for (const strategy of strategies) {
            const queue: ExplorationPath[] = [
              {
                ...(strategy !== undefined && { strategy }),
                turns: split(sequence, layout),
                decisions: [],
                ...(options.approvals === "deny" && { otherwise: "deny" as const }),
              },
            ];
            while (queue.length > 0) {
              if (paths >= maxPaths) {
                truncated = true;
                break explore;
              }
              const path = queue.shift()!;
              // Every path runs in a fresh workspace.
              const tree = createSandboxTree(options.files);
              const outcome = await runPath(options, path, tree);
              if (outcome.calls.some((c) => c.unfinished)) lingering.push(tree);
              else removals.push(tree.remove());
              paths++;
              pathsByCalls[size] = (pathsByCalls[size] ?? 0) + 1;
              for (const property of properties) {
                if (failures.has(property.name)) continue;
                const problems = [...(property.check(outcome) ?? [])];
                if (problems.length > 0)
                  failures.set(property.name, failure(property.name, problems, outcome));
              }
              if (failures.size > 0 && !options.keepGoing) break explore;
              if (options.approvals === undefined || options.approvals === "both")
                queue.push(...denials(path, outcome));
              if (options.aborts !== false) queue.push(...interruptions(path, outcome));
            }
          }
        }
      }
    }
  } finally {
    await Promise.all([...removals, ...lingering.map((tree) => tree.remove())]);
  }
  const found = [...failures.values()];
  return {
    paths,
    pathsByCalls,
    calls: all.length,
    durationMs: performance.now() - started,
    truncated,
    failures: found,
    assertHolds() {
      if (found.length > 0) throw new TestKitError(found.map((f) => f.description).join("\n\n"));
    },
  };
}

/**
 * Runs one explored path again (from a {@link PropertyFailure}'s `path`), in a fresh workspace,
 * and returns what happened: the events, transcript, calls and changes to the guarded places.
 *
 * @example
 * ```ts
 * const outcome = await replayPath({ agent }, exploration.failures[0].path);
 * console.log(outcome.calls);
 * ```
 */
export async function replayPath(
  options: Pick<ExploreOptions, "agent" | "files" | "runTimeoutMs">,
  path: ExplorationPath,
): Promise<PathOutcome> {
  const tree = createSandboxTree(options.files);
  let outcome: PathOutcome | undefined;
  try {
    outcome = await runPath(options, path, tree);
    return outcome;
  } finally {
    // A call still running writes into a folder of its own, not into a later replay's.
    if (!outcome?.calls.some((c) => c.unfinished)) await tree.remove();
  }
}

/** The path aborted at its first execution and at its first approval, when it has them. */
function interruptions(path: ExplorationPath, outcome: PathOutcome): ExplorationPath[] {
  if (path.abortAt !== undefined || path.decisions.length > 0) return [];
  return [
    ...(outcome.calls.some((c) => c.executed) ? [{ ...path, abortAt: "execution" as const }] : []),
    ...(outcome.approvalsAsked > 0 ? [{ ...path, abortAt: "approval" as const }] : []),
  ];
}

/** The paths that deny one more of the approvals this path asked for (approving the ones before). */
function denials(path: ExplorationPath, outcome: PathOutcome): ExplorationPath[] {
  const more: ExplorationPath[] = [];
  if (path.abortAt !== undefined) return more;
  for (let i = path.decisions.length; i < outcome.approvalsAsked; i++) {
    more.push({
      ...path,
      decisions: [...path.decisions, ...Array<boolean>(i - path.decisions.length).fill(true), false],
    });
  }
  return more;
}

function callsOf(options: ExploreOptions): ExploredCall[] {
  // The tools of the configuration, made once with placeholder folders to read their schemas.
  const probe = createSandboxTree(options.files);
  try {
    const config = options.agent({ provider: scriptedModel([]), cwd: probe.cwd, outside: probe.outside });
    const place = { cwd: "$CWD", outside: "$OUTSIDE" };
    const tools = toolsOfEveryAgent(config);
    if (options.calls) return options.calls(tools, place);
    return [...adversarialCalls(tools, place, options.adversarial), ...transfersOf(config)];
  } finally {
    void probe.remove();
  }
}

/** A call handing the conversation to each handoff agent (a path continues there in its next turn). */
function transfersOf(config: AgentOptions): ExploredCall[] {
  return (config.handoffs ?? []).map((h) => ({
    name: `transfer_to_${h.name}`,
    arguments: {},
    label: `hand off to ${h.name}`,
  }));
}

function failure(property: string, problems: string[], outcome: PathOutcome): PropertyFailure {
  const { path } = outcome;
  const events = eventNames(outcome.events, outcome.kitAbortedAt);
  const calls = path.turns.flat().length;
  const lines = [
    `Property "${property}" fails on a path of ${calls} call${calls === 1 ? "" : "s"}${path.strategy !== undefined ? ` (strategy ${JSON.stringify(path.strategy)})` : ""}:`,
    ...path.turns.map(
      (turn, t) =>
        `  turn ${t + 1}: ${turn.map((c, i) => `p${t + 1}_${i + 1} ${c.name} [${c.label}]`).join(", ")}`,
    ),
    `  approvals asked: ${outcome.approvalsAsked}; answers: ${[...path.decisions.map((d) => (d ? "approve" : "deny")), `then ${path.otherwise ?? "approve"}`].join(", ")}`,
    ...(path.abortAt
      ? [
          `  the user aborts the run at its first ${path.abortAt === "execution" ? "call's start" : "approval request"}`,
        ]
      : []),
    ...problems.map((p) => `  - ${p}`),
    `  events: ${events.join(" → ")}`,
    ...outcome.subAgents.map(
      (sub) =>
        `  events of the sub-agent of ${describeCall(sub.call)}: ${eventNames(sub.events).join(" → ")}`,
    ),
    `  replay: await replayPath(options, failure.path) — the path: ${JSON.stringify(path, (_, v) => (typeof v === "string" && v.length > 200 ? `<${v.length} characters>` : v))}`,
  ];
  return { property, problems, path, events, description: lines.join("\n") };
}

/** Events by type (with the call id where there is one), the kit's own abort marked. */
function eventNames(events: PathOutcome["events"], kitAbortedAt?: number): string[] {
  const names: string[] = [];
  events.forEach((e, i) => {
    if (i === kitAbortedAt) names.push("(the kit aborts the run)");
    if (e.type !== "message_update") names.push("toolCallId" in e ? `${e.type}:${e.toolCallId}` : e.type);
  });
  return names;
}
