// An agent as actor logic for the app's own XState machine: `invoke: { src: fromAgent(...) }` or
// `spawnChild(fromAgent(...))`. The actor owns one AgentSession (the live agent, not data: it rides
// on the snapshot under a symbol, so it never reaches a persisted snapshot) and runs one prompt;
// its persisted snapshot holds the agent's own (versioned) snapshot, so the parent's persisted
// snapshot carries the agent whole and restoring the parent resumes it mid-run.
import type * as z from "zod";
import type { ActorLogic, ActorRefFrom, ActorSystem, AnyActorRef, EventObject, Snapshot } from "xstate";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import type { AgentOptions, PromptInput } from "../core/options.js";
import type { InferOutput, OutputOption } from "../core/output.js";
import { type RunOutcome, runOutcomeOf } from "../core/run-outcome.js";
import type { ToolResult } from "../core/tool.js";
import type { Agent } from "./agent.js";
import { createAgent } from "./create-agent.js";

/** Options of {@link fromAgent}. */
export interface FromAgentOptions<TInput, O extends OutputOption | undefined, TRawInput = TInput> {
  /**
   * The agent's options, as `createAgent` takes them (its `output` types the actor's output). Not
   * `snapshot`, `parentActor` or `id`: the actor restores, places and names the agent itself.
   */
  agent: Omit<AgentOptions, "snapshot" | "parentActor" | "id" | "messages"> & { output?: O };
  /**
   * A zod schema the actor's input must pass; input that fails it makes the actor fail at once
   * (`onError`, with a {@link FromAgentInputError} saying what is wrong) and the agent never starts.
   */
  input?: z.ZodType<TInput, TRawInput>;
  /** The prompt of the run, from the (checked) input. */
  prompt: (input: TInput) => PromptInput;
  /** The transcript the agent starts with (e.g. an earlier agent's messages, carried in the input). */
  messages?: (input: TInput) => readonly AgentMessage[];
  /**
   * Which of the agent's events are also sent to the parent machine, as `agent.<type>` events (e.g.
   * `agent.approval_requested`) with the agent's `agentId`. Default: every type but the streamed
   * deltas (`message_update`, `output_delta`, `tool_execution_update`), which would cost the parent
   * one transition each. Every event, deltas included, is `emit`ted besides (`actorRef.on(...)`).
   */
  parentEvents?: readonly AgentEvent["type"][] | "all";
}

/**
 * The events an agent actor takes from its parent (`sendTo(agentActorId, event)`). A command that
 * cannot be carried out (an approval for a call that no longer waits, say) leaves the agent as it
 * was and reaches the parent as `agent.command_rejected` with the reason.
 */
export type AgentActorEvent =
  | { type: "agent.steer"; message: string | AgentMessage }
  | { type: "agent.followUp"; message: string | AgentMessage }
  | { type: "agent.approve"; toolCallId: string; args?: unknown }
  | { type: "agent.deny"; toolCallId: string; reason?: string }
  | { type: "agent.resolveToolCall"; toolCallId: string; result: string | ToolResult }
  | { type: "agent.rejectToolCall"; toolCallId: string; reason: string }
  | { type: "agent.abort" };

/** What the agent actor sends its parent: an agent event renamed `agent.<type>`, or a refused command. */
export type AgentActorParentEvent =
  (Omit<AgentEvent, "type"> & { type: `agent.${AgentEvent["type"]}`; agentId: string }) | CommandRejected;

/** A command of the parent's that the agent could not carry out (the agent is left as it was). */
export interface CommandRejected {
  type: "agent.command_rejected";
  agentId: string;
  command: string;
  error: string;
}

/** The agent actor's snapshot: its output is the run's outcome; `context` is data only. */
export type AgentActorSnapshot<TInput, TOutput> = Snapshot<RunOutcome<TOutput>> & {
  context: {
    /** The actor's input, as checked. */
    input: TInput;
    /** The run was started (a restored actor does not prompt again). */
    prompted: boolean;
    /** The agent's persisted snapshot, as last persisted or restored (the live one is read on persist). */
    agent?: unknown;
  };
};

/** The actor logic {@link fromAgent} makes. */
export type AgentActorLogic<TInput, TOutput, TRawInput = TInput> = ActorLogic<
  AgentActorSnapshot<TInput, TOutput>,
  AgentActorEvent | InternalEvent,
  TRawInput,
  ActorSystem<any>,
  AgentEvent | CommandRejected
>;

/** The input of an agent actor failed its schema (`fromAgent({ input })`). */
export class FromAgentInputError extends TypeError {
  override readonly name = "FromAgentInputError";
}

type InternalEvent =
  | { type: typeof RUN_ENDED; outcome: RunOutcome }
  | { type: typeof RUN_FAILED; error: string }
  // What XState sends an actor it stops.
  | { type: "xstate.stop" };

const RUN_ENDED = "agent-machine.fromAgent.ended";
const RUN_FAILED = "agent-machine.fromAgent.failed";
const SESSION = Symbol("agent session");
const DELTAS = new Set<string>(["message_update", "output_delta", "tool_execution_update"]);

