// The tree of agents, in words, for the page's Agents panel: the agent that answers now (a handoff
// changes it), under it the sub-agents its calls run, at any depth, each with what it is doing;
// and when it sleeps, what woke it last and when a schedule wakes it next. No DOM: the tests call it.
import { stateName } from "./model.js";

/** Words for an agent machine's state, as a tree row shows it. */
function stateWords(value) {
  const name = stateName(value);
  if (!name) return "starting";
  if (name === "idle") return "idle";
  const sub = name.split(".")[1];
  if (name.startsWith("running"))
    return sub === "streaming"
      ? "model is answering"
      : sub === "executing"
        ? "running tools"
        : sub === "handingOff"
          ? "handing off"
          : sub === "compacting"
            ? "compacting"
            : "running";
  return name;
}

/**
 * The agents of a page model as a tree: `{ key, label, agentId, status, active, children }` rows,
 * the root the agent itself (labelled with the agent answering now after a handoff), each
 * sub-agent under the call that runs it (`key`: the path of call ids, `"p1/r1"`). A sub-agent whose
 * top call ended says how; one whose call waits for approval says so.
 *
 * @param {import("./model.js").PageModel} model
 * @example
 * agentTree(model);
 * // { key: "", label: "billing", status: "running tools", children: [{ key: "p1", label: "p1 · researcher", … }] }
 */
export function agentTree(model) {
  const root = {
    key: "",
    label: model.activeAgent ?? "main",
    agentId: model.agentId,
    status: model.stateName ? stateWords(model.state) : "connecting",
    active: true,
    children: [],
  };
  const nodes = new Map([["", root]]);
  for (const [key, sub] of model.subAgents) {
    const path = sub.path ?? [key];
    const lane = model.lanes.get(path[0]);
    const toolName = sub.toolName ?? (path.length === 1 ? lane?.name : undefined);
    // Approvals waiting in this sub-agent: their ids are its path, then the waiting call's id.
    const waiting = [...model.approvals.keys()].filter(
      (id) => id.startsWith(`${key}/`) && !id.slice(key.length + 1).includes("/"),
    );
    const ended = lane?.outcome;
    const status = ended
      ? `done · ${ended}`
      : waiting.length
        ? `waiting for your approval (${waiting.length})`
        : stateWords(sub.value);
    const node = {
      key,
      label: `${path.at(-1)}${toolName ? ` · ${toolName}` : ""}`,
      agentId: sub.agentId,
      status,
      active: !ended && stateName(sub.value).startsWith("running"),
      children: [],
    };
    // Parents are seen before their children; one whose parent left the model hangs at the top.
    (nodes.get(path.slice(0, -1).join("/")) ?? root).children.push(node);
    nodes.set(key, node);
  }
  return root;
}

/** Words for what woke a run (`message.source`). */
const WAKE_WORDS = { schedule: "a schedule", event: "an event", laterResult: "a late result" };

/**
 * What woke the agent, in words: `"a schedule (daily)"`, `"an event (build-42)"`, `"a late result
 * (later_abc)"`, from the waking message's source and id (`wake_<schedule>_<slot>`, `event_<id>`,
 * the handle); `""` when a person's prompt started the run.
 *
 * @example
 * wokenByText({ source: "schedule", id: "wake_daily_1767254400000" }); // "a schedule (daily)"
 */
export function wokenByText(wokenBy) {
  if (!wokenBy || !WAKE_WORDS[wokenBy.source]) return "";
  const id = String(wokenBy.id ?? "");
  const name =
    wokenBy.source === "schedule"
      ? id.replace(/^wake_/, "").replace(/_\d+$/, "")
      : wokenBy.source === "event"
        ? id.replace(/^event_/, "")
        : id;
  return name ? `${WAKE_WORDS[wokenBy.source]} (${name})` : WAKE_WORDS[wokenBy.source];
}

/**
 * When a schedule wakes the agent next, in words: `"09:00 (schedule daily, cron 0 9 * * *)"`, the
 * date first when it is not today (by `now`); `""` when nothing will. A clock time, not "in 5 min":
 * the words stay true however long the page shows them.
 *
 * @example
 * nextWakeText({ at: Date.parse("2026-11-28T14:03:00"), scheduleId: "tick", when: "every 60000 ms" }, Date.parse("2026-11-28T14:02:00"));
 * // "14:03 (schedule tick, every 60000 ms)"
 */
export function nextWakeText(next, now) {
  if (!next) return "";
  return `${clockText(next.at, now)} (schedule ${next.scheduleId}, ${next.when})`;
}

/** A time as a clock reads it, with the date first when it is not today (by `now`). */
function clockText(ms, now) {
  const at = new Date(ms);
  const clock = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return at.toDateString() === new Date(now).toDateString() ? clock : `${at.toLocaleDateString()} ${clock}`;
}

/**
 * The late results the agent waits for, in words: `"build (call c1, times out at 10:30)"` each; each
 * wakes the agent when it comes.
 *
 * @example
 * laterTexts([{ handle: "later_x", toolName: "build", toolCallId: "c1", startedAt: 0 }], Date.now()); // ["build (call c1)"]
 */
export function laterTexts(pending, now) {
  return (pending ?? []).map((later) => {
    const deadline = later.deadline ? `, times out at ${clockText(later.deadline, now)}` : "";
    return `${later.toolName} (call ${later.toolCallId}${deadline})`;
  });
}
