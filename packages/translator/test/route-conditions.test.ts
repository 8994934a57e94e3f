// Route conditions beyond Accepted and ResolvedRefs: BackendsAvailable (a backend with no ready
// endpoint) and RouteRulesOverlap (another route claims the same match); and the Aggregated
// condition of a BackendTLSPolicy with more ancestors than its status can list.
import { describe, expect, it } from '@jest/globals';
import { Translator, snapshotFromObjects } from '../src/index.js';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  parent,
  run,
  service,
  statusOf,
} from './builders.js';
import { EXAMPLE_COM_CERT } from './tls-fixtures.js';

const toGw = { name: 'gw', namespace: 'infra' };
const exact = (value: string) => ({ path: { type: 'Exact', value } });
const rule = (svc: string, matches?: unknown[], extra: Record<string, unknown> = {}) => ({
  ...(matches ? { matches } : {}),
  backendRefs: [{ name: svc, port: 8080 }],
  ...extra,
});

describe('BackendsAvailable', () => {
  it('is False with EndpointsNotFound, naming the Service, when a backend has no ready endpoint', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('up'),
      endpointSlice('up'),
      service('down'),
      httpRoute('r', { parentRefs: [toGw], rules: [rule('up'), rule('down', [exact('/down')])] }),
    ]);
    const c = cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable');
    expect(c).toMatchObject({ status: 'False', reason: 'EndpointsNotFound' });
    expect(c!.message).toContain('apps/down:8080');
    expect(c!.message).not.toContain('apps/up');
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')?.status).toBe('True');
  });

  it('counts a mirror backend, and turns True as soon as the endpoints arrive', () => {
    const objects = [
      gatewayClass(),
      gateway('gw', [http()]),
      service('up'),
      endpointSlice('up'),
      service('shadow'),
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          rule('up', undefined, {
            filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 8080 } } }],
          }),
        ],
      }),
    ];
    const t = new Translator();
    const before = t.translate(snapshotFromObjects(objects));
    expect(cond(parent(before, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toMatchObject({
      status: 'False',
      reason: 'EndpointsNotFound',
    });
    const after = t.translateWithChanges(snapshotFromObjects([...objects, endpointSlice('shadow')]));
    expect(cond(parent(after.result, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toMatchObject({
      status: 'True',
      reason: 'BackendsAvailable',
    });
    expect(after.changes.statuses).toContain('HTTPRoute/apps/r');
  });

  it('is absent on a route with no backend to wait for (a redirect)', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }] }],
      }),
    ]);
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toBeUndefined();
  });
});

