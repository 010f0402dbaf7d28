import type { ToolExecutionStrategy } from "../core/options.js";
import type { PermissionMode } from "../tools/permissions.js";
import { closestKey } from "../core/option-keys.js";
import { SESSION_ID } from "./session-store.js";

/** The command line, parsed. */
export interface CliArgs {
  prompt?: string;
  print: boolean;
  json: boolean;
  /** `--output-schema <file>`: a JSON Schema file; the run's answer is an object of it, printed as JSON. */
  outputSchema?: string;
  provider?: string;
  model?: string;
  strategy?: ToolExecutionStrategy;
  permissionMode?: PermissionMode;
  /** `--allow <rule>` (repeatable): permission rules that let matching calls run without asking. */
  allow: string[];
  maxTurns?: number;
  /** `--context-window <tokens>`: the model's context window (default per provider). */
  contextWindow?: number;
  inspect: boolean;
  visualize: boolean;
  /** Port of the `--visualize` page (default: a free one). */
  port?: number;
  cwd?: string;
  /** `--resume` alone is `true` (pick one); `--resume <id>` is the id. */
  resume?: string | true;
  continue: boolean;
  /** `--recover <id>`: a new session from what is readable of a damaged one (which is left as it is). */
  recover?: string;
  /** `--sessions-dir <dir>`: where this workspace's sessions are kept (default: the user's data folder). */
  sessionsDir?: string;
  /** Run the built-in demo even when an API key is set. */
  demo: boolean;
  /** Run bash in the OS sandbox (default); `--no-sandbox` turns it off. */
  sandbox: boolean;
  /** Let sandboxed commands reach the network (`--allow-network`). */
  allowNetwork: boolean;
  help: boolean;
  version: boolean;
}

export const PERMISSION_MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "plan",
  "bypass",
  "deny",
];

export const USAGE = `Usage: agent-machine [options] [prompt]
       agent-machine acp [options]   serve the agent to an editor over ACP on stdin/stdout (docs/acp.md)
       agent-machine mcp [options]   serve the agent as an MCP tool on stdin/stdout (docs/mcp-server.md)

A coding agent in the current directory, with the built-in tools (bash, read_file, write_file,
edit_file, list_files, grep, glob). Interactive when stdin is a terminal.

While the agent works: type a line + Enter to steer it (taken after the current step),
start the line with ">>" for a follow-up (taken when it would otherwise stop),
Ctrl-C aborts the run (the transcript is kept), a second Ctrl-C quits.
@path in a prompt attaches a workspace file; @shot.png (or an image file pasted or dragged in, or
Ctrl-V for a copied screenshot) attaches the image, for a model that reads images.

Options:
  -p, --print                 run one prompt non-interactively and print the answer
      --json                  print every event as a JSON line (non-interactive)
      --output-schema <file>  with --print: the answer is a JSON object of this JSON Schema, printed
                              as JSON (the model is told why an invalid one is refused, and retries)
      --provider <name>       anthropic | openai | openai-responses | openai-compatible | gemini | bedrock
      --model <id>            model id (default per provider); <provider>:<id> names both (bedrock:<id>)
      --strategy <s>          tool execution: parallel | sequential | auto | batched:N (default parallel)
      --permission-mode <m>   default | acceptEdits | plan | bypass | deny
                              (default: "default" interactively, "deny" with --print/--json or no terminal)
      --allow <rule>          let matching calls run without asking (repeatable): bash(npm test),
                              bash(git status:*) (a prefix), write_file(src/**), read_file
      --max-turns <n>         end a run after n model calls (one more asks for its answer)
      --context-window <n>    the model's context window in tokens (default 200000 for Anthropic,
                              128000 for others): compaction and the status line's context % use it
      --inspect               send the statechart to the Stately inspector
      --visualize [port]      serve the live visualizer page on 127.0.0.1
      --cwd <dir>             workspace directory (default: the current one)
      --no-sandbox            run bash without the OS sandbox (bubblewrap), with all of your rights
      --allow-network         let sandboxed bash commands use the network (off by default)
  -c, --continue              resume the most recent session of this workspace
  -r, --resume [id]           resume a session (without an id: choose from a list)
      --recover <id>          start a new session from what is readable of a damaged one
      --sessions-dir <dir>    keep this workspace's sessions in <dir> (default: the user's data folder)
      --demo                  run the built-in demo on the scripted model
  -h, --help                  show this help
  -v, --version               print the version

Models: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (GOOGLE_API_KEY), or OPENAI_BASE_URL with
--model select a real model; Bedrock takes AWS credentials and --model bedrock:<id>. With none set,
the bare command runs a demo on a scripted model in a temporary workspace; a prompt, --print or
--json without a model is an error (exit 1), never the demo. AGENT_MACHINE_SCRIPT=<file> (.mjs, .js,
.json) replaces the model with a script of answers: the command without a key, offline (docs/cli.md).
Project rules: AGENTS.md and CLAUDE.md of your config folder (~/.config/agent-machine/), then of the
workspace, go into the system prompt.
Sessions are saved in the user's data folder ($XDG_DATA_HOME or ~/.local/share/agent-machine/sessions/
<workspace>/<id>/; ~/Library/Application Support on macOS, %LOCALAPPDATA% on Windows), not in the
repository; an old <cwd>/.agent-machine/sessions/ is named and left alone, never adopted (a repository
can ship one): --sessions-dir .agent-machine/sessions --resume uses it.
bash runs in a bubblewrap sandbox: it writes only in the workspace and a private /tmp, cannot read
~/.ssh, .env and other credentials, and has no network. Without bwrap (apt-get install bubblewrap)
bash commands are refused until you install it or pass --no-sandbox.
Exit status: 0 done, 1 model error or bad setup, 2 usage error, 3 a limit (--max-turns) ended the run,
4 a call needed an approval and no one could answer (--print, --json, no terminal), 130 aborted
(Ctrl-C, SIGTERM), 141 stdout closed by its reader (| head).`;

