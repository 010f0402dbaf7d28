/**
 * Exit status when stdout was closed by its reader (`agent-machine … | head`): 128 + SIGPIPE, what a
 * shell reports for `yes | head` and `git log | head`, so `set -o pipefail` sees the same as for them.
 */
export const EXIT_OUTPUT_CLOSED = 141;

/** The streams {@link watchOutput} guards: the parts of a writable it needs. */
export interface WatchedStream {
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: "error", listener: (error: Error) => void): unknown;
  write(text: string, callback?: (error?: Error | null) => void): unknown;
  writableFinished?: boolean;
  destroyed?: boolean;
}

/** What {@link watchOutput} saw of the command's output. */
export interface OutputWatch {
  /** Why stdout could not be written (a closed pipe, a full disk), once it failed. */
  readonly failure: NodeJS.ErrnoException | undefined;
  /** Calls `listener` once when stdout fails (at once if it already has); returns how to stop listening. */
  onFailure(listener: () => void): () => void;
  /** Resolves once everything written to stdout so far has gone (or failed). */
  flushed(): Promise<void>;
  /**
   * The exit status to end with: `status` when stdout took everything, else
   * {@link EXIT_OUTPUT_CLOSED} for a reader that went away, or 1 (why on stderr) for another failure.
   */
  statusAfter(status: number): number;
  /** Stops watching (the streams' error listeners are removed). */
  stop(): void;
}

/**
 * Guards the command's stdout and stderr against write errors. Without it, a reader that goes away
 * (`agent-machine --json "…" | head -1`) or a full disk makes the next write emit an `error` nobody
 * listens to, and Node dies with a stack trace while the agent's tools may still be running and
 * its session is left mid-run. With it the failure is recorded, the caller aborts the run
 * ({@link OutputWatch.onFailure}: tools stopped, session saved) and ends with
 * {@link OutputWatch.statusAfter}. An error on stderr is ignored: there is nowhere left to say it.
 *
 * @example
 * ```ts
 * const output = watchOutput(process.stdout, process.stderr);
 * output.onFailure(() => agent.abort());
 * await agent.prompt("fix the tests");
 * await output.flushed();
 * process.exitCode = output.statusAfter(0); // 141 when the reader went away
 * output.stop();
 * ```
 */
export function watchOutput(stdout: WatchedStream, stderr: WatchedStream): OutputWatch {
  let failure: NodeJS.ErrnoException | undefined;
  const listeners = new Set<() => void>();
  const onStdoutError = (error: Error) => {
    if (failure) return;
    failure = error;
    for (const listener of [...listeners]) listener();
    listeners.clear();
  };
  const onStderrError = () => undefined;
  stdout.on("error", onStdoutError);
  if (stderr !== stdout) stderr.on("error", onStderrError);
  return {
    get failure() {
      return failure;
    },
    onFailure(listener) {
      if (failure) {
        listener();
        return () => undefined;
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    flushed() {
      if (failure) return Promise.resolve();
      // A destroyed stream emits its error on a later tick: wait for it. Otherwise a write's
      // callback runs after the writes before it have gone, or failed (the error reaches the listener).
      if (stdout.destroyed) return new Promise((resolve) => setImmediate(resolve));
      return new Promise((resolve) => stdout.write("", () => setImmediate(resolve)));
    },
    statusAfter(status) {
      if (!failure) return status;
      if (isClosedPipe(failure)) return EXIT_OUTPUT_CLOSED;
      try {
        stderr.write(
          `agent-machine: cannot write the output (${failure.message}); the run was stopped and its session saved\n`,
        );
      } catch {
        // stderr is gone too: the status says it.
      }
      return 1;
    },
    stop() {
      stdout.off("error", onStdoutError);
      if (stderr !== stdout) stderr.off("error", onStderrError);
      listeners.clear();
    },
  };
}

/** The reader of a pipe went away: not a fault to report, as for any command piped into `head`. */
function isClosedPipe(error: NodeJS.ErrnoException): boolean {
  return error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED";
}
