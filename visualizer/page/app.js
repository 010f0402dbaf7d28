// The agent-machine visualizer page: plain browser JavaScript modules, no build step, no network but the
// page's own server. Live mode follows an agent over a WebSocket; replay mode steps through a recording
// (.jsonl). Both keep every message in a history (history.js), fold them into a model (model.js), and
// can show any earlier moment of it ("time travel"); the page re-renders only what a message changed.
import { createChart } from "./chart.js";
import { $, h, setAttr, setText, toast } from "./dom.js";
import { createHistory } from "./history.js";
import { createLog, renderDetails } from "./log.js";
import { apply, emptyModel } from "./model.js";
import { describeNow, tabTitle } from "./now.js";
import { approvalPreview, proposingText } from "./approval-preview.js";
import { agentTree, laterTexts, nextWakeText, wokenByText } from "./agents.js";
import { createScrubber } from "./scrubber.js";
import { createTimeline, openGroups } from "./timeline.js";
import { createTranscript } from "./transcript.js";

const params = new URLSearchParams(location.search);
const token = params.get("token") ?? "";

const live = {
  socket: null,
  open: false,
  everOpened: false,
  history: createHistory(),
  maxCommandBytes: Infinity,
  /** Between connecting and the server's caught_up: messages are applied, not drawn. */
  catchingUp: false,
};
/** What the page shows: the live agent or a recording, following the newest message or at a moment. */
const show = {
  mode: "live",
  history: live.history,
  position: 0,
  following: true,
  replayName: "",
  /** The recording came from a visualizeRecording server: there is no live agent to go back to. */
  replayOnly: false,
  timer: null,
};
let view = emptyModel();
let graphs = null;
const chartState = { tab: "agent", call: undefined, simple: readSimple() };

/** The chart view the user chose last time ("Simple" or the full chart), kept in this browser. */
function readSimple() {
  try {
    return localStorage.getItem("agent-machine.chart") === "simple";
  } catch {
    return false;
  }
}
/** Approvals the user decided whose answer has not come back yet: id → "approve" | "deny". */
const deciding = new Map();

const chart = createChart({ viewport: $("chart"), caption: $("chart-caption") });
const timeline = createTimeline($("timeline"), {
  openActor(id) {
    chartState.tab = "toolCall";
    chartState.call = id;
    drawChartTab();
    $("chart").scrollIntoView({ block: "nearest" });
  },
  openSubAgent(id) {
    chartState.tab = "subAgent";
    chartState.call = id;
    drawChartTab();
    $("chart").scrollIntoView({ block: "nearest" });
  },
  showEvents(id) {
    log.search(id);
  },
});
const transcript = createTranscript($("transcript"));
const scrubber = createScrubber($("scrubber"), {
  seek(position) {
    pause();
    enterPast();
    seek(position);
    keepChartInView();
  },
  live: () => backToLive(),
});
const log = createLog({
  list: $("log"),
  search: $("log-search"),
  filters: $("log-filters"),
  count: $("log-count"),
  onSelect(row) {
    if (row.index === undefined || row.index < show.history.start) {
      renderDetails($("event-details"), { row, view, start: origin() });
      return;
    }
    pause();
    show.following = false;
    seek(afterStep(row.index));
  },
});

// ---------- rendering ----------

const clock = () => (show.mode === "live" && show.following ? Math.max(Date.now(), view.now) : view.now);
/** Times in the log count from the first event the page has (hello and state lines come earlier or later). */
function origin() {
  const history = show.history;
  for (let i = history.start; i < Math.min(history.end, history.start + 50); i++) {
    const entry = history.at(i);
    if (entry.kind === "event") return entry.t;
    if (entry.kind === "catch_up") break;
  }
  return view.log[0]?.t ?? 0;
}

let pending = new Set();
let frame = 0;

/** Renders what `dirty` names on the next frame, once however many messages arrive before it. */
function schedule(dirty) {
  for (const item of dirty) pending.add(item);
  if (!frame) frame = requestAnimationFrame(flush);
}

function flush() {
  frame = 0;
  const dirty = pending;
  pending = new Set();
  renderView(dirty);
}

/** Renders at once, everything: after a seek, so what the page shows is settled when the click returns. */
function renderAll() {
  if (frame) cancelAnimationFrame(frame);
  frame = 0;
  pending = new Set();
  renderView(new Set(["all"]));
}