/**
 * The names `--provider` takes: `PROVIDER_NAMES` of providers/from-env.ts, kept here so `--help`
 * and a usage error load no provider module (a test keeps the two lists equal).
 */
export const PROVIDER_CHOICES: readonly string[] = [
  "anthropic",
  "openai",
  "openai-responses",
  "openai-compatible",
  "gemini",
  "bedrock",
];

/** Every option the command takes, long names first: what "did you mean" picks from. */
export const OPTION_NAMES: readonly string[] = [
  "--print",
  "--json",
  "--output-schema",
  "--provider",
  "--model",
  "--strategy",
  "--permission-mode",
  "--allow",
  "--max-turns",
  "--context-window",
  "--inspect",
  "--visualize",
  "--cwd",
  "--no-sandbox",
  "--allow-network",
  "--continue",
  "--resume",
  "--recover",
  "--sessions-dir",
  "--demo",
  "--help",
  "--version",
];

/** The options that take no value (`--visualize` takes an optional port, `--resume` an optional id). */
const SWITCHES: ReadonlySet<string> = new Set([
  "--print",
  "--json",
  "--inspect",
  "--continue",
  "--demo",
  "--no-sandbox",
  "--allow-network",
  "--help",
  "--version",
]);

/** A usage error: the CLI prints it with a hint and exits with status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Parses `parallel | sequential | auto | batched:N`. */
export function parseStrategy(value: string): ToolExecutionStrategy {
  if (value === "parallel" || value === "sequential" || value === "auto") return value;
  const batched = /^batched:(\d+)$/.exec(value);
  if (batched && Number(batched[1]) >= 1) return { batched: Number(batched[1]) };
  throw new UsageError(`Invalid --strategy "${value}": use parallel, sequential, auto or batched:N (N ≥ 1)`);
}

