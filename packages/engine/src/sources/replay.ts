// A recorded event log as a source: each event is emitted at its recorded time on the given
// scheduler (a VirtualTimeScheduler for replay), keeping its recorded seq and stamp.
import { Observable, type SchedulerLike } from 'rxjs';
import type { WatchEvent } from '../events.js';

export function replaySource(
  events: readonly WatchEvent[],
  scheduler: SchedulerLike,
  startMs: number,
): Observable<WatchEvent> {
  return new Observable<WatchEvent>((subscriber) => {
    const subs = events.map((e) =>
      scheduler.schedule(() => subscriber.next(e), Math.max(0, Date.parse(e.at) - startMs)),
    );
    const last = events.length ? Math.max(0, Date.parse(events[events.length - 1]!.at) - startMs) : 0;
    const done = scheduler.schedule(() => subscriber.complete(), last + 1);
    return () => {
      for (const s of subs) s.unsubscribe();
      done.unsubscribe();
    };
  });
}
