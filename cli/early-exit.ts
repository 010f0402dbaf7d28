import { type CliArgs, parseArgs, USAGE } from "./args.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");

/** Where the command writes: the parts {@link earlyExit} needs. */
export interface EarlyExitIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * The answers the command gives without loading the agent: `--help`, `--version` and usage errors.
 * Returns the exit status when the command is done, or the parsed arguments when it must run.
 * Kept apart from `run.ts` (and its imports) so that `agent-machine --help` starts fast.
 *
 * @example
 * ```ts
 * const early = earlyExit(["--version"], process); // prints "0.1.0", returns { status: 0 }
 * if ("args" in early) await runAgent(early.args);
 * ```
 */
export function earlyExit(argv: readonly string[], io: EarlyExitIO): { status: number } | { args: CliArgs } {
  let args: CliArgs;
  try {
    args = parseArgs(argv);
  } catch (error) {
    io.stderr.write(`agent-machine: ${(error as Error).message}\nRun agent-machine --help for usage.\n`);
    return { status: 2 };
  }
  if (args.help) {
    io.stdout.write(`${USAGE}\n`);
    return { status: 0 };
  }
  if (args.version) {
    io.stdout.write(`${packageVersion()}\n`);
    return { status: 0 };
  }
  return { args };
}

/** The package's version, read from its package.json: next to `cli/` in a clone, two levels up in `dist/cli/`. */
export function packageVersion(): string {
  for (const candidate of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(nodeFs().readFileSync(new URL(candidate, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "agent-machine" && pkg.version) return pkg.version;
    } catch {}
  }
  return "unknown";
}
