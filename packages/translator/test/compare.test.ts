// sortInPlace sorts short lists by insertion and long ones with V8's sort: either way the result is
// the list Array.prototype.sort gives (a stable sort), in the same array.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { sortInPlace } from '../src/compare.js';

interface Item {
  key: number;
  id: number;
}

const byKey = (a: Item, b: Item): number => a.key - b.key;

describe('sortInPlace', () => {
  it('orders as a stable sort does, in place, short lists and long', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 40 }), (keys) => {
        const list = keys.map((key, id) => ({ key, id }));
        const expected = [...list].sort(byKey);
        const sorted = sortInPlace(list, byKey);
        expect(sorted).toBe(list);
        expect(sorted.map((x) => x.id)).toEqual(expected.map((x) => x.id));
      }),
      { numRuns: 2000 },
    );
  });
});
