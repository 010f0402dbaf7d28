// The tool-call timeline: runs (one per prompt), their turns, and one lane per tool call actor on the
// turn's own time axis. Rendered incrementally: a change to one call redraws that call's turn only, and
// only turns with calls still open follow the clock.
import { fmtMs, h, json, setText } from "./dom.js";
import { laneIsOpen, laneStatus } from "./model.js";
import { stopReason } from "./now.js";
import { wokenByText } from "./agents.js";

/** Turns drawn at first (the newest); "show" draws this many more each time. */
export const SHOWN_TURNS = 40;

const OUTCOME_CLASS = {
  ok: "ok",
  error: "error",
  skipped: "skipped",
  denied: "denied",
  "timed out": "timedout",
  aborted: "aborted",
  "not found": "notfound",
  invalid: "invalid",
  running: "running",
  queued: "queued",
  "awaiting approval": "approval",
};

/**
 * @param {HTMLElement} host
 * @param {{ openActor(id: string): void, openSubAgent(id: string): void, showEvents(id: string): void }} actions
 */
export function createTimeline(host, actions) {
  /** Turn sections by "run:turn", run sections by run number. */
  const groupElements = new Map();
  const runElements = new Map();
  /** Lanes whose details are open: the user's choice survives every re-render. */
  const expanded = new Set();
  let view = null;
  /** How many of the newest turns are drawn; the rest wait behind "N earlier turns · show". */
  let shownTurns = SHOWN_TURNS;
  /** The turns drawn, by key: the newest `shownTurns` of the model's. */
  let shown = new Set();

  function lanesByGroup() {
    const groups = new Map();
    for (const lane of view.lanes.values()) {
      if (!groups.has(lane.group)) groups.set(lane.group, []);
      groups.get(lane.group).push(lane);
    }
    return groups;
  }

  function runStatus(run) {
    if (run.reason) return run.reason;
    return run.run === view.run ? "running" : "";
  }

  /** Rebuilds everything (a new model, or old turns pruned). */
  function renderAll(next, clock) {
    view = next;
    shown = new Set(view.groups.slice(-shownTurns));
    groupElements.clear();
    runElements.clear();
    const groups = lanesByGroup();
    const fragment = document.createDocumentFragment();
    const runs = [...view.runs];
    // Calls from runs the model no longer lists (or from before the first run) go under "Earlier".
    const known = new Set(runs.map((r) => r.run));
    if ([...view.lanes.values()].some((lane) => !known.has(lane.run))) runs.unshift({ run: 0, prompt: "" });
    for (const run of runs) fragment.appendChild(runSection(run, groups, clock));
    const wasAtEnd = host.scrollTop + host.clientHeight >= host.scrollHeight - 4;
    host.textContent = "";
    if (view.lanes.size === 0 && view.runs.length === 0) {
      host.appendChild(h("p", { class: "empty" }, "No tool calls yet."));
      return;
    }
    host.appendChild(fragment);
    if (wasAtEnd) host.scrollTop = host.scrollHeight;
  }

  function runSection(run, groups, clock) {
    const section = h("section", { class: "run", "data-run": run.run });
    const known = new Set(view.runs.map((r) => r.run));
    const runOf = (key) => (known.has(groupRun(key)) ? groupRun(key) : 0);
    const all = [...groups.keys()].filter((key) => runOf(key) === run.run);
    const keys = all.filter((key) => shown.has(key) || !view.groups.includes(key));
    const lanes = all.flatMap((key) => groups.get(key));
    section.appendChild(runHeadFor(run, lanes.length));
    const earlier = earlierFor(
      run,
      all.length - keys.length,
      all.filter((key) => !keys.includes(key)),
      groups,
    );
    if (earlier) section.appendChild(earlier);
    if (all.length === 0 && !run.prunedTurns)
      section.appendChild(h("div", { class: "no-calls muted" }, "no tool calls"));
    for (const key of keys) section.appendChild(groupSection(key, groups.get(key), clock));
    const end = runEndFor(run);
    if (end) section.appendChild(end);
    runElements.set(run.run, section);
    return section;
  }

  /**
   * "N earlier turns · show" above a run's turns: turns kept but not drawn (shown on click), and turns
   * whose lanes the model no longer keeps (counted, so nothing is dropped silently).
   */
  function earlierFor(run, hidden, hiddenKeys, groups) {
    const pruned = run.prunedTurns ?? 0;
    if (!hidden && !pruned) return null;
    const hiddenCalls = hiddenKeys.reduce((sum, key) => sum + groups.get(key).length, 0);
    const turns = hidden + pruned;
    const calls = hiddenCalls + (run.prunedCalls ?? 0);
    const words = `${turns} earlier turn${turns === 1 ? "" : "s"} · ${calls} call${calls === 1 ? "" : "s"}`;
    const show = hidden
      ? h(
          "button",
          {
            type: "button",
            class: "link",
            "data-testid": "show-earlier-turns",
            onclick: () => {
              shownTurns += SHOWN_TURNS;
              renderAll(view, view.now);
            },
          },
          `show ${Math.min(hidden, SHOWN_TURNS)} more`,
        )
      : null;
    const kept = pruned
      ? h("span", { class: "muted" }, ` (the lanes of ${pruned} are no longer kept)`)
      : null;
    return h("div", { class: "earlier-turns", "data-testid": "earlier-turns" }, words, " · ", show, kept);
  }

  /** Why the run stopped, after its calls and apart from them: a model failure is not a tool's. */
  function runEndFor(run) {
    const stopped = stopReason(run);
    if (!stopped) return null;
    return h(
      "div",
      { class: `run-end ${stopped.blame}`, "data-blame": stopped.blame, "data-testid": "run-end" },
      h("b", {}, stopped.blame === "model" ? "Model call failed" : "Stopped"),
      ` · ${stopped.text}`,
    );
  }

  function runHeadFor(run, drawn) {
    const status = runStatus(run);
    // Every call of the run, drawn or not (older models on the wire have no count: the lanes it has).
    const calls = run.calls ?? drawn;
    return h(
      "div",
      { class: "run-head" },
      h("b", {}, run.run ? `Run ${run.run}` : "Earlier"),
      run.wokenBy
        ? h(
            "span",
            { class: "woken-by", "data-testid": "run-woken-by" },
            `woken by ${wokenByText(run.wokenBy)}`,
          )
        : null,
      run.prompt ? h("span", { class: "prompt", title: run.prompt }, `“${run.prompt}”`) : null,
      status
        ? h(
            "span",
            { class: `run-status ${status}`, title: stopReason(run)?.text },
            status === "error" ? "model error" : status,
          )
        : null,
      (run.checks ?? []).map((check) =>
        h("span", { class: `output-check ${check.verdict}`, title: check.title }, check.label),
      ),
      h("span", { class: "muted calls" }, `${calls} call${calls === 1 ? "" : "s"}`),
    );
  }

  function groupSection(key, lanes, clock) {
    const section = h("div", { class: "turn", "data-group": key, "data-turn": key.split(":")[1] });
    fillGroup(section, key, lanes, clock);
    groupElements.set(key, section);
    return section;
  }

  function fillGroup(section, key, lanes, clock) {
    const from = Math.min(...lanes.map((l) => l.queuedAt));
    const to = Math.max(from + 1, ...lanes.map((l) => l.endAt ?? clock));
    const axis = { from, span: to - from };
    const parallel = maxOverlap(lanes, clock);
    const turn = key.split(":")[1];
    const head = h(
      "div",
      { class: "turn-head" },
      h(
        "span",
        {},
        h("b", {}, `Turn ${turn}`),
        ` · ${lanes.length} call${lanes.length === 1 ? "" : "s"}${parallel > 1 ? ` · up to ${parallel} at once` : ""}`,
      ),
      h("span", {}, fmtMs(axis.span)),
    );
    const rows = [head];
    for (const lane of lanes) {
      rows.push(laneRow(lane, axis, clock));
      if (expanded.has(lane.id)) rows.push(laneDetails(lane, clock));
    }
    section.replaceChildren(...rows);
  }

  function laneRow(lane, axis, clock) {
    const status = laneStatus(lane);
    const cls = OUTCOME_CLASS[status] ?? "error";
    const row = h("div", {
      class: `lane${expanded.has(lane.id) ? " open" : ""}`,
      "data-lane": lane.id,
      "data-tool": lane.name,
      "data-outcome": status,
      "data-start": lane.startAt,
      "data-end": lane.endAt,
      role: "button",
      tabindex: 0,
      "aria-expanded": expanded.has(lane.id) ? "true" : "false",
      title: "Click for the details",
    });
    const toggle = () => {
      if (expanded.has(lane.id)) expanded.delete(lane.id);
      else expanded.add(lane.id);
      redrawGroup(lane.group, clock);
    };
    row.addEventListener("click", toggle);
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        toggle();
      }
    });
    const name = h("div", { class: "lane-name" }, lane.name, " ", h("span", { class: "id" }, lane.id));
    const track = h("div", { class: "track" });
    const pct = (t) => `${(((t - axis.from) / axis.span) * 100).toFixed(3)}%`;
    const width = (a, b) => `${((Math.max(0, b - a) / axis.span) * 100).toFixed(3)}%`;
    const segment = (kind, a, b) => {
      const seg = h("div", { class: `seg ${kind}` });
      seg.style.left = pct(a);
      seg.style.width = width(a, b);
      track.appendChild(seg);
    };
    const end = lane.endAt ?? clock;
    if (lane.startAt === undefined) segment("queued", lane.queuedAt, end);
    else {
      if (lane.startAt > lane.queuedAt) segment("queued", lane.queuedAt, lane.startAt);
      if (lane.approvalAt !== undefined) segment("approval", lane.approvalAt, lane.execAt ?? end);
      const runFrom = lane.approvalAt !== undefined ? lane.execAt : lane.startAt;
      if (runFrom !== undefined) segment(cls, runFrom, end);
      else if (lane.endAt !== undefined) segment(cls, end, end);
    }
    const { ran, waited } = durations(lane, clock);
    const first = [ran !== undefined ? fmtMs(ran) : "", waited !== undefined ? `waited ${fmtMs(waited)}` : ""]
      .filter(Boolean)
      .join(" · ");
    const second = lane.childAgentId
      ? `↳ ${lane.childAgentId}${lane.progress && !lane.outcome ? ` · ${lane.progress}` : ""}`
      : !lane.outcome
        ? lane.progress
        : lane.resultText.split("\n")[0];
    const info = h(
      "div",
      { class: "lane-info" },
      h("div", {}, h("span", { class: `outcome ${cls}` }, status), first ? ` ${first}` : ""),
      second ? h("div", { class: "lane-note" }, second) : null,
    );
    row.append(name, track, info);
    return row;
  }

  function laneDetails(lane, clock) {
    const { ran, waited } = durations(lane, clock);
    const rows = [
      ["tool", lane.name],
      ["call", lane.id],
      ["status", laneStatus(lane)],
      ["actor state", lane.state ?? ""],
      ["ran", ran !== undefined ? fmtMs(ran) : ""],
      ["waited for approval", waited !== undefined ? fmtMs(waited) : ""],
      ["sub-agent", lane.childAgentId ?? ""],
      ["progress", lane.outcome ? "" : lane.progress],
    ].filter(([, value]) => value);
    return h(
      "div",
      { class: "lane-details", "data-details": lane.id },
      h(
        "dl",
        {},
        rows.flatMap(([key, value]) => [h("dt", {}, key), h("dd", {}, value)]),
      ),
      h("div", { class: "detail-title" }, "arguments"),
      h("pre", {}, json(lane.args ?? {})),
      lane.resultText ? h("div", { class: "detail-title" }, "result") : null,
      lane.resultText ? h("pre", { class: "result" }, lane.resultText) : null,
      h(
        "div",
        { class: "row" },
        h(
          "button",
          { type: "button", "data-testid": "open-actor", onclick: () => actions.openActor(lane.id) },
          "Open its actor",
        ),
        lane.childAgentId
          ? h(
              "button",
              {
                type: "button",
                "data-testid": "open-sub-agent",
                onclick: () => actions.openSubAgent(lane.id),
              },
              "Open the sub-agent's chart",
            )
          : null,
        h(
          "button",
          { type: "button", "data-testid": "lane-events", onclick: () => actions.showEvents(lane.id) },
          "Its events",
        ),
      ),
    );
  }

  function redrawGroup(key, clock) {
    const section = groupElements.get(key);
    if (!section || !view) return;
    const lanes = [...view.lanes.values()].filter((lane) => lane.group === key);
    fillGroup(section, key, lanes, clock);
  }

  /**
   * Applies what changed: `dirty` from the model. New turns or runs rebuild their run section; a
   * changed call redraws its own turn.
   */
  function render(next, dirty, clock) {
    if (!view || dirty.has("all") || dirty.has("timeline")) return renderAll(next, clock);
    view = next;
    if (host.querySelector(".empty")) return renderAll(next, clock);
    const groups = new Set();
    for (const item of dirty) {
      if (!item.startsWith("lane:")) continue;
      const lane = view.lanes.get(item.slice(5));
      if (lane) groups.add(lane.group);
    }
    const byGroup = groups.size || dirty.has("runs") ? lanesByGroup() : null;
    const rebuiltRuns = new Set();
    for (const key of groups) {
      const run = groupRun(key);
      if (!groupElements.has(key) || !runElements.has(run)) {
        rebuildRun(run, byGroup, clock);
        rebuiltRuns.add(run);
      } else fillGroup(groupElements.get(key), key, byGroup.get(key), clock);
    }
    if (dirty.has("runs")) {
      for (const run of view.runs) {
        if (rebuiltRuns.has(run.run)) continue;
        const section = runElements.get(run.run);
        if (!section) rebuildRun(run.run, byGroup, clock);
        else {
          const lanes = [...byGroup.values()].flat().filter((lane) => lane.run === run.run);
          section.firstChild.replaceWith(runHeadFor(run, lanes.length));
          section.querySelector(":scope > .run-end")?.remove();
          const end = runEndFor(run);
          if (end) section.appendChild(end);
        }
      }
    } else {
      for (const key of groups) {
        const run = view.runs.find((r) => r.run === groupRun(key));
        const section = run && runElements.get(run.run);
        if (section && !rebuiltRuns.has(run.run)) {
          const count = run.calls ?? [...view.lanes.values()].filter((lane) => lane.run === run.run).length;
          setText(section.querySelector(".run-head .calls"), `${count} call${count === 1 ? "" : "s"}`);
        }
      }
    }
  }

  function rebuildRun(runNumber, byGroup, clock) {
    const run = view.runs.find((r) => r.run === runNumber);
    if (!run) return renderAll(view, clock);
    // The window moves with the newest turn; older runs' sections keep theirs until the next full draw.
    shown = new Set(view.groups.slice(-shownTurns));
    const section = runSection(run, byGroup ?? lanesByGroup(), clock);
    const old = [...host.querySelectorAll(":scope > .run")].find((s) => s.dataset.run === String(runNumber));
    const wasAtEnd = host.scrollTop + host.clientHeight >= host.scrollHeight - 4;
    if (old) old.replaceWith(section);
    else host.appendChild(section);
    if (wasAtEnd) host.scrollTop = host.scrollHeight;
  }

  const drawnAt = new Map();
  /**
   * Moves the turns that still have open calls along the clock; the rest stay as they are. A turn
   * open for more than 10 s moves once a second: its bars grow too slowly to need more.
   */
  function tick(clock) {
    if (!view) return;
    for (const key of openGroups(view)) {
      const lanes = [...view.lanes.values()].filter((lane) => lane.group === key);
      const age = clock - Math.min(...lanes.map((lane) => lane.queuedAt));
      if (age > 10_000 && clock - (drawnAt.get(key) ?? 0) < 1000) continue;
      drawnAt.set(key, clock);
      redrawGroup(key, clock);
    }
  }

  return { render, renderAll, tick, expand: (id) => expanded.add(id) };
}

/** The run a turn group belongs to. */
function groupRun(key) {
  return Number(key.split(":")[0]);
}

/** Turn groups with calls not finished yet. */
export function openGroups(view) {
  const groups = new Set();
  for (const lane of view.lanes.values()) if (laneIsOpen(lane)) groups.add(lane.group);
  return groups;
}

function durations(lane, clock) {
  const end = lane.endAt ?? clock;
  const ranFrom = lane.approvalAt !== undefined ? lane.execAt : lane.startAt;
  return {
    ran: ranFrom !== undefined ? end - ranFrom : undefined,
    waited: lane.approvalAt !== undefined ? (lane.execAt ?? end) - lane.approvalAt : undefined,
  };
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
