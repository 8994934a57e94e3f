// Pre-routing listener filters (Gateway API v1.7, GEP-5224) are not run yet: a listener that lists
// any is refused, never served without them (gateways.ts, listenerFiltersProblem).
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { gateway, gatewayClass, http, httpRoute, irRoutes, listener, run, service, sr, statusOf } from './builders.js';
import { backend, toGw } from './route-fixtures.js';

const extAuth = {
  requests: [
    {
      type: 'ExternalAuth',
      externalAuth: { protocol: 'HTTP', backendRef: { name: 'auth', port: 9000 }, http: { path: '/check' } },
    },
  ],
};

function listenerSet(listeners: Record<string, unknown>[]): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: { name: 'ls', namespace: 'infra', generation: 1 },
    spec: { parentRef: { name: 'gw', namespace: 'infra' }, listeners },
  };
}

describe('listener filters (GEP-5224)', () => {
  it('a Gateway listener with an ExternalAuth filter is Accepted=False/UnsupportedValue and serves no route', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http('guarded', 80, { filters: extAuth }), http('open', 8080)]),
      service('svc'),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'guarded' })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    const l = listener(r, 'infra', 'gw', 'guarded');
    expect(sr(l.conditions, 'Accepted')).toBe('False/UnsupportedValue');
    expect(sr(l.conditions, 'Programmed')).toMatch(/^False\//);
    expect(l.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
      'spec.listeners[0].filters.requests: pre-routing listener filters (ExternalAuth) are not supported',
    );
    expect(sr(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toBe('True/ListenersNotValid');
    // The other listener serves; the guarded one serves nothing (its route is not configured).
    expect(sr(listener(r, 'infra', 'gw', 'open').conditions, 'Programmed')).toBe('True/Programmed');
    expect(irRoutes(r)).toEqual([]);
    expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([8080]);
  });

  it('a ListenerSet listener with filters is refused the same way (the ListenerSet CRD has no protocol rule for them)', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()], { allowedListeners: { namespaces: { from: 'Same' } } }),
      listenerSet([http('guarded', 8081, { filters: extAuth }), http('plain', 8082)]),
    ]);
    const s = statusOf(r, 'ListenerSet', 'infra', 'ls');
    const guarded = s.listeners.find((l: { name: string }) => l.name === 'guarded');
    expect(sr(guarded.conditions, 'Accepted')).toBe('False/UnsupportedValue');
    expect(guarded.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
      'spec.listeners[0].filters.requests',
    );
    const plain = s.listeners.find((l: { name: string }) => l.name === 'plain');
    expect(sr(plain.conditions, 'Accepted')).toBe('True/Accepted');
    expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).not.toContain(8081);
  });

  it('an empty filter list is no filter: the listener is served', () => {
    const r = run([gatewayClass(), gateway('gw', [http('l', 80, { filters: { requests: [] } })])]);
    expect(sr(listener(r, 'infra', 'gw', 'l').conditions, 'Accepted')).toBe('True/Accepted');
  });
});
