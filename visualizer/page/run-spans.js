// What the scrubber draws: for each run, its model calls, tool calls, approval waits, compactions and
// steering as spans and marks on the run's own time axis, with the history positions they start and end
// at. Built message by message as the history grows (no DOM), so the whole of a run is known whatever
// moment the page shows.

/**
 * A growing index of runs.
 *
 * @example
 * const runs = createRunSpans();
 * history.forEach((message, index) => runs.push(message, index));
 * runs.list[0].spans; // → [{ kind: "model", from, to, … }, { kind: "tool", label: "deploy", … }]
 */
export function createRunSpans() {
  /** @type {RunSpans[]} */
  const list = [];
  let runNumber = 0;
  let version = 0;
  /** Spans still open in the current run, by what closes them. */
  let model = null;
  const tools = new Map();
  const approvals = new Map();

  const current = () => {
    const run = list[list.length - 1];
    return run && run.to === undefined ? run : undefined;
  };
  const close = (span, t, index) => {
    span.to = Math.max(span.from, t);
    span.toIndex = index;
  };

  function push(message, index) {
    const t = message.t;
    if (message.kind === "catch_up") {
      // Runs before it were folded away: number the next one after them. A run still going on is
      // drawn from here on, on its true time axis.
      runNumber = Number(message.model?.run) || 0;
      const going = message.model?.runs?.at?.(-1);
      if (going && going.run === runNumber && going.endedAt === undefined)
        list.push({
          run: runNumber,
          from: going.startedAt,
          fromIndex: index,
          last: going.startedAt,
          lastIndex: index,
          spans: [],
        });
      version++;
      return;
    }
    const run = current();
    if (run && typeof t === "number") {
      run.last = Math.max(run.last, t);
      run.lastIndex = index;
    }
    if (message.kind === "tool_state" && run) {
      const wait = approvals.get(message.toolCallId);
      if (wait && message.value !== "awaitingApproval") {
        close(wait, t, index);
        approvals.delete(message.toolCallId);
        version++;
      }
      return;
    }
    if (message.kind !== "event") return;
    const event = message.event;
    if (event.type === "agent_start") {
      runNumber += 1;
      list.push({ run: runNumber, from: t, fromIndex: index, last: t, lastIndex: index, spans: [] });
      model = null;
      tools.clear();
      approvals.clear();
      version++;
      return;
    }
    if (!run) return;
    const add = (span) => {
      run.spans.push(span);
      version++;
      return span;
    };
    switch (event.type) {
      case "message_start":
        if (event.message?.role === "assistant")
          model = add({ kind: "model", label: "model call", from: t, fromIndex: index });
        break;
      case "message_end": {
        const message = event.message;
        if (message?.role === "assistant" && model) {
          close(model, t, index);
          if (event.discarded) model.label = "model call (failed, retried)";
          else if (message.stopReason === "error") {
            model.kind = "model-error";
            model.label = `model call failed${message.errorMessage ? `: ${message.errorMessage}` : ""}`;
          }
          model = null;
          version++;
        } else if (message?.role === "user" && message.source === "steer") {
          const text = textOf(message.content);
          add({ kind: "steer", label: `steered: ${text.slice(0, 120)}`, from: t, to: t, fromIndex: index });
        }
        break;
      }
      case "tool_execution_start":
        tools.set(
          event.toolCallId,
          add({ kind: "tool", label: event.toolName, id: event.toolCallId, from: t, fromIndex: index }),
        );
        break;
      case "approval_requested":
        approvals.set(
          event.toolCallId,
          add({
            kind: "approval",
            label: `${event.toolName} waits for approval`,
            id: event.toolCallId,
            from: t,
            fromIndex: index,
          }),
        );
        break;
      case "tool_execution_end": {
        let span = tools.get(event.toolCallId);
        // Refused, denied or skipped before it ever ran: a call all the same, drawn where it ended.
        span ??= add({
          kind: "tool",
          label: event.toolName,
          id: event.toolCallId,
          from: t,
          fromIndex: index,
        });
        close(span, t, index);
        span.outcome = message.outcome ?? (event.isError ? "error" : "ok");
        if (span.outcome !== "ok") span.kind = "tool-failed";
        tools.delete(event.toolCallId);
        const wait = approvals.get(event.toolCallId);
        if (wait) close(wait, t, index);
        approvals.delete(event.toolCallId);
        version++;
        break;
      }
      case "compaction":
        add({
          kind: "compaction",
          label: `compaction, level ${event.level}: ${event.tokensBefore} → ${event.tokensAfter} tokens`,
          from: t,
          to: t,
          fromIndex: index,
        });
        break;
      case "agent_end":
        for (const span of [model, ...tools.values(), ...approvals.values()]) if (span) close(span, t, index);
        model = null;
        tools.clear();
        approvals.clear();
        run.to = t;
        run.toIndex = index;
        run.reason = event.reason;
        version++;
        break;
    }
  }

  return {
    /** The runs, oldest first. */
    list,
    push,
    /** Changes whenever a span starts, ends or a run begins or ends: the scrubber redraws only then. */
    get version() {
      return version;
    },
    /** The run that history position `position` (messages applied so far) falls in, else the nearest before it. */
    runAt(position) {
      let found = list[0];
      for (const run of list) {
        if (run.fromIndex < position) found = run;
        else break;
      }
      return found;
    },
  };
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/**
 * The history position to show for a time on a run's axis: just after the last message at or before it
 * (and the state changes that message caused), never outside the run.
 *
 * @param {{ at(index: number): { t: number, kind: string } | undefined, start: number, end: number }} history
 * @param {{ fromIndex: number, lastIndex: number }} run
 * @param {number} t
 * @example
 * positionAt(history, run, run.from + 1500); // → the position 1.5 s into the run
 */
export function positionAt(history, run, t) {
  let low = Math.max(history.start, run.fromIndex);
  let high = Math.min(history.end - 1, run.lastIndex);
  if (high < low) return Math.max(history.start, Math.min(history.end, run.fromIndex + 1));
  // The last index whose time is ≤ t (times only grow, give or take a hello).
  let found = low;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if ((history.at(middle)?.t ?? 0) <= t) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  let position = found + 1;
  // Take the state lines that follow the event with it: they belong to its transition.
  while (position < history.end && history.at(position).kind !== "event" && position <= run.lastIndex)
    position++;
  return position;
}

/**
 * @typedef {{ kind: string, label: string, from: number, to?: number, fromIndex: number, toIndex?: number, id?: string, outcome?: string }} Span
 * @typedef {{ run: number, from: number, fromIndex: number, last: number, lastIndex: number, to?: number, toIndex?: number, reason?: string, spans: Span[] }} RunSpans
 */
