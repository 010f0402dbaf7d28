// The scrubber: one run on one time axis (model calls, approval waits, tool calls, compactions and
// steering) under a playhead that is the page's time travel. Click or drag anywhere on it and the whole
// page (chart, state, transcript, lanes) shows that moment; "Live" comes back in one click. It redraws
// its spans only when the run's index changed; following the live agent moves only the playhead.
import { fmtMs, h, setAttr, setText } from "./dom.js";
import { positionAt } from "./run-spans.js";

/** Tool calls running at once get this many rows; more overlap on the last. */
const TOOL_ROWS = 3;

/**
 * @param {HTMLElement} host
 * @param {{ seek(position: number): void, live(): void }} actions
 * @example
 * const scrubber = createScrubber($("scrubber"), { seek, live: backToLive });
 * scrubber.render({ history, position, following: true, canGoLive: false });
 */
export function createScrubber(host, actions) {
  const prev = h("button", { type: "button", class: "scrub-run-prev", title: "The run before" }, "◀");
  const next = h("button", { type: "button", class: "scrub-run-next", title: "The run after" }, "▶");
  const title = h("span", { class: "scrub-title", "data-testid": "scrub-run" });
  const when = h("span", { class: "scrub-when muted", "data-testid": "scrub-when" });
  const liveButton = h(
    "button",
    {
      type: "button",
      class: "primary scrub-live",
      "data-testid": "scrub-live",
      title: "Follow the live agent again (Esc)",
    },
    "Live",
  );
  const liveMark = h("span", { class: "scrub-live-mark", "data-testid": "scrub-following" }, "● Live");
  const spans = h("div", { class: "scrub-spans" });
  const playhead = h("div", { class: "playhead", "data-testid": "playhead" });
  const track = h(
    "div",
    {
      class: "scrub-track",
      role: "slider",
      tabindex: 0,
      "aria-label": "Moment of the run: click or drag to see the agent as it was then",
      "data-testid": "scrub-track",
    },
    h("span", { class: "row-name model" }, "model"),
    h("span", { class: "row-name approval" }, "approvals"),
    h("span", { class: "row-name tool" }, "tools"),
    h("span", { class: "row-name marks" }, "steer · compact"),
    h("div", { class: "scrub-area" }, spans, playhead),
  );
  const empty = h(
    "div",
    { class: "scrub-empty muted" },
    "The timeline of a run appears here once one starts.",
  );
  host.replaceChildren(
    h(
      "div",
      { class: "scrub-head" },
      prev,
      title,
      next,
      when,
      h("span", { class: "spacer" }),
      liveMark,
      liveButton,
    ),
    track,
    empty,
  );

  /** What is drawn: the run, from which history, and the index version it was drawn at. */
  let drawn = { run: null, history: "", version: -1, count: 0 };
  /** Spans drawn while still open, with their elements: they get their end when it comes. */
  const open = new Map();
  let rowsEnd = [];
  /** The state of the last render, for the pointer and key handlers. */
  let state = null;

  const axisOf = (run) => {
    const to = Math.max(run.to ?? run.last, run.from + 1);
    return { from: run.from, span: to - run.from };
  };

  // Spans are placed in milliseconds from the run's start, scaled by one variable on their container
  // (--scale, and --end for spans still open): a longer run changes one style, not every span.
  function spanTitle(span) {
    const length = span.to !== undefined && span.to !== span.from ? ` · ${fmtMs(span.to - span.from)}` : "";
    const outcome = span.outcome && span.outcome !== "ok" ? ` · ${span.outcome}` : "";
    return `${span.label}${length}${outcome}`;
  }

  function closeSpan(span, element) {
    element.className = `scrub-span ${span.kind}`;
    element.dataset.kind = span.kind;
    element.dataset.to = String(span.to);
    element.title = spanTitle(span);
    element.style.width = `calc(var(--scale) * ${span.to - span.from})`;
    if (element.dataset.row !== undefined && span.kind.startsWith("tool"))
      rowsEnd[Number(element.dataset.row)] = span.to;
  }

  function spanElement(span, run) {
    let row = 0;
    if (span.kind === "tool" || span.kind === "tool-failed") {
      row = rowsEnd.findIndex((end) => end <= span.from);
      if (row < 0) row = TOOL_ROWS - 1;
      rowsEnd[row] = span.to ?? Infinity;
    }
    const element = h("div", {
      class: `scrub-span ${span.kind}${span.to === undefined ? " open" : ""}`,
      "data-kind": span.kind,
      "data-row": row,
      "data-from": span.from,
      ...(span.id && { "data-call": span.id }),
      title: spanTitle(span),
    });
    const offset = span.from - run.from;
    element.style.left = `calc(var(--scale) * ${offset})`;
    if (span.to === undefined) {
      element.style.width = `calc(var(--scale) * (var(--end) - ${offset}))`;
      open.set(span, element);
    } else closeSpan(span, element);
    return element;
  }

  function drawSpans(run, history, version) {
    if (drawn.run !== run || drawn.history !== history.id) {
      drawn = { run, history: history.id, version: -1, count: 0 };
      open.clear();
      rowsEnd = new Array(TOOL_ROWS).fill(-Infinity);
      spans.replaceChildren();
    }
    if (drawn.version === version) return;
    drawn.version = version;
    for (const [span, element] of open) {
      if (span.to === undefined) continue;
      closeSpan(span, element);
      open.delete(span);
    }
    const fresh = run.spans.slice(drawn.count).map((span) => spanElement(span, run));
    drawn.count = run.spans.length;
    if (fresh.length) spans.append(...fresh);
  }

  /**
   * Shows the run the playhead is in.
   * @param {{ history: any, position: number, following: boolean, canGoLive: boolean }} next
   */
  function render({ history, position, following, canGoLive }) {
    const runs = history.runs;
    const run = runs.runAt(position);
    state = { history, run, position };
    host.dataset.state = run ? "run" : "empty";
    track.hidden = !run;
    empty.hidden = !!run;
    liveButton.hidden = following || !canGoLive;
    liveMark.hidden = !following;
    const index = run ? runs.list.indexOf(run) : -1;
    prev.disabled = index <= 0;
    next.disabled = index < 0 || index >= runs.list.length - 1;
    if (!run) {
      setText(title, "");
      setText(when, "");
      return;
    }
    const axis = axisOf(run);
    drawSpans(run, history, runs.version);
    const scale = `calc(100% / ${axis.span})`;
    if (spans.style.getPropertyValue("--scale") !== scale) spans.style.setProperty("--scale", scale);
    const end = String(run.last - run.from);
    if (spans.style.getPropertyValue("--end") !== end) spans.style.setProperty("--end", end);
    setText(
      title,
      `Run ${run.run}${runs.list.length > 1 ? ` of ${runs.list[runs.list.length - 1].run}` : ""}`,
    );
    const at = following ? (run.to ?? run.last) : playheadTime(history, run, position);
    const offset = Math.max(0, Math.min(axis.span, at - axis.from));
    setText(when, `${fmtMs(offset)} of ${fmtMs(axis.span)}${run.to === undefined ? " so far" : ""}`);
    const left = `${((offset / axis.span) * 100).toFixed(3)}%`;
    if (playhead.style.left !== left) playhead.style.left = left;
    setAttr(playhead, "data-t", Math.round(axis.from + offset));
    setAttr(track, "data-from", axis.from);
    setAttr(track, "data-to", axis.from + axis.span);
    setAttr(track, "aria-valuemin", 0);
    setAttr(track, "aria-valuemax", Math.round(axis.span));
    setAttr(track, "aria-valuenow", Math.round(offset));
    setAttr(track, "aria-valuetext", `${fmtMs(offset)} into run ${run.run}`);
  }

  /** The history position under a point of the track. */
  function positionUnder(clientX) {
    const { history, run } = state;
    const box = spans.getBoundingClientRect();
    const fraction = Math.max(0, Math.min(1, (clientX - box.left) / box.width));
    const axis = axisOf(run);
    return positionAt(history, run, axis.from + fraction * axis.span);
  }

  let dragging = false;
  let wanted = 0;
  let frame = 0;
  const seekSoon = (clientX) => {
    wanted = clientX;
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      if (state?.run) actions.seek(positionUnder(wanted));
    });
  };
  track.addEventListener("pointerdown", (event) => {
    if (!state?.run || event.button !== 0) return;
    dragging = true;
    track.setPointerCapture?.(event.pointerId);
    track.focus();
    // The click itself lands at once: what the user sees is settled when it returns.
    actions.seek(positionUnder(event.clientX));
  });
  track.addEventListener("pointermove", (event) => {
    if (dragging) seekSoon(event.clientX);
  });
  const stop = () => (dragging = false);
  track.addEventListener("pointerup", stop);
  track.addEventListener("pointercancel", stop);
  track.addEventListener("keydown", (event) => {
    if (!state?.run) return;
    const { run } = state;
    if (event.key === "Home") actions.seek(run.fromIndex + 1);
    else if (event.key === "End") actions.seek((run.toIndex ?? run.lastIndex) + 1);
    else return;
    event.preventDefault();
  });
  const goRun = (step) => {
    if (!state?.run) return;
    const list = state.history.runs.list;
    const other = list[list.indexOf(state.run) + step];
    // Another run opens at its end: how it finished.
    if (other) actions.seek(positionAt(state.history, other, other.to ?? other.last));
  };
  prev.addEventListener("click", () => goRun(-1));
  next.addEventListener("click", () => goRun(1));
  liveButton.addEventListener("click", () => actions.live());

  return { render };
}

/** When the moment at `position` happened: the time of the last message applied, kept inside the run. */
function playheadTime(history, run, position) {
  for (let i = Math.min(position, history.end) - 1; i >= history.start; i--) {
    const t = history.at(i)?.t;
    if (typeof t === "number") return Math.max(run.from, Math.min(run.to ?? run.last, t));
  }
  return run.from;
}
