import { CancelledError, RestatePromise, type TerminalError } from "@restatedev/restate-sdk";

/** What the pump hands a waiter: the step's value, or the terminal failure Restate recorded. */
type Settled = { id: number; value?: unknown; failure?: TerminalError };

interface Waiter {
  settled: RestatePromise<Settled>;
  resolve(value: unknown): void;
  reject(reason: unknown): void;
}

/** The single awaiter of one invocation's Restate promises. See {@link createRestatePump}. */
export interface RestatePump {
  /** A native promise that settles when `promise` does, delivered by the pump in journal order. */
  track<T>(promise: RestatePromise<T>): Promise<T>;
  /** Rejects when the pump itself fails (an SDK error other than a cancellation). */
  readonly failed: Promise<never>;
}

export interface RestatePumpOptions {
  /** The invocation was cancelled (Restate's cancel): the agent aborts its run. */
  onCancel(): void;
  /** Called each time the pump is about to wait (the run's reactions are done): writes go out now. */
  beforeWait?(): void;
}

const afterReactions = (resolve: () => void) => setImmediate(resolve);

/** The waiters' promises, in the order they were tracked (the race's order). */
function racers(waiters: Map<number, Waiter>): RestatePromise<Settled>[] {
  const promises: RestatePromise<Settled>[] = [];
  for (const waiter of waiters.values()) promises.push(waiter.settled);
  return promises;
}

/**
 * Waits on every Restate promise of an invocation at once, through one race.
 *
 * The Restate SDK lets a handler wait on one promise at a time: a second concurrent `await` fails
 * with `awaitNext already pending`. An agent waits on many at once (parallel tool calls, an
 * approval, the run's deadline). The pump races them all, hands each completion to its waiter one
 * at a time, then lets the reactions run (they may start new steps, which join the next race)
 * before it races again. Restate delivers completions in journal order, live and on replay alike,
 * so the agent sees the same sequence both times and asks for the same steps in the same order.
 *
 * A cancellation of the invocation (`AgentSession.abort`, or `restate invocations cancel`) reaches
 * the race as a `CancelledError`: the pump reports it once and carries on, so the agent can answer
 * its open calls and end the run.
 *
 * @example
 * ```ts
 * const pump = createRestatePump({ onCancel: () => agent.abort() });
 * const result = await pump.track(ctx.run("step", () => work()));
 * ```
 */
export function createRestatePump(options: RestatePumpOptions): RestatePump {
  const waiters = new Map<number, Waiter>();
  let nextId = 0;
  let running = false;
  let fail: (error: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});

  async function loop(): Promise<void> {
    try {
      for (;;) {
        // Reactions to the last completion run first, so the steps they start join this race.
        await new Promise<void>(afterReactions);
        if (waiters.size === 0) return;
        options.beforeWait?.();
        let settled: Settled;
        try {
          settled = await RestatePromise.race(racers(waiters));
        } catch (error) {
          if (error instanceof CancelledError) {
            options.onCancel();
            continue;
          }
          throw error;
        }
        const waiter = waiters.get(settled.id);
        if (!waiter) continue;
        waiters.delete(settled.id);
        if (settled.failure) waiter.reject(settled.failure);
        else waiter.resolve(settled.value);
      }
    } catch (error) {
      fail(error);
    } finally {
      running = false;
    }
  }

  return {
    failed,
    track<T>(promise: RestatePromise<T>): Promise<T> {
      const id = nextId++;
      const settled = promise.map((value, failure): Settled => ({ id, value, failure }));
      const result = new Promise<T>((resolve, reject) => {
        waiters.set(id, { settled, resolve: resolve as (value: unknown) => void, reject });
      });
      if (!running) {
        running = true;
        void loop();
      }
      return result;
    },
  };
}
