import { statSync } from "node:fs";
import * as path from "node:path";
import type { Agent, PendingApproval } from "../agent/create-agent.js";
import { textOf, type UserMessage } from "../core/messages.js";
import type { Permissions } from "../tools/permissions.js";
import { type EventView, summarizeArgs } from "./event-view.js";
import { approvalPreview } from "./file-changes.js";
import { approvalHeading, approvalQuestion } from "./approval-question.js";
import { takesImages } from "../providers/model-input.js";
import { readClipboardImage } from "./clipboard.js";
import { describeNamedImage, imageFromBytes, readImageFile, unknownModelNote } from "./images.js";
import { attachToPrompt, type NamedImage } from "./mentions.js";
import { pastedFiles } from "./pasted-paths.js";
import { completeInput, parseSlashCommand, slashHelp, unknownCommandText } from "./slash-commands.js";
import { createKeyboard } from "./keyboard.js";
import type { InputHistory } from "./input-history.js";
import { inputRows } from "./line-editor.js";
import type { LiveLine } from "./screen.js";
import type { Style } from "./style.js";
import { terminalSafe } from "./terminal-text.js";

/** What the interactive loop needs. */
export interface InteractiveOptions {
  agent: Agent;
  view: EventView;
  style: Style;
  stdin: Parameters<typeof createKeyboard>[0];
  /** The terminal: told to mark pastes, so a pasted image path attaches the image. */
  stdout?: Parameters<typeof createKeyboard>[2];
  permissions?: Permissions;
  /** Runs first (resume a stopped run, the prompt from the command line). */
  start?: () => Promise<unknown>;
  /** The workspace: an approval question shows the diff of the edit or write it is about. */
  cwd?: string;
  /** The terminal's width now. */
  columns?: () => number;
  /** `/cost`: the session's tokens and cost. */
  cost?: () => string;
  /** `/visualize`: serves the live page of this session (once) and resolves with its address. */
  visualize?: () => Promise<string>;
  /** The environment: where Ctrl-V looks for a clipboard tool (`PATH`). */
  env?: Record<string, string | undefined>;
  /** `/model` without an id: the model in use (whether it takes images decides if an image may go). */
  model?: string;
  /** The lines typed before in this workspace (Up / Down), kept across sessions. */
  history?: InputHistory;
}

/**
 * How the interactive session ended: the user quit, or asked for another session (`/clear`: a new
 * one; `/resume`: one picked from the list, or named; `/model <id>`: this one again on another
 * model), which the caller starts once this one is closed.
 */
export type InteractiveEnd =
  | { kind: "quit" }
  | { kind: "new-session" }
  | { kind: "resume"; id?: string }
  | { kind: "switch-model"; model: string };

/** What a user can do about a line that was not sent for its images. */
const REFUSED_HINT =
  "Remove the image, make it smaller, or switch to a model that reads images with /model <id>";

/** Lines `/expand` shows at most: more would flood the scrollback the fold protects. */
export const EXPAND_LINES = 2_000;

/** How long after a Ctrl-C (or an abort) a Ctrl-C on an empty line quits; before, it only says so. */
export const QUIT_WINDOW_MS = 2_000;

/** The prefix that makes a line a follow-up instead of a steering message. */
export const FOLLOW_UP_PREFIX = ">>";

/**
 * The interactive session: the user types while the agent works (a line steers it; `>> line` is a
 * follow-up), starts a new run when it is idle, answers approvals with y / n / r (no, and the
 * reason typed next goes to the model) / a (always for this tool), each question shown with what it
 * is about (the diff of an edit, the whole command); aborts with Ctrl-C and quits with a second
 * Ctrl-C (or Ctrl-D, or `/exit`). Resolves when the user quits; the caller then aborts whatever
 * still runs.
 *
 * @example
 * ```ts
 * await runInteractive({ agent, view, style, stdin: process.stdin, permissions });
 * ```
 */
