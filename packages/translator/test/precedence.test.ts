// Match precedence (precedence.ts), as httproute_types.go orders matches.
import { describe, expect, it } from '@jest/globals';
import { httpRoute, irRoutes, run } from './builders.js';
import { backend, base, toGw } from './route-fixtures.js';

describe('match precedence (httproute_types.go Matches)', () => {
  it('orders Exact, then longest prefix, then method, headers, query params, then oldest route', () => {
    const rules = (ms: Record<string, unknown>[]) => ms.map((m) => ({ matches: [m], backendRefs: [backend()] }));
    const r = run([
      ...base(),
      httpRoute(
        'young',
        { parentRefs: [toGw({ sectionName: 'other' })], rules: rules([{ path: { type: 'PathPrefix', value: '/a' } }]) },
        'apps',
        { creationTimestamp: '2026-01-02T00:00:00Z' },
      ),
      httpRoute(
        'old',
        {
          parentRefs: [toGw({ sectionName: 'other' })],
          rules: rules([
            { path: { type: 'PathPrefix', value: '/a' } },
            { path: { type: 'PathPrefix', value: '/a' }, headers: [{ name: 'x', value: '1' }] },
            { path: { type: 'PathPrefix', value: '/a' }, method: 'GET' },
            { path: { type: 'PathPrefix', value: '/a/b' } },
            { path: { type: 'Exact', value: '/a' } },
            { path: { type: 'PathPrefix', value: '/a' }, queryParams: [{ name: 'q', value: '1' }] },
          ]),
        },
        'apps',
        { creationTimestamp: '2026-01-01T00:00:00Z' },
      ),
    ]);
    expect(irRoutes(r).map((x) => `${x.source.name}#${x.source.rule}`)).toEqual([
      'old#4',
      'old#3',
      'old#2',
      'old#1',
      'old#5',
      'old#0',
      'young#0',
    ]);
  });
});
