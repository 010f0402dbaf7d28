import type { AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import type { Tool } from "../tools/define-tool.js";
import type { ExplorationPath } from "./explore.js";
import { eventProblems, transcriptProblems } from "./internal/checks.js";

/** One call as the exploration saw it run (or not). */
export interface ObservedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The tool's `execute` ran. */
  executed: boolean;
  /** The call was approved (`agent.approve`), denied, or never asked about. */
  approval?: "approved" | "denied";
  /** The tool, when the agent has one by that name. */
  tool?: Tool;
}

/** What a property sees of one explored path. */
export interface PathOutcome {
  path: ExplorationPath;
  /** Every event of the run, in order. */
  events: AgentEvent[];
  /** The transcript afterwards. */
  transcript: AgentMessage[];
  calls: ObservedCall[];
  /** The run ended (`agent_end`) within the exploration's `runTimeoutMs`. */
  ended: boolean;
  /** Approvals the run asked for. */
  approvalsAsked: number;
  /**
   * Changes to the guarded places — the folder beside the workspace, the workspace's `.git/` and
   * `node_modules/`, anything new beside the workspace — each with the calls that were running
   * (or had just run) when it was seen.
   */
  guardedChanges: { change: string; calls: ObservedCall[] }[];
  /** The workspace root and the folder beside it. */
  cwd: string;
  outside: string;
}

/** A property every explored path must keep. `check` returns what is wrong (nothing: it holds). */
export interface PathProperty {
  name: string;
  check(outcome: PathOutcome): readonly string[] | void;
}

/**
 * No call that needs approval runs without it. By default a call needs approval when its tool is
 * not `readOnly`; pass `needsApproval` to say what your policy is (e.g. "bash and writes outside
 * docs/").
 *
 * @example
 * ```ts
 * approvalRequired((call) => call.name === "bash" || call.name === "write_file")
 * ```
 */
export function approvalRequired(
  needsApproval: (call: ObservedCall) => boolean = (call) => !call.tool?.readOnly,
): PathProperty {
  return {
    name: "no tool that needs approval runs unapproved",
    check: ({ calls }) =>
      calls
        .filter((call) => call.executed && call.approval !== "approved" && needsApproval(call))
        .map((call) => `${call.name} ${call.id} ran without approval (${JSON.stringify(short(call.args))})`),
  };
}

/**
 * Nothing outside the workspace changes, nor its `.git/` and `node_modules/`. A change made while
 * an approved call of a `trustedWhenApproved` tool ran (alone or beside others) is the approver's (default `["bash"]`: a
 * shell the user approved may write anywhere unless the OS sandbox confines it — pass `[]` to hold
 * it to the workspace too, as `codingTools({ sandbox: true })` does).
 *
 * @example
 * ```ts
 * noWriteOutsideWorkspace({ trustedWhenApproved: [] })
 * ```
 */
export function noWriteOutsideWorkspace(
  options: { trustedWhenApproved?: readonly string[] } = {},
): PathProperty {
  const trusted = new Set(options.trustedWhenApproved ?? ["bash"]);
  return {
    name: "no write outside the workspace",
    check: ({ guardedChanges }) =>
      guardedChanges
        .filter(
          ({ calls }) =>
            // A change seen while an approved shell ran is the shell's: calls beside it cannot be told apart.
            !calls.some((c) => c.approval === "approved" && trusted.has(c.name)),
        )
        .map(
          ({ change, calls }) =>
            `${change} (during ${calls.map((c) => `${c.name} ${c.id}`).join(", ") || "no call"})`,
        ),
  };
}

/**
 * Every run ends: `agent_end` comes within the exploration's `runTimeoutMs`.
 *
 * @example
 * ```ts
 * exploreAgent({ agent, properties: [runEnds()] })
 * ```
 */
export function runEnds(): PathProperty {
  return {
    name: "every run ends",
    check: ({ ended, events }) =>
      ended
        ? []
        : [
            `no agent_end; the last events were ${events
              .slice(-5)
              .map((e) => e.type)
              .join(", ")}`,
          ],
  };
}

/**
 * Every call is answered exactly once, in order (the transcript every provider accepts), and the
 * events keep the run's invariants (one start and one end per call, turns and messages paired).
 *
 * @example
 * ```ts
 * exploreAgent({ agent, properties: [callsAnsweredOnce()] })
 * ```
 */
export function callsAnsweredOnce(): PathProperty {
  return {
    name: "every call is answered once",
    check: ({ transcript, events, ended }) =>
      ended ? [...transcriptProblems(transcript), ...eventProblems(events)] : [],
  };
}

/**
 * The properties `exploreAgent` checks unless told otherwise.
 *
 * @example
 * ```ts
 * exploreAgent({ agent, properties: [...defaultProperties(), myProperty] })
 * ```
 */
export function defaultProperties(): PathProperty[] {
  return [approvalRequired(), noWriteOutsideWorkspace(), runEnds(), callsAnsweredOnce()];
}

function short(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [
      k,
      typeof v === "string" && v.length > 60 ? `<${v.length} characters>` : v,
    ]),
  );
}