export function runInteractive(options: InteractiveOptions): Promise<InteractiveEnd> {
  const { agent, view, style, permissions } = options;
  const approvals: PendingApproval[] = [];
  let abortedAt = 0;
  let current = "";
  let cursor = 0;
  /** When Ctrl-C last armed quitting (an abort, or a Ctrl-C on an empty line): a second one quits. */
  let armedAt = 0;
  /** The footer says a second Ctrl-C quits (the abort's own line says it after an abort). */
  let quitHint = false;
  let disarm: NodeJS.Timeout | undefined;
  /** The call being denied with a reason: the next line typed is the reason. */
  let denying: PendingApproval | undefined;
  /** Steering and follow-up messages typed and not yet taken by the agent (the status line counts them). */
  const queued: string[] = [];
  const queue = (text: string) => {
    queued.push(text);
    view.setQueued(queued.length);
  };

  return new Promise<InteractiveEnd>((resolve) => {
    let done = false;
    const quit = (end: InteractiveEnd = { kind: "quit" }) => {
      if (done) return;
      done = true;
      clearTimeout(disarm);
      subscription.unsubscribe();
      keyboard.stop();
      view.setFooter([]);
      resolve(end);
    };

    const drawFooter = () => {
      const question = approvals[0];
      const lines: LiveLine[] = [];
      // Wrapped, never cut: every answer shows at any width.
      if (denying) {
        lines.push({
          text: style.warning(
            `? Why not ${denying.toolName} ${summarizeArgs(denying.toolName, denying.args)}? The model reads your reason (Enter sends it)`,
          ),
          wrap: true,
        });
      } else if (question) {
        lines.push({ text: style.warning(approvalQuestion(question.toolName, question.args)), wrap: true });
      }
      // A long row shows its end (what is being typed), the cursor kept in view.
      const rows = inputRows(
        { text: current, cursor },
        {
          prompt: `${style.bold(style.accent("›"))} `,
          columns: (options.columns?.() ?? 80) - 1,
          safe: terminalSafe,
        },
      );
      for (const row of rows) lines.push({ text: row, keep: 2 });
      if (quitHint) lines.push(style.muted("Ctrl-C again to quit"));
      view.setFooter(lines);
    };

    const deny = (question: PendingApproval, reason?: string) => {
      try {
        agent.deny(question.toolCallId, reason);
        view.note(style.error(`✗ denied ${question.toolName}${reason ? `: ${terminalSafe(reason)}` : ""}`));
      } catch (error) {
        view.note(style.muted(`(${(error as Error).message})`));
      }
    };

    const answer = (key: string): boolean => {
      // While a reason is typed, keys are the reason's.
      if (denying) return false;
      const question = approvals[0];
      if (!question) return false;
      const choice = key.toLowerCase();
      if (choice !== "y" && choice !== "n" && choice !== "a" && choice !== "r") return true;
      approvals.shift();
      if (choice === "r") {
        denying = question;
        drawFooter();
        return true;
      }
      try {
        if (choice === "n") {
          agent.deny(question.toolCallId);
          view.note(style.error(`✗ denied ${question.toolName}`));
        } else {
          if (choice === "a") {
            permissions?.allowAlways(question.toolName);
            // Calls of the same tool already waiting are covered by the answer too.
            for (const other of approvals.filter((p) => p.toolName === question.toolName)) {
              approvals.splice(approvals.indexOf(other), 1);
              agent.approve(other.toolCallId);
            }
          }
          agent.approve(question.toolCallId);
          view.note(
            style.success(`✓ allowed ${question.toolName}${choice === "a" ? " (always, this session)" : ""}`),
          );
        }
      } catch (error) {
        // The call was decided meanwhile (aborted run): nothing left to answer.
        view.note(style.muted(`(${(error as Error).message})`));
      }
      drawFooter();
      return true;
    };

    const submit = (line: string) => {
      if (denying) {
        const question = denying;
        denying = undefined;
        deny(question, line.trim() || undefined);
        drawFooter();
        return;
      }
      const text = line.trim();
      if (!text) return;
      const command = parseSlashCommand(text);
      if (command) return runCommand(command.name, command.rest);
      if (compacting) return view.note(style.muted("Compacting the context: send it once that is done"));
      const idle = agent.state === "idle";
      if (text.startsWith(FOLLOW_UP_PREFIX)) {
        const typed = text.slice(FOLLOW_UP_PREFIX.length).trim();
        if (!typed) return;
        const content = attach(typed, line);
        if (content === undefined) return;
        const message = userInput(content);
        if (idle) return void prompt(message);
        agent.followUp(message);
        queue(textOf(content));
        view.note(style.muted(`» follow-up queued: ${typed}`));
        return;
      }
      const content = attach(text, line);
      if (content === undefined) return;
      const message = userInput(content);
      if (idle) return void prompt(message);
      agent.steer(message);
      queue(textOf(content));
      view.note(style.muted(`» steering queued (the agent takes it after the current step): ${text}`));
    };

    /** Images pasted as file paths, by the placeholder that stands for each in the line. */
    const pastedImages = new Map<string, NamedImage>();
    const onPaste = (pasted: string): string | undefined => {
      const files = pastedFiles(pasted, options.cwd ?? process.cwd());
      if (!files) return undefined;
      const placeholders: string[] = [];
      for (const file of files) {
        const name = path.basename(file);
        const image = readImageFile(file, statSync(file).size);
        if ("why" in image) {
          // Not an image: the paste is the text it was. An image that cannot go: said, and left out.
          if (/^not a PNG/.test(image.why)) return undefined;
          view.note(style.warning(`${terminalSafe(name)} not attached: ${image.why}`));
          return "";
        }
        const placeholder = `[image #${++pastedCount}: ${name}]`;
        pastedImages.set(placeholder, { path: name, ...image });
        placeholders.push(placeholder);
      }
      return `${placeholders.join(" ")} `;
    };
    let pastedCount = 0;

    /** Ctrl-V: the clipboard's image (a screenshot copied, not a file) into the line, as a pasted one. */
    let readingClipboard = false;
    const onPasteImage = () => {
      if (readingClipboard || denying) return;
      readingClipboard = true;
      void readClipboardImage(options.env ?? process.env)
        .then((read) => {
          if ("why" in read) return view.note(style.warning(`Ctrl-V: ${read.why}`));
          const image = imageFromBytes(read.bytes);
          if ("why" in image)
            return view.note(style.warning(`Ctrl-V: the clipboard's image not attached: ${image.why}`));
          const name = `clipboard.${image.part.mimeType.replace("image/", "")}`;
          const placeholder = `[image #${++pastedCount}: ${name}]`;
          pastedImages.set(placeholder, { path: name, ...image });
          keyboard.set(`${keyboard.text}${placeholder} `);
        })
        .finally(() => (readingClipboard = false));
    };

    /**
     * The line with the files it mentions as @path attached and the images it holds (mentioned, or
     * pasted as a path) after it; says what was attached and what not. `undefined` when the line
     * is not sent: it has images and the model takes none (the line is given back to edit).
     */
    const attach = (line: string, typed: string): UserMessage["content"] | undefined => {
      const pasted = [...pastedImages].filter(([placeholder]) => line.includes(placeholder));
      const model = options.model ?? "unknown";
      const attached = attachToPrompt(line, {
        cwd: options.cwd,
        model,
        images: pasted.map(([, image]) => image),
      });
      if ("refused" in attached) {
        view.note(style.warning(`Not sent: ${terminalSafe(attached.refused)}. ${REFUSED_HINT}`));
        keyboard.set(typed);
        return undefined;
      }
      for (const file of attached.files)
        view.note(style.muted(`+ ${file.path} attached (${file.lines} lines, ${file.bytes} bytes)`));
      for (const image of attached.images)
        view.note(style.muted(`+ image ${terminalSafe(describeNamedImage(image))} attached`));
      if (attached.modelUnknown) view.note(style.muted(unknownModelNote(model)));
      for (const file of attached.skipped)
        view.note(style.warning(`@${terminalSafe(file.path)} not attached: ${file.why}`));
      for (const [placeholder] of pasted) pastedImages.delete(placeholder);
      return attached.content;
    };

    const runCommand = (name: string, rest: string) => {
      switch (name) {
        case "/clear":
          return quit({ kind: "new-session" });
        case "/resume":
          return quit({ kind: "resume", ...(rest && { id: rest }) });
        case "/model":
          if (!rest)
            return view.note(
              style.muted(
                `Model: ${options.model ?? "unknown"}, ${imageSupport(options.model)} (/model <id> switches, keeping the conversation)`,
              ),
            );
          return quit({ kind: "switch-model", model: rest });
        case "/exit":
        case "/quit":
          return quit();
        case "/help":
          return view.note(style.muted(slashHelp().join("\n")));
        case "/expand":
          return expand(rest);
        case "/compact":
          return compact(rest);
        case "/cost":
          return view.note(style.muted(options.cost?.() ?? "No cost counted in this mode"));
        case "/visualize":
          if (!options.visualize) return view.note(style.warning("The visualizer is not available here"));
          return void options.visualize().then(
            (url) => view.note(style.muted(`Visualizer: open ${url}`)),
            (error: Error) => view.note(style.warning(`Cannot start the visualizer (${error.message})`)),
          );
        default:
          return view.note(style.warning(unknownCommandText(name)));
      }
    };

    /**
     * `/expand [n]`: the n-th latest finished call's whole output (1, the default: the last one);
     * `/expand list`: the outputs there are, numbered.
     */
    const expand = (which: string) => {
      const outputs = view.outputs();
      if (outputs.length === 0) return view.note(style.muted("No tool output yet"));
      if (which === "list") {
        return view.note(
          outputs
            .map((o, i) =>
              style.muted(
                `${String(i + 1).padStart(3)}  ${terminalSafe(o.title)}  (${lineCount(o.text)} lines)`,
              ),
            )
            .join("\n"),
        );
      }
      const n = which === "" ? 1 : Number(which);
      const chosen = Number.isInteger(n) && n >= 1 ? outputs[n - 1] : undefined;
      if (!chosen) {
        return view.note(
          style.warning(
            `/expand ${terminalSafe(which)}: give 1 to ${outputs.length} (1 is the last output; /expand list names them)`,
          ),
        );
      }
      const lines = terminalSafe(chosen.text.replace(/\s+$/, "")).split("\n");
      const shown = lines.slice(0, EXPAND_LINES);
      const more = lines.length - shown.length;
      view.note(
        [
          style.bold(`${chosen.title}: ${lines.length} lines`),
          ...shown,
          ...(more
            ? [
                style.muted(
                  `… ${more} more lines: the model saw them; read the file or rerun to see them all`,
                ),
              ]
            : []),
        ].join("\n"),
      );
    };

    /** Ctrl-O: the last output, then at each press the one before it (back to the last at the end). */
    let ctrlO = { next: 1, seen: 0 };
    const expandNext = () => {
      const count = view.outputs().length;
      // A new output since the last press: start again from it.
      if (count !== ctrlO.seen || ctrlO.next > count) ctrlO = { next: 1, seen: count };
      expand(count ? String(ctrlO.next) : "");
      ctrlO.next++;
    };

    /** `/compact [focus]`: the context compacted now, between runs (the summary keeps the focus). */
    let compacting = false;
    const compact = (focus: string) => {
      if (compacting) return view.note(style.muted("Already compacting"));
      if (agent.state !== "idle") {
        return view.note(style.warning("The agent is working: /compact once it is done (Ctrl-C stops it)"));
      }
      compacting = true;
      view.note(style.muted(`Compacting the context${focus ? ` (focus: ${terminalSafe(focus)})` : ""}…`));
      return void agent
        .compact(focus ? { focus } : {})
        .then(
          // The `compaction` event has said what it did, in the scrollback and the footer.
          (result) => {
            if (!result) view.note(style.muted("Nothing to compact: the conversation is still short"));
          },
          (error: Error) => view.note(style.warning(`Cannot compact: ${compactProblem(error.message)}`)),
        )
        .finally(() => {
          compacting = false;
          drawFooter();
        });
    };

    /** Arms quitting: a Ctrl-C on an empty line within {@link QUIT_WINDOW_MS} quits. */
    const arm = () => {
      armedAt = Date.now();
      clearTimeout(disarm);
      disarm = setTimeout(() => {
        armedAt = 0;
        quitHint = false;
        drawFooter();
      }, QUIT_WINDOW_MS);
      disarm.unref?.();
    };

    const abortRun = () => {
      abortedAt = Date.now();
      approvals.length = 0;
      denying = undefined;
      agent.abort();
      arm();
      view.note(style.warning("⏹ aborted (the transcript is kept) — Ctrl-C again to quit"));
      drawFooter();
    };

    /**
     * Ctrl-C: stops a run; else clears the line being typed; else, on an empty line, quits when
     * pressed again within a moment (after an abort too), and says so the first time.
     */
    const interrupt = () => {
      if (agent.state !== "idle" && abortedAt === 0) return abortRun();
      if (current) {
        keyboard.set("");
        return;
      }
      if (armedAt && Date.now() - armedAt < QUIT_WINDOW_MS) return quit();
      arm();
      quitHint = true;
      drawFooter();
    };

    const prompt = (message: string | UserMessage) =>
      agent.prompt(message).catch((error: Error) => view.note(style.error(`✗ ${error.message}`)));

    const keyboard = createKeyboard(
      options.stdin,
      {
        onLine: submit,
        onChange(text, at) {
          current = text;
          cursor = at;
          drawFooter();
        },
        onKey: answer,
        onTab: (text) =>
          options.cwd !== undefined && !denying ? completeInput(text, options.cwd) : undefined,
        onEof: () => quit(),
        onPaste,
        onPasteImage,
        onExpand: () => {
          if (!denying) expandNext();
        },
        onInterrupt: interrupt,
        onEscape() {
          // Esc stops a run, as in Claude Code and pi; it never quits.
          if (agent.state !== "idle" && abortedAt === 0) abortRun();
        },
      },
      options.stdout,
      { history: options.history },
    );

    const subscription = agent.events$.subscribe((event) => {
      if (event.type === "approval_requested") {
        approvals.push({ toolCallId: event.toolCallId, toolName: event.toolName, args: event.args });
        if (options.cwd !== undefined) {
          // What the question is about, above it and kept in the scrollback: the diff, the whole
          // command, wrapped to the width (a long one scrolls; nothing is cut).
          const columns = (options.columns?.() ?? 80) - 5;
          const preview = approvalPreview(options.cwd, event.toolName, event.args, style, columns);
          view.note(
            [
              style.attention(approvalHeading(event.toolName, event.args)),
              ...preview.map((line) => `    ${line}`),
            ].join("\n"),
          );
        }
        drawFooter();
      } else if (event.type === "tool_execution_end") {
        const index = approvals.findIndex((p) => p.toolCallId === event.toolCallId);
        if (index >= 0) approvals.splice(index, 1);
        if (denying?.toolCallId === event.toolCallId) denying = undefined;
        drawFooter();
      } else if (event.type === "agent_start") {
        abortedAt = 0;
        armedAt = 0;
        quitHint = false;
      } else if (event.type === "message_end" && event.message.role === "user" && queued.length) {
        // A queued message reached the transcript: the agent took it.
        const { content } = event.message;
        const index = queued.indexOf(typeof content === "string" ? content : textOf(content));
        if (index >= 0) {
          queued.splice(index, 1);
          view.setQueued(queued.length);
        }
      }
    });

    drawFooter();
    options.start?.().catch((error: Error) => view.note(style.error(`✗ ${error.message}`)));
  });
}

/** A typed line as the agent takes it: text alone stays a string; with images, a user message. */
function userInput(content: UserMessage["content"]): string | UserMessage {
  return typeof content === "string" ? content : { role: "user", content, timestamp: Date.now() };
}

/**
 * Why `/compact` cannot run, in the command's terms: the library's own message names
 * `createAgent({ context })`, which a user of the command never wrote.
 *
 * @example
 * ```ts
 * compactProblem("compact: the agent has no context budget (createAgent({ context }))");
 * // "this session has no context window to compact against: start it with --context-window <tokens>"
 * ```
 */
export function compactProblem(message: string): string {
  if (/no context budget/.test(message))
    return "this session has no context window to compact against: start it with --context-window <tokens>";
  return message.replace(/^compact: /, "");
}

/** Lines of a text (its trailing blank lines aside). */
function lineCount(text: string): number {
  return text.replace(/\s+$/, "").split("\n").length;
}

/** What `/model` says of a model and images. */
function imageSupport(model: string | undefined): string {
  const takes = model === undefined ? undefined : takesImages(model);
  return takes === true ? "reads images" : takes === false ? "text only (no images)" : "images: not known";
}
