// The agent-machine visualizer page: plain browser JavaScript, no build step, no network but the page's own
// server. Live mode follows an agent over a WebSocket; replay mode steps through a recording (.jsonl).
// Both feed the same messages ({ kind: "hello" | "event" | "state" | "tool_state" | "error", t, … }) to apply().

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

// ---------- model ----------

function emptyModel() {
  return {
    agentId: "",
    state: undefined,
    stateName: "",
    turn: 0,
    messages: [],
    streaming: null,
    lanes: new Map(),
    approvals: new Map(),
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 },
    turns: 0,
    compactions: [],
    log: [],
    lastEnd: null,
    now: 0,
    visited: new Map(),
  };
}

let model = emptyModel();
let graph = null;
const live = { socket: null, open: false };
const replay = { active: false, entries: [], position: 0, timer: null, name: "" };

function stateName(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value)[0] ?? [];
  return key === undefined ? "" : `${key}.${stateName(child)}`;
}

function laneFor(id, name, t) {
  let lane = model.lanes.get(id);
  if (!lane) {
    lane = {
      id,
      name: name ?? "?",
      turn: model.turn,
      queuedAt: t,
      startAt: undefined,
      approvalAt: undefined,
      execAt: undefined,
      endAt: undefined,
      outcome: undefined,
      resultText: "",
      progress: "",
      childAgentId: undefined,
    };
    model.lanes.set(id, lane);
  }
  if (name && lane.name === "?") lane.name = name;
  return lane;
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part.type === "text" ? part.text : part.type === "image" ? "[image]" : ""))
    .join("");
}

/** Applies one server message to the model. Pure bookkeeping: rendering happens later, once per frame. */
function apply(message) {
  const t = message.t ?? Date.now();
  model.now = Math.max(model.now, t);
  switch (message.kind) {
    case "hello":
      model.agentId = message.agentId ?? "";
      break;
    case "state": {
      const previous = activeLeaf(model.state);
      if (previous) model.visited.set(previous, t);
      model.state = message.value;
      model.stateName = stateName(message.value);
      break;
    }
    case "tool_state": {
      const lane = laneFor(message.toolCallId, undefined, t);
      if (message.value === "checkingPermission") lane.startAt ??= t;
      if (message.value === "awaitingApproval") lane.approvalAt ??= t;
      if (message.value === "executing") lane.execAt ??= t;
      break;
    }
    case "event":
      applyEvent(message.event, t, message.outcome);
      break;
    case "error":
      toast(message.message);
      break;
  }
}

