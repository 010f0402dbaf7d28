// The coding tools doing their I/O through the ACP client where it offers to: files read and
// written through the editor (so the model sees unsaved buffers and the editor keeps its undo),
// commands run in the editor's terminal. The workspace rules stay ours whichever side does the I/O:
// every path is resolved by the tool's workspace (inside it, through no symlink out, `.git/` and
// `node_modules/` never written) before the client is asked anything.
import { lstat } from "node:fs/promises";
import * as path from "node:path";
import type { CreateTerminalRequest, TerminalExitStatus } from "@agentclientprotocol/sdk";
import type { Tool, ToolContext, ToolResult } from "../tools/define-tool.js";
import { applyEdit, editResult } from "../tools/edit-file.js";
import { readFileResultOfText } from "../tools/read-file.js";
import type { Workspace } from "../tools/workspace.js";

/**
 * A terminal the client runs a command in (the SDK's `TerminalHandle`).
 *
 * @example
 * ```ts
 * const terminal = await client.createTerminal!({ command: "ls" });
 * const { exitCode } = await terminal.waitForExit();
 * await terminal.release();
 * ```
 */
export interface AcpTerminal {
  readonly id: string;
  currentOutput(): Promise<{ output: string; truncated: boolean; exitStatus?: TerminalExitStatus | null }>;
  waitForExit(): Promise<TerminalExitStatus>;
  kill(): Promise<unknown>;
  release(): Promise<unknown>;
}

/**
 * What an ACP client offers one session, by its `clientCapabilities`: each method is there only when
 * the client said it supports it. `serveAcp` hands it to `newSession` / `loadSession`.
 *
 * @example
 * ```ts
 * serveAcp({ newSession: ({ cwd, client }) => ({ id, cwd, agent: makeAgent(client.readTextFile !== undefined) }) });
 * ```
 */
export interface AcpClientAccess {
  /** `fs/read_text_file`: the file as the editor has it (unsaved changes included). */
  readTextFile?(absolutePath: string): Promise<string>;
  /** `fs/write_text_file`: the editor writes the file (and keeps it in its undo history). */
  writeTextFile?(absolutePath: string, content: string): Promise<void>;
  /** `terminal/create`: the editor runs the command and shows it. */
  createTerminal?(request: Omit<CreateTerminalRequest, "sessionId">): Promise<AcpTerminal>;
}

/**
 * Options of {@link withAcpClient}.
 *
 * @example
 * ```ts
 * const options: WithAcpClientOptions = { cwd, bashInTerminal: false };
 * ```
 */
export interface WithAcpClientOptions {
  /**
   * The directory the client named (`cwd` of `session/new`): paths sent to it are spelled from here,
   * so the editor matches them to its open buffers even when the workspace is reached by a symlink.
   */
  cwd: string;
  /**
   * Run `bash` in the client's terminal. A command there runs with the editor's rights, outside any
   * sandbox of ours, so it is off by default: set it only where bash runs unsandboxed anyway.
   */
  bashInTerminal?: boolean;
}

const IMAGE_FILE = /\.(png|jpe?g|gif|webp)$/i;

/**
 * `tools` with `read_file`, `write_file` and `edit_file` doing their I/O through the ACP client
 * where it offers `fs/read_text_file` / `fs/write_text_file`, and `bash` running in its terminal
 * when `bashInTerminal` is set and it offers `terminal`. Other tools, and these where the client
 * offers nothing, are returned as they are (our own, sandboxed). Names, parameters, descriptions,
 * permissions and results stay the same: the model cannot tell which side did the I/O.
 *
 * @example
 * ```ts
 * const tools = withAcpClient(codingTools({ cwd }), client, { cwd });
 * ```
 */
export function withAcpClient(tools: Tool[], client: AcpClientAccess, options: WithAcpClientOptions): Tool[] {
  return tools.map((tool) => {
    const workspace = tool.workspace;
    if (!workspace) return tool;
    const clientPath = (relative: string) => path.join(options.cwd, relative);
    if (tool.name === "read_file" && client.readTextFile)
      return withExecute(tool, readThrough(tool, workspace, client.readTextFile, clientPath));
    if (tool.name === "write_file" && client.writeTextFile)
      return withExecute(tool, writeThrough(workspace, client.writeTextFile, clientPath));
    if (tool.name === "edit_file" && client.readTextFile && client.writeTextFile)
      return withExecute(tool, editThrough(workspace, client.readTextFile, client.writeTextFile, clientPath));
    if (tool.name === "bash" && options.bashInTerminal && client.createTerminal)
      return withExecute(tool, bashInTerminal(clientPath("."), client.createTerminal));
    return tool;
  });
}

function withExecute(tool: Tool, execute: Tool["execute"]): Tool {
  return { ...tool, execute };
}

type Args = Record<string, unknown>;

