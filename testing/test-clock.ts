/** Options of {@link createTestClock}. */
export interface TestClockOptions {
  /** The time `Date.now()` starts at. Default: the real time when the clock is installed. */
  now?: number;
}

/**
 * Time the test controls. While installed it replaces `setTimeout`, `clearTimeout`,
 * `setInterval`, `clearInterval` and `Date.now` (what the agent's stall watchdog, run deadline,
 * tool timeouts, retry backoff and timestamps read), so hours pass in microseconds.
 */
export interface TestClock {
  /** The clock's current time (ms since the epoch). */
  now(): number;
  /** Replaces the global timers and `Date.now` (idempotent). */
  install(): TestClock;
  /** Puts the real timers back; timers still pending are dropped. */
  uninstall(): void;
  /** Moves time forward by `ms`, running every timer due on the way, in order, letting promises settle between them. */
  advance(ms: number): Promise<void>;
  /** Timers waiting to fire. */
  pending(): number;
  /**
   * Waits for `promise`, moving time to the next timer whenever everything else is quiet (no
   * promise or I/O callback ran for a few turns of the real event loop). Throws when more than
   * `maxMs` of clock time would pass (default one day): a run that never ends fails instead of
   * spinning for ever.
   */
  runUntil<T>(promise: Promise<T>, options?: RunUntilOptions): Promise<T>;
}

/** Options of {@link TestClock.runUntil}. */
export interface RunUntilOptions {
  /** Clock time it may move on. Default one day. */
  maxMs?: number;
  /**
   * Real time it waits when no timer is pending and nothing happens (only real I/O could move
   * things on then). Default 30 000 ms.
   */
  maxRealIdleMs?: number;
}

interface FakeTimer {
  id: number;
  at: number;
  callback: (...args: unknown[]) => void;
  args: unknown[];
  interval?: number;
  handle: FakeHandle;
}

/** What a fake `setTimeout` returns: shaped like Node's `Timeout` (ref/unref/refresh/hasRef, a number). */
class FakeHandle {
  constructor(
    private readonly clock: ClockImpl,
    readonly id: number,
  ) {}
  ref() {
    return this;
  }
  unref() {
    return this;
  }
  hasRef() {
    return true;
  }
  refresh() {
    this.clock.refresh(this.id);
    return this;
  }
  [Symbol.toPrimitive]() {
    return this.id;
  }
}

const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  dateNow: Date.now,
};

let installed: ClockImpl | undefined;

class ClockImpl implements TestClock {
  private time: number | undefined;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();
  private readonly delays = new Map<number, number>();

  constructor(private readonly start?: number) {}

  now(): number {
    return this.time ?? this.start ?? real.dateNow();
  }

  install(): TestClock {
    if (installed === this) return this;
    if (installed) throw new Error("createTestClock: another test clock is installed; uninstall it first");
    this.time = this.now();
    // The globals are process-wide, so is the record of which clock holds them.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    installed = this;
    const g = globalThis as Record<string, unknown>;
    g.setTimeout = (callback: FakeTimer["callback"], ms?: number, ...args: unknown[]) =>
      this.add(callback, ms, args, false);
    g.setInterval = (callback: FakeTimer["callback"], ms?: number, ...args: unknown[]) =>
      this.add(callback, ms, args, true);
    g.clearTimeout = g.clearInterval = (handle: unknown) => this.clear(handle);
    Date.now = () => this.now();
    return this;
  }

  uninstall(): void {
    if (installed !== this) return;
    installed = undefined;
    const g = globalThis as Record<string, unknown>;
    g.setTimeout = real.setTimeout;
    g.clearTimeout = real.clearTimeout;
    g.setInterval = real.setInterval;
    g.clearInterval = real.clearInterval;
    Date.now = real.dateNow;
    this.timers.clear();
  }

  pending(): number {
    return this.timers.size;
  }

  refresh(id: number): void {
    const timer = this.timers.get(id);
    if (timer) timer.at = this.now() + (this.delays.get(id) ?? 0);
  }