function applyEvent(event, t, outcome) {
  log(t, event);
  switch (event.type) {
    case "turn_start":
      model.turn = event.turn;
      break;
    case "message_start":
      if (event.message?.role === "assistant") model.streaming = { text: "", thinking: "", calls: 0 };
      break;
    case "message_update": {
      model.streaming ??= { text: "", thinking: "", calls: 0 };
      if (event.kind === "text_delta") model.streaming.text += event.delta;
      else if (event.kind === "thinking_delta") model.streaming.thinking += event.delta;
      else if (event.kind === "toolcall_start") model.streaming.calls += 1;
      break;
    }
    case "message_end": {
      const message = event.message;
      model.messages.push(message);
      if (message.role === "assistant") {
        model.streaming = null;
        const usage = message.usage;
        if (usage) {
          for (const key of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"])
            model.usage[key] += usage[key] ?? 0;
          model.usage.cost += usage.cost?.total ?? (typeof usage.cost === "number" ? usage.cost : 0);
          model.turns += 1;
        }
        for (const part of message.content ?? []) {
          if (part.type === "toolCall") laneFor(part.id, part.name, t).args = part.arguments;
        }
      }
      break;
    }
    case "tool_execution_start": {
      const lane = laneFor(event.toolCallId, event.toolName, t);
      lane.startAt ??= t;
      lane.args ??= event.args;
      break;
    }
    case "tool_progress":
      laneFor(event.toolCallId, event.toolName, t).progress = event.text;
      break;
    case "tool_execution_update": {
      // Streamed output (e.g. a sub-agent's answer so far): its last line says what the call is doing.
      const lines = textOf(event.partialResult?.content).trim().split("\n");
      laneFor(event.toolCallId, event.toolName, t).progress = (lines[lines.length - 1] ?? "").slice(-120);
      break;
    }
    case "approval_requested": {
      const lane = laneFor(event.toolCallId, event.toolName, t);
      lane.approvalAt ??= t;
      model.approvals.set(event.toolCallId, { ...event, t });
      break;
    }
    case "tool_execution_end": {
      const lane = laneFor(event.toolCallId, event.toolName, t);
      lane.startAt ??= t;
      lane.endAt = t;
      lane.outcome = outcome ?? (event.isError ? "error" : "ok");
      lane.resultText = textOf(event.result?.content).slice(0, 400);
      lane.childAgentId = event.childAgentId;
      model.approvals.delete(event.toolCallId);
      break;
    }
    case "compaction":
      model.compactions.push({ t, level: event.level, before: event.tokensBefore, after: event.tokensAfter });
      break;
    case "agent_end":
      model.lastEnd = { reason: event.reason, errorMessage: event.errorMessage, t };
      model.streaming = null;
      model.approvals.clear();
      break;
  }
}

function log(t, event) {
  if (event.type === "message_update") {
    const last = model.log[model.log.length - 1];
    if (last && last.type === "message_update") {
      last.count += 1;
      last.chars += event.delta.length;
      return;
    }
    model.log.push({ t, type: event.type, count: 1, chars: event.delta.length, detail: event.kind });
    return;
  }
  model.log.push({ t, type: event.type, detail: eventDetail(event) });
  if (model.log.length > 400) model.log.splice(0, model.log.length - 400);
}

function eventDetail(event) {
  switch (event.type) {
    case "turn_start":
    case "turn_end":
      return `turn ${event.turn}`;
    case "message_start":
    case "message_end":
      return event.message?.role ?? "";
    case "tool_execution_start":
    case "tool_execution_update":
    case "tool_progress":
    case "approval_requested":
      return `${event.toolName} ${event.toolCallId}`;
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
    default:
      return "";
  }
}

// ---------- statechart ----------

function activeIds(value) {
  const ids = [];
  if (!graph) return ids;
  const walk = (prefix, v) => {
    if (typeof v === "string") ids.push(`${prefix}.${v}`);
    else if (v && typeof v === "object") {
      for (const [key, child] of Object.entries(v)) {
        ids.push(`${prefix}.${key}`);
        walk(`${prefix}.${key}`, child);
      }
    }
  };
  walk(graph.id, value);
  return ids;
}

function activeLeaf(value) {
  const ids = activeIds(value);
  return ids[ids.length - 1];
}

function el(name, attributes = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const nodeElements = new Map();

function drawChart() {
  const host = $("chart");
  host.textContent = "";
  if (!graph) return;
  const svg = el("svg", {
    viewBox: `0 0 ${graph.width} ${graph.height}`,
    role: "img",
    "aria-label": "Agent statechart",
  });
  const defs = el("defs");
  const marker = el("marker", {
    id: "arrow",
    viewBox: "0 0 10 10",
    refX: 9,
    refY: 5,
    markerWidth: 7,
    markerHeight: 7,
    orient: "auto-start-reverse",
  });
  marker.appendChild(el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#8b95a5" }));
  defs.appendChild(marker);
  svg.appendChild(defs);

  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const depth = (n) => (n.parent ? depth(byId.get(n.parent)) + 1 : 0);
  for (const node of [...graph.nodes].sort((a, b) => depth(a) - depth(b))) {
    const compound = graph.nodes.some((n) => n.parent === node.id);
    const g = el("g", {
      class: `node ${compound ? "compound" : "leaf"} ${node.parent ? "" : "root"}`,
      "data-state": node.id,
    });
    const tooltip = [
      node.id,
      node.invokes.length ? `invokes: ${node.invokes.join(", ")}` : "",
      node.entry.length ? `entry: ${node.entry.join(", ")}` : "",
      ...node.internal.map((i) => `on ${i}`),
    ]
      .filter(Boolean)
      .join("\n");
    g.appendChild(el("title", {}, tooltip));
    g.appendChild(
      el("rect", { x: node.x, y: node.y, width: node.width, height: node.height, rx: compound ? 12 : 8 }),
    );
    if (compound && node.parent) {
      g.appendChild(
        el(
          "text",
          { x: node.x + 12, y: node.y + 17, class: "title" },
          node.key + (node.invokes.length ? `  ⇢ ${node.invokes.join(", ")}` : ""),
        ),
      );
    } else if (!compound) {
      const hasSub = node.invokes.length > 0;
      g.appendChild(
        el(
          "text",
          { x: node.x + node.width / 2, y: node.y + (hasSub ? 20 : 25), "text-anchor": "middle" },
          node.key,
        ),
      );
      if (hasSub)
        g.appendChild(
          el(
            "text",
            { x: node.x + node.width / 2, y: node.y + 37, "text-anchor": "middle", class: "subtitle" },
            `⇢ ${node.invokes.join(", ")}`,
          ),
        );
    }
    svg.appendChild(g);
    nodeElements.set(node.id, g);
    if (node.initial && byId.get(node.initial)) {
      const child = byId.get(node.initial);
      const cy = child.y + child.height / 2;
      svg.appendChild(el("circle", { cx: child.x - 16, cy, r: 4, class: "initial" }));
      svg.appendChild(
        el("path", {
          d: `M ${child.x - 12} ${cy} L ${child.x - 1} ${cy}`,
          stroke: "#4b5563",
          "stroke-width": 1.3,
          "marker-end": "url(#arrow)",
        }),
      );
    }
  }
  for (const edge of graph.edges) {
    const g = el("g", { class: `edge ${edge.eventless ? "eventless" : ""}`, "data-edge": edge.id });
    g.appendChild(el("path", { d: edge.path, "marker-end": "url(#arrow)" }));
    const lines = edge.lines;
    lines.forEach((line, index) => {
      const y =
        edge.route === "below" ? edge.labelY + index * 12 : edge.labelY - (lines.length - 1 - index) * 12;
      g.appendChild(
        el(
          "text",
          {
            x: edge.labelX,
            y,
            "text-anchor":
              edge.route === "straight" && edge.path.includes("L") && !isVertical(edge.path)
                ? "middle"
                : edge.route === "straight"
                  ? "start"
                  : "middle",
          },
          line,
        ),
      );
    });
    svg.appendChild(g);
  }
  host.appendChild(svg);
}

function isVertical(path) {
  const numbers = path.match(/-?[\d.]+/g) ?? [];
  return numbers.length === 4 && numbers[0] === numbers[2];
}

function paintChart() {
  const ids = new Set(activeIds(model.state));
  const leaf = activeLeaf(model.state);
  const clock = now();
  for (const [id, g] of nodeElements) {
    g.classList.toggle("active", id === leaf);
    g.classList.toggle("active-parent", ids.has(id) && id !== leaf && g.classList.contains("compound"));
    const seen = model.visited.get(id);
    g.classList.toggle("visited", id !== leaf && seen !== undefined && clock - seen < 1500);
  }
}

// ---------- timeline ----------

const OUTCOME_CLASS = {
  ok: "ok",
  error: "error",
  skipped: "skipped",
  denied: "denied",
  "timed out": "timedout",
  aborted: "aborted",
  "not found": "notfound",
  invalid: "invalid",
};

function now() {
  return replay.active ? model.now : Math.max(Date.now(), model.now);
}

function fmtMs(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function renderTimeline() {
  const host = $("timeline");
  const lanes = [...model.lanes.values()];
  if (lanes.length === 0) {
    host.innerHTML = '<p class="empty">No tool calls yet.</p>';
    return;
  }
  const clock = now();
  const byTurn = new Map();
  for (const lane of lanes) {
    if (!byTurn.has(lane.turn)) byTurn.set(lane.turn, []);
    byTurn.get(lane.turn).push(lane);
  }
  const turns = [...byTurn.keys()].sort((a, b) => a - b).slice(-20);
  const fragment = document.createDocumentFragment();
  for (const turn of turns) {
    const group = byTurn.get(turn);
    const from = Math.min(...group.map((l) => l.queuedAt));
    const to = Math.max(from + 1, ...group.map((l) => l.endAt ?? clock));
    const span = to - from;
    const pct = (t) => `${(((t - from) / span) * 100).toFixed(3)}%`;
    const width = (a, b) => `${((Math.max(0, b - a) / span) * 100).toFixed(3)}%`;
    const section = document.createElement("div");
    section.className = "turn";
    section.dataset.turn = String(turn);
    const parallel = maxOverlap(group, clock);
    section.innerHTML = `<div class="turn-head"><span><b>Turn ${turn}</b> · ${group.length} call${group.length === 1 ? "" : "s"}${parallel > 1 ? ` · up to ${parallel} at once` : ""}</span><span>${fmtMs(span)}</span></div>`;
    for (const lane of group) {
      const row = document.createElement("div");
      row.className = "lane";
      row.dataset.lane = lane.id;
      row.dataset.tool = lane.name;
      if (lane.startAt !== undefined) row.dataset.start = String(lane.startAt);
      if (lane.endAt !== undefined) row.dataset.end = String(lane.endAt);
      row.dataset.outcome =
        lane.outcome ??
        (lane.approvalAt !== undefined && lane.execAt === undefined
          ? "awaiting approval"
          : lane.startAt !== undefined
            ? "running"
            : "queued");
      const name = document.createElement("div");
      name.className = "lane-name";
      name.title = `${lane.name} ${lane.id}\n${JSON.stringify(lane.args ?? {}, null, 1)}`;
      name.innerHTML = `${escapeHtml(lane.name)} <span class="id">${escapeHtml(lane.id)}</span>`;
      const track = document.createElement("div");
      track.className = "track";
      const segment = (cls, a, b, title) => {
        const seg = document.createElement("div");
        seg.className = `seg ${cls}`;
        seg.style.left = pct(a);
        seg.style.width = width(a, b);
        seg.title = title;
        track.appendChild(seg);
      };
      const end = lane.endAt ?? clock;
      const cls = lane.outcome ? (OUTCOME_CLASS[lane.outcome] ?? "error") : "running";
      if (lane.startAt === undefined) {
        segment("queued", lane.queuedAt, end, `queued ${fmtMs(end - lane.queuedAt)}`);
      } else {
        if (lane.startAt > lane.queuedAt)
          segment("queued", lane.queuedAt, lane.startAt, `queued ${fmtMs(lane.startAt - lane.queuedAt)}`);
        if (lane.approvalAt !== undefined) {
          const decided = lane.execAt ?? end;
          segment(
            "approval",
            lane.approvalAt,
            decided,
            `awaiting approval ${fmtMs(decided - lane.approvalAt)}`,
          );
        }
        const runFrom = lane.approvalAt !== undefined ? lane.execAt : lane.startAt;
        if (runFrom !== undefined)
          segment(
            cls,
            runFrom,
            end,
            `${lane.outcome ?? "running"} ${fmtMs(end - runFrom)}\n${lane.resultText}`,
          );
        else if (lane.endAt !== undefined) segment(cls, end, end, `${lane.outcome}\n${lane.resultText}`);
      }
      const info = document.createElement("div");
      info.className = "lane-info";
      const state = row.dataset.outcome;
      const infoClass = lane.outcome
        ? cls
        : state === "awaiting approval"
          ? "approval"
          : state === "queued"
            ? "skipped"
            : "running";
      const ranFrom = lane.approvalAt !== undefined ? lane.execAt : lane.startAt;
      let duration = ranFrom !== undefined ? fmtMs(end - ranFrom) : "";
      if (lane.approvalAt !== undefined)
        duration += ` · waited ${fmtMs((lane.execAt ?? end) - lane.approvalAt)}`;
      if (!lane.outcome && lane.progress) duration += ` · ${escapeHtml(lane.progress)}`;
      info.innerHTML = `<span class="outcome ${infoClass}">${escapeHtml(state)}</span> ${duration}${lane.childAgentId ? ` · ↳ ${escapeHtml(lane.childAgentId)}` : ""}`;
      info.title = lane.progress || lane.resultText || state;
      row.append(name, track, info);
      section.appendChild(row);
    }
    fragment.appendChild(section);
  }
  const atBottom = host.scrollTop + host.clientHeight >= host.scrollHeight - 4;
  host.textContent = "";
  host.appendChild(fragment);
  if (atBottom) host.scrollTop = host.scrollHeight;
}

function maxOverlap(lanes, clock) {
  const points = [];
  for (const lane of lanes) {
    if (lane.startAt === undefined) continue;
    const end = lane.endAt ?? clock;
    if (end <= lane.startAt) continue;
    points.push([lane.startAt, 1], [end, -1]);
  }
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let best = 0;
  for (const [, step] of points) {
    current += step;
    best = Math.max(best, current);
  }
  return best;
}

// ---------- transcript, usage, approvals, log ----------

function escapeHtml(text) {
  return String(text ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

let renderedMessages = 0;

function messageElement(message) {
  const div = document.createElement("div");
  div.className = `msg ${message.role}`;
  const role = document.createElement("span");
  role.className = "role";
  div.appendChild(role);
  if (message.role === "user") {
    role.textContent = "user";
    div.appendChild(document.createTextNode(textOf(message.content)));
  } else if (message.role === "assistant") {
    role.textContent = `assistant · ${message.stopReason ?? ""}`;
    for (const part of message.content ?? []) {
      if (part.type === "text") div.appendChild(document.createTextNode(part.text));
      else if (part.type === "thinking") {
        const thinking = document.createElement("div");
        thinking.className = "thinking";
        thinking.textContent = part.redacted ? "[redacted thinking]" : part.thinking;
        div.appendChild(thinking);
      } else if (part.type === "toolCall") {
        const call = document.createElement("span");
        call.className = "call";
        call.textContent = `${part.name}(${JSON.stringify(part.arguments ?? {})})`;
        call.title = part.id;
        div.appendChild(call);
      }
    }
    if (message.errorMessage) {
      const meta = document.createElement("div");
      meta.className = "meta";
      meta.textContent = `error: ${message.errorMessage}`;
      div.appendChild(meta);
    }
  } else if (message.role === "toolResult") {
    role.textContent = `tool result · ${message.toolName} · ${message.toolCallId}`;
    if (message.isError) div.classList.add("error");
    const text = textOf(message.content);
    div.appendChild(document.createTextNode(text.length > 1200 ? `${text.slice(0, 1200)}…` : text));
  } else {
    role.textContent = message.role ?? "message";
    div.appendChild(
      document.createTextNode(textOf(message.content) || JSON.stringify(message).slice(0, 500)),
    );
  }
  return div;
}

function renderTranscript() {
  const host = $("transcript");
  const atBottom = host.scrollTop + host.clientHeight >= host.scrollHeight - 8;
  if (renderedMessages > model.messages.length) {
    host.textContent = "";
    renderedMessages = 0;
  }
  host.querySelector(".streaming")?.remove();
  for (; renderedMessages < model.messages.length; renderedMessages++) {
    host.appendChild(messageElement(model.messages[renderedMessages]));
  }
  if (model.streaming) {
    const div = document.createElement("div");
    div.className = "msg assistant streaming";
    div.dataset.testid = "streaming";
    div.innerHTML = '<span class="role">assistant · streaming</span>';
    if (model.streaming.thinking) {
      const thinking = document.createElement("div");
      thinking.className = "thinking";
      thinking.textContent = model.streaming.thinking;
      div.appendChild(thinking);
    }
    div.appendChild(document.createTextNode(model.streaming.text));
    if (model.streaming.calls)
      div.appendChild(document.createTextNode(`\n[${model.streaming.calls} tool call(s) streaming]`));
    const cursor = document.createElement("span");
    cursor.className = "cursor";
    div.appendChild(cursor);
    host.appendChild(div);
  }
  if (atBottom) host.scrollTop = host.scrollHeight;
}

function renderUsage() {
  const u = model.usage;
  const n = (x) => Number(x ?? 0).toLocaleString("en-US");
  $("usage").textContent =
    `${n(u.totalTokens)} tokens · ${model.turns} model call${model.turns === 1 ? "" : "s"}`;
  $("usage-table").innerHTML =
    [
      ["input", u.input],
      ["output", u.output],
      ["cache read", u.cacheRead],
      ["cache write", u.cacheWrite],
      ["total", u.totalTokens],
    ]
      .map(([k, v]) => `<tr><td>${k}</td><td>${n(v)}</td></tr>`)
      .join("") + (u.cost ? `<tr><td>cost</td><td>$${u.cost.toFixed(4)}</td></tr>` : "");
  $("compactions").innerHTML = model.compactions.length
    ? model.compactions
        .map((c) => `<div>level ${c.level}: ${n(c.before)} → ${n(c.after)} tokens</div>`)
        .join("")
    : '<p class="empty">None.</p>';
}

let renderedApprovals = "";

function renderApprovals() {
  const key = [...model.approvals.keys()].join(",") + (replay.active ? ":replay" : "");
  if (key === renderedApprovals) return;
  renderedApprovals = key;
  const host = $("approvals");
  host.textContent = "";
  for (const approval of model.approvals.values()) {
    const card = document.createElement("div");
    card.className = "approval-card";
    card.dataset.approval = approval.toolCallId;
    card.innerHTML = `<div class="title">${escapeHtml(approval.toolName)} <span class="muted">${escapeHtml(approval.toolCallId)}</span></div>
      <pre>${escapeHtml(JSON.stringify(approval.args ?? {}, null, 2))}</pre>
      <div class="row"><button class="approve" data-testid="approve">Approve</button>
      <input placeholder="reason (optional)" aria-label="Reason for denying"><button class="deny" data-testid="deny">Deny</button></div>`;
    const [approve, deny] = card.querySelectorAll("button");
    const input = card.querySelector("input");
    approve.disabled = deny.disabled = replay.active;
    approve.onclick = () => command({ kind: "approve", toolCallId: approval.toolCallId });
    deny.onclick = () => command({ kind: "deny", toolCallId: approval.toolCallId, reason: input.value });
    host.appendChild(card);
  }
}

function renderLog() {
  const host = $("log");
  const origin = model.log[0]?.t ?? 0;
  const atBottom = host.scrollTop + host.clientHeight >= host.scrollHeight - 8;
  host.innerHTML = model.log
    .slice(-300)
    .map((entry) => {
      const detail =
        entry.type === "message_update"
          ? `${entry.detail} ×${entry.count} (${entry.chars} chars)`
          : entry.detail;
      return `<li><span class="time">${((entry.t - origin) / 1000).toFixed(3)}s</span> ${escapeHtml(entry.type)} <span class="muted">${escapeHtml(detail)}</span></li>`;
    })
    .join("");
  host.lastElementChild?.classList.add("current");
  if (atBottom) host.scrollTop = host.scrollHeight;
}

function renderHeader() {
  $("agent-id").textContent = model.agentId;
  const pill = $("state-pill");
  const name = model.stateName || "…";
  pill.textContent = model.lastEnd && name === "idle" ? `idle · last run: ${model.lastEnd.reason}` : name;
  pill.className = `pill ${name.startsWith("running") ? "running" : "idle"}`;
  pill.dataset.state = name;
  $("connection").className = `connection ${replay.active ? "" : live.open ? "open" : "closed"}`;
  const running = name.startsWith("running");
  $("steer-button").textContent = running ? "Steer" : "Send";
  $("steer-button").disabled = replay.active || !live.open;
  $("abort-button").disabled = replay.active || !live.open || !running;
  $("steer-text").disabled = replay.active;
}

let frame = 0;
/** Renders on the next animation frame, once however many messages arrive before it. */
function render() {
  if (frame) return;
  frame = requestAnimationFrame(renderNow);
}

/** Renders at once: after a replay step, so what the page shows is settled when the click returns. */
function renderNow() {
  if (frame) cancelAnimationFrame(frame);
  frame = 0;
  renderHeader();
  paintChart();
  renderTimeline();
  renderTranscript();
  renderUsage();
  renderApprovals();
  renderLog();
  if (replay.active) renderReplayBar();
}

// Running lanes and fading "visited" states move with the clock.
setInterval(() => {
  if (!replay.active && (model.stateName.startsWith("running") || model.visited.size)) render();
}, 250);

function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (box.hidden = true), 5000);
}

// ---------- live ----------

function command(message) {
  if (!live.socket || !live.open) return toast("Not connected to a live agent");
  live.socket.send(JSON.stringify(message));
}

function connect() {
  const socket = new WebSocket(`ws://${location.host}/ws`);
  live.socket = socket;
  socket.onopen = () => {
    live.open = true;
    model = emptyModel();
    renderedMessages = 0;
    renderedApprovals = "";
    render();
  };
  socket.onmessage = (event) => {
    if (replay.active) return;
    apply(JSON.parse(event.data));
    render();
  };
  socket.onclose = () => {
    live.open = false;
    render();
    if (!replay.active) setTimeout(connect, 1500);
  };
}

$("steer-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("steer-text");
  const text = input.value.trim();
  if (!text) return;
  command({ kind: model.stateName.startsWith("running") ? "steer" : "prompt", text });
  input.value = "";
});
$("steer-text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("steer-form").requestSubmit();
  }
});
$("abort-button").addEventListener("click", () => command({ kind: "abort" }));

// ---------- replay ----------

function parseRecording(text) {
  const entries = [];
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    try {
      const entry = JSON.parse(line);
      if (entry && typeof entry.kind === "string") entries.push(entry);
    } catch {
      throw new Error(`Line ${index + 1} of the recording is not JSON`);
    }
  });
  return entries;
}

