import { existsSync, readFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { type Agent, createAgent } from "../agent/create-agent.js";
import type { AgentEndReason, AgentEventOf } from "../core/events.js";
import { withLearnedWindow } from "../context/context-window.js";
import { type AgentMessage, textOf, type UserMessage } from "../core/messages.js";
import { codingTools } from "../tools/coding-tools.js";
import { createPermissions, type Permissions } from "../tools/permissions.js";
import { type CliArgs, UsageError } from "./args.js";
import { earlyExit } from "./early-exit.js";
import { actDemoUser, createDemoWorkspace, DEMO_PROMPT } from "./demo.js";
import { createEventView } from "./event-view.js";
import { unknownModelNote } from "./images.js";
import { attachToPrompt } from "./mentions.js";
import { loadMarkdownRenderer, type MarkdownRenderer } from "./markdown.js";
import { costText, createSessionMeter, spentInLog } from "./status-line.js";
import { findLegacySessions, legacySessionsDir, sessionsRoot } from "./session-location.js";
import { estimateTokens } from "../context/tokens.js";
import { waitForQuit } from "./keep-open.js";
import { type InteractiveEnd, runInteractive } from "./interactive.js";
import {
  createInspectorForCli,
  type InspectorHandle,
  startVisualizerForCli,
  type VisualizerHandle,
} from "./observability.js";
import {
  planRecovery,
  planResume,
  type RecoverySource,
  type ResumePlan,
  resumedMessageCount,
} from "./resume.js";
import { chooseBashSetup, codingToolsFor } from "./sandbox.js";
import { startTracingForCli } from "./telemetry.js";
import { trackToolRuns } from "./tool-runs.js";
import { createScreen } from "./screen.js";
import { createInputHistory, historyFile } from "./input-history.js";
import { findProjectRules, rulesNotice, withProjectRules } from "./project-rules.js";
import { recordSession } from "./session-recorder.js";
import {
  createSessionStore,
  isEmptySession,
  latestResumable,
  type Session,
  type SessionListing,
  type SessionMeta,
  type SessionStore,
} from "./session-store.js";
import { type OutputWatch, watchOutput } from "./output-watch.js";
import { chooseModel, codingSystemPrompt, MODEL_SETUP_HELP, resolveWorkspace } from "./setup.js";
import { colorEnabled, createStyle, themeFrom } from "./style.js";
import { terminalSafe } from "./terminal-text.js";
import {
  EXIT_NEEDS_APPROVAL,
  refusalMessage,
  refuseUnattendedApprovals,
  ruleAllowing,
} from "./unattended-approvals.js";

/** The streams and environment the CLI runs with (the process's, or a test's). */
export interface CliIO {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: Record<string, string | undefined>;
}

type Mode = "interactive" | "once" | "print" | "json";

/** Exit status for how the last run ended. */
export function exitCodeFor(reason: AgentEndReason | undefined): number {
  switch (reason) {
    case undefined:
    case "stop":
      return 0;
    case "aborted":
      return 130;
    case "limit":
    case "loop":
      return 3;
    default:
      return 1;
  }
}

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8").trim();
}

function lastAnswer(messages: readonly AgentMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "assistant") return textOf(message.content.filter((part) => part.type === "text"));
  }
  return "";
}