describe('RouteRulesOverlap', () => {
  const older = { creationTimestamp: '2026-01-01T00:00:00Z' };
  const newer = { creationTimestamp: '2026-02-01T00:00:00Z' };
  const objects = [
    gatewayClass(),
    gateway('gw', [http()]),
    service('a'),
    endpointSlice('a'),
    service('b'),
    endpointSlice('b'),
    httpRoute(
      'first',
      { parentRefs: [toGw], rules: [rule('a', [exact('/same'), exact('/only-first')])] },
      'apps',
      older,
    ),
    httpRoute('second', { parentRefs: [toGw], rules: [rule('b', [exact('/same')])] }, 'apps', newer),
  ];

  it('is True on both routes that claim the same match on one host, naming the other and who wins', () => {
    const r = run(objects);
    const first = cond(parent(r, 'HTTPRoute', 'apps', 'first').conditions, 'RouteRulesOverlap');
    const second = cond(parent(r, 'HTTPRoute', 'apps', 'second').conditions, 'RouteRulesOverlap');
    expect(first).toMatchObject({ status: 'True', reason: 'RouteRulesOverlap' });
    expect(second).toMatchObject({ status: 'True', reason: 'RouteRulesOverlap' });
    expect(second!.message).toContain(
      'HTTPRoute/apps/first spec.rules[0].matches[0] has the same match and takes precedence',
    );
    expect(first!.message).toContain(
      'HTTPRoute/apps/second spec.rules[0].matches[0] has the same match and gets no traffic',
    );
    // The older route keeps the traffic.
    const vh = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.virtualHosts![0]!;
    expect(vh.routes.filter((x) => x.match.path.value === '/same')[0]!.source.name).toBe('first');
  });

  it('clears when the other route changes its match, on a translation that only touched the other route', () => {
    const t = new Translator();
    t.translate(snapshotFromObjects(objects));
    const fixed = objects.map((o) =>
      o.metadata.name === 'second'
        ? httpRoute('second', { parentRefs: [toGw], rules: [rule('b', [exact('/elsewhere')])] }, 'apps', newer)
        : o,
    );
    const { result, changes } = t.translateWithChanges(snapshotFromObjects(fixed));
    expect(cond(parent(result, 'HTTPRoute', 'apps', 'first').conditions, 'RouteRulesOverlap')).toBeUndefined();
    expect(changes.statuses).toEqual(expect.arrayContaining(['HTTPRoute/apps/first', 'HTTPRoute/apps/second']));
  });

  it('does not count different hosts or header matches in a different order as different', () => {
    const hdr = (names: string[]) => [
      { path: { type: 'PathPrefix', value: '/' }, headers: names.map((name) => ({ name, value: 'x' })) },
    ];
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('a'),
      endpointSlice('a'),
      httpRoute(
        'x',
        {
          parentRefs: [toGw],
          hostnames: ['x.example.com'],
          rules: [rule('a', [exact('/p')]), rule('a', hdr(['h1', 'h2']))],
        },
        'apps',
        older,
      ),
      httpRoute(
        'y',
        { parentRefs: [toGw], hostnames: ['y.example.com'], rules: [rule('a', [exact('/p')])] },
        'apps',
        newer,
      ),
      httpRoute(
        'z',
        { parentRefs: [toGw], hostnames: ['x.example.com'], rules: [rule('a', hdr(['h2', 'h1']))] },
        'apps',
        newer,
      ),
    ]);
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'y').conditions, 'RouteRulesOverlap')).toBeUndefined();
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'z').conditions, 'RouteRulesOverlap')?.status).toBe('True');
  });
});

