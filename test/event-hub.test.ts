import { Subject } from "rxjs";
import { filter, map } from "rxjs/operators";
import { describe, expect, it } from "vitest";
import { createEventHub } from "../core/event-hub.js";

/** What one scenario shows its subscribers, run on a hub and on an RxJS Subject alike. */
function scenario(
  make: () => { next(n: number): void; complete(): void; subscribe: Subject<number>["subscribe"] },
) {
  const seen: string[] = [];
  const hub = make();
  const a = hub.subscribe({ next: (n) => seen.push(`a${n}`), complete: () => seen.push("a:done") });
  hub.subscribe((n) => {
    seen.push(`b${n}`);
    // Subscribed during a value: gets the next one, not this one.
    if (n === 1) hub.subscribe((m) => seen.push(`c${m}`));
    // Unsubscribed during a value: `a` (after b) still got it only if it came first.
    if (n === 2) a.unsubscribe();
  });
  hub.next(1);
  hub.next(2);
  hub.next(3);
  hub.complete();
  hub.next(4);
  hub.subscribe({ complete: () => seen.push("late:done") });
  return seen;
}

describe("createEventHub (the agent's event stream)", () => {
  it("behaves as an RxJS Subject for next, complete, and subscribers that come and go", () => {
    const hubSeen = scenario(() => createEventHub<number>());
    expect(hubSeen).toEqual(scenario(() => new Subject<number>()));
    expect(hubSeen).toEqual(["a1", "b1", "a2", "b2", "c2", "b3", "c3", "late:done"]);
  });

  it("is an RxJS Observable: operators and unsubscribing work", () => {
    const hub = createEventHub<number>();
    const seen: number[] = [];
    const subscription = hub
      .pipe(
        filter((n) => n % 2 === 0),
        map((n) => n * 10),
      )
      .subscribe((n) => seen.push(n));
    hub.next(1);
    hub.next(2);
    subscription.unsubscribe();
    hub.next(4);
    expect(seen).toEqual([20]);
  });

  it("keeps a subscriber's error with that subscriber, as a Subject does", async () => {
    const hub = createEventHub<number>();
    const seen: number[] = [];
    const errors: unknown[] = [];
    const { config } = await import("rxjs");
    const previous = config.onUnhandledError;
    config.onUnhandledError = (error) => errors.push(error);
    try {
      hub.subscribe(() => {
        throw new Error("a bug in a listener");
      });
      hub.subscribe((n) => seen.push(n));
      hub.next(1);
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(seen).toEqual([1]);
      expect(errors).toHaveLength(1);
    } finally {
      config.onUnhandledError = previous;
    }
  });
});