function startReplay(entries, name) {
  replay.active = true;
  replay.entries = entries;
  replay.name = name;
  if (live.socket) {
    live.socket.onclose = null;
    live.socket.close();
    live.open = false;
  }
  $("replay-bar").hidden = false;
  $("replay-name").textContent = `${name} · ${entries.length} entries`;
  $("replay-slider").max = String(entries.length);
  seek(0);
  // Open at the first step so the page is not blank.
  next();
}

/** Whether an entry is a step of its own; text deltas and tool actor states ride along with the next one. */
const isStep = (entry) => entry.kind === "event" && entry.event.type !== "message_update";

function seek(position) {
  position = Math.max(0, Math.min(replay.entries.length, position));
  if (position < replay.position || position === 0) {
    model = emptyModel();
    renderedMessages = 0;
    renderedApprovals = "";
    replay.position = 0;
  }
  for (; replay.position < position; replay.position++) apply(replay.entries[replay.position]);
  renderNow();
}

function next() {
  let i = replay.position;
  while (i < replay.entries.length && !isStep(replay.entries[i])) i++;
  // Also take the state changes that follow the step, so the chart shows where it led.
  i = Math.min(replay.entries.length, i + 1);
  while (i < replay.entries.length && !isStep(replay.entries[i]) && replay.entries[i].kind !== "event") i++;
  seek(i);
}

