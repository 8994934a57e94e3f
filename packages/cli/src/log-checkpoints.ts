// The store after any event of a log, fast: one pass keeps a snapshot every `every` events (the
// store is persistent, so checkpoints share what did not change), and a state in between applies at
// most `every - 1` events to the checkpoint before it. Translating is the expensive part and is left
// to the caller, who translates only the states it needs.
import { applyEvents, EMPTY_SNAPSHOT, type ParsedLog } from '@turnpike/engine';
import type { Snapshot } from '@turnpike/translator';

export class LogCheckpoints {
  private readonly checkpoints: Snapshot[] = [];

  constructor(
    readonly log: ParsedLog,
    readonly every = 1000,
  ) {
    let snapshot = EMPTY_SNAPSHOT;
    for (let start = 0; start < log.events.length; start += every) {
      this.checkpoints.push(snapshot);
      snapshot = applyEvents(snapshot, log.events.slice(start, start + every)).snapshot;
    }
  }

  get length(): number {
    return this.log.events.length;
  }

  /** The store after the event at `index` (0-based); -1 is before the first event. */
  after(index: number): Snapshot {
    if (index < 0) return EMPTY_SNAPSHOT;
    const last = Math.min(index, this.log.events.length - 1);
    const base = Math.floor((last + 1) / this.every);
    const from = this.checkpoints[base] ?? this.checkpoints[this.checkpoints.length - 1]!;
    const start = Math.min(base, this.checkpoints.length - 1) * this.every;
    return applyEvents(from, this.log.events.slice(start, last + 1)).snapshot;
  }
}