const FROM_AGENT_KEYS: OptionKeys<FromAgentOptions<unknown, undefined>> = {
  agent: true,
  input: true,
  prompt: true,
  messages: true,
  parentEvents: true,
};

/** The live agent of one actor, with what it must release. */
interface Live {
  session: Agent;
  release(): void;
}

type Held<TInput, TOutput> = AgentActorSnapshot<TInput, TOutput> & { [SESSION]?: Live };

/**
 * Actor logic that runs an agent inside your own XState v5 machine. Invoke it (or spawn it) with
 * an input; the actor prompts the agent once and finishes with the run's outcome as its output
 * (`onDone`: `event.output.reason`, `.messages`, `.output` typed from the agent's output schema).
 * The agent's events are emitted (`actorRef.on("approval_requested", ...)`) and sent to the parent
 * as `agent.<type>` events (`on: { "agent.approval_requested": ... }`); the parent steers,
 * approves, denies, answers client-run tools and aborts by sending it {@link AgentActorEvent}s.
 * The agent's machine is a child of this actor, so an inspector of the app's machine shows it.
 * The parent's persisted snapshot holds the agent's (versioned) snapshot: restoring the parent
 * resumes the agent where it was, a pending approval still pending.
 *
 * @example
 * ```ts
 * const writer = fromAgent({
 *   agent: { provider, systemPrompt: "You draft replies.", tools: [sendEmail] },
 *   input: z.object({ ticket: z.string() }),
 *   prompt: ({ ticket }) => `Draft a reply to: ${ticket}`,
 * });
 * const app = setup({ actors: { writer } }).createMachine({
 *   initial: "drafting",
 *   states: {
 *     drafting: {
 *       invoke: { id: "writer", src: "writer", input: { ticket: "My card was charged twice" },
 *                 onDone: "review" },
 *       on: { "agent.approval_requested": { actions: sendTo("writer", ({ event }) =>
 *               ({ type: "agent.approve", toolCallId: event.toolCallId })) } },
 *     },
 *     review: {},
 *   },
 * });
 * ```
 */
export function fromAgent<
  TInput = unknown,
  O extends OutputOption | undefined = undefined,
  TRawInput = TInput,
>(
  options: FromAgentOptions<TInput, O, TRawInput>,
): AgentActorLogic<TInput, undefined extends O ? unknown : InferOutput<O>, TRawInput> {
  checkOptionKeys("fromAgent", options, FROM_AGENT_KEYS);
  if (typeof options.prompt !== "function")
    throw new TypeError("fromAgent: prompt must be a function of the input");
  if (options.agent === null || typeof options.agent !== "object") {
    throw new TypeError("fromAgent: agent must be the agent's options (as createAgent takes them)");
  }
  for (const key of ["snapshot", "parentActor", "id", "messages"] as const) {
    if (key in options.agent) {
      throw new TypeError(
        `fromAgent: agent.${key} is set by the actor (${key === "messages" ? "use fromAgent({ messages })" : "it restores, places and names the agent"})`,
      );
    }
  }
  type TOutput = undefined extends O ? unknown : InferOutput<O>;
  type S = Held<TInput, TOutput>;
  const forwarded = parentEventFilter(options.parentEvents);

  return {
    config: options,
    getInitialSnapshot(_scope, input): S {
      const checked = checkInput(options.input, input);
      if (!checked.ok) {
        return {
          status: "error",
          error: checked.error,
          output: undefined,
          context: { input: input as unknown as TInput, prompted: false },
        };
      }
      return {
        status: "active",
        output: undefined,
        error: undefined,
        context: { input: checked.value, prompted: false },
      };
    },
    start(snapshot: S, scope) {
      if (snapshot.status !== "active") return;
      snapshot[SESSION] = startSession(options, snapshot, scope.self, forwarded, scope.emit);
      snapshot.context.prompted = true;
    },
    transition(snapshot: S, event, scope): S {
      const live = snapshot[SESSION];
      if (event.type === RUN_ENDED || event.type === RUN_FAILED) {
        if (snapshot.status !== "active") return snapshot;
        const agent = live ? persistedOf(live) : snapshot.context.agent;
        live?.release();
        return event.type === RUN_ENDED
          ? {
              status: "done",
              output: event.outcome as RunOutcome<TOutput>,
              error: undefined,
              context: { ...snapshot.context, agent },
            }
          : {
              status: "error",
              output: undefined,
              error: new Error(event.error),
              context: { ...snapshot.context, agent },
            };
      }
      if (event.type === "xstate.stop") {
        live?.session.abort();
        live?.release();
        return { ...snapshot, status: "stopped" } as S;
      }
      if (!live || snapshot.status !== "active") return snapshot;
      const refused = carryOut(live.session, event as AgentActorEvent);
      if (refused !== undefined) {
        const rejected = {
          type: "agent.command_rejected",
          agentId: scope.self.id,
          command: event.type,
          error: refused,
        };
        scope.emit(rejected as unknown as AgentEvent);
        sendToParent(scope.self, rejected);
      }
      return snapshot;
    },
    getPersistedSnapshot(snapshot: S) {
      const live = snapshot[SESSION];
      const { status, output, error, context } = snapshot;
      return {
        status,
        output,
        error: error instanceof Error ? { name: error.name, message: error.message } : error,
        context: { ...context, agent: live ? persistedOf(live) : context.agent },
      };
    },
    restoreSnapshot(persisted) {
      const restored = persisted as S;
      return { ...restored, context: { ...restored.context } };
    },
  } as AgentActorLogic<TInput, TOutput, TRawInput>;
}