function prev() {
  let i = replay.position - 1;
  while (i > 0 && !isStep(replay.entries[i - 1])) i--;
  i -= 1;
  while (i > 0 && !isStep(replay.entries[i - 1])) i--;
  seek(Math.max(0, i));
  if (replay.position === 0) next();
}

function play() {
  if (replay.timer) return pause();
  $("replay-play").textContent = "⏸ Pause";
  const tick = () => {
    if (replay.position >= replay.entries.length) return pause();
    const before = replay.entries[replay.position - 1]?.t ?? replay.entries[replay.position].t;
    seek(replay.position + 1);
    const after = replay.entries[replay.position]?.t ?? before;
    const speed = Number($("replay-speed").value) || 1;
    replay.timer = setTimeout(tick, Math.min(800, Math.max(0, (after - before) / speed)));
  };
  tick();
}

function pause() {
  clearTimeout(replay.timer);
  replay.timer = null;
  $("replay-play").textContent = "▶ Play";
}

function renderReplayBar() {
  $("replay-slider").value = String(replay.position);
  const steps = replay.entries.filter(isStep).length;
  const done = replay.entries.slice(0, replay.position).filter(isStep).length;
  $("replay-position").textContent = `step ${done} / ${steps}`;
  $("replay-position").dataset.position = String(replay.position);
}

