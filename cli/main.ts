// The `agent-machine` command. `npm start -- [prompt]`, `npx agent-machine [prompt]`.
import { earlyExit } from "./early-exit.js";
import { servedEarlyExit } from "./served-usage.js";

process.on("unhandledRejection", (reason) => {
  // The CLI must never die on a stray rejection: report it and keep going.
  process.stderr.write(`agent-machine: unexpected error: ${(reason as Error)?.message ?? String(reason)}\n`);
});

// Nothing left to run while the command still waits means it waits for something that can no
// longer happen (Node would end with status 13 and no word): say so and fail instead.
let finished = false;
process.on("beforeExit", () => {
  if (finished) return;
  process.stderr.write(
    "agent-machine: internal error: the command was left waiting for something that can no longer happen; the session is saved up to its last event\n",
  );
  process.exit(1);
});

// `--help`, `--version` and usage errors are answered before the agent and its SDKs are loaded:
// they are what a start-up time is measured on.
const argv = process.argv.slice(2);
// `agent-machine acp` / `mcp`: the agent served over stdin/stdout (cli/acp-command.ts, mcp-command.ts).
const served = argv[0] === "acp" || argv[0] === "mcp" ? argv[0] : undefined;
const early = served ? servedEarlyExit(served, argv.slice(1), process) : earlyExit(argv, process);
const status = !early
  ? served === "acp"
    ? await (await import("./acp-command.js")).runAcpCommand(argv.slice(1), process.env)
    : await (await import("./mcp-command.js")).runMcpCommand(argv.slice(1), process.env)
  : "status" in early
    ? early.status
    : await (await import("./run.js")).runCli(argv);
finished = true;
// Exit explicitly: a tool's leftover handle (a timer, a socket) must not keep the command alive.
process.stdout.write("", () => process.exit(status));
