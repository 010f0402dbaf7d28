import { and } from "xstate";
import type { InboxKind } from "../core/effect-journal.js";
import { agentSetup } from "./agent/agent-setup.js";
import { boundChildEvents } from "./child-event-candidates.js";
import { callOutput, executionOutput } from "./agent/actions/tool-calls.js";
import { errorText } from "./agent/actions/model-answer.js";
import { type AgentMachineEvent, initialContext } from "./agent/context.js";

export type { AgentContext, AgentMachineEvent, AgentMachineInput } from "./agent/context.js";

/** How a turn opens: `turn_start`, the queued messages announced, then both in the context. */
const START_TURN = ["announceTurnStart", "announceQueued", "openTurn"] as const;

/**
 * The agent loop as a statechart. The README's "The loop" draws it:
 * idle → running (turnGate → compacting → streaming → executing → turnEnd → steeringCheck →
 * followUpCheck → ending) → idle. The transient `turnGate` and `turnEnd` decide the unusual turns
 * (limits, compaction, errors, aborts, loops); the usual one goes executing → steeringCheck →
 * streaming without them (each state passed costs XState a snapshot), with the same actions and events.
 *
 * This file is the statechart alone: the guards and actions it names by string are defined in
 * `agent/agent-setup.ts` (guards.ts, and actions/ by concern), the actors in `agent/actors.ts`.
 *
 * @example
 * ```ts
 * const agent = createActor(agentMachine, { input: {} }); // with a runtime: see createAgent
 * ```
 */