/** Checks the actor's input against its schema: the value the schema gives, or the error saying why not. */
export function checkInput<TInput>(
  schema: z.ZodType<TInput, any> | undefined,
  input: unknown,
): { ok: true; value: TInput } | { ok: false; error: FromAgentInputError } {
  if (!schema) return { ok: true, value: input as TInput };
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.map(
    (i) => `${i.path.length ? i.path.join(".") : "input"}: ${i.message}`,
  );
  return {
    ok: false,
    error: new FromAgentInputError(
      `fromAgent: the actor's input fails its schema (${problems.join("; ")}); the agent was not started`,
    ),
  };
}

/** The agent-event filter for the parent, from the `parentEvents` option. */
function parentEventFilter(
  option: FromAgentOptions<unknown, undefined>["parentEvents"],
): (type: string) => boolean {
  if (option === "all") return () => true;
  if (option === undefined) return (type) => !DELTAS.has(type);
  if (!Array.isArray(option))
    throw new TypeError('fromAgent: parentEvents must be an array of event types or "all"');
  const types = new Set<string>(option);
  return (type) => types.has(type);
}

/** Makes (or restores) the actor's agent, follows its events and, on a first start, prompts it. */
function startSession<TInput>(
  options: FromAgentOptions<TInput, OutputOption | undefined, any>,
  snapshot: AgentActorSnapshot<TInput, unknown>,
  self: AnyActorRef,
  forwarded: (type: string) => boolean,
  emit: (event: AgentEvent | CommandRejected) => void,
): Live {
  const { input, prompted, agent: restored } = snapshot.context;
  const messages = restored === undefined ? options.messages?.(input) : undefined;
  const session = createAgent({
    ...options.agent,
    id: self.id,
    parentActor: self,
    ...(restored !== undefined && { snapshot: restored }),
    ...(messages && { messages: [...messages] }),
  } as AgentOptions) as Agent;
  const subscription = session.events$.subscribe((event) => {
    emit(event);
    if (forwarded(event.type)) {
      sendToParent(self, { ...(event as object), type: `agent.${event.type}`, agentId: self.id });
    }
    if (event.type === "agent_end") self.send({ type: RUN_ENDED, outcome: runOutcomeOf(event) });
  });
  const live: Live = {
    session,
    release() {
      subscription.unsubscribe();
      session.stop();
    },
  };
  if (!prompted) {
    // The run ends in `agent_end` (followed above); it only rejects when it cannot start.
    session.prompt(options.prompt(input)).catch((error: unknown) => {
      self.send({ type: RUN_FAILED, error: error instanceof Error ? error.message : String(error) });
    });
  } else {
    // Restored mid-run: wake its actor, which resumes the run where the snapshot left it.
    void session.actor;
  }
  return live;
}

/** Carries out a parent's command on the agent; the reason it could not, if it could not. */
export function carryOut(agent: Agent, event: AgentActorEvent): string | undefined {
  try {
    switch (event.type) {
      case "agent.steer":
        agent.steer(event.message);
        return;
      case "agent.followUp":
        agent.followUp(event.message);
        return;
      case "agent.approve":
        agent.approve(event.toolCallId, event.args !== undefined ? { args: event.args } : undefined);
        return;
      case "agent.deny":
        agent.deny(event.toolCallId, event.reason);
        return;
      case "agent.resolveToolCall":
        agent.resolveToolCall(event.toolCallId, event.result);
        return;
      case "agent.rejectToolCall":
        agent.rejectToolCall(event.toolCallId, event.reason);
        return;
      case "agent.abort":
        agent.abort();
        return;
      default:
        return `unknown command "${(event as EventObject).type}" (an agent actor takes agent.steer, agent.followUp, agent.approve, agent.deny, agent.resolveToolCall, agent.rejectToolCall, agent.abort)`;
    }
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function persistedOf(live: Live): unknown {
  return live.session.getPersistedSnapshot();
}

/** Sends to the parent from this actor (so an inspector sees who sent it). */
function sendToParent(self: AnyActorRef, event: EventObject & Record<string, unknown>): void {
  const parent = self._parent;
  if (!parent) return;
  (
    self.system as unknown as { _relay(source: AnyActorRef, target: AnyActorRef, event: EventObject): void }
  )._relay(self, parent, event);
}

/** The actor ref of an agent actor (what `spawnChild` / `invoke` make from {@link fromAgent}). */
export type AgentActorRef<TInput, TOutput, TRawInput = TInput> = ActorRefFrom<
  AgentActorLogic<TInput, TOutput, TRawInput>
>;
