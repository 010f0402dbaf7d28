// Types of the page's model (model.js), for the server and the tests that fold messages with it.
import type { AgentMessage } from "../../core/messages.js";
import type { NextWake, PendingLater, VisualizerMessage } from "../wire.js";

export interface Lane {
  id: string;
  name: string;
  run: number;
  turn: number;
  group: string;
  queuedAt: number;
  startAt?: number;
  approvalAt?: number;
  execAt?: number;
  endAt?: number;
  outcome?: string;
  state?: string;
  resultText: string;
  progress: string;
  childAgentId?: string;
  args?: unknown;
}

export interface PageModel {
  agentId: string;
  state: unknown;
  stateName: string;
  context: unknown;
  execution: unknown;
  run: number;
  turn: number;
  runs: {
    run: number;
    startedAt: number;
    prompt: string;
    endedAt?: number;
    reason?: string;
    errorMessage?: string;
    errorKind?: string;
    rejection?: string;
    /** Every tool call and turn of the run, drawn as lanes or not. */
    calls: number;
    turns: number;
    /** Turns (and their calls) whose lanes left the model: older than the last MAX_TURN_GROUPS turns. */
    prunedTurns?: number;
    prunedCalls?: number;
    /** The output checks of the run's answers (`output_filter`, `output_invalid`), in order. */
    /** What woke the run, when a schedule, an event or a late result started it. */
    wokenBy?: { source: string; id?: string };
    checks?: { verdict: "pass" | "warn" | "reject" | "invalid"; label: string; title: string }[];
  }[];
  messages: AgentMessage[];
  streaming: { text: string; thinking: string; calls: number } | null;
  lanes: Map<string, Lane>;
  groups: string[];
  approvals: Map<
    string,
    { toolCallId: string; toolName: string; args: unknown; t: number; description?: string }
  >;
  subAgents: Map<string, { agentId: string; value: unknown; path?: string[]; toolName?: string; t?: number }>;
  activeAgent?: string;
  handoffs: { t: number; from: string; to: string; toolCallId: string }[];
  wokenBy?: { source: string; id?: string; t: number };
  nextWake: NextWake | null;
  laterPending: PendingLater[];
  usage: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    totalTokens: number;
    cost: number;
  };
  modelCalls: number;
  toolCalls: number;
  compactions: { t: number; level: number; before: number; after: number }[];
  lastEnd: {
    reason: string;
    errorMessage?: string;
    errorKind?: string;
    rejection?: string;
    t: number;
  } | null;
  now: number;
  visited: Map<string, number>;
  log: { t: number; type: string; detail: string; index?: number; summarized?: boolean }[];
}

export const MAX_TURN_GROUPS: number;
export const MAX_LOG_ROWS: number;
export const MAX_HANDOFFS: number;
export const LANE_RESULT_CHARS: number;
export function emptyModel(): PageModel;
export function apply(
  model: PageModel,
  message: VisualizerMessage,
  options?: { dirty?: Set<string>; index?: number },
): Set<string> | undefined;
export function stateName(value: unknown): string;
export function activeIds(rootId: string, value: unknown): string[];
export function laneStatus(lane: Lane): string;
export function cloneModel(model: PageModel): PageModel;
export function serializeModel(model: PageModel): unknown;
export function restoreModel(data: unknown): PageModel;
