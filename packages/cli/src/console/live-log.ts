// The running controller's own event log, in memory, for its console: every event and translation
// since start, up to `maxEvents`; beyond that the oldest half is folded into a base snapshot, so memory
// stays bounded and the states after the kept events stay exact.
import {
  applyEvents,
  EMPTY_SNAPSHOT,
  HASH_LATER_MS,
  LOG_FORMAT,
  LOG_VERSION,
  type LogHeader,
  type OutputRecord,
  type ParsedLog,
  type WatchEvent,
} from '@turnpike/engine';
import type { Snapshot } from '@turnpike/translator';

/** What the controller records into (an event log file, this, or both). */
export interface EventRecorder {
  event(e: WatchEvent): void;
  /** `hash` may be a function: the hash is then read when first needed (after the sinks have run). */
  output(seq: number, hash: string | (() => string)): void;
  close(): void;
}

export class LiveLog implements EventRecorder {
  private readonly events: WatchEvent[] = [];
  private outputs: OutputRecord[] = [];
  private readonly header: LogHeader;
  /** The store before the first kept event. */
  base: Snapshot = EMPTY_SNAPSHOT;

  constructor(
    header: Omit<LogHeader, 'format' | 'version'>,
    private readonly maxEvents = 200_000,
  ) {
    this.header = { format: LOG_FORMAT, version: LOG_VERSION, ...header };
  }

  event(e: WatchEvent): void {
    this.events.push(e);
    if (this.events.length <= this.maxEvents) return;
    const dropped = this.events.splice(0, Math.floor(this.maxEvents / 2));
    this.base = applyEvents(this.base, dropped).snapshot;
    const first = this.events[0]!.seq;
    this.outputs = this.outputs.filter((o) => o.seq >= first);
  }

  /** Outputs whose hash is to be read later: read a moment after (HASH_LATER_MS) or when the log is viewed. */
  private later: { record: OutputRecord; hash: () => string }[] = [];

  private readLater(): void {
    for (const { record, hash } of this.later) record.hash = hash();
    this.later = [];
  }

  output(seq: number, hash: string | (() => string)): void {
    const record: OutputRecord = { type: 'output', seq, hash: typeof hash === 'string' ? hash : '' };
    this.outputs.push(record);
    if (typeof hash === 'string') return;
    this.later.push({ record, hash });
    if (this.later.length === 1) setTimeout(() => this.readLater(), HASH_LATER_MS).unref();
  }

  close(): void {
    // Nothing to release: the console reads it until the process ends.
  }

  /** A view for the console; the arrays are copied so a request sees one consistent moment. */
  log(): ParsedLog {
    this.readLater();
    return { header: this.header, events: [...this.events], outputs: [...this.outputs] };
  }
}

/** Records into each of `recorders`. */
export function teeRecorder(...recorders: (EventRecorder | undefined)[]): EventRecorder | undefined {
  const all = recorders.filter((r): r is EventRecorder => r !== undefined);
  if (all.length <= 1) return all[0];
  return {
    event: (e) => all.forEach((r) => r.event(e)),
    output: (seq, hash) => all.forEach((r) => r.output(seq, hash)),
    close: () => all.forEach((r) => r.close()),
  };
}
