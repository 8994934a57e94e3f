// The CRDs' `pattern`s run as the API server runs them (Go's RE2: linear time, unanchored unless the
// pattern anchors itself), after the length checks. A backtracking engine took exponential time on the
// header value pattern: these tests would hang, not fail, if one came back.
import { RE2JS } from '@bufbuild/re2';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { KubeObject } from '@turnpike/api';
import { crdPatternFields, uncompilablePatterns, type CrdSchema } from '../src/schema/crd-schemas.js';
import { describeInvalidManifest, validateManifest } from '../src/schema/manifest-validation.js';
import { validateValue } from '../src/schema/openapi-validation.js';
import { compilePattern } from '../src/schema/patterns.js';

const HEADER_VALUE = '^[!-~]+([\\t ]?[!-~]+)*$';
const HANGING = `${'a'.repeat(40)} `;

function routeAddingHeader(value: string): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: 'apps' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [
        {
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'X-Tag', value }] } }],
          backendRefs: [{ name: 'web', port: 8080 }],
        },
      ],
    },
  };
}

const errorsOf = (o: KubeObject) => validateManifest(o).map((e) => `${e.path}: ${e.message}`);
const AT = 'spec.rules[0].filters[0].requestHeaderModifier.add[0].value';

describe('header values (the pattern that hung analyze -f)', () => {
  it('a 41-character value ending in a space is refused as a pattern mismatch, naming the object and field', () => {
    const route = routeAddingHeader(HANGING);
    expect(errorsOf(route)).toEqual([`${AT}: "${HANGING}" does not match ${HEADER_VALUE}`]);
    expect(describeInvalidManifest('route.yaml', route, validateManifest(route))).toBe(
      `route.yaml: HTTPRoute apps/web is invalid, as the API server would refuse it: ${AT}: ` +
        `"${HANGING}" does not match ${HEADER_VALUE}`,
    );
  });

  it('values with single spaces or tabs between visible characters pass', () => {
    expect(errorsOf(routeAddingHeader('a b\tc'))).toEqual([]);
    expect(errorsOf(routeAddingHeader(`${'a '.repeat(2047)}a`))).toEqual([]);
  });

  it('a value over maxLength is refused for its length alone: the pattern is not run on it', () => {
    const long = `${'a'.repeat(4096)} `;
    expect(errorsOf(routeAddingHeader(long))).toEqual([`${AT}: must be at most 4096 characters long (it is 4097)`]);
    expect(errorsOf(routeAddingHeader(''))).toEqual([`${AT}: must not be empty`]);
  });
});

describe('patterns mean what they mean to the API server (Go regexp.MatchString)', () => {
  const check = (pattern: string, value: string) => validateValue(value, { type: 'string', pattern }, 'f');

  it('unanchored unless the pattern anchors itself', () => {
    expect(check('b', 'abc')).toEqual([]);
    // The Gateway API's address type pattern anchors only its first and last alternatives.
    const addressType = crdPatternFields().find((f) => f.path.endsWith(' spec.addresses[*].type'))!;
    expect(validateValue('xIPAddressx', addressType.schema, 'type')).toEqual([]);
    expect(validateValue('xHostname', addressType.schema, 'type')).toEqual([
      { path: 'type', message: `"xHostname" does not match ${addressType.schema.pattern}` },
    ]);
  });

  it('$ is the end of the text, not before a final newline; . is any character but a newline', () => {
    expect(check('^[a-z]+$', 'abc\n')).toEqual([{ path: 'f', message: '"abc\\n" does not match ^[a-z]+$' }]);
    expect(check('^a.b$', 'a\rb')).toEqual([]);
    expect(check('^a.b$', 'a😀b')).toEqual([]);
    expect(check('^a.b$', 'a\nb')).toHaveLength(1);
  });

  it('a pattern RE2 cannot compile is named, with where it is, when the schemas load', () => {
    expect(() => compilePattern('a(?=b)')).toThrow(/^RE2 cannot compile the pattern "a\(\?=b\)": /);
    const kinds = {
      'example.com/Widget': {
        scope: 'Namespaced' as const,
        versions: { v1: { type: 'object', properties: { spec: { properties: { id: { pattern: '(?<!x)y' } } } } } },
      },
    } satisfies Record<string, { scope: 'Namespaced'; versions: Record<string, CrdSchema> }>;
    expect(uncompilablePatterns(kinds)).toEqual([
      expect.stringMatching(/^example\.com\/Widget v1 spec\.id: RE2 cannot compile the pattern "\(\?<!x\)y": /),
    ]);
  });
});

