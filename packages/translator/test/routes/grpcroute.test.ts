// GRPCRoute (routes/grpcroute.ts): service and method matches, RE2 regular expressions.
import { describe, expect, it } from '@jest/globals';
import { httpRoute, irRoutes, parent, route, run, service, sr } from '../builders.js';
import { backend, base, toGw } from '../route-fixtures.js';

describe('GRPCRoute', () => {
  it('service and method become an exact HTTP/2 path; header matches carry over', () => {
    const r = run([
      ...base(),
      route('GRPCRoute', 'g', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [
          {
            matches: [{ method: { service: 'pkg.Svc', method: 'Get' }, headers: [{ name: 'x', value: 'y' }] }],
            backendRefs: [backend()],
          },
        ],
      }),
    ]);
    const [x] = irRoutes(r);
    expect(x.match.path).toEqual({ type: 'Exact', value: '/pkg.Svc/Get' });
    expect(x.match.headers).toEqual([{ name: 'x', type: 'Exact', value: 'y' }]);
  });

  it('a RequestMirror copies the gRPC request to an HTTP/2 cluster: a gRPC backend cannot answer HTTP/1.1', () => {
    const r = run([
      ...base(),
      service('mirror'),
      route('GRPCRoute', 'g', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [
          {
            filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror', port: 8080 } } }],
            backendRefs: [backend()],
          },
        ],
      }),
    ]);
    const [x] = irRoutes(r);
    expect(x.backends).toEqual([{ cluster: 'apps/svc/8080/h2', weight: 1 }]);
    expect(x.filters.mirrors).toEqual([{ cluster: 'apps/mirror/8080/h2', percent: 100 }]);
    const mirror = r.xdsIR.gateways.get('infra/gw')!.clusters.find((c) => c.name === 'apps/mirror/8080/h2');
    expect(mirror?.protocol).toBe('h2');
  });

  describe('regular expressions are RE2, as Envoy runs them', () => {
    const withRegex = (value: string) =>
      run([
        ...base(),
        httpRoute('r', {
          parentRefs: [toGw({ sectionName: 'other' })],
          rules: [{ matches: [{ path: { type: 'RegularExpression', value } }], backendRefs: [backend()] }],
        }),
      ]);
    it('RE2 syntax JavaScript lacks is accepted: (?i), (?i:…), (?P<name>…)', () => {
      for (const re of ['/(?i)api/.*', '/(?i:v1|v2)/items', '/users/(?P<id>[0-9]+)']) {
        expect([re, sr(parent(withRegex(re), 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')]).toEqual([
          re,
          'True/Accepted',
        ]);
      }
    });
    it('JavaScript-only syntax RE2 lacks is refused, naming the construct: lookaround, backreferences, possessive quantifiers', () => {
      for (const [re, why] of [
        ['/a(?=b)', 'lookahead'],
        ['/(a)\\1', 'backreferences'],
        ['/a++', 'possessive'],
      ] as const) {
        const c = parent(withRegex(re), 'HTTPRoute', 'apps', 'r').conditions.find(
          (x: { type: string }) => x.type === 'Accepted',
        );
        expect([re, c.status, c.message]).toEqual([re, 'False', expect.stringContaining(why)]);
        expect(c.message).toContain('spec.rules[0].matches[0].path.value');
      }
    });
  });
});
