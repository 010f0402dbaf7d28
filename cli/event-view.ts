import type { AgentEvent } from "../core/events.js";
import { type AgentMessage, textOf, type Usage, type UserMessage } from "../core/messages.js";
import { describeImagePart } from "./images.js";
import { imageLabelName } from "./mentions.js";
import type { LiveLine, Screen } from "./screen.js";
import type { Style } from "./style.js";
import { fitToColumns, terminalSafe, visibleText } from "./terminal-text.js";
import { captureChange } from "./file-changes.js";
import { type SessionMeter, statusLine } from "./status-line.js";
import { foldToolOutput } from "./tool-output.js";
import { createMarkdownStream, type MarkdownRenderer, type MarkdownStream } from "./markdown.js";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_MS = 80;
/** Columns before a line of a call's output: `    │ `. */
const OUTPUT_INDENT = 6;
/** The phase while a turn's tool calls are out; {@link createEventView}'s `activity` details it. */
const TOOLS_PHASE = "running tools";

interface ToolLine {
  id: string;
  name: string;
  summary: string;
  /** When the tool started executing: after its approval, when it needed one. */
  startedAt: number;
  endedAt?: number;
  /** `waiting`: the call waits for the user's approval (the tool has not started). */
  status: "waiting" | "running" | "done" | "failed";
  /** Latest output line or progress text while running; the size or the error's first line when finished. */
  detail?: string;
  /** The finished call's output, folded ({@link foldToolOutput}), styled: written under its line. */
  output?: string[];
  /** For a file edit or write: the diff it applied, once it has run. */
  applied?: (style: Style, columns: number) => string[];
}

/** Renders agent events on a {@link Screen}: streamed text, one updating line per tool call, a spinner. */
export interface EventView {
  handle(event: AgentEvent): void;
  /** Lines drawn under the spinner (the input line, an approval question). */
  setFooter(lines: LiveLine[]): void;
  /** Messages typed for the agent and not yet taken (the status line counts them). */
  setQueued(count: number): void;
  /** The last finished call's whole output (what `/expand` shows unfolded). */
  lastOutput(): { title: string; text: string } | undefined;
  /**
   * The finished calls' whole outputs, newest first (`1`: the last), as `/expand <n>` and Ctrl-O
   * show them; the last {@link KEPT_OUTPUTS} are kept.
   */
  outputs(): readonly { title: string; text: string }[];
  /** A line of the CLI's own (notices, echoes), committed above the live region. */
  note(text: string): void;
  /** Whether a run is under way (between `agent_start` and `agent_end`). */
  readonly running: boolean;
  /** Stops the spinner timer. */
  dispose(): void;
}

