import { type ObservedCall, type PathOutcome, describeCall } from "./exploration-path.js";
import { eventProblems, transcriptProblems } from "./internal/checks.js";

/** A property every explored path must keep. `check` returns what is wrong (nothing: it holds). */
export interface PathProperty {
  name: string;
  check(outcome: PathOutcome): readonly string[] | void;
}

/**
 * No call that needs approval runs without it, at any depth: the calls a sub-agent's model makes
 * count as much as the explored agent's own (the problem names the depth and the sub-agent call,
 * e.g. `deploy call_1_0 (depth 1, inside ops p1_1) ran without approval`). By default a call needs
 * approval when its tool is not `readOnly`; pass `needsApproval` to say what your policy is (e.g.
 * "bash and writes outside docs/"); `call.depth` and `call.parent` say where a call was made.
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
        .map((call) => `${describeCall(call)} ran without approval (${JSON.stringify(short(call.args))})`),
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
        .map(({ change, calls }) => `${change} (during ${calls.map(duringCall).join(", ") || "no call"})`),
  };
}

function duringCall(call: ObservedCall): string {
  return `${describeCall(call)}${call.outlivedRun ? ", still running after its run ended" : ""}`;
}

/**
 * Every run ends: `agent_end` comes within the exploration's `runTimeoutMs`. The problem lists the
 * run's last events before the kit aborted it (what came after, `agent_end` included, is the kit's).
 *
 * @example
 * ```ts
 * exploreAgent({ agent, properties: [runEnds()] })
 * ```
 */
export function runEnds(): PathProperty {
  return {
    name: "every run ends",
    check: ({ ended, events, kitAbortedAt }) => {
      if (ended) return [];
      const before = events.slice(0, kitAbortedAt ?? events.length);
      const after = events.slice(before.length).map((e) => e.type);
      return [
        `no agent_end; the last events were ${
          before
            .slice(-5)
            .map((e) => e.type)
            .join(", ") || "none"
        }${after.length > 0 ? `; then the kit aborted the run (${after.join(", ")})` : ""}`,
      ];
    },
  };
}

/**
 * Every call is answered exactly once, in order (the transcript every provider accepts), and the
 * events keep the run's invariants (one start and one end per call, turns and messages paired):
 * in the explored agent's run and in each sub-agent's run that ended.
 *
 * @example
 * ```ts
 * exploreAgent({ agent, properties: [callsAnsweredOnce()] })
 * ```
 */
export function callsAnsweredOnce(): PathProperty {
  return {
    name: "every call is answered once",
    check: ({ transcript, events, ended, subAgents }) =>
      ended
        ? [
            ...transcriptProblems(transcript),
            ...eventProblems(events),
            ...subAgents
              .filter((sub) => sub.events.some((e) => e.type === "agent_end"))
              .flatMap((sub) =>
                [...transcriptProblems(sub.transcript), ...eventProblems(sub.events)].map(
                  (problem) => `in the sub-agent of ${describeCall(sub.call)}: ${problem}`,
                ),
              ),
          ]
        : [],
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
