// Route conditions beyond Accepted and ResolvedRefs: BackendsAvailable (a backend with no ready
// endpoint) and RouteRulesOverlap (another route claims the same match); and the Aggregated
// condition of a BackendTLSPolicy with more ancestors than its status can list.
import { describe, expect, it } from '@jest/globals';
import { Translator, snapshotFromObjects } from '../src/index.js';
import { cond, endpointSlice, gateway, gatewayClass, http, httpRoute, parent, run, service, statusOf } from './builders.js';
import { EXAMPLE_COM_CERT } from './tls-fixtures.js';

const toGw = { name: 'gw', namespace: 'infra' };
const exact = (value: string) => ({ path: { type: 'Exact', value } });
const rule = (svc: string, matches?: unknown[], extra: Record<string, unknown> = {}) => ({ ...(matches ? { matches } : {}), backendRefs: [{ name: svc, port: 8080 }], ...extra });

describe('BackendsAvailable', () => {
  it('is False with EndpointsNotFound, naming the Service, when a backend has no ready endpoint', () => {
    const r = run([gatewayClass(), gateway('gw', [http()]), service('up'), endpointSlice('up'), service('down'),
      httpRoute('r', { parentRefs: [toGw], rules: [rule('up'), rule('down', [exact('/down')])] })]);
    const c = cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable');
    expect(c).toMatchObject({ status: 'False', reason: 'EndpointsNotFound' });
    expect(c!.message).toContain('apps/down:8080');
    expect(c!.message).not.toContain('apps/up');
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')?.status).toBe('True');
  });

  it('counts a mirror backend, and turns True as soon as the endpoints arrive', () => {
    const objects = [gatewayClass(), gateway('gw', [http()]), service('up'), endpointSlice('up'), service('shadow'),
      httpRoute('r', { parentRefs: [toGw], rules: [rule('up', undefined, { filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 8080 } } }] })] })];
    const t = new Translator();
    const before = t.translate(snapshotFromObjects(objects));
    expect(cond(parent(before, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toMatchObject({ status: 'False', reason: 'EndpointsNotFound' });
    const after = t.translateWithChanges(snapshotFromObjects([...objects, endpointSlice('shadow')]));
    expect(cond(parent(after.result, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toMatchObject({ status: 'True', reason: 'BackendsAvailable' });
    expect(after.changes.statuses).toContain('HTTPRoute/apps/r');
  });

  it('is absent on a route with no backend to wait for (a redirect)', () => {
    const r = run([gatewayClass(), gateway('gw', [http()]),
      httpRoute('r', { parentRefs: [toGw], rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }] }] })]);
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toBeUndefined();
  });
});

describe('RouteRulesOverlap', () => {
  const older = { creationTimestamp: '2026-01-01T00:00:00Z' };
  const newer = { creationTimestamp: '2026-02-01T00:00:00Z' };
  const objects = [gatewayClass(), gateway('gw', [http()]), service('a'), endpointSlice('a'), service('b'), endpointSlice('b'),
    httpRoute('first', { parentRefs: [toGw], rules: [rule('a', [exact('/same'), exact('/only-first')])] }, 'apps', older),
    httpRoute('second', { parentRefs: [toGw], rules: [rule('b', [exact('/same')])] }, 'apps', newer)];

  it('is True on both routes that claim the same match on one host, naming the other and who wins', () => {
    const r = run(objects);
    const first = cond(parent(r, 'HTTPRoute', 'apps', 'first').conditions, 'RouteRulesOverlap');
    const second = cond(parent(r, 'HTTPRoute', 'apps', 'second').conditions, 'RouteRulesOverlap');
    expect(first).toMatchObject({ status: 'True', reason: 'RouteRulesOverlap' });
    expect(second).toMatchObject({ status: 'True', reason: 'RouteRulesOverlap' });
    expect(second!.message).toContain('HTTPRoute/apps/first spec.rules[0].matches[0] has the same match and takes precedence');
    expect(first!.message).toContain('HTTPRoute/apps/second spec.rules[0].matches[0] has the same match and gets no traffic');
    // The older route keeps the traffic.
    const vh = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.virtualHosts![0]!;
    expect(vh.routes.filter((x) => x.match.path.value === '/same')[0]!.source.name).toBe('first');
  });

  it('clears when the other route changes its match, on a translation that only touched the other route', () => {
    const t = new Translator();
    t.translate(snapshotFromObjects(objects));
    const fixed = objects.map((o) => (o.metadata.name === 'second'
      ? httpRoute('second', { parentRefs: [toGw], rules: [rule('b', [exact('/elsewhere')])] }, 'apps', newer) : o));
    const { result, changes } = t.translateWithChanges(snapshotFromObjects(fixed));
    expect(cond(parent(result, 'HTTPRoute', 'apps', 'first').conditions, 'RouteRulesOverlap')).toBeUndefined();
    expect(changes.statuses).toEqual(expect.arrayContaining(['HTTPRoute/apps/first', 'HTTPRoute/apps/second']));
  });

  it('does not count different hosts or header matches in a different order as different', () => {
    const hdr = (names: string[]) => [{ path: { type: 'PathPrefix', value: '/' }, headers: names.map((name) => ({ name, value: 'x' })) }];
    const r = run([gatewayClass(), gateway('gw', [http()]), service('a'), endpointSlice('a'),
      httpRoute('x', { parentRefs: [toGw], hostnames: ['x.example.com'], rules: [rule('a', [exact('/p')]), rule('a', hdr(['h1', 'h2']))] }, 'apps', older),
      httpRoute('y', { parentRefs: [toGw], hostnames: ['y.example.com'], rules: [rule('a', [exact('/p')])] }, 'apps', newer),
      httpRoute('z', { parentRefs: [toGw], hostnames: ['x.example.com'], rules: [rule('a', hdr(['h2', 'h1']))] }, 'apps', newer)]);
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'y').conditions, 'RouteRulesOverlap')).toBeUndefined();
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'z').conditions, 'RouteRulesOverlap')?.status).toBe('True');
  });
});

describe('BackendTLSPolicy ancestors beyond 16', () => {
  it('lists 16 ancestors and says on the last one how many more there are (Aggregated)', () => {
    const gws = Array.from({ length: 18 }, (_, i) => gateway(`gw-${String(i).padStart(2, '0')}`, [http()]));
    const ca = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'apps' }, data: { 'ca.crt': EXAMPLE_COM_CERT } };
    const policy = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'BackendTLSPolicy', metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'a' }], validation: { hostname: 'example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] } } };
    const r = run([gatewayClass(), ...gws, service('a'), endpointSlice('a'), ca as never, policy as never,
      httpRoute('r', { parentRefs: gws.map((g) => ({ name: g.metadata.name, namespace: 'infra' })), rules: [rule('a')] })]);
    const ancestors = statusOf(r, 'BackendTLSPolicy', 'apps', 'p').ancestors as { ancestorRef: { name: string }; conditions: unknown }[];
    expect(ancestors).toHaveLength(16);
    expect(ancestors.map((a) => a.ancestorRef.name)).toEqual(gws.slice(0, 16).map((g) => g.metadata.name));
    const agg = cond(ancestors[15]!.conditions, 'Aggregated');
    expect(agg).toMatchObject({ status: 'True', reason: 'Aggregated' });
    expect(agg!.message).toContain('2 more use this policy and are not listed: infra/gw-16, infra/gw-17');
    expect(ancestors.slice(0, 15).every((a) => cond(a.conditions, 'Aggregated') === undefined)).toBe(true);
  });
});
