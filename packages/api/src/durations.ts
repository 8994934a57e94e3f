// Gateway API durations ("1h2m3s4ms": one to four number-unit pairs, as GEP-2257 defines them).
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Milliseconds of a Gateway API duration, or undefined when it is not one. */
export function durationMs(d: string): number | undefined {
  if (!DURATION.test(d)) return undefined;
  let ms = 0;
  for (const [, n, unit] of d.matchAll(/(\d+)(h|ms|m|s)/g)) ms += Number(n) * UNIT_MS[unit as string]!;
  return ms;
}