function renderView(dirty) {
  const all = dirty.has("all");
  if (all || dirty.has("header") || dirty.has("approvals")) renderHeader();
  if (all || dirty.has("chart")) paintChart();
  timeline.render(view, dirty, clock());
  if (all || dirty.has("transcript")) transcript.render(view, all);
  if (all || dirty.has("usage")) renderUsage();
  if (all || dirty.has("approvals")) renderApprovals();
  if (all || dirty.has("agents") || dirty.has("approvals") || dirty.has("header")) renderAgents();
  if (all || dirty.has("log")) log.render(view, all, origin());
  if (all || dirty.has("bar")) renderTimeBar();
  renderScrubber();
  if (all) renderMoment();
  keepTicking();
}

/** Only while calls are open in a live, followed view: those turns move with the clock, nothing else. */
let ticker = 0;
function keepTicking() {
  const needed = show.mode === "live" && show.following && openGroups(view).size > 0;
  if (needed && !ticker) ticker = setInterval(() => timeline.tick(clock()), 250);
  if (!needed && ticker) {
    clearInterval(ticker);
    ticker = 0;
  }
}

function renderHeader() {
  setText($("agent-id"), view.agentId);
  const pill = $("state-pill");
  const name = view.stateName || "…";
  setText(pill, view.lastEnd && name === "idle" ? `idle · last run: ${view.lastEnd.reason}` : name);
  const running = name.startsWith("running");
  setAttr(pill, "class", `pill ${running ? "running" : "idle"}`);
  setAttr(pill, "data-state", name);
  renderNow();
  const connection = show.mode === "live" ? (live.open ? "open" : "closed") : "";
  setAttr($("connection"), "class", `connection ${connection}`);
  setAttr($("connection"), "title", live.open ? "Connected to the agent" : "Not connected");
  const u = view.usage;
  setText(
    $("usage"),
    `${Number(u.totalTokens).toLocaleString("en-US")} tokens · ${view.modelCalls} model call${view.modelCalls === 1 ? "" : "s"} · ${view.toolCalls} tool call${view.toolCalls === 1 ? "" : "s"}`,
  );
  const controllable = show.mode === "live" && show.following && live.open;
  setText($("steer-button"), running ? "Steer" : "Send");
  $("steer-button").disabled = !controllable;
  $("abort-button").disabled = !controllable || !running;
  $("steer-text").disabled = !(show.mode === "live" && show.following);
}

/** The header's plain words, its colour, the review bar and the tab title: what needs the user, first. */
function renderNow() {
  const now = describeNow(view);
  const live = show.mode === "live" && show.following;
  setText($("now"), now.text);
  setAttr($("now"), "data-tone", now.tone);
  document.body.classList.toggle("awaiting", now.waiting > 0 && live);
  const bar = $("review-bar");
  bar.hidden = !(now.waiting > 0 && live);
  setText(
    $("review-text"),
    now.waiting === 1 ? "1 call waits for your approval" : `${now.waiting} calls wait for your approval`,
  );
  document.title = tabTitle(live ? now : { ...now, waiting: 0 }, view.agentId);
}

function renderUsage() {
  const u = view.usage;
  const n = (x) => Number(x ?? 0).toLocaleString("en-US");
  const rows = [
    ["input", u.input],
    ["output", u.output],
    ["cache read", u.cacheRead],
    ["cache write", u.cacheWrite],
    ["total", u.totalTokens],
  ];
  if (u.cost) rows.push(["cost", `$${u.cost.toFixed(4)}`]);
  $("usage-table").replaceChildren(
    ...rows.map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, typeof v === "string" ? v : n(v)))),
  );
  $("compactions").replaceChildren(
    ...(view.compactions.length
      ? view.compactions.map((c) => h("div", {}, `level ${c.level}: ${n(c.before)} → ${n(c.after)} tokens`))
      : [h("p", { class: "empty" }, "None.")]),
  );
}

// ---------- statechart ----------