async function pickSession(
  store: SessionStore,
  io: CliIO,
  interactive: boolean,
): Promise<Session | undefined> {
  // Sessions with nothing in them (what `/clear` leaves) are not offered: there is nothing to resume.
  // Stops at 20, so a long history is not read whole.
  const sessions: SessionListing[] = [];
  for (const listing of store.list()) {
    if (sessions.length === 20) break;
    if (listing.damaged === undefined && isEmptySession(store.inspect(listing.id, { images: false })))
      continue;
    sessions.push(listing);
  }
  if (sessions.length === 0) return undefined;
  const lines = sessions.map(
    (s, i) =>
      `${String(i + 1).padStart(2)}. ${s.id}  ${
        s.damaged !== undefined ? `(damaged: ${s.damaged})` : sessionSummary(store, s)
      }`,
  );
  if (!interactive) {
    io.stderr.write(`Sessions in ${store.root}:\n${lines.join("\n")}\nPass one: --resume <id>\n`);
    return undefined;
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  const rl = createInterface({ input: io.stdin, output: io.stdout });
  try {
    // Ctrl-D closes the question without an answer: readline then never settles it, and the
    // command would end silently with status 13.
    const typed = await new Promise<string | undefined>((resolve, reject) => {
      rl.once("close", () => resolve(undefined));
      rl.question("Resume which session? [1] ").then(resolve, reject);
    });
    if (typed === undefined) throw new UsageError("No session chosen");
    const answer = typed.trim() || "1";
    const chosen = sessions[Number(answer) - 1] ?? sessions.find((s) => s.id === answer);
    if (!chosen) throw new UsageError(`No session "${answer}"`);
    return store.open(chosen.id);
  } finally {
    rl.close();
  }
}

/**
 * What a resumed session holds, said before anything runs: when it was last used and its first
 * prompt (from the transcript the model is given, not the title its meta claims), so a session the
 * user did not expect is seen before its turns steer the model.
 */
function resumedWhat(messages: readonly AgentMessage[], lastUsed: string | undefined): string[] {
  const parts = lastUsed ? [`last used ${localMinute(lastUsed)}`] : [];
  const first = messages.find((m) => m.role === "user");
  if (first?.role === "user") {
    const text = (typeof first.content === "string" ? first.content : textOf(first.content))
      .replace(/\s+/g, " ")
      .trim();
    parts.push(`first prompt: "${terminalSafe(text.length > 120 ? `${text.slice(0, 119)}…` : text)}"`);
  }
  return parts;
}

/** `2026-11-25 14:03`, in local time. */
function localMinute(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** A `--resume` list entry: when, the first prompt, how many messages, which model. */
function sessionSummary(store: SessionStore, meta: SessionMeta): string {
  let messages = "";
  try {
    // The messages the model gets on resume (as the resume notice says), not every one ever logged:
    // a compaction leaves fewer in the transcript than the log holds.
    const inspection = store.inspect(meta.id, { images: false });
    if (inspection.snapshotProblem !== undefined)
      return `(damaged: snapshot.json ${terminalSafe(inspection.snapshotProblem)})`;
    const count = resumedMessageCount(inspection.snapshot, inspection.events);
    messages = ` · ${count} message${count === 1 ? "" : "s"}`;
  } catch {
    // An unreadable log: the list still shows the rest.
  }
  const title = terminalSafe(meta.title ?? "(no prompt)");
  return `${localMinute(meta.updatedAt)}  ${meta.status === "running" ? "(stopped mid-run) " : ""}${title}${messages} · ${terminalSafe(meta.model)}`;
}

/**
 * A new session from what is readable of a damaged one (`--recover <id>`): its intact snapshot, or
 * the transcript of its event log. The damaged session's files are only read, never written.
 */
function recoverSession(
  store: SessionStore,
  id: string,
  fields: { cwd: string; provider: string; model: string },
): { session: Session; plan: ResumePlan; recoveredFrom: { id: string; source: RecoverySource } } {
  const inspection = store.inspect(id);
  if (!existsSync(inspection.dir)) throw new UsageError(`No session "${id}" in ${store.root}`);
  const recovery = planRecovery(inspection);
  if (!recovery) {
    throw new Error(
      `Nothing can be recovered from session ${id}: its snapshot.json is ${
        inspection.snapshotProblem ? `damaged (${inspection.snapshotProblem})` : "missing"
      } and its events.jsonl holds no message.`,
    );
  }
  const title = inspection.meta?.title;
  const session = store.create({ ...fields, title: `recovered from ${id}${title ? `: ${title}` : ""}` });
  return { session, plan: recovery.plan, recoveredFrom: { id, source: recovery.source } };
}

/**
 * How long the command waits, after its run ended, for tool calls still stopping: bash's SIGTERM,
 * its 2 s grace, then SIGKILL and the group's end.
 */
const TOOLS_STOP_MS = 4_000;

/** Waits for the agent to settle after an abort, but never longer than `ms`. */
async function settle(agent: Agent, ms: number): Promise<void> {
  if (agent.state === "idle") return;
  agent.abort();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    agent.waitForIdle(),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}

/**
 * Runs the `agent-machine` command with `argv` (without `node` and the script) and resolves with
 * the exit status. Never throws: every failure is a message on stderr and a non-zero status.
 *
 * @example
 * ```ts
 * process.exitCode = await runCli(process.argv.slice(2));
 * ```
 */
export async function runCli(
  argv: readonly string[],
  io: CliIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  const early = earlyExit(argv, io);
  if ("status" in early) return early.status;
  let { args } = early;
  // A reader that goes away (`| head`) or a full disk must not kill the command with a stack
  // trace while its tools run: the run is aborted, its session saved, and the status says so.
  const output = watchOutput(io.stdout, io.stderr);
  let status: number;
  /** The session just left, to go back to when the one asked for next cannot start. */
  let back: CliArgs | undefined;
  for (;;) {
    try {
      // `/clear`, `/resume` and `/model` end a session and name the next: it starts once the
      // first is closed (its agent stopped, its files saved), on the same terminal.
      const result = await runAgent(args, io, output, () => (back = undefined));
      if (typeof result === "number") {
        status = result;
        break;
      }
      ({ next: args, back } = result);
    } catch (error) {
      io.stderr.write(`agent-machine: ${(error as Error).message}\n`);
      // A mistyped `/resume <id>`, a damaged session or a `/model` without its key must not end
      // the command: the session the user was in goes on.
      if (back) {
        args = back;
        back = undefined;
        continue;
      }
      status = error instanceof UsageError ? 2 : 1;
      break;
    }
  }
  await output.flushed();
  const final = output.statusAfter(status);
  output.stop();
  return final;
}

/** The arguments the session after this one starts with: the interactive session asked for it. */
function argsAfter(
  args: CliArgs,
  end: Exclude<InteractiveEnd, { kind: "quit" }>,
  sessionId: string,
): CliArgs {
  const base: CliArgs = {
    ...args,
    prompt: undefined,
    continue: false,
    resume: undefined,
    recover: undefined,
  };
  switch (end.kind) {
    case "new-session":
      return base;
    case "resume":
      return { ...base, resume: end.id ?? true };
    case "switch-model":
      return { ...base, resume: sessionId, model: end.model };
  }
}

async function runAgent(
  args: CliArgs,
  io: CliIO,
  written: OutputWatch,
  /** Called once the session is up: from then on, a failure is this session's, not its start's. */
  started: () => void = () => undefined,
): Promise<number | { next: CliArgs; back: CliArgs }> {
  const choice = await chooseModel(args, io.env);
  // The demo plays the user's part itself and ends by itself, in a terminal too.
  const mode: Mode = args.json
    ? "json"
    : args.print
      ? "print"
      : io.stdin.isTTY && io.stdout.isTTY && choice.kind !== "demo"
        ? "interactive"
        : "once";
  if (choice.kind === "none") {
    throw new Error(`No model to run with. ${choice.reason}\n${MODEL_SETUP_HELP}`);
  }
  const resuming = args.continue || args.resume !== undefined || args.recover !== undefined;
  if (choice.kind === "demo" && resuming) {
    throw new Error(`${choice.reason} A session can only be resumed with a model: set an API key.`);
  }

  // Read before anything starts: a missing or broken schema file is a usage error, not a failed run.
  const output = args.outputSchema === undefined ? undefined : readOutputSchema(args.outputSchema);
  let cwd = resolveWorkspace(args.cwd);
  let prompt = args.prompt;
  let demoDir: string | undefined;
  if (choice.kind === "demo") {
    demoDir = createDemoWorkspace();
    cwd = demoDir;
    prompt = DEMO_PROMPT;
  }

  const pretty = mode === "interactive" || mode === "once";
  // The colours suit the terminal's background when it is known (AGENT_MACHINE_THEME, COLORFGBG);
  // otherwise only what holds on light and dark alike.
  const theme = themeFrom(io.env);
  const style = createStyle(pretty && colorEnabled(io.stdout, io.env), theme.theme);
  const screen = pretty ? createScreen(io.stdout) : undefined;
  // The interactive session's status line: the model, the context against its window, tokens, cost.
  const meter = createSessionMeter({ maxContextTokens: choice.context?.maxContextTokens ?? 0 });
  // Answers are rendered as markdown on a colour terminal; pipes, `--print` and `--json` get the
  // text as the model wrote it. The renderer loads while the session is set up.
  let markdown: MarkdownRenderer | undefined;
  const markdownReady =
    screen?.tty && style.enabled
      ? loadMarkdownRenderer(style).then(
          (renderer) => void (markdown = renderer),
          () => undefined, // not installed or broken: plain text, as on a pipe
        )
      : undefined;
  const view = screen
    ? createEventView(screen, style, {
        hint: mode === "interactive" ? "Enter: steer · >>: follow-up · Ctrl-C: abort" : undefined,
        cwd,
        ...(mode === "interactive" && { status: { model: choice.provider.model, meter } }),
        ...(markdownReady && { markdown: () => markdown }),
      })
    : undefined;
  /** CLI messages: on the screen in the pretty modes, else on stderr (stdout carries the answer / JSON). */
  const notice = (text: string) => (view ? view.note(text) : io.stderr.write(`${text}\n`));

  // A new session needs a prompt: without one, say so before a session is made for nothing.
  if (mode !== "interactive" && !resuming && !prompt) {
    if (!io.stdin.isTTY) prompt = await readAll(io.stdin);
    if (!prompt) throw new UsageError("No prompt: pass one as an argument or on stdin");
  }
  /** The command line's prompt with the files and images it mentions (`@path`), and what to say of them. */
  const promptNotices: string[] = [];
  const promptInput = (text: string): string | UserMessage => {
    if (choice.kind === "demo") return text;
    const attached = attachToPrompt(text, { cwd, model: choice.provider.model });
    if ("refused" in attached) {
      throw new UsageError(
        `Not sent: ${attached.refused}. Remove the image, make it smaller, or choose a model that reads images with --model <id>`,
      );
    }
    for (const file of attached.skipped)
      promptNotices.push(style.warning(`@${terminalSafe(file.path)} not attached: ${file.why}`));
    if (attached.modelUnknown) promptNotices.push(style.muted(unknownModelNote(choice.provider.model)));
    const { content } = attached;
    return typeof content === "string" ? content : { role: "user", content, timestamp: Date.now() };
  };
  // Read now: a prompt that cannot go (an image for a text-only model) makes no session.
  let input = prompt === undefined ? undefined : promptInput(prompt);

  // A rule the permissions refuse is a usage error, before a session is made for nothing.
  const permissionMode =
    args.permissionMode ?? (choice.kind === "demo" ? "bypass" : mode === "interactive" ? "default" : "deny");
  let permissions: Permissions;
  try {
    permissions = createPermissions({ mode: permissionMode, cwd, rules: { allow: args.allow } });
    // A rule naming no tool of the command (`--allow Bash`) would make createAgent throw later,
    // after the session was made: refused here (the tools' names do not depend on the sandbox).
    permissions.checkToolNames(codingTools({ cwd }).map((t) => t.name));
  } catch (error) {
    throw new UsageError(`--allow: ${(error as Error).message}`);
  }

  // Sessions live in the user's data folder, keyed by workspace; the demo's stay in its throwaway
  // workspace, deleted with it. A workspace's old `.agent-machine/sessions/` is named, never adopted:
  // a repository can ship one (see findLegacySessions).
  const root = demoDir ? legacySessionsDir(cwd) : sessionsRoot(cwd, io.env, args.sessionsDir);
  const legacy = demoDir || args.sessionsDir !== undefined ? undefined : findLegacySessions(cwd, root);
  const store = createSessionStore(cwd, root);
  let session: Session | undefined;
  let plan: ResumePlan | undefined;
  let recoveredFrom: { id: string; source: RecoverySource } | undefined;
  /** When the resumed session was last used (a date from the future is not believed). */
  let lastUsed: string | undefined;
  if (args.recover !== undefined) {
    ({ session, plan, recoveredFrom } = recoverSession(store, args.recover, {
      cwd,
      provider: choice.provider.id,
      model: choice.provider.model,
    }));
  } else if (resuming) {
    session = args.continue
      ? latestResumable(store)
      : args.resume === true
        ? await pickSession(store, io, mode === "interactive")
        : store.open(args.resume as string);
    if (!session) {
      throw new UsageError(
        args.resume === true && store.list().length
          ? "No session chosen"
          : `No sessions to resume in ${store.root}`,
      );
    }
    const resumedId = session.id;
    lastUsed = store.list().find((listing) => listing.id === resumedId)?.updatedAt;
    const events = session.loadEvents();
    plan = planResume(session.loadSnapshot(), events);
    // The session's totals go on: every call it made before, under any model, counts.
    meter.addSpent(spentInLog(events));
    // Killed again right after a resume, before the continued run's first save: meta still says so.
    if (session.meta.status === "running") plan.wasRunning = true;
    // A session goes on with the model it is resumed with (`/model`, `--model`): the list says which.
    if (session.meta.model !== choice.provider.model || session.meta.provider !== choice.provider.id) {
      session.updateMeta({ provider: choice.provider.id, model: choice.provider.model });
    }
  } else {
    session = store.create({ cwd, provider: choice.provider.id, model: choice.provider.model });
  }

  // The set-up's notices wait until the agent and its live page are up: the page's address (and
  // the demo's banner) come first, before anything runs.
  const setupNotices: string[] = [];
  const setupNotice = (text: string) => setupNotices.push(text);

  if (theme.problem && pretty) setupNotice(style.warning(theme.problem));

  const bashSetup = chooseBashSetup(args, choice);
  if (bashSetup.kind === "refused" || (bashSetup.kind === "unsandboxed" && bashSetup.warn)) {
    setupNotice(style.warning(bashSetup.notice));
  } else if (pretty) {
    setupNotice(style.muted(bashSetup.notice));
  }

  let inspector: InspectorHandle | undefined;
  if (args.inspect) {
    try {
      inspector = await createInspectorForCli();
      setupNotice(
        style.muted(`Stately inspector: open ${inspector.url ?? "the inspector"} to watch the statechart`),
      );
    } catch (error) {
      setupNotice(
        style.warning(
          `Cannot start the Stately inspector (${(error as Error).message}); going on without it.`,
        ),
      );
    }
  }

  const telemetry = await startTracingForCli(io.env);
  if (telemetry.notice) {
    if (telemetry.tracing) {
      if (pretty) setupNotice(style.muted(telemetry.notice));
    } else setupNotice(style.warning(telemetry.notice));
  }

  // The rules the user keeps for this work (AGENTS.md, CLAUDE.md): the demo's workspace has none.
  const rules = demoDir ? [] : findProjectRules(cwd, io.env);
  const loadedRules = rulesNotice(rules);
  if (loadedRules && pretty) setupNotice(style.muted(loadedRules));

  // Tracked so the command outlives what its tools are still stopping (bash's SIGKILL after SIGTERM).
  const toolRuns = trackToolRuns(codingToolsFor(cwd, bashSetup));
  const { tools } = toolRuns;
  const agent = createAgent({
    provider: choice.provider,
    systemPrompt: withProjectRules(codingSystemPrompt(cwd), rules),
    tools,
    messages: plan?.messages,
    toolExecution: args.strategy,
    limits: args.maxTurns ? { maxTurns: args.maxTurns } : undefined,
    // A window the session learned from overflow errors holds on after a resume.
    context: withLearnedWindow(choice.context, plan?.learnedMaxContextTokens),
    permissions,
    inspect: inspector?.inspect,
    id: `session-${session.id}`,
    ...(telemetry.tracing && {
      telemetry: {
        tracerProvider: telemetry.tracing.provider,
        agentName: "agent-machine",
        conversationId: session.id,
      },
    }),
  });
  const stopRecording = recordSession(agent, session, (error) =>
    notice(style.error(`Cannot save the session (${error.message}); the agent goes on.`)),
  );

  // The demo is there to show the statechart at work: it serves the live page without being asked.
  let visualizer: VisualizerHandle | undefined;
  let visualizerProblem: string | undefined;
  if (args.visualize || choice.kind === "demo") {
    try {
      visualizer = await startVisualizerForCli(agent, args.port);
    } catch (error) {
      visualizerProblem = `Cannot start the visualizer (${(error as Error).message}); going on without it.`;
    }
  }
  const pageLine = visualizer && `Visualizer: open ${visualizer.url}`;

  if (choice.kind === "demo") {
    notice(
      style.warning(
        [
          `${style.bold("agent-machine demo")} — ${choice.reason}`,
          ...(pageLine
            ? [`${pageLine}  (the statechart live: each turn, one actor per tool call, compaction)`]
            : []),
          "This is a demo on the built-in scripted model (no real model is called), in a temporary workspace:",
          `  ${demoDir}`,
          "It shows parallel tool calls, a steering message typed while the agent works, and context compaction.",
          "To use a real model: export ANTHROPIC_API_KEY=... (or OPENAI_API_KEY=...), then run",
          '  npx agent-machine "your task"',
          ...(args.prompt ? ["Your prompt was not sent anywhere: there is no model to send it to."] : []),
        ].join("\n"),
      ),
    );
  } else {
    if (pageLine) notice(style.muted(pageLine));
    if (pretty) notice(style.muted(choice.reason));
  }
  if (visualizerProblem) notice(style.warning(visualizerProblem));
  if (legacy) {
    const count = `${legacy.ids.length} session${legacy.ids.length === 1 ? "" : "s"}`;
    notice(
      style.warning(
        `${count} in ${terminalSafe(legacy.from)} left where they are, not resumed: a repository can ship that folder. ` +
          `If an earlier agent-machine of yours wrote them, resume one with --sessions-dir .agent-machine/sessions --resume, ` +
          `or move them to ${terminalSafe(legacy.to)}/ yourself`,
      ),
    );
  }
  for (const text of setupNotices) notice(text);
  for (const text of promptNotices) notice(text);

  let lastReason: AgentEndReason | undefined;
  let lastMessages: AgentMessage[] = [];
  let lastEnd: AgentEventOf<"agent_end"> | undefined;
  const subscriptions = [
    agent.events$.subscribe((event) => {
      if (event.type === "agent_end") {
        lastReason = event.reason;
        lastMessages = event.messages;
        lastEnd = event;
      }
      if (view) view.handle(event);
      else if (mode === "json") io.stdout.write(`${JSON.stringify(event)}\n`);
    }),
  ];
  const stopDemoUser =
    choice.kind === "demo" ? actDemoUser(agent, (text) => notice(style.warning(text))) : undefined;
  // Only the interactive session can answer an approval: elsewhere a call that asks ends the run.
  const unattended = mode === "interactive" ? undefined : refuseUnattendedApprovals(agent);

  if (plan) {
    const parts = recoveredFrom
      ? [
          `Recovered ${plan.messages.length} messages of damaged session ${recoveredFrom.id} (from its ${recoveredFrom.source}) into new session ${session.id}; the damaged one is left as it is`,
        ]
      : [
          `Resumed session ${session.id}: ${plan.messages.length} messages`,
          ...resumedWhat(plan.messages, lastUsed),
        ];
    if (plan.recovered.length)
      parts.push(`${plan.recovered.length} finished call(s) recovered from the event log`);
    if (plan.interrupted.length) {
      parts.push(
        `interrupted: ${plan.interrupted.map((c) => c.name).join(", ")} (answered as interrupted; the model is told)`,
      );
    }
    notice(style.muted(parts.join(" · ")));
    meter.setContextTokens(estimateTokens(plan.messages));
    if (view) {
      // Where the conversation stood: its last user message and answer.
      const lastUser = plan.messages.findLast((m) => m.role === "user");
      const lastAnswerText = lastAnswer(plan.messages);
      if (lastUser?.role === "user") {
        const text = typeof lastUser.content === "string" ? lastUser.content : textOf(lastUser.content);
        view.note(style.muted(`› ${terminalSafe(text.split("\n")[0]!)}`));
      }
      if (lastAnswerText)
        view.note(
          style.muted(
            terminalSafe(lastAnswerText.length > 400 ? `${lastAnswerText.slice(0, 399)}…` : lastAnswerText),
          ),
        );
    }
    session.appendEvent({
      type: recoveredFrom ? "session_recovered" : "session_resumed",
      ...(recoveredFrom && { from: recoveredFrom.id, source: recoveredFrom.source }),
      at: Date.now(),
      interrupted: plan.interrupted.map((c) => c.id),
      recovered: plan.recovered.map((c) => c.id),
      added: plan.added,
    });
  } else if (pretty && choice.kind !== "demo") {
    notice(style.muted(`Session ${session.id} (resume with --continue or --resume ${session.id})`));
  }

  /** Picks up a stopped run, then runs the prompt from the command line. */
  const start = async () => {
    if (plan) {
      for (const message of plan.steering) agent.steer(message);
      for (const message of plan.followUps) agent.followUp(message);
      const last = plan.messages.at(-1);
      const queued = plan.steering.length + plan.followUps.length > 0;
      if ((plan.wasRunning || queued) && last && (last.role !== "assistant" || queued))
        await agent.continue();
    }
    if (input) await agent.prompt(input, output === undefined ? undefined : { output });
  };

  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (signal === "SIGINT" && interrupts === 1 && agent.state !== "idle") {
      notice(style.warning("⏹ aborting (Ctrl-C again to quit at once)"));
      agent.abort();
      return;
    }
    // Abort so running commands' process groups are killed, then leave once they are.
    agent.abort();
    void settle(agent, 3_000)
      .then(() => toolRuns.settled(TOOLS_STOP_MS))
      .then(() => process.exit(130));
  };
  const signals: NodeJS.Signals[] =
    mode === "interactive" ? ["SIGTERM", "SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const signal of signals) process.on(signal, onSignal);
  // No one reads what the run writes any more: stop it (its tools with it) rather than work blind.
  const stopWatchingOutput = written.onFailure(() => agent.abort());

  try {
    // The first answer is rendered like the others: nothing runs before the renderer is there.
    await markdownReady;
    if (mode === "interactive") {
      started();
      const end = await runInteractive({
        agent,
        view: view!,
        style,
        stdin: io.stdin,
        stdout: io.stdout,
        env: io.env,
        permissions,
        start,
        cwd,
        columns: () => screen!.columns,
        cost: () => costText(meter),
        visualize: async () => {
          visualizer ??= await startVisualizerForCli(agent, args.port);
          return visualizer.url;
        },
        model: choice.provider.model,
        // What was typed in this workspace before, this session or an earlier one (Up / Down).
        history: createInputHistory(historyFile(cwd, io.env)),
      });
      if (end.kind === "quit") return 0;
      return {
        next: argsAfter(args, end, session.id),
        back: argsAfter(args, { kind: "resume", id: session.id }, session.id),
      };
    }
    if (!prompt && !(plan?.wasRunning ?? false) && !io.stdin.isTTY) {
      prompt = await readAll(io.stdin);
      input = prompt ? promptInput(prompt) : undefined;
      for (const text of promptNotices.splice(0)) notice(text);
    }
    if (!prompt && !plan) throw new UsageError("No prompt: pass one as an argument or on stdin");
    await start();
    // The reader went away mid-run: the run was aborted for it, and runCli ends with its status.
    if (written.failure) return exitCodeFor(lastReason);
    if (visualizer && mode === "once" && io.stdin.isTTY) {
      // The run is over, the page is not: keep it until the user has looked at it.
      notice(style.muted(`The live page stays open until you quit (Enter or q):\n  ${visualizer.url}`));
      screen?.flush();
      await waitForQuit(io.stdin);
    }
    const refused = unattended?.refused()[0];
    if (refused) {
      screen?.flush();
      const rule = ruleAllowing(
        refused,
        tools.find((tool) => tool.name === refused.toolName),
        { mode: permissionMode, allow: args.allow, cwd },
      );
      io.stderr.write(`${refusalMessage(refused, { rule, mode: permissionMode, sessionId: session.id })}\n`);
      return EXIT_NEEDS_APPROVAL;
    }
    if (mode === "print" && output !== undefined) {
      printOutput(lastEnd, io);
    } else if (mode === "print") {
      const answer = lastAnswer(lastMessages.length ? lastMessages : agent.messages);
      if (answer) io.stdout.write(`${answer}\n`);
      if (lastReason && lastReason !== "stop") {
        const end = agent.messages.at(-1);
        const detail = end?.role === "assistant" && end.errorMessage ? `: ${end.errorMessage}` : "";
        io.stderr.write(`agent-machine: the run ended with reason "${lastReason}"${detail}\n`);
      }
    }
    return exitCodeFor(lastReason);
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
    stopWatchingOutput();
    await settle(agent, 3_000);
    await toolRuns.settled(TOOLS_STOP_MS);
    stopDemoUser?.();
    unattended?.stop();
    for (const subscription of subscriptions) subscription.unsubscribe();
    stopRecording();
    agent.stop();
    view?.dispose();
    screen?.close();
    await visualizer?.close();
    await inspector?.stop();
    await telemetry.tracing?.shutdown();
    if (demoDir) rmSync(demoDir, { recursive: true, force: true });
  }
}

/** The JSON Schema of `--output-schema <file>`, read and parsed (relative to the current directory). */
function readOutputSchema(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`--output-schema: cannot read ${file}: ${(error as Error).message}`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--output-schema: ${file} is not JSON: ${(error as Error).message}`);
  }
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new UsageError(`--output-schema: ${file} must hold a JSON Schema object`);
  }
  return schema as Record<string, unknown>;
}

/** `--print --output-schema`: the object as JSON on stdout; without one, why (and the last answer) on stderr. */
function printOutput(end: AgentEventOf<"agent_end"> | undefined, io: CliIO): void {
  if (end && "output" in end) {
    io.stdout.write(`${JSON.stringify(end.output, null, 2)}\n`);
    return;
  }
  const why = end?.errorMessage ?? end?.rejection ?? "";
  io.stderr.write(
    `agent-machine: no output: the run ended with reason "${end?.reason ?? "unknown"}"${why ? `: ${why}` : ""}\n`,
  );
  if (end?.rawOutput !== undefined) io.stderr.write(`agent-machine: the last answer was: ${end.rawOutput}\n`);
}
