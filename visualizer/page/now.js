// What the agent is doing now, in plain words, for the page's header and tab title: "Waiting for you:
// approve `deploy`", "Stopped: model error, 429 (rate limit)". No DOM: the tests call it directly.
import { nextWakeText } from "./agents.js";

/** Words for a provider failure's kind (`agent_end.errorKind`). */
const ERROR_KINDS = {
  rate_limit: "rate limit",
  overloaded: "overloaded",
  auth: "authentication",
  network: "network",
  context_overflow: "context too long",
  aborted: "aborted",
  api: "API error",
};

/** Words for how a run ended (`agent_end.reason`), when it did not simply finish. */
const STOP_REASONS = {
  aborted: "aborted",
  limit: "limit reached",
  rejected: "rejected",
  loop: "loop detected",
};

/** Words for the agent machine's running states. */
const RUNNING_STATES = {
  streaming: "Model is answering",
  executing: "Running tools",
  compacting: "Compacting the context",
};

/** The first line of a message, cut to `max` characters. */
function firstLine(text, max = 160) {
  const line = String(text ?? "")
    .split("\n")[0]
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Why a run stopped, blaming the right thing: a provider failure is the model's ("model error, 429 (rate
 * limit)"), an abort, a limit or a rejection says so with its message. `undefined` for a run that finished.
 *
 * @param {{ reason: string, errorMessage?: string, errorKind?: string, rejection?: string } | null | undefined} end
 * @returns {{ blame: "model" | "tool" | "user" | "limit" | "agent", text: string } | undefined}
 * @example
 * stopReason({ reason: "error", errorKind: "rate_limit", errorMessage: "429 Too Many Requests" });
 * // → { blame: "model", text: "model error, 429 Too Many Requests (rate limit)" }
 */
export function stopReason(end) {
  if (!end?.reason || end.reason === "stop") return undefined;
  const message = firstLine(end.errorMessage ?? end.rejection);
  if (end.reason === "error") {
    // The loop ends with reason "error" only when the model call failed (tool errors go back to the model).
    const kind = ERROR_KINDS[end.errorKind];
    const detail = [message, kind && !message.toLowerCase().includes(kind) ? `(${kind})` : ""]
      .filter(Boolean)
      .join(" ");
    return { blame: "model", text: detail ? `model error, ${detail}` : "model error" };
  }
  const words = STOP_REASONS[end.reason] ?? end.reason;
  const blame = end.reason === "aborted" ? "user" : end.reason === "limit" ? "limit" : "agent";
  return { blame, text: message ? `${words}: ${message}` : words };
}

/**
 * What is happening now, for the header: `text` in plain words, `tone` for its colour ("waiting" when a
 * human is needed, "running", "stopped" after a failed or interrupted run, "idle"), and `waiting`, the
 * number of approvals that wait.
 *
 * @param {import("./model.js").PageModel} model
 * @returns {{ text: string, tone: "waiting" | "running" | "stopped" | "idle" | "connecting", waiting: number }}
 * @example
 * describeNow(model); // → { text: "Waiting for you: approve `deploy`", tone: "waiting", waiting: 1 }
 */
export function describeNow(model) {
  const approvals = [...model.approvals.values()];
  if (approvals.length) {
    const names = [...new Set(approvals.map((a) => `\`${a.toolName}\``))];
    const what =
      approvals.length === 1
        ? `approve ${names[0]}`
        : `approve ${approvals.length} calls (${names.join(", ")})`;
    return { text: `Waiting for you: ${what}`, tone: "waiting", waiting: approvals.length };
  }
  const name = model.stateName;
  if (!name) return { text: "Connecting…", tone: "connecting", waiting: 0 };
  if (name.startsWith("running")) {
    const sub = name.split(".")[1] ?? "";
    if (sub === "executing") {
      const open = [...model.lanes.values()].filter((lane) => !lane.outcome && lane.run === model.run);
      const names = [...new Set(open.map((lane) => `\`${lane.name}\``))];
      if (names.length) return { text: `Running ${names.join(", ")}`, tone: "running", waiting: 0 };
    }
    return { text: RUNNING_STATES[sub] ?? "Running", tone: "running", waiting: 0 };
  }
  const stopped = stopReason(model.lastEnd);
  if (stopped) return { text: `Stopped: ${stopped.text}`, tone: "stopped", waiting: 0 };
  // A schedule will wake it: it sleeps until then, it does not only wait for a person.
  const next = nextWakeText(model.nextWake, model.now || Date.now());
  if (next) return { text: `Sleeping: wakes at ${next}`, tone: "idle", waiting: 0 };
  const later = [...new Set((model.laterPending ?? []).map((l) => `\`${l.toolName}\``))];
  if (later.length)
    return { text: `Sleeping: waits for a late result of ${later.join(", ")}`, tone: "idle", waiting: 0 };
  if (model.lastEnd) return { text: "Done: waiting for a prompt", tone: "idle", waiting: 0 };
  return { text: "Idle: waiting for a prompt", tone: "idle", waiting: 0 };
}

/**
 * The browser tab's title: the count of waiting approvals first, so a background tab says it needs you.
 *
 * @example
 * tabTitle({ text: "Waiting for you: approve `deploy`", waiting: 1 }, "coder");
 * // → "(1) Waiting for you: approve `deploy` · coder"
 */
export function tabTitle(now, agentId) {
  const name = agentId ? `${agentId} · agent-machine` : "agent-machine visualizer";
  return now.waiting ? `(${now.waiting}) ${now.text} · ${name}` : name;
}