function tabs() {
  const list = [
    { key: "agent", label: "Agent" },
    { key: "toolExecution", label: "Tool execution" },
  ];
  const call = chartState.call ?? latestCall();
  list.push({ key: "toolCall", label: call ? `Tool call ${call}` : "Tool call" });
  const sub = chartState.tab === "subAgent" ? chartState.call : undefined;
  const subAgent = sub ? (view.subAgents.get(sub)?.agentId ?? view.lanes.get(sub)?.childAgentId) : undefined;
  if (sub) list.push({ key: "subAgent", label: `Sub-agent ${subAgent ?? sub}` });
  return list;
}

/** The call the tool-call tab shows when none was chosen: the newest one still open, else the newest. */
function latestCall() {
  const lanes = [...view.lanes.values()];
  return (lanes.filter((l) => !l.outcome).at(-1) ?? lanes.at(-1))?.id;
}

function renderTabs() {
  const host = $("chart-tabs");
  const wanted = tabs();
  const key = wanted.map((t) => `${t.key}=${t.label}`).join("|") + chartState.tab;
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  host.replaceChildren(
    ...wanted.map((tab) =>
      h(
        "button",
        {
          type: "button",
          class: `tab${tab.key === chartState.tab ? " selected" : ""}`,
          "data-tab": tab.key,
          "aria-pressed": tab.key === chartState.tab ? "true" : "false",
          onclick: () => {
            chartState.tab = tab.key;
            if (tab.key === "toolCall") chartState.call ??= latestCall();
            drawChartTab();
          },
        },
        tab.label,
      ),
    ),
  );
}

let drawnGraph = null;
function drawChartTab() {
  if (!graphs) return;
  const set = chartState.simple && graphs.simple ? graphs.simple : graphs;
  const graph =
    chartState.tab === "toolExecution"
      ? set.toolExecution
      : chartState.tab === "toolCall"
        ? set.toolCall
        : set.agent;
  setAttr($("chart-simple"), "aria-pressed", chartState.simple ? "true" : "false");
  if (drawnGraph !== graph) {
    chart.draw(graph);
    drawnGraph = graph;
  }
  paintChart();
}

function paintChart() {
  renderTabs();
  if (!graphs) return;
  let value;
  let caption;
  if (chartState.tab === "agent") {
    value = view.state;
    caption = `agentMachine · ${view.stateName || "…"}`;
  } else if (chartState.tab === "toolExecution") {
    value = view.execution;
    caption =
      value === undefined
        ? "No tool execution runs now (one runs per turn with tool calls)."
        : `toolExecution · ${JSON.stringify(value)}`;
  } else if (chartState.tab === "toolCall") {
    const id = chartState.call ?? latestCall();
    const lane = id && view.lanes.get(id);
    value = lane?.state;
    caption = lane
      ? `tool call ${lane.id} (${lane.name}) · ${lane.state ?? "not started"}${lane.outcome ? ` · ${lane.outcome}` : ""}`
      : "No tool call yet.";
  } else {
    const sub = view.subAgents.get(chartState.call);
    value = sub?.value;
    caption = sub
      ? `sub-agent ${sub.agentId} · ${JSON.stringify(sub.value)}`
      : "This call has not started a sub-agent (yet).";
  }
  chart.paint(value, chartState.tab === "agent" ? view.visited : undefined, clock());
  setText($("chart-status"), caption);
}

// ---------- control ----------

