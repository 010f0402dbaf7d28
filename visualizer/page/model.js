// The visualizer's view of an agent, folded from the server's messages ({ kind, t, … }). Plain JavaScript
// with no DOM: the page applies every message to it, and the server applies the messages it drops from
// its history, so a page that connects late starts from the same model ("catch_up") instead of nothing.

/**
 * Lanes of at most this many turns are kept (the timeline draws the last few and shows more on demand);
 * older turns leave the model, and their runs count them in `prunedTurns` / `prunedCalls`.
 */
export const MAX_TURN_GROUPS = 400;
/** A finished call's result kept on its lane: a preview, the transcript has the rest. */
export const LANE_RESULT_CHARS = 4000;
/** Event log rows kept in the model. */
export const MAX_LOG_ROWS = 2000;
/** How long a state the machine left stays tinted, in ms. */
export const VISITED_MS = 1500;
/** Handoffs the model keeps (the agent that answers now is kept apart: always true). */
export const MAX_HANDOFFS = 50;
/** Where a message that woke the agent came from (`message.source`): not a person's prompt. */
const WAKE_SOURCES = new Set(["schedule", "event", "laterResult"]);

/** A model with nothing in it. */
export function emptyModel() {
  return {
    agentId: "",
    /** The agent machine's state value, its dotted name, and its context (transcript left out). */
    state: undefined,
    stateName: "",
    context: undefined,
    /** The tool execution machine's state value while one runs. */
    execution: undefined,
    run: 0,
    turn: 0,
    /**
     * One entry per run: { run, startedAt, prompt, endedAt?, reason?, calls, turns, prunedTurns,
     * prunedCalls }. `calls` and `turns` count every call and turn, kept as lanes or not.
     */
    runs: [],
    messages: [],
    streaming: null,
    lanes: new Map(),
    /** "run:turn" keys of the lanes' turns, oldest first. */
    groups: [],
    approvals: new Map(),
    /**
     * Sub-agents at any depth, by the path of the calls that run them joined by "/" ("p1", "p1/r1"):
     * { agentId, value, path, toolName?, t } (t: the last change), in the order they were first seen.
     */
    subAgents: new Map(),
    /** The agent that answers now, with handoffs (absent: the main one), and the handoffs so far (the last MAX_HANDOFFS). */
    activeAgent: undefined,
    handoffs: [],
    /** What woke the agent last, when a schedule, an event or a late result did: { source, id, t }. */
    wokenBy: undefined,
    /** The agent's next wake-up by schedule, from a server given a scheduler: { at, scheduleId, message, createdBy } or null. */
    nextWake: null,
    /** The late results the agent waits for (each wakes it): { handle, toolName, toolCallId, startedAt, deadline? }. */
    laterPending: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 },
    modelCalls: 0,
    /** Every tool call the agent made since the page's history began, lanes kept or not. */
    toolCalls: 0,
    compactions: [],
    lastEnd: null,
    now: 0,
    /** State ids the machine left, with when (only the last VISITED_MS are kept). */
    visited: new Map(),
    log: [],
  };
}

export function stateName(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value)[0] ?? [];
  return key === undefined ? "" : `${key}.${stateName(child)}`;
}

/** Ids of the active state nodes for a state value, e.g. ("agent", { running: "executing" }) → agent.running, agent.running.executing. */
export function activeIds(rootId, value) {
  const ids = [];
  const walk = (prefix, v) => {
    if (typeof v === "string") ids.push(`${prefix}.${v}`);
    else if (v && typeof v === "object") {
      for (const [key, child] of Object.entries(v)) {
        ids.push(`${prefix}.${key}`);
        walk(`${prefix}.${key}`, child);
      }
    }
  };
  walk(rootId, value);
  return ids;
}

export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part.type === "text" ? part.text : part.type === "image" ? "[image]" : ""))
    .join("");
}

/** What a lane shows now: its outcome, or where the call is. */
export function laneStatus(lane) {
  if (lane.outcome) return lane.outcome;
  if (lane.approvalAt !== undefined && lane.execAt === undefined && lane.state !== "done")
    return "awaiting approval";
  if (lane.startAt !== undefined) return "running";
  return "queued";
}

