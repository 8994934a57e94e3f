// The project's own translator fixtures, one directory per rule family under
// packages/translator/test/fixtures: input.yaml goes through `turnpike translate` (the offline
// path), and every status, every listener served and every rule's answer must be exactly what
// expected.yaml states. Each expected.yaml was written from the spec rule it exercises and reviewed
// case by case. They exercise the translator's own rules, so they are translated without the API
// server's schema checks (--validate ignore): those rules must hold for objects the schema would refuse
// too, such as objects stored before a CRD upgrade tightened a rule. With FIXTURES_SHOW=1 the test prints what it observed (to write a new fixture).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { parse, stringify } from 'yaml';
import { GATEWAY_API_REASONS, TURNPIKE_REASONS } from '@turnpike/translator';
import { translatePaths } from '../src/offline.js';
import { observe, type Observed } from './fixture-format.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../translator/test/fixtures');
const cases = readdirSync(root)
  .filter((d) => existsSync(join(root, d, 'input.yaml')))
  .sort();

interface Expected extends Partial<Omit<Observed, 'messages'>> {
  /** Substrings each object's condition messages must contain. */
  messages?: Record<string, string[]>;
}

describe('translator fixtures', () => {
  it('there is a fixture for each rule family', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  it('every reason written is one the Gateway API defines or one of ours (reasons.ts)', () => {
    const known = new Set<string>([...GATEWAY_API_REASONS, ...TURNPIKE_REASONS]);
    const seen = new Set<string>();
    for (const name of cases) {
      const r = translatePaths([join(root, name, 'input.yaml')], '2030-01-01T00:00:00Z', 'ignore').result;
      const visit = (node: unknown): void => {
        if (Array.isArray(node)) return node.forEach(visit);
        if (!node || typeof node !== 'object') return;
        const o = node as Record<string, unknown>;
        if (typeof o.type === 'string' && typeof o.reason === 'string' && typeof o.status === 'string')
          seen.add(o.reason);
        Object.values(o).forEach(visit);
      };
      for (const key of r.statuses.sortedKeys()) visit(r.statuses.get(key));
    }
    expect(seen.size).toBeGreaterThan(25);
    expect([...seen].filter((reason) => !known.has(reason))).toEqual([]);
  });

  for (const name of cases) {
    it(name, () => {
      const seen = observe(translatePaths([join(root, name, 'input.yaml')], '2030-01-01T00:00:00Z', 'ignore').result);
      if (process.env.FIXTURES_SHOW)
        process.stdout.write(`--- ${name}\n${stringify({ statuses: seen.statuses, xds: seen.xds })}`);
      const want = parse(readFileSync(join(root, name, 'expected.yaml'), 'utf8')) as Expected;
      // Every status the translation wrote is stated, and nothing else.
      expect(seen.statuses).toEqual(want.statuses ?? {});
      expect(seen.xds).toEqual(want.xds ?? {});
      for (const [key, parts] of Object.entries(want.messages ?? {})) {
        for (const part of parts) expect([key, seen.messages[key]]).toEqual([key, expect.stringContaining(part)]);
      }
    });
  }
});
