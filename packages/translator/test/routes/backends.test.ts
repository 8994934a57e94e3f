// backendRefs (routes/backends.ts, routes/http-rules.ts): resolution, grants, weights, 500 and 503.
import { describe, expect, it } from '@jest/globals';
import { explain, snapshotFromObjects } from '../../src/index.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  irRoutes,
  parent,
  referenceGrant,
  run,
  service,
  sr,
} from '../builders.js';
import { backend, base, toGw } from '../route-fixtures.js';

describe('backendRefs', () => {
  it('a missing Service is ResolvedRefs=False/BackendNotFound and the rule answers 500', () => {
    const r = run([...base(), httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [backend('nope')] }] })]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('True/Accepted');
    expect(irRoutes(r).every((x) => x.directResponse?.status === 500)).toBe(true);
  });
  it('a backend of an unsupported kind is InvalidKind', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [{ backendRefs: [{ group: 'example.com', kind: 'Bucket', name: 'x' }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/InvalidKind');
  });
  it('a Service port that does not exist is BackendNotFound with the port in the message', () => {
    const r = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 9999 }] }] }),
    ]);
    const c = parent(r, 'HTTPRoute', 'apps', 'r').conditions.find((x: { type: string }) => x.type === 'ResolvedRefs');
    expect(c.message).toBe('spec.rules[0].backendRefs[0]: Service apps/svc has no TCP port 9999');
  });
  it('a backend in another namespace needs a ReferenceGrant; deleting the grant revokes access', () => {
    const objs = [
      ...base(),
      service('db', 'data'),
      endpointSlice('db', 'data'),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [{ backendRefs: [{ name: 'db', namespace: 'data', port: 8080 }] }],
      }),
    ];
    const grant = referenceGrant(
      'g',
      'data',
      [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }],
      [{ group: '', kind: 'Service' }],
    );
    const withGrant = run([...objs, grant]);
    expect(sr(parent(withGrant, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(withGrant.xdsIR.gateways.get('infra/gw')?.clusters.map((c) => c.name)).toEqual(['data/db/8080']);
    const revoked = run(objs);
    expect(sr(parent(revoked, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
    expect(revoked.xdsIR.gateways.get('infra/gw')?.clusters).toEqual([]);
  });
  it('a grant for another kind of referrer does not apply', () => {
    const grant = referenceGrant(
      'g',
      'data',
      [{ group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: 'apps' }],
      [{ group: '', kind: 'Service' }],
    );
    const r = run([
      ...base(),
      service('db', 'data'),
      grant,
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [{ backendRefs: [{ name: 'db', namespace: 'data', port: 8080 }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
  });
  it('a partly invalid rule keeps the invalid share as 500s by weight', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [{ backendRefs: [backend('svc', { weight: 3 }), backend('nope', { weight: 1 })] }],
      }),
    ]);
    const [x] = irRoutes(r);
    expect(x.backends).toEqual([{ cluster: 'apps/svc/8080', weight: 3 }]);
    expect(x.invalidWeight).toBe(1);
  });
  it('the endpoints of a served cluster come from its EndpointSlices, sorted, beside the Gateway IR', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      endpointSlice('svc', 'apps', ['10.1.0.2', '10.1.0.1']),
      httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(r.xdsIR.gateways.get('infra/gw')?.clusters.map((c) => c.name)).toEqual(['apps/svc/8080']);
    expect(r.xdsIR.endpoints.get('apps/svc/8080')).toEqual([
      { address: '10.1.0.1', port: 8080, ready: true },
      { address: '10.1.0.2', port: 8080, ready: true },
    ]);
    expect(r.xdsIR.endpoints.sortedKeys()).toEqual(['apps/svc/8080']);
  });
  it('a rule with no backendRefs answers 500', () => {
    const r = run([...base(), httpRoute('r', { parentRefs: [toGw({ sectionName: 'other' })], rules: [{}] })]);
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
  });
  it('a backendRef filter the proxy cannot apply per backend makes that backend invalid, and explain says why', () => {
    const objs = [
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [
          {
            backendRefs: [
              backend('svc', { filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }] }),
            ],
          },
        ],
      }),
    ];
    const r = run(objs);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/UnsupportedValue');
    const e = explain(snapshotFromObjects(objs), 'HTTPRoute', 'apps', 'r');
    expect(e.lines.join('\n')).toContain(
      'spec.rules[0].backendRefs[0] Service apps/svc:8080 weight 1: UnsupportedValue: spec.rules[0].backendRefs[0].filters[0]: RequestRedirect is not supported on a backendRef',
    );
  });
  it('a weight of 0 sends no traffic to that backend', () => {
    const r = run([
      ...base(),
      service('b'),
      endpointSlice('b'),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [{ backendRefs: [backend('svc', { weight: 0 }), backend('b', { weight: 1 })] }],
      }),
    ]);
    expect(irRoutes(r)[0].backends).toEqual([{ cluster: 'apps/b/8080', weight: 1 }]);
  });
  it('valid backends without a ready endpoint answer 503', () => {
    const r = run([
      ...base(),
      service('empty'),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'other' })], rules: [{ backendRefs: [backend('empty')] }] }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 503 });
  });
});
