// Match precedence (precedence.ts), as httproute_types.go orders matches.
import { describe, expect, it } from '@jest/globals';
import { endpointSlice, gateway, gatewayClass, http, httpRoute, irRoutes, run, service } from './builders.js';

const base = () => [
  gatewayClass(),
  gateway('gw', [http('http', 80, { hostname: '*.example.com' }), http('other', 8080)]),
  service('svc'),
  endpointSlice('svc'),
];
const toGw = (extra: Record<string, unknown> = {}) => ({ name: 'gw', namespace: 'infra', ...extra });
const backend = (name = 'svc', extra: Record<string, unknown> = {}) => ({ name, port: 8080, ...extra });

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