function positiveInteger(option: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${option} needs a positive integer, got "${value}"`);
  return n;
}

function portNumber(option: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65_535)
    throw new UsageError(`${option} needs a port number from 1 to 65535, got "${value}"`);
  return n;
}

/**
 * A session id as `--resume` takes it: one word of the characters ids are made of, with a digit
 * or a hyphen (every id has both), so `--resume a-typo` says there is no such session; a word
 * without either, or words with spaces, are the prompt.
 */
const looksLikeSessionId = (value: string) => SESSION_ID.test(value) && /[\d-]/.test(value);

/**
 * Parses the command line (without `node` and the script). Options may come before or after the
 * prompt; the words of the prompt are joined with spaces; `--` ends the options.
 *
 * @example
 * ```ts
 * parseArgs(["--print", "--strategy", "batched:2", "fix the tests"]);
 * // { print: true, strategy: { batched: 2 }, prompt: "fix the tests", ... }
 * ```
 */
export function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = {
    print: false,
    json: false,
    allow: [],
    inspect: false,
    visualize: false,
    continue: false,
    demo: false,
    sandbox: true,
    allowNetwork: false,
    help: false,
    version: false,
  };
  const words: string[] = [];
  let i = 0;
  const value = (option: string): string => {
    const next = argv[++i];
    // A negative number is a (wrong) value, not the next option: its check says what is wrong.
    if (next === undefined || next === "" || (next.startsWith("-") && !/^-\d/.test(next)))
      throw new UsageError(`${option} needs a value`);
    return next;
  };
  /** The next argument when it is not an option and passes `accept` (an optional value). */
  const optionalValue = (accept: (v: string) => boolean): string | undefined => {
    const next = argv[i + 1];
    if (next === undefined || next.startsWith("-") || !accept(next)) return undefined;
    i++;
    return next;
  };

  for (; i < argv.length; i++) {
    const raw = argv[i]!;
    if (raw === "--") {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (!raw.startsWith("-") || raw === "-") {
      words.push(raw);
      continue;
    }
    const eq = raw.indexOf("=");
    const [name, inline] =
      raw.startsWith("--") && eq > 0 ? [raw.slice(0, eq), raw.slice(eq + 1)] : [raw, undefined];
    const take = (option: string) => {
      if (inline === "") throw new UsageError(`${option} needs a value`);
      return inline ?? value(option);
    };
    // `--json=false` must not turn JSON on: a switch given a value is a mistake, said as one.
    if (inline !== undefined && SWITCHES.has(name)) throw new UsageError(`${name} takes no value`);
    switch (name) {
      case "-p":
      case "--print":
        args.print = true;
        break;
      case "--json":
        args.json = true;
        break;
      case "--output-schema":
        args.outputSchema = take(name);
        break;
      case "--provider": {
        // A typo is a usage error (status 2) with the name it most likely meant, not "no model".
        const provider = take(name);
        if (!PROVIDER_CHOICES.includes(provider)) {
          const suggestion = closestKey(provider, PROVIDER_CHOICES);
          throw new UsageError(
            `Invalid --provider "${provider}"${suggestion ? ` (did you mean ${suggestion}?)` : ""}: use ${PROVIDER_CHOICES.join(", ")}`,
          );
        }
        args.provider = provider;
        break;
      }
      case "--model":
      case "-m":
        args.model = take(name);
        break;
      case "--strategy":
        args.strategy = parseStrategy(take(name));
        break;
      case "--permission-mode": {
        const mode = take(name);
        if (!(PERMISSION_MODES as readonly string[]).includes(mode)) {
          throw new UsageError(`Invalid --permission-mode "${mode}": use ${PERMISSION_MODES.join(", ")}`);
        }
        args.permissionMode = mode as PermissionMode;
        break;
      }
      case "--allow":
        args.allow.push(take(name));
        break;
      case "--max-turns":
        args.maxTurns = positiveInteger(name, take(name));
        break;
      case "--context-window":
        args.contextWindow = positiveInteger(name, take(name));
        break;
      case "--inspect":
        args.inspect = true;
        break;
      case "--visualize": {
        args.visualize = true;
        const port = inline ?? optionalValue((v) => /^\d+$/.test(v));
        if (port !== undefined) args.port = portNumber(name, port);
        break;
      }
      case "--cwd":
        args.cwd = take(name);
        break;
      case "-c":
      case "--continue":
        args.continue = true;
        break;
      case "-r":
      case "--resume":
        if (inline !== undefined && !SESSION_ID.test(inline))
          throw new UsageError(`Invalid session id "${inline}"`);
        args.resume = inline ?? optionalValue(looksLikeSessionId) ?? true;
        break;
      case "--recover": {
        const id = take(name);
        if (!SESSION_ID.test(id)) throw new UsageError(`Invalid session id "${id}"`);
        args.recover = id;
        break;
      }
      case "--sessions-dir":
        args.sessionsDir = take(name);
        break;
      case "--demo":
        args.demo = true;
        break;
      case "--no-sandbox":
        args.sandbox = false;
        break;
      case "--allow-network":
        args.allowNetwork = true;
        break;
      case "-h":
      case "--help":
        args.help = true;
        break;
      case "-v":
      case "--version":
        args.version = true;
        break;
      default: {
        const suggestion = closestKey(name, OPTION_NAMES);
        throw new UsageError(`Unknown option ${name}${suggestion ? ` (did you mean ${suggestion}?)` : ""}`);
      }
    }
  }
  if (args.allowNetwork && !args.sandbox) {
    throw new UsageError(
      "--allow-network is for the sandbox; without it (--no-sandbox) bash has the network anyway",
    );
  }
  if (args.outputSchema !== undefined && !args.print && !args.json) {
    throw new UsageError("--output-schema needs --print (or --json): the object is printed as the answer");
  }
  if ([args.continue, args.resume !== undefined, args.recover !== undefined].filter(Boolean).length > 1)
    throw new UsageError("Use one of --continue, --resume and --recover");
  const prompt = words.join(" ").trim();
  if (prompt) args.prompt = prompt;
  return args;
}
