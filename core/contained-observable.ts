// An event stream whose subscribers' errors stay with them. RxJS reports an error thrown by a
// subscriber's callback asynchronously (a `setTimeout` that rethrows it), which ends a Node process:
// one bug in an app's log line or UI listener would take down a server full of agents. The standard
// says the process never crashes, so the streams the package hands out report such an error instead.
import { Observable } from "rxjs/internal/Observable";
import type { Operator } from "rxjs/internal/Operator";
import { Subscriber } from "rxjs/internal/Subscriber";
import { config } from "rxjs/internal/config";
import type { Observer, Subscription } from "rxjs";
import { errorText } from "./error-text.js";

type Callbacks<T> = Partial<Observer<T>> | ((value: T) => void) | null | undefined;

/**
 * How a subscriber's error is reported: to RxJS's `config.onUnhandledError` when the app set one
 * (the app chose where such errors go), else once per subscription on the console.
 */
function reporterFor(name: string): (error: unknown) => void {
  let reported = false;
  return (error) => {
    const handler = config.onUnhandledError;
    if (handler) {
      try {
        handler(error);
      } catch {
        // A handler that fails loses only the report.
      }
      return;
    }
    if (reported) return;
    reported = true;
    console.error(
      `agent-machine: a subscriber of ${name} threw (it stays subscribed; its later errors are not reported): ${errorText(error)}`,
    );
  };
}

/** The app's callbacks, each guarded: what one throws is reported, and the stream goes on. */
function guardedObserver<T>(callbacks: Callbacks<T>, name: string): Partial<Observer<T>> {
  const observer: Partial<Observer<T>> =
    typeof callbacks === "function" ? { next: callbacks } : (callbacks ?? {});
  const report = reporterFor(name);
  const guarded: Partial<Observer<T>> = {
    complete: () => {
      try {
        observer.complete?.();
      } catch (error) {
        report(error);
      }
    },
    error: (failure) => {
      try {
        if (observer.error) observer.error(failure);
        else report(failure);
      } catch (error) {
        report(error);
      }
    },
  };
  if (observer.next)
    guarded.next = (value) => {
      try {
        observer.next!(value);
      } catch (error) {
        report(error);
      }
    };
  return guarded;
}

/**
 * An operator's or a helper's own subscriber (`firstValueFrom`, `pipe`), also from another copy of
 * RxJS: recognised as RxJS recognises one, so that its unsubscribing reaches the source. Its
 * callbacks are RxJS's, which guard the app's own.
 */
function isSubscriberLike(value: unknown): value is Subscriber<unknown> {
  if (value instanceof Subscriber) return true;
  const candidate = value as Partial<Subscriber<unknown>> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.next === "function" &&
    typeof candidate.error === "function" &&
    typeof candidate.complete === "function" &&
    "closed" in candidate &&
    typeof candidate.unsubscribe === "function" &&
    typeof candidate.add === "function" &&
    typeof candidate.remove === "function"
  );
}

/**
 * An RxJS `Observable` whose subscribers' errors are contained (see {@link containObservable}).
 * Operators keep it: `pipe(filter(...))` gives one of these too, so the app's callback at the end of
 * a chain is guarded as well.
 */
class ContainedObservable<T> extends Observable<T> {
  constructor(
    subscribe: ((subscriber: Subscriber<T>) => (() => void) | Subscription | void) | undefined,
    private readonly streamName: string,
  ) {
    super(subscribe);
  }

  override lift<R>(operator?: Operator<T, R>): Observable<R> {
    const lifted = new ContainedObservable<R>(undefined, this.streamName);
    lifted.source = this;
    lifted.operator = operator;
    return lifted;
  }

  // One signature for RxJS's overloads: an operator's own Subscriber passes through untouched.
  override subscribe(...args: unknown[]): Subscription {
    const [first, error, complete] = args;
    if (isSubscriberLike(first)) return super.subscribe(first);
    const callbacks: Callbacks<T> =
      typeof first === "function" || error !== undefined || complete !== undefined
        ? {
            next: first as ((value: T) => void) | undefined,
            error: error as ((error: unknown) => void) | undefined,
            complete: complete as (() => void) | undefined,
          }
        : (first as Callbacks<T>);
    return super.subscribe(guardedObserver(callbacks, this.streamName));
  }
}

/**
 * `source` as an RxJS `Observable` whose subscribers cannot crash the process: an error thrown by a
 * subscriber's `next`, `error` or `complete` (or an `error` the subscriber did not handle) goes to
 * RxJS's `config.onUnhandledError` if the app set one, else it is reported once per subscription
 * on the console; the subscriber stays subscribed and the agent goes on. `name` says which stream in
 * that report.
 *
 * @example
 * ```ts
 * const events$ = containObservable(subject, "agent.events$");
 * events$.subscribe(() => {
 *   throw new Error("a bug in a listener"); // reported once; the run and the process go on
 * });
 * ```
 */
export function containObservable<T>(source: Observable<T>, name: string): Observable<T> {
  return new ContainedObservable<T>((subscriber) => source.subscribe(subscriber), name);
}
