// Kubernetes quantities as apimachinery reads them: binary and decimal suffixes, exponents, fractions.
import { describe, expect, it } from '@jest/globals';
import { quantityValue } from '../src/quantity.js';

describe('quantityValue', () => {
  it('reads every suffix form', () => {
    const cases: [string, number][] = [
      ['128974848', 128_974_848],
      ['129e6', 129_000_000],
      ['129M', 129_000_000],
      ['123Mi', 123 * 2 ** 20],
      ['1Gi', 2 ** 30],
      ['1.5Gi', 1.5 * 2 ** 30],
      ['0.5', 0.5],
      ['2E', 2e18],
      ['1E3', 1000],
      ['500m', 0.5],
      ['1k', 1000],
      ['1Ki', 1024],
    ];
    for (const [q, want] of cases) expect([q, quantityValue(q)]).toEqual([q, want]);
  });

  it('refuses what is not a quantity', () => {
    for (const q of ['', 'Gi', '1 Gi', '1GB', '1KiB', 'lots', '1.2.3'])
      expect([q, quantityValue(q)]).toEqual([q, undefined]);
  });
});