/** Whether a lane still moves with the clock. */
export function laneIsOpen(lane) {
  return lane.outcome === undefined;
}

function laneFor(model, id, name, t, dirty) {
  let lane = model.lanes.get(id);
  if (!lane) {
    const group = `${model.run}:${model.turn}`;
    lane = {
      id,
      name: name ?? "?",
      run: model.run,
      turn: model.turn,
      group,
      queuedAt: t,
      startAt: undefined,
      approvalAt: undefined,
      execAt: undefined,
      endAt: undefined,
      outcome: undefined,
      state: undefined,
      resultText: "",
      progress: "",
      childAgentId: undefined,
      args: undefined,
    };
    model.lanes.set(id, lane);
    model.toolCalls += 1;
    dirty?.add("header");
    const run = currentRun(model);
    if (run) run.calls = (run.calls ?? 0) + 1;
    if (model.groups[model.groups.length - 1] !== group && !model.groups.includes(group)) {
      model.groups.push(group);
      pruneGroups(model, dirty);
    }
  }
  if (name && lane.name === "?") lane.name = name;
  dirty?.add(`lane:${id}`);
  return lane;
}

/** The entry of the run in progress (or the last one), if the model still lists it. */
function currentRun(model) {
  const run = model.runs[model.runs.length - 1];
  return run && run.run === model.run ? run : undefined;
}

function pruneGroups(model, dirty) {
  while (model.groups.length > MAX_TURN_GROUPS) {
    const old = model.groups.shift();
    let pruned = 0;
    for (const [id, lane] of model.lanes) {
      if (lane.group === old && !model.approvals.has(id)) {
        model.lanes.delete(id);
        // The sub-agents of a call no longer drawn go with it (a long session must not grow without bound).
        for (const [key, sub] of model.subAgents) if (sub.path?.[0] === id) model.subAgents.delete(key);
        pruned++;
      }
    }
    // The run says how many of its turns and calls are no longer drawn: counts stay true.
    const run = model.runs.find((r) => r.run === Number(old.split(":")[0]));
    if (run) {
      run.prunedTurns = (run.prunedTurns ?? 0) + 1;
      run.prunedCalls = (run.prunedCalls ?? 0) + pruned;
    }
    dirty?.add("timeline");
  }
}

/**
 * Applies one server message to the model. `dirty` (a Set) collects what changed, so the page
 * re-renders only that: "header", "chart", "timeline" (rebuild), "runs" (run headings), "lane:<id>",
 * "transcript", "usage", "approvals", "log"; "all" after a catch-up. `index` is the message's position in the page's history (for the log).
 */
export function apply(model, message, { dirty, index } = {}) {
  const t = typeof message.t === "number" ? message.t : model.now;
  // A hello is stamped when the page connects, after the history that follows it: not the agent's time.
  if (message.kind !== "hello" && message.kind !== "catch_up") model.now = Math.max(model.now, t);
  for (const [id, left] of model.visited) if (model.now - left >= VISITED_MS) model.visited.delete(id);
  switch (message.kind) {
    case "hello":
      model.agentId = message.agentId ?? model.agentId;
      dirty?.add("header");
      break;
    case "catch_up":
      // Only ever the first message after hello: the model as it was before the history that follows.
      Object.assign(model, restoreModel(message.model));
      dirty?.add("all");
      break;
    case "state": {
      const previous = activeIds("agent", model.state).at(-1);
      if (previous) model.visited.set(previous, t);
      model.state = message.value;
      model.stateName = stateName(message.value);
      dirty?.add("header").add("chart");
      break;
    }
    case "context":
      model.context = message.context;
      dirty?.add("chart");
      break;
    case "execution_state":
      model.execution = message.value ?? undefined;
      dirty?.add("chart");
      break;
    case "tool_state": {
      const lane = laneFor(model, message.toolCallId, undefined, t, dirty);
      lane.state = message.value;
      if (message.value === "checkingPermission") lane.startAt ??= t;
      if (message.value === "awaitingApproval") lane.approvalAt ??= t;
      if (message.value === "executing") lane.execAt ??= t;
      // Decided (approved, denied, or the run was aborted): the card goes at once, not when the tool ends.
      if (message.value !== "awaitingApproval" && model.approvals.delete(message.toolCallId))
        dirty?.add("approvals");
      dirty?.add("chart");
      break;
    }
    case "sub_agent_state": {
      const path = message.path ?? [message.toolCallId];
      model.subAgents.set(message.toolCallId, {
        agentId: message.agentId,
        value: message.value,
        path,
        toolName: message.toolName,
        t,
      });
      // Only a child runs in one of this agent's own calls: a deeper one's call is the child's, no lane here.
      if (path.length === 1) {
        const lane = laneFor(model, message.toolCallId, message.toolName, t, dirty);
        lane.childAgentId ??= message.agentId;
      }
      dirty?.add("chart").add("agents");
      break;
    }
    case "wake":
      model.nextWake = message.next ?? null;
      model.laterPending = message.later ?? [];
      dirty?.add("header").add("agents");
      break;
    case "event":
      applyEvent(model, message.event, t, message.outcome, dirty);
      addLogRow(model, message.event, t, index, dirty);
      break;
  }
  return dirty;
}