function renderApprovals() {
  const host = $("approvals");
  const past = !(show.mode === "live" && show.following);
  const cards = [...view.approvals.values()].map((approval) => {
    const decision = deciding.get(approval.toolCallId);
    const input = h("input", { placeholder: "reason (optional)", "aria-label": "Reason for denying" });
    const approve = h(
      "button",
      { type: "button", class: "approve", "data-testid": "approve" },
      decision === "approve" ? "Approving…" : "Approve",
    );
    const deny = h(
      "button",
      { type: "button", class: "deny", "data-testid": "deny" },
      decision === "deny" ? "Denying…" : "Deny",
    );
    approve.disabled = deny.disabled = past || decision !== undefined || !live.open;
    input.disabled = approve.disabled;
    if (past) approve.title = deny.title = "Go back to live to decide";
    const args = h("textarea", {
      class: "edit-args",
      rows: "4",
      spellcheck: "false",
      "aria-label": "Arguments to approve (JSON)",
      "data-testid": "edit-args",
      hidden: true,
    });
    args.value = JSON.stringify(approval.args ?? {}, null, 2);
    args.disabled = approve.disabled;
    const edit = h(
      "button",
      { type: "button", class: "edit", "data-testid": "edit", title: "Edit the arguments before approving" },
      "Edit arguments",
    );
    edit.disabled = approve.disabled;
    edit.onclick = () => {
      args.hidden = !args.hidden;
      if (!args.hidden) args.focus();
    };
    approve.onclick = () => {
      const command = { kind: "approve", toolCallId: approval.toolCallId };
      if (!args.hidden && args.value.trim() !== JSON.stringify(approval.args ?? {}, null, 2)) {
        try {
          command.args = JSON.parse(args.value);
        } catch (error) {
          toast(`The arguments are not JSON (${error.message}); nothing was sent.`);
          return;
        }
      }
      decide(approval.toolCallId, command);
    };
    deny.onclick = () =>
      decide(approval.toolCallId, { kind: "deny", toolCallId: approval.toolCallId, reason: input.value });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") deny.click();
    });
    const proposed = proposingText(view.messages, approval.toolCallId);
    return h(
      "div",
      { class: `approval-card${decision ? " deciding" : ""}`, "data-approval": approval.toolCallId },
      h(
        "div",
        { class: "title" },
        approval.toolName,
        " ",
        h("span", { class: "muted" }, approval.toolCallId),
      ),
      // What the tool does, as the model was told: the person approves the tool, not just its name.
      approval.description
        ? h("p", { class: "tool-description", "data-testid": "tool-description" }, approval.description)
        : null,
      proposed ? h("blockquote", { class: "proposed", "data-testid": "proposed" }, proposed) : null,
      previewBlock(approvalPreview(approval.toolName, approval.args)),
      args,
      h("div", { class: "row" }, approve, input, deny),
      h("div", { class: "row keys muted" }, edit, h("span", {}, "Keys: A jumps to Approve · Enter decides")),
    );
  });
  // Keep a half-typed reason: rebuild only when the set of cards or a decision changed.
  const key = JSON.stringify([[...view.approvals.keys()], [...deciding], past, live.open]);
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  host.replaceChildren(...cards);
}

/**
 * The Agents panel: the tree of agents (the one answering now, its sub-agents under the calls that
 * run them, at any depth), the handoffs, what woke the agent last and when a schedule wakes it next.
 * Rebuilt only when what it shows changed.
 */
function renderAgents() {
  const host = $("agents");
  const tree = agentTree(view);
  const woken = wokenByText(view.wokenBy);
  const next = nextWakeText(view.nextWake, clock());
  const handoffs = view.handoffs.map((handoff) => `${handoff.from} → ${handoff.to}`);
  const later = laterTexts(view.laterPending, clock());
  const key = JSON.stringify([tree, handoffs, woken, next, later]);
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  host.replaceChildren(
    h("ul", { class: "agent-tree" }, agentItem(tree)),
    handoffs.length
      ? h("div", { class: "handoffs", "data-testid": "handoffs" }, `Handoffs: ${handoffs.join(" · ")}`)
      : null,
    woken ? h("div", { class: "woken-by", "data-testid": "woken-by" }, `Last woken by ${woken}`) : null,
    next ? h("div", { class: "next-wake", "data-testid": "next-wake" }, `Next wake-up: ${next}`) : null,
    later.length
      ? h(
          "div",
          { class: "next-wake", "data-testid": "later-pending" },
          `Waits for a late result: ${later.join(" · ")}`,
        )
      : null,
  );
}

/** One agent of the tree with its sub-agents; a sub-agent opens its chart when clicked. */
function agentItem(node) {
  const row = [
    h("b", {}, node.label),
    " ",
    h("span", { class: "muted" }, node.agentId),
    " · ",
    h("span", { class: "agent-status" }, node.status),
  ];
  return h(
    "li",
    { "data-agent": node.key || "root", class: node.active ? "active" : undefined },
    node.key
      ? h(
          "button",
          {
            type: "button",
            class: "agent-row",
            title: "Open this sub-agent's chart",
            onclick: () => {
              chartState.tab = "subAgent";
              chartState.call = node.key;
              drawChartTab();
              $("chart").scrollIntoView({ block: "nearest" });
            },
          },
          row,
        )
      : h("span", { class: "agent-row" }, row),
    node.children.length ? h("ul", {}, node.children.map(agentItem)) : null,
  );
}

