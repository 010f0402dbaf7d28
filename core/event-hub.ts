// The stream an agent publishes its events on. An RxJS `Subject` would do, but every `next` goes
// through its error context (a closure per event) and a down-levelled `for…of` (an iterator object
// per event), which is a good part of an event's cost while V8 still runs the code cold (issue 44:
// a durable service pays for its first thousand turns). This hub is a Subject's behaviour for the
// part the agent uses: `next`, `complete`, and subscribers that come and go.
import { Observable } from "rxjs/internal/Observable";
import type { Subscriber } from "rxjs/internal/Subscriber";
import { Subscription } from "rxjs/internal/Subscription";

/**
 * A multicast RxJS `Observable` with `next` and `complete`, as a `Subject` has them: each value goes
 * to the subscribers there were when `next` was called, in the order they subscribed; after
 * `complete` no value goes out and a new subscriber is completed at once.
 */
export class EventHub<T> extends Observable<T> {
  /** Replaced, never changed in place: a `next` walks the subscribers it started with. */
  private subscribers: readonly Subscriber<T>[] = [];
  private stopped = false;

  /** Hands `value` to every current subscriber. */
  next(value: T): void {
    if (this.stopped) return;
    const subscribers = this.subscribers;
    for (let i = 0; i < subscribers.length; i++) subscribers[i]!.next(value);
  }

  /** Completes every subscriber, and any later one at once; later values go nowhere. */
  complete(): void {
    if (this.stopped) return;
    this.stopped = true;
    const subscribers = this.subscribers;
    this.subscribers = [];
    for (const subscriber of subscribers) subscriber.complete();
  }

  /** RxJS's hook for a new subscriber (`Observable.subscribe` calls it). */
  protected _subscribe(subscriber: Subscriber<T>): Subscription | undefined {
    if (this.stopped) {
      subscriber.complete();
      return undefined;
    }
    this.subscribers = [...this.subscribers, subscriber];
    return new Subscription(() => {
      this.subscribers = this.subscribers.filter((kept) => kept !== subscriber);
    });
  }
}

/**
 * A fresh {@link EventHub}: what `AgentLifecycle` publishes `events$` from.
 *
 * @example
 * ```ts
 * const hub = createEventHub<number>();
 * hub.subscribe((n) => console.log(n));
 * hub.next(1); // logs 1
 * hub.complete();
 * ```
 */
export function createEventHub<T>(): EventHub<T> {
  return new EventHub<T>();
}
