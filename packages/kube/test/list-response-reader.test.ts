// The streaming list reader must give exactly what JSON.parse of the whole response gives, wherever the
// chunks are cut, and must refuse what is not a whole list.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ListResponseError, ListResponseReader } from '../src/list-response-reader.js';

function read(chunks: Buffer[]): { items: unknown[]; envelope: unknown } {
  const items: unknown[] = [];
  const reader = new ListResponseReader((item) => items.push(item));
  for (const c of chunks) reader.push(c);
  return { items, envelope: reader.end() };
}

function cut(bytes: Buffer, at: number[]): Buffer[] {
  const points = [...new Set(at.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  return chunks;
}

// Strings that test the scanner: quotes, backslashes, brackets, the word items, any code point (so a
// multi-byte UTF-8 character can be cut between chunks).
const tricky = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'"\\{}[]:,items \n\u00e9\u2028'), maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('items', '"items":[', '\\', '\\"', '}]', 'ü🚀'),
);
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tricky,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const item = fc.dictionary(tricky, value, { maxKeys: 5 });
const list = fc.record(
  {
    kind: fc.constant('ServiceList'),
    metadata: fc.record({ resourceVersion: fc.string(), continue: fc.string(), items: value }),
    // An array under another key, before the items.
    before: fc.array(value, { maxLength: 3 }),
    items: fc.array(item, { maxLength: 8 }),
    extra: value,
  },
  { requiredKeys: ['items'] },
);

describe('ListResponseReader', () => {
  it('gives each item and the envelope as JSON.parse of the whole would, however the bytes are cut', () => {
    fc.assert(
      fc.property(
        list,
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        (l, pretty, at, bytewise) => {
          const bytes = Buffer.from(`${JSON.stringify(l, undefined, pretty ? 2 : undefined)}\n`);
          const chunks = bytewise ? [...bytes].map((b) => Buffer.from([b])) : cut(bytes, at);
          const whole = JSON.parse(bytes.toString('utf8')) as { items: unknown[] };
          expect(read(chunks)).toEqual({ items: whole.items, envelope: { ...whole, items: [] } });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses every truncated response', () => {
    fc.assert(
      fc.property(list, fc.nat(), (l, at) => {
        const text = JSON.stringify(l);
        const bytes = Buffer.from(text).subarray(0, at % Buffer.byteLength(text));
        expect(() => read([bytes])).toThrow(ListResponseError);
      }),
      { numRuns: 1000 },
    );
  });

  it('names the item that is not an object or not JSON', () => {
    const refuse = (text: string) => () => read([Buffer.from(text)]);
    expect(refuse('{"items":[{"a":1},2]}')).toThrow('list response item 1 is not an object');
    expect(refuse('{"items":["a"]}')).toThrow('list response item 0 is not an object');
    expect(refuse('{"items":[{}, []]}')).toThrow('list response item 1 is not an object');
    expect(refuse('{"items":[{"a":}]}')).toThrow(/list response item 0 is not JSON/);
    expect(refuse('{"items":[]}}')).toThrow('a bracket closes what was never opened');
    expect(refuse('{"kind":x,"items":[]}')).toThrow(/list response is not JSON/);
    expect(read([Buffer.from('{"metadata":{"resourceVersion":"7"}}')])).toEqual({
      items: [],
      envelope: { metadata: { resourceVersion: '7' } },
    });
  });
});
