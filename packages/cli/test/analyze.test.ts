// `turnpike analyze`: a CI gate. Exit 1 and one line per problem (object, where, condition,
// message) when the statuses would report any; exit 0 with a count when there is none.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { conditionText, isTrouble } from '../src/status-lines.js';
import { MANIFEST, tmp, turnpike, write } from './cli-helpers.js';

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../../translator/test/fixtures');

describe('turnpike analyze', () => {
  it('lists each problem with its object, parent and field, and exits 1', () => {
    const r = turnpike('analyze', '-f', `${fixtures}/backends/input.yaml`);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'HTTPRoute/apps/missing parent infra/gw: ResolvedRefs=False (BackendNotFound): spec.rules[0].backendRefs[1]: Service apps/nope not found',
    );
    expect(r.stdout).toContain('HTTPRoute/apps/cross-ns parent infra/gw: ResolvedRefs=False (RefNotPermitted)');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('4 problem(s) in 7 status(es)');
  });

  it('exits 0 on manifests without problems', () => {
    const dir = tmp();
    write(dir, 'ok.yaml', MANIFEST);
    const r = turnpike('analyze', '-f', dir);
    expect([r.code, r.stdout.trim().split('\n').at(-1)]).toEqual([
      0,
      expect.stringMatching(/^0 problem\(s\) in \d+ status\(es\)$/),
    ]);
  });

  it('reports listeners too, and backends without endpoints only when asked; -o json is machine-readable', () => {
    const plain = turnpike('analyze', '-f', `${fixtures}/route-conditions/input.yaml`, '-o', 'json');
    const found = (JSON.parse(plain.stdout) as { problems: { object: string; type: string }[] }).problems;
    expect(found.map((f) => `${f.object} ${f.type}`)).toEqual([
      'HTTPRoute/apps/first RouteRulesOverlap',
      'HTTPRoute/apps/second RouteRulesOverlap',
    ]);
    const withEndpoints = JSON.parse(
      turnpike('analyze', '-f', `${fixtures}/route-conditions/input.yaml`, '-o', 'json', '--endpoints').stdout,
    ) as { problems: { type: string }[] };
    expect(withEndpoints.problems.map((f) => f.type)).toContain('BackendsAvailable');
    const listeners = turnpike('analyze', '-f', `${fixtures}/listener-validation/input.yaml`, '--validate', 'ignore');
    expect(listeners.stdout).toContain('Gateway/infra/gw listener sctp: Accepted=False (UnsupportedProtocol)');
  });

  it('reports an object the API server would refuse as an error naming the file, the object and the field', () => {
    const r = turnpike('analyze', '-f', `${fixtures}/listener-validation/input.yaml`);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^error: \S+listener-validation\/input\.yaml: Gateway infra\/gw is invalid, as the API server would refuse it: spec\.listeners: hostname must not be specified for protocols \['TCP', 'UDP'\]/m,
    );
    expect(r.stdout).not.toContain('Gateway/infra/gw listener');
  });

  it('one notion of trouble for run and analyze: True is trouble for RouteRulesOverlap and ConfigRejected, False for the others', () => {
    const c = (type: string, status: string) => ({ type, status, reason: 'R', message: 'why', lastTransitionTime: '' });
    expect(conditionText(c('RouteRulesOverlap', 'True'), true)).toBe('RouteRulesOverlap=True(R): why');
    expect(conditionText(c('turnpike.dev/ConfigRejected', 'True'), true)).toBe(
      'turnpike.dev/ConfigRejected=True(R): why',
    );
    expect(conditionText(c('BackendsAvailable', 'False'), true)).toBe('BackendsAvailable=False(R): why');
    expect(isTrouble(c('Conflicted', 'False'))).toBe(false);
    expect(isTrouble(c('Accepted', 'True'))).toBe(false);
  });
});