/** A call as the card shows it: a bash command as one block, an edit as a diff, other arguments as JSON. */
function previewBlock(preview) {
  if (preview.kind === "command")
    return h("pre", { class: "command", "data-testid": "command" }, `$ ${preview.text}`);
  if (preview.kind === "diff")
    return h(
      "div",
      { class: "diff-block" },
      h("div", { class: "diff-path" }, preview.path),
      h(
        "pre",
        { class: "diff", "data-testid": "diff" },
        preview.rows.map((row) =>
          h(
            "span",
            { class: row.sign === "+" ? "add" : row.sign === "-" ? "del" : "same" },
            `${row.sign}${row.text}\n`,
          ),
        ),
      ),
    );
  return h("pre", {}, preview.text);
}

function decide(toolCallId, command) {
  if (!send(command)) return;
  deciding.set(toolCallId, command.kind);
  renderApprovals();
}

/** Sends a command to the live agent; false (and says why) when it cannot. */
function send(command) {
  if (!live.socket || !live.open) {
    toast("Not connected to a live agent");
    return false;
  }
  const data = JSON.stringify(command);
  const bytes = new TextEncoder().encode(data).length;
  if (bytes > live.maxCommandBytes) {
    toast(
      `This message is ${megabytes(bytes)}; the visualizer takes at most ${megabytes(live.maxCommandBytes)} at once (visualize({ maxCommandBytes })). Nothing was sent.`,
    );
    return false;
  }
  live.socket.send(data);
  return true;
}

const megabytes = (bytes) => `${(bytes / 1024 / 1024).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB`;

$("steer-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("steer-text");
  const text = input.value;
  if (!text.trim()) return;
  // The box keeps the text unless it really went out.
  if (send({ kind: view.stateName.startsWith("running") ? "steer" : "prompt", text })) input.value = "";
});
$("steer-text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("steer-form").requestSubmit();
  }
});
$("abort-button").addEventListener("click", () => send({ kind: "abort" }));
$("review-button").addEventListener("click", () => focusApprovals());

/** While the user scrubs, the chart stays in view under the sticky bar: the page scrolls to it if it left. */
function keepChartInView() {
  const box = $("chart").getBoundingClientRect();
  const top = document.querySelector(".sticky").getBoundingClientRect().bottom;
  if (box.bottom > top + 80 && box.top < innerHeight - 80) return;
  window.scrollBy({ top: box.top - top - 8 });
}

/** Brings the first waiting approval into view with its Approve button focused. */
function focusApprovals() {
  const card = $("approvals").querySelector(".approval-card");
  if (!card) return;
  card.scrollIntoView({ block: "center" });
  card.querySelector("button.approve")?.focus();
}
$("chart-simple").addEventListener("click", () => {
  chartState.simple = !chartState.simple;
  try {
    localStorage.setItem("agent-machine.chart", chartState.simple ? "simple" : "full");
  } catch {
    // Storage refused (a private window): the choice lasts for this page only.
  }
  drawChartTab();
});
$("zoom-in").addEventListener("click", () => chart.zoomIn());
$("zoom-out").addEventListener("click", () => chart.zoomOut());
$("zoom-fit").addEventListener("click", () => chart.fit());
$("zoom-reset").addEventListener("click", () => chart.actualSize());

// ---------- live ----------

function notice(text) {
  const box = $("notice");
  setText(box, text ?? "");
  box.hidden = !text;
}