function applyEvent(model, event, t, outcome, dirty) {
  switch (event.type) {
    case "agent_start":
      model.run += 1;
      model.turn = 0;
      model.runs.push({ run: model.run, startedAt: t, prompt: "", calls: 0, turns: 0 });
      if (model.runs.length > MAX_TURN_GROUPS) model.runs.shift();
      dirty?.add("runs");
      break;
    case "turn_start": {
      model.turn = event.turn;
      const run = currentRun(model);
      if (run) run.turns = Math.max(run.turns ?? 0, event.turn);
      break;
    }
    case "message_start":
      if (event.message?.role === "assistant") {
        model.streaming = { text: "", thinking: "", calls: 0 };
        dirty?.add("transcript");
      }
      break;
    case "message_update": {
      model.streaming ??= { text: "", thinking: "", calls: 0 };
      if (event.kind === "text_delta") model.streaming.text += event.delta;
      else if (event.kind === "thinking_delta") model.streaming.thinking += event.delta;
      else if (event.kind === "toolcall_start") model.streaming.calls += 1;
      dirty?.add("transcript");
      break;
    }
    case "message_end": {
      const message = event.message;
      if (event.discarded) {
        // A failed attempt that is retried: it never enters the transcript.
        model.streaming = null;
        dirty?.add("transcript");
        break;
      }
      model.messages.push(message);
      dirty?.add("transcript");
      if (WAKE_SOURCES.has(message.source)) {
        model.wokenBy = { source: message.source, id: message.id, t };
        dirty?.add("header").add("agents");
      }
      const run = model.runs[model.runs.length - 1];
      if (message.role === "user" && run && run.run === model.run && !run.prompt) {
        run.prompt = textOf(message.content).slice(0, 200);
        if (WAKE_SOURCES.has(message.source)) run.wokenBy = { source: message.source, id: message.id };
        dirty?.add("runs");
      }
      if (message.role === "assistant") {
        model.streaming = null;
        const usage = message.usage;
        if (usage) {
          for (const key of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"])
            model.usage[key] += usage[key] ?? 0;
          model.usage.cost += usage.cost?.total ?? (typeof usage.cost === "number" ? usage.cost : 0);
          model.modelCalls += 1;
          dirty?.add("usage").add("header");
        }
        for (const part of message.content ?? []) {
          if (part.type === "toolCall") laneFor(model, part.id, part.name, t, dirty).args = part.arguments;
        }
      }
      break;
    }
    case "tool_execution_start": {
      const lane = laneFor(model, event.toolCallId, event.toolName, t, dirty);
      lane.startAt ??= t;
      lane.args ??= event.args;
      break;
    }
    case "tool_progress":
      laneFor(model, event.toolCallId, event.toolName, t, dirty).progress = event.text;
      break;
    case "tool_execution_update": {
      // Streamed output (e.g. a sub-agent's answer so far): its last line says what the call is doing.
      const lines = textOf(event.partialResult?.content).trim().split("\n");
      const lane = laneFor(model, event.toolCallId, event.toolName, t, dirty);
      lane.progress = (lines[lines.length - 1] ?? "").slice(-300);
      const child = event.partialResult?.details?.childAgentId;
      if (typeof child === "string") lane.childAgentId ??= child;
      break;
    }
    case "approval_requested": {
      const lane = laneFor(model, event.toolCallId, event.toolName, t, dirty);
      lane.approvalAt ??= t;
      lane.args ??= event.args;
      model.approvals.set(event.toolCallId, { ...event, t });
      dirty?.add("approvals");
      break;
    }
    case "tool_execution_end": {
      const lane = laneFor(model, event.toolCallId, event.toolName, t, dirty);
      lane.startAt ??= t;
      lane.endAt = t;
      lane.outcome = outcome ?? (event.isError ? "error" : "ok");
      lane.resultText = textOf(event.result?.content).slice(0, LANE_RESULT_CHARS);
      if (event.childAgentId) lane.childAgentId = event.childAgentId;
      if (model.approvals.delete(event.toolCallId)) dirty?.add("approvals");
      break;
    }
    case "handoff":
      model.activeAgent = event.to;
      model.handoffs.push({ t, from: event.from, to: event.to, toolCallId: event.toolCallId });
      if (model.handoffs.length > MAX_HANDOFFS) model.handoffs.shift();
      dirty?.add("header").add("agents");
      break;
    case "compaction":
      model.compactions.push({ t, level: event.level, before: event.tokensBefore, after: event.tokensAfter });
      dirty?.add("usage");
      break;
    case "output_filter":
    case "output_invalid": {
      // The run's answer checks, shown on its heading: each filter's verdict, each invalid answer.
      const run = model.runs[model.runs.length - 1];
      if (run && run.run === model.run) {
        run.checks = [...(run.checks ?? []), outputCheck(event)];
        dirty?.add("runs");
      }
      break;
    }
    case "agent_end": {
      // The reason with what explains it: a model error's kind and message, a rejection's why.
      model.lastEnd = {
        reason: event.reason,
        errorMessage: event.errorMessage,
        errorKind: event.errorKind,
        rejection: event.rejection,
        t,
      };
      const run = model.runs[model.runs.length - 1];
      if (run && run.run === model.run)
        Object.assign(run, {
          endedAt: t,
          reason: event.reason,
          errorMessage: event.errorMessage,
          errorKind: event.errorKind,
          rejection: event.rejection,
        });
      model.streaming = null;
      model.execution = undefined;
      if (model.approvals.size) dirty?.add("approvals");
      model.approvals.clear();
      dirty?.add("header").add("transcript").add("runs").add("chart");
      break;
    }
  }
}

/**
 * An output check as the run heading shows it: `verdict` (pass, warn, reject, or invalid for an
 * answer that did not parse or failed the schema), a short label and the whole story as a title.
 */
export function outputCheck(event) {
  if (event.type === "output_invalid") {
    const firstLine = String(event.error).split("\n")[0];
    return {
      verdict: "invalid",
      label: `invalid output ${event.attempt}/${event.maxRepairs + 1}`,
      title: `invalid output, attempt ${event.attempt} of ${event.maxRepairs + 1} (${event.action}): ${firstLine}`,
    };
  }
  const reason = event.reason ? `: ${event.reason}` : "";
  const action = event.action ? ` (${event.action})` : "";
  return {
    verdict: event.verdict,
    label: `${event.filter} ${event.verdict}`,
    title: `output filter ${event.filter}: ${event.verdict}${reason}${action}`,
  };
}

/**
 * The log line a delta folds into: the last line of its type, when only delta lines (text deltas,
 * partial objects, which alternate while an object streams) came after it.
 */
function deltaRow(model, type) {
  for (let i = model.log.length - 1; i >= Math.max(0, model.log.length - 2); i--) {
    const row = model.log[i];
    if (row.type === type) return row;
    if (row.type !== "message_update" && row.type !== "output_delta") return undefined;
  }
  return undefined;
}

/** One line of the event log: what happened, in a few words. Text deltas in a row fold into one line. */
function addLogRow(model, event, t, index, dirty) {
  dirty?.add("log");
  if (event.type === "message_update") {
    // One line for a run of deltas, whatever their kinds: "text_delta ×12 (340 chars), toolcall_start ×1".
    let row = deltaRow(model, "message_update");
    if (!row) {
      row = { t, type: event.type, detail: "", kinds: {}, index };
      model.log.push(row);
    }
    const kind = (row.kinds[event.kind] ??= { count: 0, chars: 0 });
    kind.count += 1;
    kind.chars += event.delta.length;
    row.detail = Object.entries(row.kinds)
      .map(([name, k]) => `${name} ×${k.count}${k.chars ? ` (${k.chars} chars)` : ""}`)
      .join(", ");
    if (index !== undefined) row.index = index;
  } else if (event.type === "output_delta" && deltaRow(model, "output_delta")) {
    // The partial object grows delta by delta: one line, showing it as far as it has come.
    const row = deltaRow(model, "output_delta");
    row.count = (row.count ?? 1) + 1;
    row.detail = `×${row.count} ${eventDetail(event)}`;
    if (index !== undefined) row.index = index;
  } else {
    model.log.push({ t, type: event.type, detail: eventDetail(event), index });
  }
  if (model.log.length > MAX_LOG_ROWS) model.log.splice(0, model.log.length - MAX_LOG_ROWS);
}

/** A message's role, and where a user or custom message came from (`user · steer`, `custom · agent`). */
function messageLabel(message) {
  const role = message?.role ?? "";
  return message?.source ? `${role} · ${message.source}` : role;
}

export function eventDetail(event) {
  switch (event.type) {
    case "turn_start":
    case "turn_end":
      return `turn ${event.turn}`;
    case "message_start":
      return messageLabel(event.message);
    case "message_end":
      return `${messageLabel(event.message)}${event.discarded ? " (discarded: retried)" : ""}`;
    case "tool_execution_start":
    case "tool_execution_update":
    case "approval_requested":
      return `${event.toolName} ${event.toolCallId}`;
    case "tool_progress":
      return `${event.toolName} ${event.toolCallId}: ${event.text}`;
    case "tool_execution_end":
      return `${event.toolName} ${event.toolCallId}${event.isError ? " (error)" : ""}`;
    case "agent_end":
      return `reason=${event.reason}${event.errorMessage ? ` ${event.errorMessage}` : ""}`;
    case "compaction":
      return `level ${event.level}: ${event.tokensBefore} → ${event.tokensAfter}`;
    case "retry":
      return `attempt ${event.attempt} in ${event.delayMs} ms: ${event.error}`;
    case "input_rejected":
      return event.reason;
    case "output_delta": {
      const json = JSON.stringify(event.partial) ?? "";
      return json.length > 120 ? `${json.slice(0, 119)}…` : json;
    }
    case "output_filter":
    case "output_invalid":
      return outputCheck(event).title;
    default:
      return "";
  }
}

/**
 * A copy that later `apply` calls do not change: what the page keeps as time-travel checkpoints.
 * Transcript messages are never changed once appended, so the copy shares them.
 */
export function cloneModel(model) {
  return {
    ...model,
    runs: model.runs.map((run) => ({ ...run })),
    messages: model.messages.slice(),
    streaming: model.streaming && { ...model.streaming },
    lanes: new Map([...model.lanes].map(([id, lane]) => [id, { ...lane }])),
    groups: model.groups.slice(),
    approvals: new Map(model.approvals),
    subAgents: new Map(model.subAgents),
    handoffs: model.handoffs.slice(),
    usage: { ...model.usage },
    compactions: model.compactions.slice(),
    visited: new Map(model.visited),
    log: model.log.map((row) => (row.kinds ? { ...row, kinds: structuredClone(row.kinds) } : { ...row })),
  };
}

/** The model as plain JSON (what `catch_up` carries); log rows lose their page-local index. */
export function serializeModel(model) {
  return {
    ...model,
    lanes: [...model.lanes.values()],
    approvals: [...model.approvals.values()],
    subAgents: [...model.subAgents],
    visited: [...model.visited],
    log: model.log.map(({ index: _index, ...row }) => row),
  };
}

export function restoreModel(data) {
  return {
    ...emptyModel(),
    ...data,
    lanes: new Map((data.lanes ?? []).map((lane) => [lane.id, lane])),
    approvals: new Map((data.approvals ?? []).map((approval) => [approval.toolCallId, approval])),
    subAgents: new Map(data.subAgents ?? []),
    visited: new Map(data.visited ?? []),
    log: (data.log ?? []).map((row) => ({ ...row, summarized: true })),
  };
}