export const agentMachine = agentSetup.createMachine({
  id: "agent",
  context: ({ input }) => initialContext(input),
  initial: "idle",
  on: {
    STEER: { actions: { type: "enqueueSteering", params: ({ event }) => event.message } },
    FOLLOW_UP: { actions: { type: "enqueueFollowUp", params: ({ event }) => event.message } },
    CLEAR_QUEUES: { actions: "clearQueues" },
  },
  states: {
    idle: {
      on: {
        PROMPT: {
          target: "running",
          // Steering queued while idle is taken with the prompt, in the run's first turn.
          actions: [
            "beginRun",
            { type: "queueMessages", params: ({ event }) => event.messages },
            "takeQueuedSteering",
          ],
        },
        CONTINUE: { target: "running", actions: ["beginRun", "queueContinuation"] },
        PROMPT_REJECTED: { actions: { type: "rejectInput", params: ({ event }) => event.reason } },
        COMPACTED: { actions: { type: "applyIdleCompaction", params: ({ event }) => event.result } },
      },
    },
    running: {
      // The deadline actor, if the run has one (see beginRun).
      exit: "stopRunDeadline",
      on: {
        DEADLINE: { actions: ["noteDeadline", "raiseAbort"] },
      },
      initial: "turnGate",
      states: {
        turnGate: {
          always: [
            {
              guard: and(["limitWantsAnswer", "answerNeedsCompaction"]),
              target: "compacting",
              actions: ["askForAnswer", ...START_TURN],
            },
            { guard: "limitWantsAnswer", target: "streaming", actions: ["askForAnswer", ...START_TURN] },
            { guard: "limitReached", target: "ending", actions: "noteLimit" },
            { guard: "turnNeedsCompaction", target: "compacting", actions: START_TURN },
            { target: "streaming", actions: START_TURN },
          ],
        },
        // Entered only when the context is over budget (or a request was refused as too long).
        compacting: {
          initial: "reducing",
          on: {
            ABORT: {
              target: "turnEnd",
              actions: [
                "noteAbort",
                { type: "recordEmptyTurn", params: { stopReason: "aborted", error: "Aborted" } },
              ],
            },
          },
          states: {
            reducing: {
              invoke: {
                id: "compaction",
                src: "compaction",
                input: ({ context }) => ({
                  turn: context.run.turn,
                  force: context.run.forceCompaction,
                  calibration: context.calibration,
                  ...(context.learnedMaxContextTokens !== undefined && {
                    maxContextTokens: context.learnedMaxContextTokens,
                  }),
                }),
                onDone: [
                  {
                    guard: { type: "compactionCannotHelp", params: ({ event }) => event.output },
                    target: "#agent.running.turnEnd",
                    actions: "recordOverflowFailure",
                  },
                  {
                    // What the summary cost is counted: the call it leaves no budget for is not made.
                    guard: { type: "summaryLeavesNoCall", params: ({ event }) => event.output },
                    target: "#agent.running.turnEnd",
                    actions: [{ type: "applyCompaction", params: ({ event }) => event.output }, "noteLimit"],
                  },
                  {
                    target: "#agent.running.streaming",
                    actions: { type: "applyCompaction", params: ({ event }) => event.output },
                  },
                ],
                onError: {
                  target: "#agent.running.turnEnd",
                  actions: {
                    type: "recordEmptyTurn",
                    params: ({ event }) => ({
                      stopReason: "error",
                      error: `Compaction failed: ${errorText(event.error)}`,
                    }),
                  },
                },
              },
            },
          },
        },
        streaming: {
          invoke: {
            id: "modelStream",
            src: "modelStream",
            input: ({ context }) => ({
              turn: context.run.turn,
              ...(context.run.answeringLimit && { toolChoice: "none" as const }),
              ...(context.run.output && { output: context.run.output }),
            }),
            onError: {
              target: "turnEnd",
              actions: {
                type: "recordEmptyTurn",
                params: ({ event }) => ({
                  stopReason: "error",
                  error: `Model stream failed: ${errorText(event.error)}`,
                }),
              },
            },
          },
          on: {
            TOOL_CALL_READY: { actions: { type: "startEagerCall", params: ({ event }) => event.toolCall } },
            STREAM_DONE: [
              {
                guard: { type: "overflowRetryable", params: ({ event }) => event },
                target: "compacting",
                actions: [
                  { type: "learnContextWindow", params: ({ event }) => event },
                  { type: "prepareOverflowRetry", params: ({ event }) => event },
                ],
              },
              {
                guard: { type: "callsNotToRun", params: ({ event }) => event },
                target: "turnEnd",
                actions: [
                  { type: "recordAssistant", params: ({ event }) => event },
                  { type: "answerUnranCalls", params: ({ event }) => event },
                ],
              },
              {
                guard: { type: "hasToolCalls", params: ({ event }) => event },
                target: "executing",
                actions: { type: "recordAssistant", params: ({ event }) => event },
              },
              {
                target: "turnEnd",
                actions: [
                  { type: "learnContextWindow", params: ({ event }) => event },
                  { type: "recordAssistant", params: ({ event }) => event },
                  { type: "recordAnswer", params: ({ event }) => event },
                ],
              },
            ],
            ABORT: { actions: ["noteAbort", "forwardAbortToStream"] },
          },
        },
        executing: {
          entry: "planExecution",
          on: {
            GROUP_DONE: { actions: { type: "appendToolResults", params: ({ event }) => event.results } },
            // Where the run cannot end with this turn, straight to steeringCheck (turnEnd's other way).
            "xstate.done.actor.toolExecution": [
              {
                guard: { type: "handsOff", params: ({ event }) => executionOutput(event) },
                target: "handingOff",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => executionOutput(event) },
                  "stopExecution",
                ],
              },
              {
                guard: "runMayEndWithTurn",
                target: "turnEnd",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => executionOutput(event) },
                  "stopExecution",
                ],
              },
              {
                target: "steeringCheck",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => executionOutput(event) },
                  "stopExecution",
                  "publishTurnEnd",
                ],
              },
            ],
            // The one call of a turn that has only one, run as the agent's own child.
            "xstate.done.actor.*": [
              {
                guard: { type: "handsOff", params: ({ event }) => callOutput(event) },
                target: "handingOff",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => callOutput(event) },
                  "stopCall",
                ],
              },
              {
                guard: "runMayEndWithTurn",
                target: "turnEnd",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => callOutput(event) },
                  "stopCall",
                ],
              },
              {
                target: "steeringCheck",
                actions: [
                  { type: "appendToolResults", params: ({ event }) => callOutput(event) },
                  "stopCall",
                  "publishTurnEnd",
                ],
              },
            ],
            "xstate.error.actor.*": {
              target: "turnEnd",
              actions: [
                {
                  type: "answerMissingResults",
                  params: ({ event }: { event: AgentMachineEvent }) =>
                    "error" in event ? event.error : undefined,
                },
                "stopFailedChild",
              ],
            },
            ABORT: [
              { guard: "executionSpawned", actions: ["noteAbort", "forwardAbortToExecution"] },
              { target: "turnEnd", actions: ["noteAbort", "abortCall"] },
            ],
            STEER: {
              actions: [
                { type: "enqueueSteering", params: ({ event }) => event.message },
                "tellExecutionAboutSteering",
              ],
            },
          },
        },
        // A transfer was among the turn's calls: the agent it named answers from the next turn on.
        handingOff: {
          entry: "switchAgent",
          always: "turnEnd",
        },
        turnEnd: {
          always: [
            { guard: "runMustEnd", target: "ending", actions: "publishTurnEnd" },
            { target: "steeringCheck", actions: "publishTurnEnd" },
          ],
        },
        steeringCheck: {
          entry: { type: "scheduleCheck", params: "steering" satisfies InboxKind },
          on: {
            CHECK: [
              { guard: "hasSteering", target: "turnGate", actions: "takeSteering" },
              // The usual next turn, without a step through turnGate (which decides the others).
              { guard: "nextTurnStreams", target: "streaming", actions: ["announceTurnStart", "openTurn"] },
              { guard: "turnHadToolCalls", target: "turnGate" },
              { target: "followUpCheck" },
            ],
            ABORT: { target: "ending", actions: "noteAbort" },
          },
        },
        followUpCheck: {
          entry: { type: "scheduleCheck", params: "followUp" satisfies InboxKind },
          on: {
            CHECK: [
              // An answer not taken (invalid output, a filter's reject) goes back to the model first.
              { guard: "answerNeedsRetry", target: "turnGate", actions: "askForBetterAnswer" },
              { guard: "hasFollowUp", target: "turnGate", actions: "takeFollowUp" },
              { target: "ending" },
            ],
            ABORT: { target: "ending", actions: "noteAbort" },
          },
        },
        ending: {
          entry: "finishRun",
          always: "#agent.idle",
        },
      },
    },
  },
});

// A tool call's done event is typed with its id: XState would keep an entry per call for the
// process's life without this (see boundChildEvents).
boundChildEvents(agentMachine);
