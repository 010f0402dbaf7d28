// agent-machine/cli (Node only): the `agent-machine` command as a function, for apps that run it
// in-process (the `agent-machine` bin runs the same). Not part of the main entry.

export type { CliIO } from "./cli/run.js";
export { runCli } from "./cli/run.js";