function connect() {
  if (!token) {
    notice(
      "This page needs its access token: open the address printed by visualize() or the CLI (it ends in ?token=…).",
    );
    return;
  }
  const socket = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(token)}`);
  live.socket = socket;
  socket.onopen = () => {
    live.open = true;
    live.everOpened = true;
    notice();
    // The server sends everything again: start over, and draw once it has (caught_up).
    live.history = createHistory();
    live.catchingUp = true;
    deciding.clear();
    if (show.mode === "live") {
      show.history = live.history;
      show.following = true;
      show.position = 0;
      view = emptyModel();
      renderAll();
    }
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = () => {
    live.open = false;
    if (!live.everOpened)
      notice(
        "Cannot connect to the agent: this address's token is not this server's, or the server has stopped.",
      );
    schedule(["header", "approvals"]);
    setTimeout(connect, 1500);
  };
}

function receive(message) {
  if (message.kind === "hello" && typeof message.maxCommandBytes === "number")
    live.maxCommandBytes = message.maxCommandBytes;
  if (message.kind === "error") {
    toast(message.message);
    // A decision that failed (e.g. already decided elsewhere): offer the buttons again.
    if (deciding.size) {
      deciding.clear();
      schedule(["approvals"]);
    }
    return;
  }
  if (message.kind === "backlog") {
    for (const each of message.messages) receive(each);
    return;
  }
  if (message.kind === "caught_up") {
    // The history sent on connecting is all here: draw it once.
    live.catchingUp = false;
    if (show.mode === "live") renderAll();
    return;
  }
  live.history.push(message);
  if (show.mode !== "live") return;
  if (!show.following) return live.catchingUp ? undefined : schedule(["bar"]);
  const dirty = apply(view, message, { dirty: new Set(), index: live.history.end - 1 });
  show.position = live.history.end;
  if (live.catchingUp) return;
  for (const id of [...deciding.keys()]) if (!view.approvals.has(id)) deciding.delete(id);
  schedule(dirty);
}

// ---------- moments: replay and time travel ----------

/** Whether an entry is a step of its own; text deltas and actor states ride along with the next one. */
const isStep = (entry) => entry?.kind === "event" && entry.event.type !== "message_update";

function seek(position) {
  const history = show.history;
  position = Math.max(history.start, Math.min(history.end, position));
  view = history.modelAt(position);
  show.position = position;
  for (const id of [...deciding.keys()]) if (!view.approvals.has(id)) deciding.delete(id);
  renderAll();
}

/** The position just after a step: the step and the state changes its transition caused. */
function afterStep(index) {
  const history = show.history;
  let i = index + 1;
  while (i < history.end && history.at(i).kind !== "event") i++;
  return i;
}

/** The last step before `position`, or undefined. */
function stepBefore(position) {
  for (let i = position - 1; i >= show.history.start; i--) if (isStep(show.history.at(i))) return i;
  return undefined;
}

function next() {
  const history = show.history;
  let i = show.position;
  while (i < history.end && !isStep(history.at(i))) i++;
  seek(i < history.end ? afterStep(i) : history.end);
}

function prev() {
  const current = stepBefore(show.position);
  const previous = current === undefined ? undefined : stepBefore(current);
  if (previous === undefined) {
    seek(show.history.start);
    next();
  } else seek(afterStep(previous));
}

function play() {
  if (show.timer) return pause();
  setText($("replay-play"), "⏸ Pause");
  const tick = () => {
    const history = show.history;
    if (show.position >= history.end) return pause();
    const before = history.at(show.position - 1)?.t ?? history.at(show.position).t;
    next();
    const after = history.at(show.position - 1)?.t ?? before;
    const speed = Number($("replay-speed").value) || 1;
    show.timer = setTimeout(tick, Math.min(800, Math.max(0, (after - before) / speed)));
  };
  tick();
}

function pause() {
  clearTimeout(show.timer);
  show.timer = null;
  setText($("replay-play"), "▶ Play");
}

/** Leaves a recording or an earlier moment: the live agent, as it is now. */
function backToLive() {
  pause();
  show.mode = "live";
  show.history = live.history;
  show.following = true;
  show.replayName = "";
  view = live.history.modelAt(live.history.end);
  show.position = live.history.end;
  renderAll();
}

/** Steps back from the live view into the past. */
function enterPast() {
  if (show.mode === "live" && show.following) show.following = false;
}

function renderTimeBar() {
  const bar = $("replay-bar");
  const replaying = show.mode === "replay";
  const past = show.mode === "live" && !show.following;
  bar.hidden = !replaying && !past;
  document.body.classList.toggle("in-past", replaying || past);
  if (bar.hidden) return;
  const history = show.history;
  const steps = countSteps(history, history.start, history.end);
  const done = countSteps(history, history.start, show.position);
  setText($("replay-title"), replaying ? "Replay" : "Viewing the past");
  setText(
    $("replay-name"),
    replaying
      ? `${show.replayName} · ${history.end - history.start} entries`
      : `${history.end - show.position} newer messages (live goes on)`,
  );
  const slider = $("replay-slider");
  slider.min = String(history.start);
  slider.max = String(history.end);
  slider.value = String(show.position);
  setText($("replay-position"), `step ${done} / ${steps}`);
  $("replay-position").dataset.position = String(show.position);
  $("back-to-live").hidden = show.replayOnly;
}

/** The scrubber follows every message cheaply: it redraws its spans only when a run's index changed. */
function renderScrubber() {
  scrubber.render({
    history: show.history,
    position: show.position,
    following: show.mode === "live" && show.following,
    canGoLive: !show.replayOnly,
  });
}

function countSteps(history, from, to) {
  let steps = 0;
  for (let i = from; i < to; i++) if (isStep(history.at(i))) steps++;
  return steps;
}

/** The details pane: the event that led to the moment shown (time travel), or a hint. */
function renderMoment() {
  const host = $("event-details");
  if (show.mode === "live" && show.following) {
    log.select(undefined);
    renderDetails(host, {});
    return;
  }
  // The event that led here (the state lines after it belong to its transition).
  let index = show.position - 1;
  while (index > show.history.start && show.history.at(index)?.kind !== "event") index--;
  const message = show.history.at(index);
  log.select(index);
  renderDetails(host, { message, view, index, start: origin() });
}

function startReplay(entries, name) {
  pause();
  const history = createHistory({ limit: Math.max(50_000, entries.length) });
  for (const entry of entries) history.push(entry);
  show.mode = "replay";
  show.history = history;
  show.replayName = name;
  show.following = false;
  seek(0);
  // Open at the first step so the page is not blank.
  next();
}

function parseRecording(text) {
  const entries = [];
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      throw new Error(`Line ${index + 1} of the recording is not JSON`);
    }
    if (entry && typeof entry.kind === "string") entries.push(entry);
    // A CLI session log: agent events stamped `at`.
    else if (entry && typeof entry.type === "string" && typeof entry.at === "number") {
      const { at, ...event } = entry;
      if (event.type !== "session_resumed") entries.push({ kind: "event", t: at, event });
    }
  });
  return entries;
}

$("replay-first").onclick = () => {
  pause();
  enterPast();
  seek(0);
  next();
};
$("replay-prev").onclick = () => {
  pause();
  enterPast();
  prev();
};
$("replay-next").onclick = () => {
  pause();
  next();
};
$("replay-last").onclick = () => {
  pause();
  seek(show.history.end);
};
$("replay-play").onclick = () => play();
$("back-to-live").onclick = () => backToLive();
$("replay-slider").oninput = (event) => {
  pause();
  seek(Number(event.target.value));
};
document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement) return;
  if (event.key === "ArrowLeft") {
    enterPast();
    prev();
  } else if (event.key === "ArrowRight" && (show.mode === "replay" || !show.following)) next();
  else if (event.key === " " && (show.mode === "replay" || !show.following)) {
    event.preventDefault();
    play();
  } else if (event.key === "Escape" && show.mode === "live" && !show.following) backToLive();
  else if (event.key === "a" && !event.ctrlKey && !event.metaKey && !event.altKey) focusApprovals();
});

$("file-input").addEventListener("change", async (event) => {
  const file = event.target.files?.[0];
  if (!file) return;
  try {
    startReplay(parseRecording(await file.text()), file.name);
  } catch (error) {
    toast(String(error.message ?? error));
  }
  event.target.value = "";
});

// ---------- start ----------

async function main() {
  const replayUrl = params.get("replay");
  // The live history starts coming at once, while the chart loads: a late tab waits for neither.
  if (!replayUrl) connect();
  try {
    graphs = await (await fetch("graph.json")).json();
    drawChartTab();
  } catch (error) {
    toast(`Could not load the statechart: ${error.message}`);
  }
  if (replayUrl) {
    show.replayOnly = true;
    const name = decodeURIComponent(replayUrl.split("/").pop() ?? replayUrl);
    try {
      const response = await fetch(`${replayUrl}?token=${encodeURIComponent(token)}`);
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      startReplay(parseRecording(await response.text()), name);
    } catch (error) {
      toast(`Could not load the recording: ${error.message}`);
    }
  }
  // Not while the live history is still coming: caught_up draws it.
  if (!live.catchingUp) renderAll();
}

main();
