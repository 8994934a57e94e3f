// The holdoff operator: coalesces a burst of changes into one emission. It emits after a quiet
// period with no new change, but never later than `maxDelay` after the first pending change, so
// a never-ending trickle still yields an emission every `maxDelay`. Nothing is emitted until
// `ready` has fired (every source listed once); changes pending then are flushed at once.
// (debounceTime starves under churn and auditTime fires mid-burst; this does neither.)
// With `leading`, a change that finds the stream idle (nothing pending, nothing emitted for
// `quietMs`) is emitted at once, after the current turn of the event loop so what arrives with it
// comes along: an edit on a quiet cluster does not wait out a quiet period. Changes that follow
// within `quietMs` coalesce as above.
import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

export interface HoldoffOptions {
  quietMs: number;
  maxDelayMs: number;
  /** Emits (once is enough) when the gate opens. Default: open from the start. */
  ready?: Observable<unknown>;
  /** Emit a change that finds the stream idle at once (see above). Default: false. */
  leading?: boolean;
  scheduler?: SchedulerLike;
}

export const DEFAULT_QUIET_MS = 100;
export const DEFAULT_MAX_DELAY_MS = 500;

export function holdoff<T>(opts: HoldoffOptions): OperatorFunction<T, T> {
  const scheduler = opts.scheduler ?? asyncScheduler;
  return (source) =>
    new Observable<T>((subscriber) => {
      let open = !opts.ready;
      let pending = false;
      let latest: T | undefined;
      let quietTimer: Subscription | undefined;
      let maxTimer: Subscription | undefined;
      let leadingTimer: Subscription | undefined;
      let lastEmission = Number.NEGATIVE_INFINITY;

      const clearTimers = () => {
        quietTimer?.unsubscribe();
        maxTimer?.unsubscribe();
        leadingTimer?.unsubscribe();
        quietTimer = maxTimer = leadingTimer = undefined;
      };
      const flush = () => {
        if (!pending) return;
        if (!open) {
          clearTimers(); // keep the change pending until the gate opens
          return;
        }
        pending = false;
        clearTimers();
        lastEmission = scheduler.now();
        subscriber.next(latest as T);
      };

      const sub = source.subscribe({
        next: (v) => {
          latest = v;
          if (leadingTimer) return; // goes out with the change that opened this turn
          const idle = !pending && scheduler.now() - lastEmission >= opts.quietMs;
          pending = true;
          if (opts.leading && open && idle) {
            leadingTimer = scheduler.schedule(flush, 0);
            return;
          }
          quietTimer?.unsubscribe();
          quietTimer = scheduler.schedule(flush, opts.quietMs);
          if (!maxTimer) maxTimer = scheduler.schedule(flush, opts.maxDelayMs);
        },
        error: (e) => subscriber.error(e),
        complete: () => {
          if (open) flush();
          subscriber.complete();
        },
      });

      // Subscribed after the source, so a change that arrives with the gate's signal is
      // flushed in the same emission.
      const gate = opts.ready?.subscribe({
        next: () => {
          if (open) return;
          open = true;
          flush();
        },
        error: (e) => subscriber.error(e),
      });

      return () => {
        clearTimers();
        sub.unsubscribe();
        gate?.unsubscribe();
      };
    });
}
