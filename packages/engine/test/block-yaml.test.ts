// The block subset reader must give exactly what js-yaml's core schema gives, or leave the text to
// js-yaml: never a different value, and never a value for text js-yaml refuses.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import jsyaml from 'js-yaml';
import { parseBlockYaml } from '../src/block-yaml.js';

/** js-yaml's documents less empty ones, or 'refused' when it throws. */
function reference(text: string): unknown[] | 'refused' {
  try {
    return jsyaml.loadAll(text, undefined, { schema: jsyaml.CORE_SCHEMA }).filter((d) => d !== null && d !== undefined);
  } catch {
    return 'refused';
  }
}

/** Checks one text and says whether the subset reader took it. */
function agrees(text: string): boolean {
  const fast = parseBlockYaml(text);
  if (fast === undefined) return false;
  expect({ text, value: fast }).toEqual({ text, value: reference(text) });
  return true;
}

// Characters that mean something somewhere in YAML, and some that do not.
const SCALAR_CHARS = [...' :#-?,[]{}&*!|>\'"%@`\\./_+~0123456789abeEflnorstuxyNTFé\t\r\u00a0\u2028'];
const scalarText = fc.oneof(
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...SCALAR_CHARS), maxLength: 8 }) },
  fc.constantFrom('web', 'gateway.networking.k8s.io/v1', '/api/v1', 'http://x:80/a#b', 'a b', '10.0.0.1', 'v1.2'),
);
const PLAIN_KEYS = ['name', 'a.b/c', 'x-y', '_', 'on', 'y', 'kind', 'spec'];
const KEYS = [...PLAIN_KEYS, 'null', 'True', '__proto__', '8080', 'a b', 'k:', '-k', '.k'];
const key = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...PLAIN_KEYS) }, fc.constantFrom(...KEYS));

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarText,
    fc.constantFrom(null, true, false, 0, -1, 1.5, 1e21, 0.1, Infinity, Number.NaN),
    fc.integer(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof({ weight: 4, arbitrary: key }, scalarText), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** js-yaml's own writing of a value, in one of the styles people and tools write. */
const dumped = fc
  .record({
    v: fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }),
    indent: fc.constantFrom(2, 4),
    noArrayIndent: fc.boolean(),
    quotingType: fc.constantFrom<"'" | '"'>("'", '"'),
    forceQuotes: fc.boolean(),
    lineWidth: fc.constantFrom(-1, 12),
    flowLevel: fc.constantFrom(-1, 2),
  })
  .map(({ v, ...options }) => jsyaml.dump(v, options));

// Lines as people write them, right or wrong: indentation, entries, keys, values of every form,
// comments, markers.
const line = fc
  .tuple(
    fc.constantFrom('', '  ', '    ', ' ', '   ', '      '),
    fc.constantFrom('', '- ', '-  ', '- - ', '-'),
    fc.option(key, { nil: undefined }),
    fc.option(
      fc.oneof(
        scalarText,
        scalarText.map((s) => `'${s}'`),
        scalarText.map((s) => `"${s}"`),
        fc.constantFrom('[]', '{}', '[a]', '|', '>-', '&a x', '*a', '!!str 1', '# note', '0x1F', '0o17', '.inf', '~'),
      ),
      { nil: undefined },
    ),
    fc.constantFrom('', ' # c', '  ', '#c'),
  )
  .map(
    ([indent, dash, key, val, tail]) =>
      `${indent}${dash}${key === undefined ? '' : `${key}:`}${val === undefined ? '' : `${key === undefined ? '' : ' '}${val}`}${tail}`,
  );
const written = fc
  .array(
    fc.oneof({ weight: 8, arbitrary: line }, fc.constantFrom('---', '--- # d', '...', '', '# only', '%YAML 1.2')),
    {
      minLength: 1,
      maxLength: 12,
    },
  )
  .map((lines) => lines.join('\n'));

/** Checks every text `texts` makes; says how many the subset reader took. */
function takenOf(texts: fc.Arbitrary<string>, numRuns: number): number {
  let taken = 0;
  fc.assert(
    fc.property(texts, (text) => {
      if (agrees(text)) taken++;
    }),
    { numRuns },
  );
  return taken;
}

describe('block YAML subset', () => {
  it('reads what js-yaml writes exactly as js-yaml reads it, or leaves it to js-yaml', () => {
    // Not a test of nothing: a good part is within the subset (flow collections and folded lines, which
    // some of the styles make, are not).
    expect(takenOf(dumped, 3000)).toBeGreaterThan(500);
  });

  it('on text written by hand, right or wrong, it never disagrees with js-yaml nor takes what js-yaml refuses', () => {
    expect(takenOf(written, 20000)).toBeGreaterThan(500);
  });

  it('takes the shapes manifests are written in', () => {
    const manifest = `# a Service and its route
apiVersion: v1
kind: Service
metadata:
  name: web   # trailing comment
  labels: {}
  annotations:
    note: "a \\"quoted\\" note: with a colon"
    other: 'it''s'
spec:
  ports:
  - name: http
    port: 8080
    targetPort: 0x1F
  - port: .inf
  selector:
    app: web
---
--- # an empty document
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
`;
    expect(parseBlockYaml(manifest)).toBeUndefined(); // a flow mapping: js-yaml's
    const block = manifest.replace(
      'metadata: {name: r}',
      'metadata:\n  name: r\n  empty:\n  list: []\nspec:\n  -\n  - ~',
    );
    expect(agrees(block)).toBe(true);
    const [service] = parseBlockYaml(block) as [Record<string, Record<string, unknown>>];
    expect(service.spec!.ports).toEqual([{ name: 'http', port: 8080, targetPort: 31 }, { port: Infinity }]);
  });

  it('leaves to js-yaml what it does not read, whether or not js-yaml accepts it', () => {
    for (const text of [
      'a: 1\r\nb: 2\r\n', // carriage returns
      'a:\tb', // a tab
      'a: |\n  text\n', // a block scalar
      'a: long\n  continued\n', // a plain scalar over two lines
      "a: 'two\n  lines'\n",
      'a: &x 1\nb: *x\n',
      '"quoted key": 1\n',
      'a: "\\x41"\n', // an escape JSON does not have
      'a: b: c\n', // refused by js-yaml
      'a: 1\na: 2\n', // a duplicate key, refused
      '...\n',
      '\uFEFFa: 1\n',
    ])
      expect([text, parseBlockYaml(text)]).toEqual([text, undefined]);
  });
});
