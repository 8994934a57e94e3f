// The store after any event of a log, fast: one pass keeps a snapshot every `every` events (the
// store is persistent, so checkpoints share what did not change), and a state in between applies at
// most `every - 1` events to the checkpoint before it. A log that grew (a running controller's) is
// extended from where the pass stopped. Translating is the expensive part and is left to the caller,
// who translates only the states it needs.
import { applyEvents, EMPTY_SNAPSHOT, type ParsedLog } from '@turnpike/engine';
import type { Snapshot } from '@turnpike/translator';

export class LogCheckpoints {
  private readonly checkpoints: Snapshot[] = [];
  private log: ParsedLog;
  /** Events applied so far, and the store after them. */
  private applied = 0;
  private tip: Snapshot;

  /** `base` is the store before the log's first event (a log that starts mid-run). */
  constructor(
    log: ParsedLog,
    readonly every = 1000,
    readonly base: Snapshot = EMPTY_SNAPSHOT,
  ) {
    this.log = log;
    this.tip = base;
    this.extend(log);
  }

  /** Takes in the events a longer copy of the same log has beyond those seen. */
  extend(log: ParsedLog): void {
    this.log = log;
    const events = log.events;
    while (this.applied < events.length) {
      if (this.applied % this.every === 0) this.checkpoints.push(this.tip);
      const end = Math.min(events.length, this.applied - (this.applied % this.every) + this.every);
      this.tip = applyEvents(this.tip, events.slice(this.applied, end)).snapshot;
      this.applied = end;
    }
  }

  get length(): number {
    return this.log.events.length;
  }

  /** The store after the event at `index` (0-based); -1 is before the first event. */
  after(index: number): Snapshot {
    if (index < 0) return this.base;
    const last = Math.min(index, this.applied - 1);
    if (last === this.applied - 1) return this.tip;
    const k = Math.floor((last + 1) / this.every);
    const start = k * this.every;
    return applyEvents(this.checkpoints[k]!, this.log.events.slice(start, last + 1)).snapshot;
  }
}
