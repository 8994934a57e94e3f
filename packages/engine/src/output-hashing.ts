// When the engine works out the hashes of its outputs: off the path from a change to the proxies. An
// output's hash waits HASH_LATER_MS (the push goes first), then is worked out in slices between other
// work. A burst of outputs (proxies connecting after a restart each report, and each report is an
// output) starts the slices at once; only a long queue is worked out in one go, since each queued output
// holds its result. Working out every hash once 16 wait would put a whole first hash (~0.13 s at 10k
// routes) in the middle of a cold start's first push.
import type { SchedulerLike, Subscription } from 'rxjs';
import { HASH_LATER_MS, type OutputHashSequence } from './output-hash.js';

/** Past this many unhashed outputs, hashing starts now rather than HASH_LATER_MS after the first. */
export const HASH_SOON_AFTER = 16;
/** Past this many, they are all worked out before the engine goes on. */
export const MAX_UNHASHED = 256;
/** How long one slice of hashing may hold the event loop. */
const HASH_SLICE_MS = 4;

export class OutputHashing {
  private pending: Subscription | undefined;
  private soon = false;

  /** `idle`: more work for the same slices once the hashes are done (true while some is left). */
  constructor(
    private readonly hashes: OutputHashSequence,
    private readonly scheduler: SchedulerLike,
    private readonly idle: (deadline: number) => boolean = () => false,
  ) {}

  /** Called after each output is queued in the sequence. */
  queued(): void {
    const size = this.hashes.size;
    if (size >= MAX_UNHASHED) this.hashes.settle();
    else if (size >= HASH_SOON_AFTER && !this.soon) this.schedule(0);
    else if (!this.pending) this.schedule(HASH_LATER_MS);
  }

  private schedule(delay: number): void {
    this.pending?.unsubscribe();
    this.soon = delay === 0;
    this.pending = this.scheduler.schedule(() => this.slice(), delay);
  }

  private slice(): void {
    const deadline = performance.now() + HASH_SLICE_MS;
    this.pending = undefined;
    if (this.hashes.work(deadline) || this.idle(deadline)) this.schedule(0);
    else this.soon = false;
  }
}
