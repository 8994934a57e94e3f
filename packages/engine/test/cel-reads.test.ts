// The verdict remembered for a CEL node is keyed by the part of its value the rules read (cel-reads.ts).
// That is sound only if changing anything else never changes the verdict: for every node with rules in
// every CRD schema we carry, random values, the same values with every unread leaf changed, and with
// every unread field taken out, get the same verdict.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { schemaArbitrary } from '../../xds/test/schema-arbitrary.js';
import { evaluateRules, readsOf } from '../src/schema/cel-validation.js';
import { projected, ReadNeed } from '../src/schema/cel-reads.js';
import { allCrdSchemas, type CrdSchema } from '../src/schema/crd-schemas.js';

/** Every scalar changed (same type), every list and object kept in shape. */
function changedAll(v: unknown): unknown {
  if (typeof v === 'string') return `${v}~`;
  if (typeof v === 'number') return v + 1;
  if (typeof v === 'boolean') return !v;
  if (Array.isArray(v)) return v.map(changedAll);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, changedAll(x)]));
  return v;
}

/** The value with everything `need` says is not read changed. */
function changedUnread(v: unknown, need: ReadNeed): unknown {
  if (need.whole) return v;
  if (Array.isArray(v))
    return need.fields.size ? v : v.map((x) => (need.items ? changedUnread(x, need.items) : changedAll(x)));
  if (v && typeof v === 'object') {
    if (need.items) return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [
        k,
        need.fields.has(k) ? changedUnread(x, need.fields.get(k)!) : changedAll(x),
      ]),
    );
  }
  return need.fields.size || need.items ? v : changedAll(v);
}

/** The value with every field `need` says is not read taken out (presence is read where it matters). */
function withoutUnread(v: unknown, need: ReadNeed): unknown {
  if (need.whole) return v;
  if (Array.isArray(v)) return need.fields.size || !need.items ? v : v.map((x) => withoutUnread(x, need.items!));
  if (v && typeof v === 'object' && !need.items) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => need.fields.has(k))
        .map(([k, x]) => [k, withoutUnread(x, need.fields.get(k)!)]),
    );
  }
  return v;
}

function nodesWithRules(): { where: string; schema: CrdSchema }[] {
  const out: { where: string; schema: CrdSchema }[] = [];
  // A node repeated in another version of its CRD is checked once.
  const seen = new Set<string>();
  const walk = (s: CrdSchema | undefined, where: string) => {
    if (!s) return;
    if (s['x-kubernetes-validations']?.length) {
      const text = JSON.stringify(s);
      if (!seen.has(text)) out.push({ where, schema: s });
      seen.add(text);
    }
    for (const [k, child] of Object.entries(s.properties ?? {})) walk(child, `${where}.${k}`);
    walk(s.items, `${where}[]`);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${where}{}`);
  };
  allCrdSchemas().forEach((s, i) => walk(s, `#${i}`));
  return out;
}

describe('what CEL rules read', () => {
  const nodes = nodesWithRules();

  it('finds the nodes to check', () => {
    expect(nodes.length).toBeGreaterThan(30);
  });

  it('changing what a node rules do not read never changes the verdict', () => {
    let partial = 0;
    for (const { where, schema } of nodes) {
      const reads = readsOf(schema);
      if (!reads.whole) partial++;
      fc.assert(
        fc.property(schemaArbitrary(schema), (value) => {
          const verdict = evaluateRules(value, schema);
          expect([where, evaluateRules(changedUnread(value, reads), schema)]).toEqual([where, verdict]);
          expect([where, evaluateRules(withoutUnread(value, reads), schema)]).toEqual([where, verdict]);
        }),
        { numRuns: Number(process.env.FC_RUNS ?? 25) },
      );
    }
    // Not vacuous: most nodes' rules read part of their value only.
    expect(partial).toBeGreaterThan(nodes.length / 2);
  });

  it("a route's rule list is remembered by its shape: names, values and backends are not read", () => {
    const rules = nodes.find(
      (n) =>
        /validations/.test('') ||
        n.schema['x-kubernetes-validations']!.some((r) => r.rule.includes('self[0].matches.size()')),
    )!;
    const reads = readsOf(rules.schema);
    const rule = (name: string, header: string) => ({
      name,
      matches: [{ path: { type: 'PathPrefix', value: `/${name}` }, headers: [{ name: 'x', value: header }] }],
      backendRefs: [{ name: `svc-${name}`, port: 80 }],
    });
    const a = projected([rule('a', '1'), rule('b', '2')], reads);
    const b = projected([rule('a', '9'), rule('b', '8')], reads);
    const c = projected([rule('a', '1'), rule('a', '2')], reads);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    // Rule names must be unique: they are read.
    expect(JSON.stringify(c)).not.toBe(JSON.stringify(a));
  });

  it('a value used as a whole is read whole, and an unparsable rule reads everything', () => {
    const compared: CrdSchema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
      'x-kubernetes-validations': [{ rule: 'self.a == self.b' }],
    };
    const reads = readsOf(compared);
    expect(projected({ a: 'x', b: 'y', c: 'z' }, reads)).toEqual({ a: 'x', b: 'y' });
    const broken: CrdSchema = { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.(' }] };
    expect(projected({ a: 1 }, readsOf(broken))).toEqual({ a: 1 });
  });
});
