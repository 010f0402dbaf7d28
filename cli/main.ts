// The `agent-machine` command. `npm start -- [prompt]`, `npx agent-machine [prompt]`.
import { earlyExit } from "./early-exit.js";

process.on("unhandledRejection", (reason) => {
  // The CLI must never die on a stray rejection: report it and keep going.
  process.stderr.write(`agent-machine: unexpected error: ${(reason as Error)?.message ?? String(reason)}\n`);
});

// `--help`, `--version` and usage errors are answered before the agent and its SDKs are loaded:
// they are what a start-up time is measured on.
const argv = process.argv.slice(2);
const early = earlyExit(argv, process);
const status = "status" in early ? early.status : await (await import("./run.js")).runCli(argv);
// Exit explicitly: a tool's leftover handle (a timer, a socket) must not keep the command alive.
process.stdout.write("", () => process.exit(status));
