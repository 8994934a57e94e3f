// Bounds how many lines one kind of event writes to the log: an attacker opening thousands of
// refused streams a second must not turn the controller's log (and whatever ships it) into the
// attack's amplifier. Per key a token bucket: `burst` lines at once, then `perMinute`; what is held
// back is counted and said on the next line that goes out, so nothing is silently lost.
export interface LogRateLimitOptions {
  burst?: number;
  perMinute?: number;
  /** Milliseconds; injected by tests. */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
  suppressed: number;
}

export class LogRateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private readonly burst: number;
  private readonly perMs: number;
  private readonly now: () => number;

  constructor(opts: LogRateLimitOptions = {}) {
    this.burst = opts.burst ?? 10;
    this.perMs = (opts.perMinute ?? 10) / 60_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Whether a line of `key` may be written now; if so, how many were held back since the last one
   * (to be said on it). `undefined`: hold it back (it is counted).
   */
  take(key: string): { suppressed: number } | undefined {
    const now = this.now();
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { tokens: this.burst, at: now, suppressed: 0 }));
    b.tokens = Math.min(this.burst, b.tokens + (now - b.at) * this.perMs);
    b.at = now;
    if (b.tokens < 1) {
      b.suppressed++;
      return undefined;
    }
    b.tokens--;
    const suppressed = b.suppressed;
    b.suppressed = 0;
    // A full bucket with nothing held back says nothing new: forget it, so keys do not accumulate.
    if (b.tokens >= this.burst - 1 && suppressed === 0 && this.buckets.size > 1000) this.buckets.delete(key);
    return { suppressed };
  }
}
