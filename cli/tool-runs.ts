import type { Tool } from "../tools/define-tool.js";

/** Tools whose running calls can be waited for: see {@link trackToolRuns}. */
export interface TrackedTools {
  tools: Tool[];
  /** How many calls are still executing. */
  running(): number;
  /** Resolves once every executing call has returned, or after `ms`, whichever comes first. */
  settled(ms: number): Promise<void>;
}

/**
 * Wraps tools so the command can wait for their calls to end before it exits. An abort answers a
 * running call at once (the transcript says "aborted"), while the tool is still stopping what it
 * started: bash sends its process group SIGTERM and, 2 s later, SIGKILL to what ignored it. A
 * command that exited as soon as the run settled took that SIGKILL with it, and a command that
 * traps SIGTERM (a dev server, a `trap '' TERM` script) was left running unsandboxed.
 *
 * @example
 * ```ts
 * const tracked = trackToolRuns(codingTools({ cwd }));
 * const agent = createAgent({ provider, tools: tracked.tools });
 * agent.abort();
 * await tracked.settled(5_000); // bash's process groups are gone
 * ```
 */
export function trackToolRuns(tools: readonly Tool[]): TrackedTools {
  const runs = new Set<Promise<unknown>>();
  const tracked = tools.map((tool): Tool =>
    tool.external
      ? tool
      : {
          ...tool,
          execute: (args, ctx) => {
            const run = Promise.resolve().then(() => tool.execute(args, ctx));
            runs.add(run);
            const forget = () => runs.delete(run);
            run.then(forget, forget);
            return run;
          },
        },
  );
  return {
    tools: tracked,
    running: () => runs.size,
    async settled(ms) {
      if (runs.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...runs]),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
      ]);
      clearTimeout(timer);
    },
  };
}