$("replay-first").onclick = () => {
  pause();
  seek(0);
  next();
};
$("replay-prev").onclick = () => {
  pause();
  prev();
};
$("replay-next").onclick = () => {
  pause();
  next();
};
$("replay-last").onclick = () => {
  pause();
  seek(replay.entries.length);
};
$("replay-play").onclick = () => play();
$("replay-slider").oninput = (event) => {
  pause();
  seek(Number(event.target.value));
};
document.addEventListener("keydown", (event) => {
  if (
    !replay.active ||
    event.target instanceof HTMLTextAreaElement ||
    event.target instanceof HTMLInputElement
  )
    return;
  if (event.key === "ArrowRight") next();
  if (event.key === "ArrowLeft") prev();
  if (event.key === " ") {
    event.preventDefault();
    play();
  }
});

$("file-input").addEventListener("change", async (event) => {
  const file = event.target.files?.[0];
  if (!file) return;
  try {
    pause();
    startReplay(parseRecording(await file.text()), file.name);
  } catch (error) {
    toast(String(error.message ?? error));
  }
});

// ---------- start ----------

async function main() {
  try {
    graph = await (await fetch("graph.json")).json();
    drawChart();
  } catch (error) {
    toast(`Could not load the statechart: ${error.message}`);
  }
  const replayUrl = new URLSearchParams(location.search).get("replay");
  if (replayUrl) {
    try {
      const response = await fetch(replayUrl);
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      startReplay(parseRecording(await response.text()), replayUrl);
    } catch (error) {
      toast(`Could not load the recording: ${error.message}`);
    }
  } else {
    connect();
  }
  render();
}

main();
