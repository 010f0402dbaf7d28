import type { StallTimeout } from "../core/options.js";

/** Why a stream was given up as stalled: the text the `retry` event and the final error carry. */
export interface Stall {
  phase: "first-event" | "idle";
  message: string;
}

/**
 * Watches an agent's model streams for the two ways they stall: no first event within
 * `firstEventMs`, or no event for `idleMs` once events flow. A value of 0 or `Infinity` turns that
 * check off.
 *
 * One watchdog serves an agent's streams one after the other (an agent streams one model call at a
 * time), with one timer: `touch()` costs one clock read, so it can run on every delta; the timer is
 * re-armed only when it fires before the silence is long enough, and a new stream re-arms it in
 * place (`refresh()`), so a run of many turns makes one timer, not one per model call. Between
 * streams the timer keeps no process alive (it is unref'd); `release()`, at the end of a run,
 * clears it.
 *
 * @example
 * ```ts
 * const watchdog = new StallWatchdog({ firstEventMs: 120_000, idleMs: 120_000 });
 * const outcome = await new Promise((resolve, reject) => {
 *   watchdog.watch(resolve);
 *   consume(stream, () => watchdog.touch()).then(resolve, reject);
 * });
 * watchdog.stop();
 * ```
 */
export class StallWatchdog {
  private readonly firstEventMs: number | undefined;
  private readonly idleMs: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** The delay the timer was made with: `refresh()` re-arms it with that delay. */
  private timerMs = 0;
  /** When the armed timer fires (`undefined` once it has fired or been cleared). */
  private dueAt: number | undefined = undefined;
  private startedAt = 0;
  private lastEventAt: number | undefined = undefined;
  private onStall: ((stall: Stall) => void) | undefined = undefined;

  constructor(timeouts: Required<StallTimeout>) {
    this.firstEventMs = activeMs(timeouts.firstEventMs);
    this.idleMs = activeMs(timeouts.idleMs);
  }

  /** A stream is being watched (between `watch` and `stop`). */
  get watching(): boolean {
    return this.onStall !== undefined;
  }

  /** Starts watching a stream: `onStall` is called once if it stalls before `stop()`. */
  watch(onStall: (stall: Stall) => void): void {
    this.onStall = onStall;
    this.startedAt = Date.now();
    this.lastEventAt = undefined;
    if (this.firstEventMs !== undefined) this.arm(this.firstEventMs, this.startedAt);
  }

  /** Call on every provider event: the silence starts again from now. */
  touch(): void {
    const first = this.lastEventAt === undefined;
    this.lastEventAt = Date.now();
    if (!first || this.onStall === undefined || this.idleMs === undefined) return;
    // The first event ends the wait for it; from now on only silence between events counts. The
    // armed timer can stay when it fires no later than the idle check is due (`check` re-arms for
    // the rest of the silence).
    if (this.firstEventMs !== undefined && this.firstEventMs <= this.idleMs) return;
    this.arm(this.idleMs);
  }

  /** Stops watching (the stream ended one way or another); the idle timer keeps no process alive. */
  stop(): void {
    this.onStall = undefined;
    this.timer?.unref?.();
  }

  /** Clears the timer: nothing stays scheduled (the run is over, or the agent stopped). */
  release(): void {
    this.onStall = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dueAt = undefined;
  }

  /**
   * Makes sure a check comes within `ms` of `now`. A timer still armed that fires no later (the
   * previous stream's, in a run of quick turns) stays as it is: it is only ref'd again, and when it
   * fires early `check` re-arms it for the rest of the silence. Re-inserting a timer in Node's
   * timer list on every model call cost more than the rest of the watchdog.
   */
  private arm(ms: number, now = Date.now()): void {
    const timer = this.timer;
    if (timer !== undefined && this.dueAt !== undefined && this.dueAt <= now + ms) {
      timer.ref?.();
      return;
    }
    this.dueAt = now + ms;
    if (timer !== undefined && this.timerMs === ms && typeof timer.refresh === "function") {
      timer.ref?.();
      timer.refresh();
      return;
    }
    clearTimeout(timer);
    this.timerMs = ms;
    this.timer = setTimeout(() => this.check(), ms);
  }

  private check(): void {
    this.dueAt = undefined;
    const onStall = this.onStall;
    if (onStall === undefined) return;
    const firstEvent = this.lastEventAt === undefined;
    const limit = firstEvent ? this.firstEventMs : this.idleMs;
    if (limit === undefined) return;
    const silent = Date.now() - (this.lastEventAt ?? this.startedAt);
    if (silent < limit) return this.arm(limit - silent);
    this.onStall = undefined;
    onStall(
      firstEvent
        ? {
            phase: "first-event",
            message: `The model stream stalled: no first event within ${duration(limit)} (stallTimeout.firstEventMs)`,
          }
        : {
            phase: "idle",
            message: `The model stream stalled: no event for ${duration(limit)} after the last one (stallTimeout.idleMs)`,
          },
    );
  }
}

const watchdogs = new WeakMap<object, StallWatchdog>();

/**
 * The watchdog of one agent's streams (keyed by its runtime), made by its first stream.
 *
 * @example
 * ```ts
 * const watchdog = stallWatchdogOf(runtime, runtime.stallTimeout);
 * ```
 */
export function stallWatchdogOf(agent: object, timeouts: Required<StallTimeout>): StallWatchdog {
  let watchdog = watchdogs.get(agent);
  if (!watchdog) watchdogs.set(agent, (watchdog = new StallWatchdog(timeouts)));
  return watchdog;
}

/**
 * Clears the timer of an agent's watchdog and forgets it, if it has one: at the end of a run, and
 * when the agent stops.
 *
 * @example
 * ```ts
 * if (event.type === "agent_end") releaseStallWatchdog(runtime);
 * ```
 */
export function releaseStallWatchdog(agent: object): void {
  // An idle agent keeps no watchdog: the next run makes one.
  watchdogs.get(agent)?.release();
  watchdogs.delete(agent);
}

function activeMs(ms: number): number | undefined {
  return ms > 0 && Number.isFinite(ms) ? ms : undefined;
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
