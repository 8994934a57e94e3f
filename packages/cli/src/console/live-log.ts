// The running controller's own event log, in memory, for its console: every event and translation
// since start, up to `maxEvents`; beyond that the oldest half is folded into a base snapshot, so memory
// stays bounded and the states after the kept events stay exact.
import {
  applyEvents,
  EMPTY_SNAPSHOT,
  type LaterHash,
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
  /** `hash` may come later (the engine works it out after the sinks have run), or be read when needed. */
  output(seq: number, hash: string | LaterHash): void;
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

  /** Outputs whose hash is still to come: read at once if the log is viewed before it does. */
  private readonly later = new Set<{ record: OutputRecord; read: () => string }>();

  output(seq: number, hash: string | LaterHash): void {
    const record: OutputRecord = { type: 'output', seq, hash: typeof hash === 'string' ? hash : '' };
    this.outputs.push(record);
    if (typeof hash === 'string') return;
    const waiting = { record, read: hash.read };
    this.later.add(waiting);
    void hash.settled.then((h) => {
      record.hash = h;
      this.later.delete(waiting);
    });
  }

  close(): void {
    // Nothing to release: the console reads it until the process ends.
  }

  /** A view for the console; the arrays are copied so a request sees one consistent moment. */
  log(): ParsedLog {
    for (const { record, read } of this.later) record.hash = read();
    this.later.clear();
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
