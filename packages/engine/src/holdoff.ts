// The holdoff operator: coalesces a burst of changes into one emission. It emits after a quiet
// period with no new change, but never later than `maxDelay` after the first pending change, so
// a never-ending trickle still yields an emission every `maxDelay`. Nothing is emitted until
// `ready` has fired (every source listed once); changes pending then are flushed at once.
// (debounceTime starves under churn and auditTime fires mid-burst; this does neither.)
// With `leading`, a change that finds the stream idle (nothing pending, nothing emitted for
// LEADING_GAP_MS) is emitted at once, after the current turn of the event loop so what arrives with
// it comes along: an edit on a quiet cluster does not wait out a quiet period. Changes that follow
// closer than that coalesce as above. (The gap is short on purpose: the proxies' acknowledgements of
// the previous push come back as events a few ms later, and must not make the next edit wait.)
import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

export interface HoldoffOptions {
  quietMs: number;
  maxDelayMs: number;
  /** Emits (once is enough) when the gate opens. Default: open from the start. */
  ready?: Observable<unknown>;
  /** Emit a change that finds the stream idle at once (see above). Default: false. */
  leading?: boolean;
  /**
   * The quiet period to wait now, at most `quietMs` (adaptive: a consumer whose work is cheap need
   * not wait long for a burst to end). Default: always `quietMs`.
   */
  quietNow?: () => number;
  /**
   * The longest a change waits now, at most `maxDelayMs` (adaptive: under a never-ending trickle
   * of cheap changes, emit every few ms rather than every `maxDelayMs`). Default: `maxDelayMs`.
   */
  maxDelayNow?: () => number;
  scheduler?: SchedulerLike;
}

export const DEFAULT_QUIET_MS = 100;
/** With `leading`: how long after an emission a change counts as the start of a new burst. */
export const LEADING_GAP_MS = 20;
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
          // Behind a closed gate nothing is emitted before it opens, and it flushes then: no timer to
          // arm (re-arming one per event cost 0.1 s of a 50 000-object initial listing).
          if (!open) {
            pending = true;
            return;
          }
          if (leadingTimer) return; // goes out with the change that opened this turn
          const idle = !pending && scheduler.now() - lastEmission >= Math.min(opts.quietMs, LEADING_GAP_MS);
          pending = true;
          if (opts.leading && open && idle) {
            leadingTimer = scheduler.schedule(flush, 0);
            return;
          }
          quietTimer?.unsubscribe();
          quietTimer = scheduler.schedule(flush, Math.min(opts.quietMs, opts.quietNow?.() ?? opts.quietMs));
          if (!maxTimer)
            maxTimer = scheduler.schedule(flush, Math.min(opts.maxDelayMs, opts.maxDelayNow?.() ?? opts.maxDelayMs));
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
