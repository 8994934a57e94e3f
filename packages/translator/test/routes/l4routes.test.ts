// L4 routes (routes/l4routes.ts): TCPRoute, UDPRoute, TLSRoute.
import { describe, expect, it } from '@jest/globals';
import { gateway, gatewayClass, listener, parent, route, run, service, sr } from '../builders.js';
import { cond, endpointSlice } from '../builders.js';

const toGw = (extra: Record<string, unknown> = {}) => ({ name: 'gw', namespace: 'infra', ...extra });

describe('L4 routes', () => {
  it('TCP routes on one listener are all accepted; only the oldest carries traffic', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [{ name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }]),
      service('svc', 'apps', [{ name: 'tcp', port: 9000, protocol: 'TCP' }]),
      {
        ...route('TCPRoute', 'b', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 9000 }] }] }),
        metadata: { name: 'b', namespace: 'apps', creationTimestamp: '2026-01-02T00:00:00Z' },
      },
      {
        ...route('TCPRoute', 'a', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 9000 }] }] }),
        metadata: { name: 'a', namespace: 'apps', creationTimestamp: '2026-01-03T00:00:00Z' },
      },
    ]);
    expect(sr(parent(r, 'TCPRoute', 'apps', 'a').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(parent(r, 'TCPRoute', 'apps', 'b').conditions, 'Accepted')).toBe('True/Accepted');
    expect(listener(r, 'infra', 'gw', 'tcp').attachedRoutes).toBe(2);
    const routes = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.routes!;
    expect(routes.map((x) => x.source.name)).toEqual(['b']);
  });
  it('a UDPRoute to a Service port of another protocol is BackendNotFound', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [{ name: 'udp', port: 53, protocol: 'UDP', allowedRoutes: { namespaces: { from: 'All' } } }]),
      service('svc'),
      route('UDPRoute', 'u', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }] }),
    ]);
    expect(sr(parent(r, 'UDPRoute', 'apps', 'u').conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
  });
});

describe('an L4 route is served with exactly one rule', () => {
  const tcpGw = () =>
    gateway('gw', [{ name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }]);
  const tcpRoute = (name: string, rules: unknown[], created: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1alpha2',
    kind: 'TCPRoute',
    metadata: { name, namespace: 'apps', generation: 1, creationTimestamp: created },
    spec: { parentRefs: [toGw()], rules },
  });
  it('two rules: the route is not accepted, says why, and does not take the listener from a newer valid route', () => {
    const rule = { backendRefs: [{ name: 'svc', port: 8080 }] };
    const r = run([
      gatewayClass(),
      tcpGw(),
      service('svc'),
      endpointSlice('svc'),
      tcpRoute('old', [rule, rule], '2026-01-01T00:00:00Z'),
      tcpRoute('new', [rule], '2026-01-02T00:00:00Z'),
    ]);
    expect(cond(parent(r, 'TCPRoute', 'apps', 'old').conditions, 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'UnsupportedValue',
      message: 'spec.rules: a TCPRoute is served with one rule (its rules have no matches to choose between); it has 2',
    });
    const served = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.routes!;
    expect(served.map((x) => x.source.name)).toEqual(['new']);
    expect(served[0]!.backends).toEqual([{ cluster: 'apps/svc/8080/tcp', weight: 1 }]);
  });
  it('no rule at all is refused the same way', () => {
    const r = run([gatewayClass(), tcpGw(), tcpRoute('empty', [], '2026-01-01T00:00:00Z')]);
    expect(cond(parent(r, 'TCPRoute', 'apps', 'empty').conditions, 'Accepted')).toMatchObject({
      status: 'False',
      message: 'spec.rules must hold one rule',
    });
  });
});