describe('BackendTLSPolicy ancestors beyond 16', () => {
  it('lists 16 ancestors and says on the last one how many more there are (Aggregated); the Gateways beyond may not use the Service', () => {
    const gws = Array.from({ length: 18 }, (_, i) => gateway(`gw-${String(i).padStart(2, '0')}`, [http()]));
    const ca = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ca', namespace: 'apps' },
      data: { 'ca.crt': EXAMPLE_COM_CERT },
    };
    const policy = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'a' }],
        validation: { hostname: 'example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] },
      },
    };
    const r = run([
      gatewayClass(),
      ...gws,
      service('a'),
      endpointSlice('a'),
      ca as never,
      policy as never,
      httpRoute('r', {
        parentRefs: gws.map((g) => ({ name: g.metadata.name, namespace: 'infra' })),
        rules: [rule('a')],
      }),
    ]);
    const ancestors = statusOf(r, 'BackendTLSPolicy', 'apps', 'p').ancestors as {
      ancestorRef: { name: string };
      conditions: unknown;
    }[];
    expect(ancestors).toHaveLength(16);
    expect(ancestors.map((a) => a.ancestorRef.name)).toEqual(gws.slice(0, 16).map((g) => g.metadata.name));
    const agg = cond(ancestors[15]!.conditions, 'Aggregated');
    expect(agg).toMatchObject({ status: 'True', reason: 'Aggregated' });
    expect(agg!.message).toContain('2 more are not listed: infra/gw-16, infra/gw-17');
    expect(ancestors.slice(0, 15).every((a) => cond(a.conditions, 'Aggregated') === undefined)).toBe(true);
    // The policy is unimplementable for the Gateways beyond the 16th: their rule answers 500 and
    // the route says so on those parents only; the listed ones serve the Service over TLS.
    const parents = statusOf(r, 'HTTPRoute', 'apps', 'r').parents as {
      parentRef: { name: string };
      conditions: unknown;
    }[];
    const resolved = (gw: string) => cond(parents.find((p) => p.parentRef.name === gw)!.conditions, 'ResolvedRefs');
    expect(resolved('gw-17')).toMatchObject({ status: 'False', reason: 'InvalidBackendTLSPolicy' });
    expect(resolved('gw-17')!.message).toContain('BackendTLSPolicy apps/p already lists 16 Gateways');
    expect(resolved('gw-15')).toMatchObject({ status: 'True' });
    const route = (gw: string) =>
      r.xdsIR.gateways.get(`infra/${gw}`)!.ports[0]!.listeners[0]!.virtualHosts![0]!.routes[0]!;
    expect(route('gw-16').directResponse).toEqual({ status: 500 });
    expect(r.xdsIR.gateways.get('infra/gw-16')!.clusters).toEqual([]);
    expect(route('gw-00').backends).toEqual([{ cluster: 'apps/a/8080', weight: 1 }]);
    expect(r.xdsIR.gateways.get('infra/gw-00')!.clusters[0]!.tls?.policy).toBe('apps/p');
  });

  it('incrementally: when a Gateway stops routing to the Service, the next one beyond the 16th may use it again, as a fresh translation says', () => {
    const gws = Array.from({ length: 18 }, (_, i) => gateway(`gw-${String(i).padStart(2, '0')}`, [http()]));
    const ca = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ca', namespace: 'apps' },
      data: { 'ca.crt': EXAMPLE_COM_CERT },
    };
    const policy = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'a' }],
        validation: { hostname: 'example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] },
      },
    };
    const objects = (parents: string[]) => [
      gatewayClass(),
      ...gws,
      service('a'),
      endpointSlice('a'),
      ca as never,
      policy as never,
      httpRoute('r', { parentRefs: parents.map((name) => ({ name, namespace: 'infra' })), rules: [rule('a')] }),
    ];
    const all = gws.map((g) => g.metadata.name);
    const t = new Translator();
    t.translate(snapshotFromObjects(objects(all)));
    const fewer = all.filter((n) => n !== 'gw-03');
    const { result, changes } = t.translateWithChanges(snapshotFromObjects(objects(fewer)));
    expect(JSON.stringify(result)).toBe(
      JSON.stringify(new Translator().translate(snapshotFromObjects(objects(fewer)))),
    );
    expect(changes.gateways).toContain('infra/gw-16');
    expect(result.xdsIR.gateways.get('infra/gw-16')!.clusters[0]!.tls?.policy).toBe('apps/p');
    expect(result.xdsIR.gateways.get('infra/gw-17')!.clusters).toEqual([]);
  });
});

describe('BackendTLSPolicy CA from a ClusterTrustBundle', () => {
  const policy = (ref: Record<string, unknown>) =>
    ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'a' }],
        validation: { hostname: 'example.com', caCertificateRefs: [ref] },
      },
    }) as never;
  const base = [
    gatewayClass(),
    gateway('gw', [http()]),
    service('a'),
    endpointSlice('a'),
    httpRoute('r', { parentRefs: [toGw], rules: [rule('a')] }),
  ];
  const ctb = {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'ClusterTrustBundle',
    metadata: { name: 'corp-ca' },
    spec: { trustBundle: EXAMPLE_COM_CERT },
  } as never;

  it('a ClusterTrustBundle (certificates.k8s.io, or the core group) supplies the CA bundle of the cluster', () => {
    for (const group of ['certificates.k8s.io', '']) {
      const r = run([...base, ctb, policy({ group, kind: 'ClusterTrustBundle', name: 'corp-ca' })]);
      expect(
        cond(
          (statusOf(r, 'BackendTLSPolicy', 'apps', 'p').ancestors as { conditions: unknown }[])[0]!.conditions,
          'Accepted',
        )?.status,
      ).toBe('True');
      expect(r.xdsIR.gateways.get('infra/gw')!.clusters[0]!.tls?.caBundle).toBe(EXAMPLE_COM_CERT);
    }
  });

  it('a missing ClusterTrustBundle is named, and the policy has no valid CA', () => {
    const r = run([...base, policy({ group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'absent' })]);
    const conds = (statusOf(r, 'BackendTLSPolicy', 'apps', 'p').ancestors as { conditions: unknown }[])[0]!.conditions;
    expect(cond(conds, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCACertificateRef' });
    expect(cond(conds, 'ResolvedRefs')!.message).toContain('ClusterTrustBundle absent not found');
    expect(cond(conds, 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
  });
});
