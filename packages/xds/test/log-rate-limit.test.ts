// The refusal log's rate limit: a burst, then a steady rate per key; what is held back is said on the
// next line that goes out.
import { describe, expect, it } from '@jest/globals';
import { LogRateLimit } from '../src/log-rate-limit.js';

describe('LogRateLimit', () => {
  it('lets a burst through, holds back the rest, and counts them on the next line after a refill', () => {
    let now = 0;
    const limit = new LogRateLimit({ burst: 3, perMinute: 6, now: () => now });
    const taken = Array.from({ length: 5 }, () => limit.take('a'));
    expect(taken.map((t) => t?.suppressed)).toEqual([0, 0, 0, undefined, undefined]);
    // Another key has its own bucket.
    expect(limit.take('b')).toEqual({ suppressed: 0 });
    // 6 a minute: one token every 10 s.
    now = 9_000;
    expect(limit.take('a')).toBeUndefined();
    now = 20_000;
    expect(limit.take('a')).toEqual({ suppressed: 3 });
    expect(limit.take('a')).toEqual({ suppressed: 0 });
    expect(limit.take('a')).toBeUndefined();
  });
});
