// Output lines of an event log, in order: a translation's hash may come later (the engine works it out
// once the sinks have pushed the output), so its line waits, after the events that arrive meanwhile,
// and the lines behind it wait for it. Shared by the one-file log and the flight recorder.
import type { OutputRecord } from './event-log.js';
import type { LaterHash } from './output-hash.js';

export class OrderedOutputs {
  private readonly waiting: { seq: number; read: () => string; hash?: string }[] = [];

  constructor(private readonly write: (record: OutputRecord) => void) {}

  add(seq: number, hash: string | LaterHash): void {
    if (typeof hash === 'string') {
      this.waiting.push({ seq, read: () => hash, hash });
      this.flush();
      return;
    }
    const line: (typeof this.waiting)[number] = { seq, read: hash.read };
    this.waiting.push(line);
    void hash.settled.then((h) => {
      line.hash = h;
      this.flush();
    });
  }

  /** Hashes not worked out yet are worked out now (the log is complete when closed). */
  settleAll(): void {
    for (const line of this.waiting) line.hash ??= line.read();
    this.flush();
  }

  private flush(): void {
    for (let next = this.waiting[0]; next?.hash !== undefined; next = this.waiting[0]) {
      this.waiting.shift();
      this.write({ type: 'output', seq: next.seq, hash: next.hash });
    }
  }
}
