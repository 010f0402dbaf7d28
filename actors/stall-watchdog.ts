import type { StallTimeout } from "../core/options.js";

/** Why a stream was given up as stalled: the text the `retry` event and the final error carry. */
export interface Stall {
  phase: "first-event" | "idle";
  message: string;
}

/** Watches one model call's stream for silence. */
export interface StallWatchdog {
  /** Resolves when the stream has been silent too long; never rejects. */
  readonly stalled: Promise<Stall>;
  /** Call on every provider event: the silence starts again from now. */
  touch(): void;
  /** Stops watching (the stream ended one way or another). */
  stop(): void;
}

/**
 * Watches a stream for the two ways it stalls: no first event within `firstEventMs`, or no event
 * for `idleMs` once events flow. `touch()` costs one clock read, so it can run on every delta; the
 * single timer is re-armed only when it fires before the silence is long enough, so a long healthy
 * stream sets one timer per `idleMs`, not one per event. A value of 0 or `Infinity` turns that check off.
 *
 * @example
 * ```ts
 * const watchdog = createStallWatchdog({ firstEventMs: 120_000, idleMs: 120_000 });
 * const outcome = await Promise.race([consume(stream, watchdog.touch), watchdog.stalled]);
 * watchdog.stop();
 * ```
 */
export function createStallWatchdog(timeouts: Required<StallTimeout>): StallWatchdog {
  const firstEventMs = activeMs(timeouts.firstEventMs);
  const idleMs = activeMs(timeouts.idleMs);
  let lastEventAt: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let report!: (stall: Stall) => void;
  const stalled = new Promise<Stall>((resolve) => (report = resolve));

  const arm = (ms: number) => {
    timer = setTimeout(check, ms);
  };
  const check = () => {
    timer = undefined;
    if (stopped) return;
    if (lastEventAt === undefined) {
      stopped = true;
      report({
        phase: "first-event",
        message: `The model stream stalled: no first event within ${duration(firstEventMs!)} (stallTimeout.firstEventMs)`,
      });
      return;
    }
    if (idleMs === undefined) return;
    const silent = Date.now() - lastEventAt;
    if (silent < idleMs) return arm(idleMs - silent);
    stopped = true;
    report({
      phase: "idle",
      message: `The model stream stalled: no event for ${duration(idleMs)} after the last one (stallTimeout.idleMs)`,
    });
  };

  if (firstEventMs !== undefined) arm(firstEventMs);
  return {
    stalled,
    touch() {
      const first = lastEventAt === undefined;
      lastEventAt = Date.now();
      if (stopped || idleMs === undefined) return;
      // The first event ends the wait for it; from now on only silence between events counts. The
      // armed timer can stay when it fires no later than the idle check is due (`check` re-arms
      // for the rest of the silence), which saves two timer operations per model call.
      if (first && timer !== undefined && firstEventMs !== undefined && firstEventMs <= idleMs) return;
      if (first) clearTimeout(timer);
      if (first || timer === undefined) arm(idleMs);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

function activeMs(ms: number): number | undefined {
  return ms > 0 && Number.isFinite(ms) ? ms : undefined;
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