/** read_file through the editor; images are read from disk by our own tool (ACP reads text only). */
function readThrough(
  tool: Tool,
  workspace: Workspace,
  read: NonNullable<AcpClientAccess["readTextFile"]>,
  clientPath: (relative: string) => string,
): Tool["execute"] {
  return async (args: Args, ctx: ToolContext) => {
    const { relative } = await workspace.resolve(String(args.path));
    if (IMAGE_FILE.test(relative)) return tool.execute(args, ctx);
    const text = await read(clientPath(relative)).catch((error: Error) => {
      throw new Error(`Cannot read ${args.path}: ${error.message}`);
    });
    return readFileResultOfText(text, relative, {
      offset: args.offset as number | undefined,
      limit: args.limit as number | undefined,
      maxResultChars: ctx.maxResultChars,
    });
  };
}

function writeThrough(
  workspace: Workspace,
  write: NonNullable<AcpClientAccess["writeTextFile"]>,
  clientPath: (relative: string) => string,
): Tool["execute"] {
  return async (args: Args) => {
    const { absolute, relative } = await workspace.resolveForWrite(String(args.path));
    if (relative === ".") throw new Error(`${args.path} is a directory`);
    const content = String(args.content);
    const created = await lstat(absolute).then(
      () => false,
      () => true,
    );
    await write(clientPath(relative), content);
    const bytes = Buffer.byteLength(content);
    return {
      content: [{ type: "text", text: `${created ? "Created" : "Overwrote"} ${relative} (${bytes} bytes)` }],
      details: { path: relative, bytes, created },
    };
  };
}

function editThrough(
  workspace: Workspace,
  read: NonNullable<AcpClientAccess["readTextFile"]>,
  write: NonNullable<AcpClientAccess["writeTextFile"]>,
  clientPath: (relative: string) => string,
): Tool["execute"] {
  return async (args: Args) => {
    const { relative } = await workspace.resolveForWrite(String(args.path));
    const file = clientPath(relative);
    const text = await read(file).catch((error: Error) => {
      throw new Error(`Cannot read ${args.path} (use write_file to create it): ${error.message}`);
    });
    const edit = applyEdit(
      text,
      args as { path: string; old_string: string; new_string: string; replace_all?: boolean },
      relative,
    );
    await write(file, edit.updated);
    return editResult(relative, edit.replacements, edit.firstLine);
  };
}

const DEFAULT_TIMEOUT_SECONDS = 120;
const MAX_TIMEOUT_SECONDS = 600;
const OUTPUT_BYTES = 30_000;

/**
 * bash in the client's terminal: the same result as our bash (output, exit code, timeout), the
 * terminal shown in the call while it runs, killed on timeout or abort, always released.
 */
function bashInTerminal(
  root: string,
  createTerminal: NonNullable<AcpClientAccess["createTerminal"]>,
): Tool["execute"] {
  return async (args: Args, ctx: ToolContext): Promise<ToolResult> => {
    if (ctx.signal.aborted) throw new Error("Command not started: the call was aborted");
    const timeoutSeconds = Math.min(
      (args.timeout_seconds as number | undefined) ?? DEFAULT_TIMEOUT_SECONDS,
      MAX_TIMEOUT_SECONDS,
    );
    const terminal = await createTerminal({
      command: "bash",
      args: ["-c", String(args.command)],
      cwd: root,
      env: [
        { name: "PAGER", value: "cat" },
        { name: "GIT_PAGER", value: "cat" },
        { name: "GIT_TERMINAL_PROMPT", value: "0" },
      ],
      outputByteLimit: OUTPUT_BYTES,
    });
    try {
      // The editor shows the terminal live in the call (`tool_call_update` with its id).
      ctx.onUpdate({ content: [], details: { terminalId: terminal.id } });
      let timer: NodeJS.Timeout | undefined;
      let stopped: "timeout" | "abort" | undefined;
      const stop = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          stopped = "timeout";
          resolve();
        }, timeoutSeconds * 1000);
        ctx.signal.addEventListener("abort", () => ((stopped = "abort"), resolve()), { once: true });
      });
      const exit = await Promise.race([terminal.waitForExit(), stop.then(() => undefined)]);
      clearTimeout(timer);
      if (!exit) await terminal.kill().catch(() => {});
      if (stopped === "abort") throw new Error("Command aborted; the terminal's command was killed");
      const { output, truncated } = await terminal.currentOutput();
      let text = (truncated ? "[... earlier output cut ...]\n" : "") + output;
      if (text === "") text = "(no output)";
      const details = { exitCode: exit?.exitCode ?? null, signal: exit?.signal ?? null, timedOut: !exit };
      if (!exit) {
        text += `\n[Command timed out after ${timeoutSeconds} s; it was killed]`;
        return { content: [{ type: "text", text }], details, isError: true };
      }
      if (exit.exitCode !== 0) text += `\n[Exit code: ${exit.exitCode ?? `killed by ${exit.signal}`}]`;
      return { content: [{ type: "text", text }], details };
    } finally {
      await terminal.release().catch(() => {});
    }
  };
}
