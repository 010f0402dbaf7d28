import { z } from "zod";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { createHeadTailBuffer } from "./internal/head-tail-buffer.js";
import { killProcessGroup } from "./internal/process-group.js";
import { createSandbox, type Sandbox, type SandboxOptions } from "./sandbox.js";
import { toWorkspace, type Workspace } from "./workspace.js";

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /** Workspace root (a path) or a {@link Workspace}; commands run there. */
  workspace: string | Workspace;
  /** Default timeout when the model gives none. Default 120 s. */
  defaultTimeoutSeconds?: number;
  /** Upper bound of the model's `timeout_seconds`. Default 600 s. */
  maxTimeoutSeconds?: number;
  /**
   * Output kept for the model: half from the start, half from the end. Default: what the call's
   * result budget leaves (`ctx.maxResultChars`, 50,000 characters by default) after the exit line;
   * 30,000 bytes when the agent sets no budget.
   */
  maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL when the command is stopped. Default 2 000 ms. */
  killGraceMs?: number;
  /** Minimum time between two `onUpdate` calls while output streams. Default 250 ms. */
  updateIntervalMs?: number;
  /** Shell used as `<shell> -c <command>`. Default `bash`. */
  shell?: string;
  /** Extra environment variables (merged over `process.env`; a sandbox passes these even when its allowlist does not name them). */
  env?: Record<string, string>;
  /**
   * Run every command in an OS sandbox (bubblewrap): `true` for the defaults (writes only in the
   * workspace and a private /tmp, no network, credentials unreadable, secrets withheld from the
   * environment), options to tune it, or a {@link Sandbox} from `createSandbox`. Where bubblewrap
   * cannot run, creating the tool throws {@link SandboxUnavailableError}: a command never runs
   * unsandboxed instead. Default `false`.
   */
  sandbox?: boolean | SandboxOptions | Sandbox;
}

const BASH_TOOL_KEYS: OptionKeys<BashToolOptions> = {
  workspace: true,
  defaultTimeoutSeconds: true,
  maxTimeoutSeconds: true,
  maxOutputBytes: true,
  killGraceMs: true,
  updateIntervalMs: true,
  shell: true,
  env: true,
  sandbox: true,
};

/** `details` of a bash result. */
export interface BashResultDetails {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Total bytes the command printed (stdout + stderr). */
  outputBytes: number;
  truncated: boolean;
}

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    command: z.string().min(1).describe("The shell command to run (bash -c)"),
    timeout_seconds: z
      .number()
      .positive()
      .optional()
      .describe("Kill the command after this many seconds (default 120, max 600)"),
    description: z.string().optional().describe("A few words on what the command does, shown to the user"),
  }),
);

/**
 * The `bash` tool: runs a command with `bash -c` in the workspace, in its own process group.
 * stdout and stderr are merged, streamed through `onUpdate` (throttled) and capped to a head and a
 * tail with a `[... N lines truncated ...]` marker, in bounded memory. A non-zero exit is a normal
 * result carrying the exit code; a timeout is an error result. Timeout and abort end the whole
 * process group: SIGTERM, then SIGKILL after a grace period, so no child outlives the call.
 *
 * @example
 * ```ts
 * const bash = createBashTool({ workspace: process.cwd() });
 * const agent = createAgent({ provider, tools: [bash] });
 * ```
 */
