// The `agent-machine` command. `npm start -- [prompt]`, `npx agent-machine [prompt]`.

process.on("unhandledRejection", (reason) => {
  // The CLI must never die on a stray rejection: report it and keep going.
  process.stderr.write(`agent-machine: unexpected error: ${(reason as Error)?.message ?? String(reason)}\n`);
});

// Loaded on demand so `--help` answers at once.
const { runCli } = await import("./run.js");
const status = await runCli(process.argv.slice(2));
// Exit explicitly: a tool's leftover handle (a timer, a socket) must not keep the command alive.
process.stdout.write("", () => process.exit(status));
