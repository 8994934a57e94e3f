// The store after any event of a log, fast: one pass keeps a snapshot every `every` events (the
// store is persistent, so checkpoints share what did not change), and a state in between applies at
// most `every - 1` events to the checkpoint before it. A log that grew (a running controller's) is
// extended from where the pass stopped. A recorded segment's log starts from its first checkpoint and,
// at a gap (pruned, paused, a restart), from the checkpoint after it. Translating is the expensive
// part and is left to the caller, who translates only the states it needs.
import { applyEvents, type ParsedLog } from '@turnpike/engine';
import type { Snapshot } from '@turnpike/translator';
import { checkpointStore, gapCheckpoints, storeBefore } from './log-state.js';

export class LogCheckpoints {
  private readonly checkpoints: Snapshot[] = [];
  private log: ParsedLog;
  /** Events applied so far, and the store after them. */
  private applied = 0;
  private tip: Snapshot;
  /** The store a gap's checkpoint puts in place before the event at each index. */
  private resets = new Map<number, Snapshot>();
  readonly base: Snapshot;

  /** `base` is the store before the log's first event (default: the log's first checkpoint, or empty). */
  constructor(
    log: ParsedLog,
    readonly every = 1000,
    base?: Snapshot,
  ) {
    this.log = log;
    this.base = base ?? storeBefore(log);
    this.tip = this.base;
    this.extend(log);
  }

  /** Takes in the events a longer copy of the same log has beyond those seen. */
  extend(log: ParsedLog): void {
    this.log = log;
    for (const [index, cp] of gapCheckpoints(log))
      if (!this.resets.has(index)) this.resets.set(index, checkpointStore(cp));
    const events = log.events;
    while (this.applied < events.length) {
      const reset = this.resets.get(this.applied);
      if (reset) this.tip = reset;
      if (this.applied % this.every === 0) this.checkpoints.push(this.tip);
      let end = Math.min(events.length, this.applied - (this.applied % this.every) + this.every);
      for (const index of this.resets.keys()) if (index > this.applied && index < end) end = index;
      this.tip = applyEvents(this.tip, events.slice(this.applied, end)).snapshot;
      this.applied = end;
    }
  }

  get length(): number {
    return this.log.events.length;
  }

  /** Where a walk must take the store from a gap's checkpoint before applying the event at `index`. */
  resetAt(index: number): Snapshot | undefined {
    return this.resets.get(index);
  }

  /** The store after the event at `index` (0-based); -1 is before the first event. */
  after(index: number): Snapshot {
    if (index < 0) return this.base;
    const last = Math.min(index, this.applied - 1);
    if (last === this.applied - 1) return this.tip;
    // The checkpoint at or before `last` (one at last + 1 may already hold a gap's store that comes after it).
    const k = Math.floor(last / this.every);
    let start = k * this.every;
    let from = this.checkpoints[k]!;
    for (const [r, snapshot] of this.resets) {
      if (r > start && r <= last) {
        start = r;
        from = snapshot;
      }
    }
    return applyEvents(from, this.log.events.slice(start, last + 1)).snapshot;
  }
}
