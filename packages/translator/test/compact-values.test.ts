// flat and fitted change how a value is stored, never what it is.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { fitted, flat } from '../src/compact-values.js';

describe('compact values', () => {
  it('flat returns the same string, built from any pieces (empty ones too)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 12 }), (pieces) => {
        let rope = '';
        for (const piece of pieces) rope = `${rope}${piece}`;
        expect(flat(rope)).toBe(pieces.join(''));
      }),
    );
  });

  it('fitted holds the same elements in the same order, and leaves the list it was given alone', () => {
    fc.assert(
      fc.property(fc.array(fc.anything(), { maxLength: 40 }), (items) => {
        const built: unknown[] = [];
        for (const item of items) built.push(item);
        const result = fitted(built);
        expect(result).toEqual(items);
        expect(result.length).toBe(items.length);
        expect(built).toEqual(items);
      }),
    );
  });
});