  async advance(ms: number): Promise<void> {
    const until = this.now() + Math.max(0, ms);
    for (;;) {
      await settle();
      const next = this.nextTimer();
      if (!next || next.at > until) break;
      this.fire(next);
    }
    this.time = until;
    await settle();
  }

  async runUntil<T>(promise: Promise<T>, options: RunUntilOptions = {}): Promise<T> {
    const deadline = this.now() + (options.maxMs ?? 86_400_000);
    const maxRealIdleMs = options.maxRealIdleMs ?? 30_000;
    let idleSince: number | undefined;
    let done = false;
    const watched = promise.finally(() => {
      done = true;
    });
    watched.catch(() => {});
    for (;;) {
      await quiet(() => done);
      if (done) return watched;
      const next = this.nextTimer();
      if (!next) {
        // Nothing scheduled: only real I/O can move things on; give it a moment of real time.
        idleSince ??= performance.now();
        if (performance.now() - idleSince > maxRealIdleMs) {
          throw new Error(`nothing happened for ${maxRealIdleMs} ms and no timer is pending`);
        }
        await new Promise((resolve) => real.setTimeout(resolve, 5));
        continue;
      }
      idleSince = undefined;
      if (next.at > deadline) {
        throw new Error(`still waiting after ${options.maxMs ?? 86_400_000} ms of clock time`);
      }
      this.fire(next);
    }
  }

  private add(callback: FakeTimer["callback"], ms: number | undefined, args: unknown[], repeat: boolean) {
    const id = this.nextId++;
    const delay = Math.max(0, Number(ms) || 0);
    const handle = new FakeHandle(this, id);
    this.delays.set(id, delay);
    this.timers.set(id, {
      id,
      at: this.now() + delay,
      callback,
      args,
      interval: repeat ? Math.max(1, delay) : undefined,
      handle,
    });
    return handle;
  }

  private clear(handle: unknown): void {
    if (handle instanceof FakeHandle) {
      this.timers.delete(handle.id);
      this.delays.delete(handle.id);
      return;
    }
    if (typeof handle === "number" && this.timers.has(handle)) {
      this.timers.delete(handle);
      return;
    }
    // A timer made before the clock was installed is a real one.
    real.clearTimeout(handle as never);
  }

  private nextTimer(): FakeTimer | undefined {
    let next: FakeTimer | undefined;
    for (const timer of this.timers.values()) {
      if (!next || timer.at < next.at || (timer.at === next.at && timer.id < next.id)) next = timer;
    }
    return next;
  }

  private fire(timer: FakeTimer): void {
    this.time = Math.max(this.now(), timer.at);
    if (timer.interval !== undefined) timer.at += timer.interval;
    else {
      this.timers.delete(timer.id);
      this.delays.delete(timer.id);
    }
    timer.callback(...timer.args);
  }
}

/** Lets pending promise callbacks and I/O already delivered run (a few turns of the real event loop). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => real.setImmediate(resolve));
}

/** Waits until `done()` or until the real event loop has turned several times with nothing for us. */
async function quiet(done: () => boolean): Promise<void> {
  for (let i = 0; i < 10 && !done(); i++) await new Promise((resolve) => real.setImmediate(resolve));
}

/**
 * A clock the test controls, for timeouts, limits and the stall watchdog without real waiting.
 * Install it before the agent is created (timers made earlier stay real), uninstall it after.
 *
 * @example
 * ```ts
 * const clock = createTestClock().install();
 * try {
 *   const model = scriptedModel([{ stall: true }, { text: "back" }]);
 *   const run = await runAgent({ provider: model, retry: { jitter: 0 } }, "hi", { clock });
 *   // three minutes of silence passed in a few milliseconds: the stall was retried
 * } finally {
 *   clock.uninstall();
 * }
 * ```
 */
export function createTestClock(options: TestClockOptions = {}): TestClock {
  return new ClockImpl(options.now);
}