/** The printable ASCII characters, tab and one non-ASCII letter: what a class's members are drawn from. */
const UNIVERSE = ['\t', 'é', ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];
/** What ends an adversarial run: separators, controls, characters outside ASCII, or nothing. */
const BREAKERS = [' ', '  ', '\t', '\n', '\r', '\0', '!', '~', '-', '.', '/', ':', '%', '_', 'é', '😀', ''];

/** The pattern's own alphabets: the members of each bracket class, and its literal characters. */
function alphabets(pattern: string): string[][] {
  const classes = pattern.match(/\[(?:\\.|[^\]\\])*\]/g) ?? [];
  const members = classes.map((c) => {
    const one = RE2JS.compile(`^${c}$`);
    return UNIVERSE.filter((ch) => one.test(ch));
  });
  const rest = pattern.replace(/\[(?:\\.|[^\]\\])*\]/g, '');
  const literals = [...rest.replace(/\\(.)/g, '$1')].filter((ch) => !'^$|()*+?{},'.includes(ch));
  return [...members, [...new Set(literals)]].filter((a) => a.length > 0);
}

/**
 * Values made to stall a backtracking engine: a unit of 1–4 characters drawn from the pattern's own
 * classes, repeated to a length up to and past the field's maxLength (or 300 without one), then a
 * character that breaks the match.
 */
function adversarial(schema: CrdSchema & { pattern: string }): fc.Arbitrary<string> {
  const units = alphabets(schema.pattern).map((a) => fc.constantFrom(...a));
  const max = schema.maxLength ?? 300;
  const length = fc.oneof(
    fc.integer({ min: 0, max: 64 }),
    fc.integer({ min: Math.max(0, max - 2), max: max + 2 }),
    fc.integer({ min: 0, max: max + 2 }),
  );
  const unit = fc.array(fc.oneof(...units), { minLength: 1, maxLength: 4 }).map((u) => u.join(''));
  return fc
    .tuple(fc.oneof(fc.constant(''), unit), unit, length, fc.constantFrom(...BREAKERS))
    .map(([lead, u, n, end]) => lead + u.repeat(Math.ceil(n / u.length)).slice(0, n) + end);
}

const fieldsByKind = new Map<string, ReturnType<typeof crdPatternFields>>();
for (const field of crdPatternFields()) {
  const kind = field.path.split(' ').slice(0, 2).join(' ');
  fieldsByKind.set(kind, [...(fieldsByKind.get(kind) ?? []), field]);
}

describe('every pattern field of every CRD schema we carry answers adversarial values as RE2 does', () => {
  it('the fields are found in the schemas (20 distinct patterns on 445 fields in v1.7.0)', () => {
    const fields = crdPatternFields();
    expect(fields.length).toBeGreaterThan(400);
    expect(new Set(fields.map((f) => f.schema.pattern)).size).toBeGreaterThan(15);
    expect(fields.map((f) => f.path)).toContain(
      'gateway.networking.k8s.io/HTTPRoute v1 spec.rules[*].filters[*].requestHeaderModifier.add[*].value',
    );
  });

  it.each([...fieldsByKind.keys()])('%s', (kind) => {
    for (const { path, schema } of fieldsByKind.get(kind)!) {
      const oracle = RE2JS.compile(schema.pattern);
      fc.assert(
        fc.property(adversarial(schema), (value) => {
          const messages = validateValue(value, schema, path).map((e) => e.message);
          const length = [...value].length;
          const mismatch = `${JSON.stringify(value)} does not match ${schema.pattern}`;
          if (schema.maxLength !== undefined && length > schema.maxLength) {
            expect(messages).toContain(`must be at most ${schema.maxLength} characters long (it is ${length})`);
          } else if (schema.minLength !== undefined && length < schema.minLength) {
            expect(messages.some((m) => m === 'must not be empty' || m.startsWith('must be at least'))).toBe(true);
          } else if (!oracle.test(value)) {
            expect(messages).toContain(mismatch);
            return;
          }
          expect(messages).not.toContain(mismatch);
        }),
        { numRuns: 40 },
      );
    }
  });
});
