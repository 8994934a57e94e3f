// The dependency index answers as a plain model of it would, whatever the order of records, drops,
// partial indexing in idle time and questions: the reverse side is built late, never wrong.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DependencyIndex, PieceDependencies } from '../src/incremental/dependency-index.js';

const KEYS = ['a', 'b', 'c', 'd', 'e'];
const PIECES = ['p1', 'p2', 'p3', 'p4'];

type Step =
  | { op: 'record'; piece: string; keys: string[] }
  | { op: 'drop'; piece: string }
  | { op: 'index'; budget: number }
  | { op: 'ask'; keys: string[] };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    op: fc.constant('record' as const),
    piece: fc.constantFrom(...PIECES),
    keys: fc.subarray(KEYS),
  }),
  fc.record({ op: fc.constant('drop' as const), piece: fc.constantFrom(...PIECES) }),
  fc.record({ op: fc.constant('index' as const), budget: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant('ask' as const), keys: fc.subarray(KEYS) }),
);

describe('DependencyIndex', () => {
  it('answers as a model does, through late and partial indexing', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const index = new DependencyIndex();
        const model = new Map<string, Set<string>>();
        for (const s of steps) {
          if (s.op === 'record') {
            index.record(s.piece, new Set(s.keys));
            model.set(s.piece, new Set(s.keys));
          } else if (s.op === 'drop') {
            index.drop(s.piece);
            model.delete(s.piece);
          } else if (s.op === 'index') {
            // A deadline already past indexes at most a slice; an infinite one everything.
            index.index(s.budget === 0 ? 0 : s.budget === 1 ? performance.now() : undefined);
          } else {
            const expected = [...model].filter(([, keys]) => s.keys.some((k) => keys.has(k))).map(([p]) => p);
            expect([...index.dependentsOf(new Set(s.keys))].sort()).toEqual(expected.sort());
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('indexes in slices: a past deadline leaves pieces for later, and says so', () => {
    const index = new DependencyIndex();
    for (let i = 0; i < 1000; i++) index.record(`p${i}`, new Set([`k${i % 10}`]));
    expect(index.index(0)).toBe(true);
    expect(index.index()).toBe(false);
    expect(index.dependentsOf(new Set(['k3'])).size).toBe(100);
  });

  it('keeps each stage to its own pieces', () => {
    const pieces = new PieceDependencies();
    pieces.record('route:', 'ns/a', new Set(['Service/ns/s']));
    pieces.record('assembly:', 'ns/gw', new Set(['Service/ns/s']));
    expect([...pieces.dependentsOf('route:', new Set(['Service/ns/s']))]).toEqual(['ns/a']);
    expect(pieces.index(0)).toBe(false);
    pieces.drop('route:', 'ns/a');
    expect([...pieces.dependentsOf('route:', new Set(['Service/ns/s']))]).toEqual([]);
    expect([...pieces.dependentsOf('assembly:', new Set(['Service/ns/s']))]).toEqual(['ns/gw']);
  });
});