/** One line that says what a tool call is about: the command, the path, the pattern. */
export function summarizeArgs(name: string, args: unknown): string {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const pick = (...keys: string[]) =>
    keys.map((k) => a[k]).find((v) => typeof v === "string") as string | undefined;
  let text: string | undefined;
  if (name === "bash") text = pick("description", "command");
  else if (name === "grep" || name === "glob")
    text = [pick("pattern"), pick("path")].filter(Boolean).join(" in ");
  else text = pick("path", "file_path", "command", "pattern", "query", "url");
  if (!text) text = Object.keys(a).length ? JSON.stringify(a) : "";
  // One row: every line of it (a newline shows as ⏎, never hides what follows) and nothing invisible.
  return fitToColumns(visibleText(text.trim(), { newlines: "mark" }), 70);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function formatTokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** The closing line of a run: why it ended, turns, tokens, cost, time. */
export function runSummary(
  reason: string,
  turns: number,
  usage: Usage,
  elapsedMs: number,
  errorMessage?: string,
): string {
  const parts = [
    reason === "stop" ? "done" : reason,
    `${turns} turn${turns === 1 ? "" : "s"}`,
    `${formatTokens(usage.totalTokens)} tokens`,
  ];
  if (usage.cost && usage.cost.total > 0) parts.push(`$${usage.cost.total.toFixed(4)}`);
  parts.push(seconds(elapsedMs));
  return `— ${parts.join(" · ")}${errorMessage ? `: ${terminalSafe(errorMessage)}` : ""}`;
}

/** Finished calls' outputs `/expand <n>` can show (older ones are let go: memory). */
export const KEPT_OUTPUTS = 50;

/**
 * Creates the terminal view of an agent's events.
 *
 * @example
 * ```ts
 * const view = createEventView(createScreen(process.stdout), createStyle(true));
 * agent.events$.subscribe((event) => view.handle(event));
 * ```
 */
export function createEventView(
  screen: Screen,
  style: Style,
  options: {
    hint?: string;
    now?: () => number;
    /** The workspace: a file edit's or write's line shows the diff it applied. */
    cwd?: string;
    /** A status line at the bottom: the model, the context used, tokens and cost, what the agent does. */
    status?: { model: string; meter: SessionMeter };
    /**
     * Renders the model's answers as markdown (on a terminal only): the renderer, or `undefined`
     * while it is not loaded (the text is then shown as it came).
     */
    markdown?: () => MarkdownRenderer | undefined;
  } = {},
): EventView {
  const now = options.now ?? Date.now;
  let running = false;
  let runStartedAt = 0;
  let phase = "";
  let turns = 0;
  let tools: ToolLine[] = [];
  let streamed = false;
  let frame = 0;
  let footer: LiveLine[] = [];
  let ticker: NodeJS.Timeout | undefined;
  const thinkingStyle = (line: string) => style.thinking(line);
  const textStyle = (line: string) => line;
  /** The answer being streamed, as markdown: its finished blocks committed, the last one a draft. */
  const answer: MarkdownStream | undefined =
    options.markdown && screen.tty
      ? createMarkdownStream(options.markdown, {
          paragraph: (text, style) => screen.write(text, style),
          block(lines) {
            screen.endLine();
            screen.write(`${lines.join("\n")}\n`);
          },
          columns: () => screen.columns - 1,
        })
      : undefined;
  const draft = (columns: number, rows: number) => answer!.draft(columns, rows);
  /** Commits what is left of the answer (its message ended, or other text comes). */
  const finishAnswer = () => {
    if (!answer) return;
    answer.finish();
    screen.setDraft(undefined);
  };

  /**
   * What the agent does now: while tools are out, the calls waiting for approval and the ones
   * running, counted from the tool lines (an approval answered moves its call from one to the other).
   */
  const activity = (): string => {
    if (phase !== TOOLS_PHASE) return phase;
    const waiting = tools.filter((t) => t.status === "waiting");
    const runningCount = tools.filter((t) => t.status === "running").length;
    const runningText = `running ${runningCount} tool${runningCount === 1 ? "" : "s"}`;
    if (waiting.length === 0) return runningCount ? runningText : "finishing the tool calls";
    const names = [...new Set(waiting.map((t) => t.name))].join(", ");
    return `waiting for your approval of ${names}${runningCount ? ` · ${runningText}` : ""}`;
  };

  const toolText = (tool: ToolLine): string => {
    if (tool.status === "waiting")
      return `  ${style.warning("?")} ${style.bold(tool.name)} ${tool.summary}  ${style.warning("waiting for your approval")}`;
    const icon =
      tool.status === "running"
        ? style.accent(SPINNER[frame % SPINNER.length]!)
        : tool.status === "done"
          ? style.success("✓")
          : style.error("✗");
    const elapsed = seconds((tool.endedAt ?? now()) - tool.startedAt);
    const status =
      tool.status === "running"
        ? style.accent(`running ${elapsed}`)
        : tool.status === "done"
          ? style.muted(`done ${elapsed}`)
          : style.error(`failed ${elapsed}`);
    const detail = tool.detail ? style.muted(` · ${tool.detail}`) : "";
    return `  ${icon} ${style.bold(tool.name)} ${tool.summary}  ${status}${detail}`;
  };

  let queued = 0;
  let lastOutput: { title: string; text: string } | undefined;
  /** Earlier outputs, newest first, for `/expand <n>`. */
  const outputs: { title: string; text: string }[] = [];
  /** The status line, made again on every event but a streamed delta (their cost must stay flat). */
  let status = "";
  /** The model that answers (a fallback chain's or a router's choice), once one has. */
  let answering: string | undefined;
  const updateStatus = () => {
    if (!options.status) return;
    // While a run is under way the spinner's row says what the agent does; the status follows it
    // on the same row, so the live region is no taller than without it (a taller one is likelier
    // to be re-wrapped past its room by a terminal made narrower before the resize is known).
    status = style.muted(
      statusLine({
        ...options.status,
        ...(answering !== undefined && { model: answering }),
        ...(!running && { state: "idle" }),
        queued,
      }),
    );
  };

  const refresh = () => {
    if (!screen.tty) return;
    const lines = tools.map(toolText);
    if (running) {
      const spin = style.accent(SPINNER[frame % SPINNER.length]!);
      const after = status ? ` · ${status}` : options.hint ? style.muted(` · ${options.hint}`) : "";
      lines.push(`${spin} ${style.muted(`${activity()} ${seconds(now() - runStartedAt)}`)}${after}`);
    }
    screen.setLive(status && !running ? [...lines, ...footer, status] : [...lines, ...footer]);
  };

  const startTicker = () => {
    if (ticker || !screen.tty) return;
    ticker = setInterval(() => {
      frame++;
      updateStatus();
      refresh();
    }, SPINNER_MS);
    ticker.unref?.();
  };
  const stopTicker = () => {
    if (ticker) clearInterval(ticker);
    ticker = undefined;
  };

  /** Commits the tool lines that are final, keeping order: an unfinished call holds back the ones after it. */
  const commitFinishedTools = (all = false) => {
    let count = 0;
    const final = (tool: ToolLine) => tool.status === "done" || tool.status === "failed";
    while (count < tools.length && (all || final(tools[count]!))) count++;
    if (count === 0) return;
    screen.endLine();
    for (const tool of tools.slice(0, count)) {
      screen.write(`${toolText(tool)}\n`);
      for (const line of tool.output ?? [])
        screen.write(`${style.decor(line ? "    │ " : "    │")}${line}\n`);
    }
    tools = tools.slice(count);
  };

  const commit = (text: string) => {
    screen.endLine();
    screen.write(`${text}\n`);
  };

  const showMessageEnd = (message: AgentMessage) => {
    if (message.role === "user") {
      const { text, images } = userLine(message.content);
      // Files attached with @path follow the typed line: name them, do not print them.
      const files = text.indexOf('\n\n<file path="');
      const typed = files >= 0 ? text.slice(0, files) : text;
      const attached =
        files >= 0 ? [...text.slice(files).matchAll(/^<file path="([^"]*)">$/gm)].map((m) => m[1]) : [];
      commit(
        style.accent(`› ${terminalSafe(typed)}`) +
          (attached.length ? style.muted(` (attached: ${terminalSafe(attached.join(", "))})`) : "") +
          (images.length
            ? style.muted(` (${terminalSafe(images.map((i) => `image ${i}`).join(", "))})`)
            : ""),
      );
      return;
    }
    if (message.role === "custom") {
      if (message.display !== "ui-only") commit(style.muted(`[${message.customType}]`));
      return;
    }
    if (message.role !== "assistant") return;
    if (!streamed) {
      // Not streamed (a limit notice, a resumed message): show it whole.
      const text = textOf(message.content.filter((part) => part.type === "text"));
      if (text && answer) {
        answer.push(terminalSafe(text));
        finishAnswer();
      } else if (text) screen.write(terminalSafe(text), textStyle);
    }
    finishAnswer();
    screen.endLine();
    if (message.stopReason === "error")
      commit(style.error(`✗ model error: ${terminalSafe(message.errorMessage ?? "unknown")}`));
  };

  const handle = (event: AgentEvent) => {
    options.status?.meter.handle(event);
    switch (event.type) {
      case "agent_start":
        running = true;
        runStartedAt = now();
        turns = 0;
        phase = "starting";
        startTicker();
        break;
      case "turn_start":
        turns++;
        phase = "waiting for the model";
        break;
      case "message_start":
        if (event.message.role === "assistant") {
          if (event.message.model !== undefined) answering = event.message.model;
          streamed = false;
          phase = "model is answering";
        }
        break;
      case "message_update":
        if (event.kind === "text_delta" || event.kind === "thinking_delta") {
          streamed = true;
          // The model's text is shown, never obeyed: no escape sequence of it reaches the terminal.
          const text = terminalSafe(event.delta);
          if (answer && event.kind === "text_delta") {
            answer.push(text);
            screen.setDraft(draft);
          } else {
            finishAnswer();
            screen.write(text, event.kind === "text_delta" ? textStyle : thinkingStyle);
          }
          // Nothing else on the screen changed: the screen redraws the streamed line itself, and the
          // spinner's tick the rest. A delta costs one write, whatever the live region holds.
          return;
        } else if (event.kind === "toolcall_start" || event.kind === "toolcall_delta") {
          phase = "model is writing a tool call";
        }
        break;
      case "message_end":
        // A retried attempt: the `retry` line already said why; its text stays as it was streamed.
        if (event.discarded) {
          finishAnswer();
          screen.endLine();
        } else showMessageEnd(event.message);
        break;
      case "tool_execution_start":
        screen.endLine();
        tools.push({
          id: event.toolCallId,
          name: event.toolName,
          summary: summarizeArgs(event.toolName, event.args),
          startedAt: now(),
          status: "running",
          applied: options.cwd ? captureChange(options.cwd, event.toolName, event.args) : undefined,
        });
        phase = TOOLS_PHASE;
        break;
      case "tool_execution_update": {
        const text = textOf(event.partialResult.content).trimEnd();
        const last = text.slice(text.lastIndexOf("\n") + 1).trim();
        const tool = tools.find((t) => t.id === event.toolCallId);
        if (tool && last) tool.detail = fitToColumns(terminalSafe(last), 60);
        break;
      }
      case "tool_progress": {
        const tool = tools.find((t) => t.id === event.toolCallId);
        if (tool) tool.detail = fitToColumns(terminalSafe(event.text), 60);
        break;
      }
      case "tool_execution_end": {
        let tool = tools.find((t) => t.id === event.toolCallId);
        if (!tool) {
          // Ended without a start we saw (e.g. resumed): show it anyway.
          tool = {
            id: event.toolCallId,
            name: event.toolName,
            summary: "",
            startedAt: now(),
            status: "running",
          };
          tools.push(tool);
        }
        tool.endedAt = now();
        tool.status = event.isError ? "failed" : "done";
        const output = textOf(event.result.content);
        lastOutput = { title: `${event.toolName} ${tool.summary}`.trim(), text: output };
        outputs.unshift(lastOutput);
        if (outputs.length > KEPT_OUTPUTS) outputs.pop();
        const folded = foldToolOutput(
          event.toolName,
          output,
          event.isError,
          screen.columns - OUTPUT_INDENT - 1,
        );
        tool.detail = folded.detail && fitToColumns(folded.detail, 100);
        const columns = screen.columns - OUTPUT_INDENT - 1;
        tool.output =
          !event.isError && tool.applied ? tool.applied(style, columns) : folded.lines.map(style.muted);
        commitFinishedTools();
        break;
      }
      case "turn_end":
        commitFinishedTools(true);
        phase = "checking for queued messages";
        break;
      case "compaction":
        commit(
          style.accent(
            `⟳ context compacted (level ${event.level}: ${
              ["", "old tool outputs truncated", "old turns summarised", "middle dropped"][event.level]
            }) ${event.tokensBefore} → ${event.tokensAfter} tokens`,
          ),
        );
        break;
      case "context_window_learned":
        commit(
          style.accent(
            `⟳ the model refused ${event.refusedTokens} tokens as too long: context window now ${event.maxContextTokens} tokens (was ${event.previous})`,
          ),
        );
        break;
      case "retry":
        commit(
          style.warning(
            `↻ retry ${event.attempt} in ${seconds(event.delayMs)}: ${terminalSafe(event.error)}`,
          ),
        );
        break;
      case "loop_detected":
        commit(
          style.warning(
            `⟲ loop: ${event.toolName} ${event.kind === "failing" ? "failed" : "repeated"} ${event.count}× with the same arguments${
              event.action === "warned" ? " — the model is told" : " — stopping the run"
            }`,
          ),
        );
        break;
      case "limit_reached":
        commit(
          style.warning(
            `⏹ ${event.text}${event.action === "answer" ? " — asking the model for its answer, without tools" : ""}`,
          ),
        );
        break;
      case "input_rejected":
        commit(style.error(`✗ input rejected: ${terminalSafe(event.reason)}`));
        break;
      case "approval_requested": {
        const tool = tools.find((t) => t.id === event.toolCallId);
        if (tool && tool.status === "running") tool.status = "waiting";
        phase = TOOLS_PHASE;
        break;
      }
      case "approval_decided": {
        // The tool's own time starts now: the wait for the answer is not the tool's.
        const tool = tools.find((t) => t.id === event.toolCallId);
        if (tool && tool.status === "waiting") {
          tool.startedAt = now();
          if (event.approved) tool.status = "running";
        }
        break;
      }
      case "agent_end":
        finishAnswer();
        commitFinishedTools(true);
        screen.endLine();
        running = false;
        stopTicker();
        commit(
          style.muted(runSummary(event.reason, turns, event.usage, now() - runStartedAt, event.errorMessage)),
        );
        break;
    }
    if (event.type !== "message_update") updateStatus();
    refresh();
  };

  updateStatus();

  return {
    handle,
    setFooter(lines) {
      footer = lines;
      // The meter may have been set meanwhile (a resumed session's context and totals): shown at once.
      updateStatus();
      refresh();
    },
    lastOutput: () => lastOutput,
    outputs: () => outputs,
    setQueued(count) {
      queued = count;
      updateStatus();
      refresh();
    },
    note(text) {
      commit(text);
      updateStatus();
      refresh();
    },
    get running() {
      return running;
    },
    dispose() {
      stopTicker();
    },
  };
}

/**
 * A user message as its line shows it: the text typed (and the files after it), and each image
 * described (`shot.png (PNG, 1.2 KB, 2×2)`, named by the label before it), never its base64.
 */
function userLine(content: UserMessage["content"]): { text: string; images: string[] } {
  if (typeof content === "string") return { text: content, images: [] };
  let text = "";
  const images: string[] = [];
  let label: string | undefined;
  for (const part of content) {
    if (part.type === "image") {
      images.push(describeImagePart(label ?? "image", part));
      label = undefined;
      continue;
    }
    const name = imageLabelName(part.text);
    if (name !== undefined) label = name;
    else text += part.text;
  }
  return { text, images };
}