export function createBashTool(
  options: BashToolOptions,
): Tool<z.output<ReturnType<typeof parameters>>, BashResultDetails> {
  checkOptionKeys("createBashTool", options, BASH_TOOL_KEYS);
  const workspace = toWorkspace(options.workspace);
  const defaultTimeout = options.defaultTimeoutSeconds ?? 120;
  const maxTimeout = options.maxTimeoutSeconds ?? 600;
  const killGraceMs = options.killGraceMs ?? 2_000;
  const updateIntervalMs = options.updateIntervalMs ?? 250;
  const sandbox = toSandbox(options.sandbox, workspace);

  return defineTool({
    name: "bash",
    description: [
      "Runs a shell command (bash -c) in the workspace root and returns its combined stdout and stderr.",
      "Long output keeps its start and its end.",
      `Default timeout ${defaultTimeout} s, at most ${maxTimeout} s; the whole process tree is killed on timeout.`,
      "A non-zero exit code is reported, not treated as a failure of the tool.",
      ...(sandbox ? [sandbox.description] : []),
    ].join(" "),
    parameters: parameters(),
    readOnly: false,
    concurrencySafe: false,
    workspace,
    // The command's own timeout (up to maxTimeout) governs; the agent-level timeout must not cut it short.
    timeoutMs: (maxTimeout + 30) * 1000,
    async execute(args, ctx): Promise<ToolResult<BashResultDetails>> {
      const timeoutSeconds = Math.min(args.timeout_seconds ?? defaultTimeout, maxTimeout);
      if (ctx.signal.aborted) throw new Error("Command not started: the call was aborted");

      const maxOutputBytes = outputCap(options.maxOutputBytes, ctx.maxResultChars);
      const output = createHeadTailBuffer({ headBytes: maxOutputBytes / 2, tailBytes: maxOutputBytes / 2 });
      // No pager or prompt can wait for a terminal that is not there.
      const env = {
        ...process.env,
        PAGER: "cat",
        GIT_PAGER: "cat",
        GIT_TERMINAL_PROMPT: "0",
        ...options.env,
      };
      const shellArgs = ["-c", args.command];
      const { spawn } = process.getBuiltinModule("node:child_process"); // on first use (issue 44)
      const child = sandbox
        ? sandbox.spawn(options.shell ?? "bash", shellArgs, { env, keepEnv: Object.keys(options.env ?? {}) })
        : spawn(options.shell ?? "bash", shellArgs, {
            cwd: workspace.root,
            detached: true, // own process group, so the whole tree can be signalled at once
            stdio: ["ignore", "pipe", "pipe"],
            env,
          });
      const pgid = child.pid;

      let lastUpdate = 0;
      let pendingUpdate: NodeJS.Timeout | undefined;
      const publish = () => {
        pendingUpdate = undefined;
        lastUpdate = Date.now();
        ctx.onUpdate({ content: [{ type: "text", text: output.render() }] });
      };
      const onData = (chunk: Buffer) => {
        output.push(chunk);
        if (pendingUpdate) return;
        const wait = Math.max(0, updateIntervalMs - (Date.now() - lastUpdate));
        pendingUpdate = setTimeout(publish, wait);
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);

      let timedOut = false;
      let stopping: Promise<void> | undefined;
      const stop = () => {
        if (pgid !== undefined) stopping ??= killProcessGroup(pgid, killGraceMs);
      };
      const timer = setTimeout(
        () => {
          timedOut = true;
          stop();
        },
        Math.round(timeoutSeconds * 1000),
      );
      const onAbort = () => stop();
      ctx.signal.addEventListener("abort", onAbort, { once: true });

      try {
        const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>(
          (resolve, reject) => {
            child.once("error", reject);
            child.once("exit", (exitCode, exitSignal) => {
              // Background children may still hold the pipes: end the group so "close" can fire.
              stop();
              resolve({ code: exitCode, signal: exitSignal });
            });
          },
        );
        await stopping;
        await new Promise<void>((resolve) => {
          if (child.stdout.readableEnded && child.stderr.readableEnded) resolve();
          else child.once("close", () => resolve());
        });

        if (ctx.signal.aborted) throw new Error("Command aborted; its process group was killed");
        const details: BashResultDetails = {
          exitCode: code,
          signal,
          timedOut,
          outputBytes: output.totalBytes,
          truncated: output.truncated,
        };
        let text = output.render();
        if (text === "") text = "(no output)";
        if (timedOut) {
          text += `\n[Command timed out after ${timeoutSeconds} s; its process group was killed]`;
          return { content: [{ type: "text", text }], details, isError: true };
        }
        if (code !== 0) text += `\n[Exit code: ${code ?? `killed by ${signal}`}]`;
        return { content: [{ type: "text", text }], details };
      } finally {
        clearTimeout(timer);
        if (pendingUpdate) clearTimeout(pendingUpdate);
        ctx.signal.removeEventListener("abort", onAbort);
        child.stdout.off("data", onData);
        child.stderr.off("data", onData);
      }
    },
  });
}

/** Room the marker, the exit line and a timeout note take beside the output. */
const NOTES_ROOM = 400;

/** Bytes of output to keep: the option, within the call's result budget (a byte is at most a character). */
function outputCap(option: number | undefined, maxResultChars = Infinity): number {
  const budget = Number.isFinite(maxResultChars) ? Math.max(200, maxResultChars - NOTES_ROOM) : undefined;
  return Math.min(option ?? budget ?? 30_000, budget ?? Infinity);
}

function toSandbox(option: BashToolOptions["sandbox"], workspace: Workspace): Sandbox | undefined {
  if (!option) return undefined;
  if (option === true) return createSandbox({ workspace });
  if ("spawn" in option) return option;
  return createSandbox({ ...option, workspace });
}
