// The event log: one line per event (text deltas in a row folded into one), filtered by kind and by a
// search, newest at the bottom. Clicking a line selects that moment: the page shows the agent as it was
// then, and the details pane shows the event's payload and the machine's snapshot.
import { atEnd, h, json, setText } from "./dom.js";
import { stateName } from "./model.js";

const SHOWN = 500;

/** Kinds of events a user filters by; every event type belongs to one. */
export const CATEGORIES = {
  run: ["agent_start", "agent_end", "turn_start", "turn_end", "input_rejected", "compaction", "retry"],
  messages: ["message_start", "message_end"],
  deltas: ["message_update", "output_delta"],
  tools: ["tool_execution_start", "tool_execution_end", "tool_execution_update"],
  progress: ["tool_progress"],
  approvals: ["approval_requested"],
};

const categoryOf = (type) => Object.keys(CATEGORIES).find((name) => CATEGORIES[name].includes(type)) ?? "run";

export function createLog({ list, search, filters, count, onSelect }) {
  const hidden = new Set();
  let query = "";
  let firstRow = null;
  let processed = 0;
  let lastRow = null;
  let selected = undefined;
  let view = null;
  let origin = 0;

  const matches = (row) => {
    if (hidden.has(categoryOf(row.type))) return false;
    if (!query) return true;
    return `${row.type} ${row.detail ?? ""}`.toLowerCase().includes(query);
  };

  function rowElement(row) {
    const li = h(
      "li",
      {
        "data-type": row.type,
        "data-index": row.index,
        class: `${row.summarized ? "summarized" : ""}${row.index !== undefined && row.index === selected ? " selected" : ""}`,
        title: row.summarized
          ? "From before this page connected: summarized"
          : "Click: the page shows this moment; details below",
      },
      h("span", { class: "time" }, `${((row.t - origin) / 1000).toFixed(3)}s`),
      " ",
      row.type,
      " ",
      h("span", { class: "muted" }, row.detail),
    );
    li.addEventListener("click", () => onSelect(row));
    return li;
  }

  function rebuild() {
    const follow = atEnd(list);
    const rows = view.log.filter(matches).slice(-SHOWN);
    list.replaceChildren(...rows.map(rowElement));
    firstRow = view.log[0] ?? null;
    processed = view.log.length;
    lastRow = view.log[view.log.length - 1] ?? null;
    updateCount();
    if (follow || selected === undefined) list.scrollTop = list.scrollHeight;
    else scrollWithin(list, list.querySelector("li.selected"));
  }

  function updateCount() {
    const shown = view.log.filter(matches).length;
    setText(count, hidden.size || query ? `${shown} of ${view.log.length}` : `${view.log.length}`);
  }

  /** Shows `view`'s log; appends what is new unless `full` (another moment, another filter). */
  function render(next, full, start) {
    const changedModel = view !== next;
    view = next;
    origin = start ?? view.log[0]?.t ?? 0;
    if (full || changedModel || view.log[0] !== firstRow || view.log.length < processed) return rebuild();
    const follow = atEnd(list);
    // The last line may have grown (text deltas fold into it).
    if (lastRow && processed > 0 && view.log[processed - 1] === lastRow && matches(lastRow)) {
      const element = list.lastElementChild;
      if (element && element.dataset.type === lastRow.type) element.replaceWith(rowElement(lastRow));
    }
    const fresh = view.log.slice(processed).filter(matches).map(rowElement);
    if (fresh.length) list.append(...fresh);
    while (list.childElementCount > SHOWN) list.firstElementChild.remove();
    processed = view.log.length;
    lastRow = view.log[view.log.length - 1] ?? null;
    updateCount();
    if (follow) list.scrollTop = list.scrollHeight;
  }

  search.addEventListener("input", () => {
    query = search.value.trim().toLowerCase();
    if (view) rebuild();
  });
  for (const name of Object.keys(CATEGORIES)) {
    const box = h("input", { type: "checkbox", checked: true, "data-category": name });
    box.addEventListener("change", () => {
      if (box.checked) hidden.delete(name);
      else hidden.add(name);
      if (view) rebuild();
    });
    filters.appendChild(h("label", { class: "chip" }, box, name));
  }

  return {
    render,
    /** Marks the selected line (undefined: none) without rebuilding the list. */
    select(index) {
      selected = index;
      for (const li of list.querySelectorAll("li.selected")) li.classList.remove("selected");
      if (index === undefined) return;
      const li = list.querySelector(`li[data-index="${index}"]`);
      li?.classList.add("selected");
      scrollWithin(list, li);
    },
    /** Shows only lines mentioning `text` (e.g. a tool call id). */
    search(text) {
      search.value = text;
      query = text.toLowerCase();
      if (view) rebuild();
    },
  };
}

/**
 * Brings a line into view inside the list only: scrollIntoView would scroll the page too, taking the
 * chart out of view while the user scrubs.
 */
function scrollWithin(list, li) {
  if (!li) return;
  const top = li.getBoundingClientRect().top - list.getBoundingClientRect().top + list.scrollTop;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (top + li.offsetHeight > list.scrollTop + list.clientHeight)
    list.scrollTop = top + li.offsetHeight - list.clientHeight;
}

/** The details of one moment: the event as it travelled, and the machine's snapshot right after it. */
export function renderDetails(host, { message, row, view, index, start }) {
  if (!message && !row) {
    host.replaceChildren(h("p", { class: "empty" }, "Click an event to see its payload and the snapshot."));
    return;
  }
  const t = message?.t ?? row.t;
  const title = h(
    "div",
    { class: "detail-head" },
    h("b", {}, message?.event?.type ?? message?.kind ?? row.type),
    index !== undefined ? h("span", { class: "muted" }, ` #${index}`) : null,
    h("span", { class: "muted" }, ` at ${((t - start) / 1000).toFixed(3)} s`),
  );
  if (!message) {
    host.replaceChildren(
      title,
      h(
        "p",
        { class: "muted" },
        "This event happened before the page connected; the server summarized it (",
        row.detail,
        "). Its payload is not kept.",
      ),
    );
    return;
  }
  const payload =
    message.kind === "event"
      ? { ...message.event, ...(message.outcome && { outcome: message.outcome }) }
      : message;
  const snapshot = {
    value: view.state,
    state: stateName(view.state),
    ...(view.execution !== undefined && { toolExecution: view.execution }),
    context: view.context,
  };
  host.replaceChildren(
    title,
    h("div", { class: "detail-title" }, "event"),
    h("pre", { "data-testid": "event-payload" }, json(payload)),
    h("div", { class: "detail-title" }, "snapshot after it: ", h("code", {}, snapshot.state || "…")),
    h("pre", { "data-testid": "event-snapshot" }, json(snapshot)),
  );
}
