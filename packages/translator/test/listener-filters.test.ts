// Pre-routing listener filters (Gateway API v1.7, GEP-5224): ExternalAuth (HTTP and gRPC) is served
// (listener-filters.ts); an ExtensionRef is not yet, and a listener naming one is refused, never served
// without it.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { explain, snapshotFromObjects } from '../src/index.js';
import {
  gateway,
  gatewayClass,
  http,
  httpRoute,
  irRoutes,
  listener,
  referenceGrant,
  run,
  service,
  sr,
  statusOf,
} from './builders.js';
import { backend, toGw } from './route-fixtures.js';

const authRef = { name: 'auth', namespace: 'apps', port: 9000 };
const extAuth = {
  requests: [
    { type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: authRef, http: { path: '/check' } } },
  ],
};
const authService = (): KubeObject => service('auth', 'apps', [{ name: 'http', port: 9000, protocol: 'TCP' }]);
const grantToAuth = (): KubeObject =>
  referenceGrant(
    'to-auth',
    'apps',
    [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
    [{ group: '', kind: 'Service' }],
  );

function listenerSet(listeners: Record<string, unknown>[]): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: { name: 'ls', namespace: 'infra', generation: 1 },
    spec: { parentRef: { name: 'gw', namespace: 'infra' }, listeners },
  };
}

function irListener(r: ReturnType<typeof run>, name: string): Record<string, any> | undefined {
  return r.xdsIR.gateways
    .get('infra/gw')
    ?.ports.flatMap((p) => p.listeners)
    .find((l) => l.name.endsWith(`/${name}`));
}

describe('listener filters (GEP-5224)', () => {
  it('an ExternalAuth listener is Accepted and ResolvedRefs, and its filter and auth cluster are in the IR', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http('guarded', 80, { filters: extAuth }), http('open', 8080)]),
      service('svc'),
      authService(),
      grantToAuth(),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'guarded' })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    const l = listener(r, 'infra', 'gw', 'guarded');
    expect(sr(l.conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(l.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(sr(l.conditions, 'Programmed')).toBe('True/Programmed');
    expect(irListener(r, 'guarded')!.preRouting).toEqual([
      { type: 'ExternalAuth', protocol: 'HTTP', cluster: 'apps/auth/9000', pathPrefix: '/check' },
    ]);
    expect(irListener(r, 'open')!.preRouting).toBeUndefined();
    expect(r.xdsIR.gateways.get('infra/gw')!.clusters.map((c) => c.name)).toContain('apps/auth/9000');
    expect(irRoutes(r)).toHaveLength(1);
  });

  it('gRPC ExternalAuth: an HTTP/2 cluster, allowed headers lower-cased, forwardBody kept', () => {
    const requests = [
      {
        type: 'ExternalAuth',
        externalAuth: {
          protocol: 'GRPC',
          backendRef: authRef,
          grpc: { allowedHeaders: ['X-Token'] },
          forwardBody: { maxSize: 1024 },
        },
      },
    ];
    const r = run([
      gatewayClass(),
      gateway('gw', [http('l', 80, { filters: { requests } })]),
      authService(),
      grantToAuth(),
    ]);
    expect(irListener(r, 'l')!.preRouting).toEqual([
      {
        type: 'ExternalAuth',
        protocol: 'GRPC',
        cluster: 'apps/auth/9000/h2',
        allowedHeaders: ['x-token'],
        forwardBodyMaxSize: 1024,
      },
    ]);
  });

  it(
    '"A cross-namespace ExternalAuth.backendRef without a matching ReferenceGrant MUST have ' +
      'ResolvedRefs=False, Reason=RefNotPermitted", and the listener serves nothing unguarded',
    () => {
      const r = run([gatewayClass(), gateway('gw', [http('guarded', 80, { filters: extAuth })]), authService()]);
      const l = listener(r, 'infra', 'gw', 'guarded');
      expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
      expect(sr(l.conditions, 'Programmed')).toMatch(/^False\//);
      expect(r.xdsIR.gateways.get('infra/gw')?.ports ?? []).toEqual([]);
    },
  );

  it(
    '"A listener whose filters.requests contains an ExternalAuth.backendRef [...] that does not exist MUST have ' +
      'ResolvedRefs=False, Reason=InvalidListenerFilterRef, and the message MUST identify which filter"',
    () => {
      const r = run([gatewayClass(), gateway('gw', [http('guarded', 80, { filters: extAuth })]), grantToAuth()]);
      const l = listener(r, 'infra', 'gw', 'guarded');
      expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidListenerFilterRef');
      expect(l.conditions.find((c: { type: string }) => c.type === 'ResolvedRefs').message).toContain(
        'spec.listeners[0].filters.requests[0].externalAuth.backendRef',
      );
      expect(sr(l.conditions, 'Programmed')).toMatch(/^False\//);
    },
  );

  it(
    '"If a filter is unsupported by the implementation, the listener MUST be rejected via status ' +
      '(Accepted=False, Reason=UnsupportedValue)": an ExtensionRef, naming the filter',
    () => {
      const requests = [
        { type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: authRef } },
        { type: 'ExtensionRef', extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'p' } },
      ];
      const r = run([
        gatewayClass(),
        gateway('gw', [http('guarded', 80, { filters: { requests } }), http('open', 8080)]),
        authService(),
        grantToAuth(),
      ]);
      const l = listener(r, 'infra', 'gw', 'guarded');
      expect(sr(l.conditions, 'Accepted')).toBe('False/UnsupportedValue');
      expect(l.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
        'spec.listeners[0].filters.requests[1]: pre-routing ExtensionRef filters are not supported',
      );
      expect(sr(listener(r, 'infra', 'gw', 'open').conditions, 'Programmed')).toBe('True/Programmed');
      expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([8080]);
    },
  );

  it('a ListenerSet listener with ExternalAuth is served with it; on a TCP listener filters are InvalidListenerFilter', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()], { allowedListeners: { namespaces: { from: 'Same' } } }),
      authService(),
      referenceGrant(
        'to-auth',
        'apps',
        [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', namespace: 'infra' }],
        [{ group: '', kind: 'Service' }],
      ),
      listenerSet([
        http('guarded', 8081, { filters: extAuth }),
        { name: 'tcp', port: 8082, protocol: 'TCP', filters: extAuth },
      ]),
    ]);
    const s = statusOf(r, 'ListenerSet', 'infra', 'ls');
    const guarded = s.listeners.find((l: { name: string }) => l.name === 'guarded');
    expect(sr(guarded.conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(guarded.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(irListener(r, 'guarded')!.preRouting).toHaveLength(1);
    const tcp = s.listeners.find((l: { name: string }) => l.name === 'tcp');
    expect(sr(tcp.conditions, 'Accepted')).toBe('False/InvalidListenerFilter');
  });

  it('an empty filter list is no filter: the listener is served', () => {
    const r = run([gatewayClass(), gateway('gw', [http('l', 80, { filters: { requests: [] } })])]);
    expect(sr(listener(r, 'infra', 'gw', 'l').conditions, 'Accepted')).toBe('True/Accepted');
    expect(irListener(r, 'l')!.preRouting).toBeUndefined();
  });

  it('explain names what runs before routing on the listener that serves the route', () => {
    const objects = [
      gatewayClass(),
      gateway('gw', [http('guarded', 80, { filters: extAuth })]),
      service('svc'),
      authService(),
      grantToAuth(),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'guarded' })], rules: [{ backendRefs: [backend()] }] }),
    ];
    const text = explain(snapshotFromObjects(objects), 'HTTPRoute', 'apps', 'r').lines.join('\n');
    expect(text).toContain('before routing, every request passes ExternalAuth HTTP to apps/auth/9000');
  });

  it('an auth Service a BackendTLSPolicy targets is not called in plain text: the listener is not served', () => {
    const policy: KubeObject = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'auth-tls', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'auth' }],
        validation: { wellKnownCACertificates: 'System', hostname: 'auth.example' },
      },
    };
    const r = run([
      gatewayClass(),
      gateway('gw', [http('guarded', 80, { filters: extAuth })]),
      authService(),
      grantToAuth(),
      policy,
    ]);
    const l = listener(r, 'infra', 'gw', 'guarded');
    expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidListenerFilterRef');
    expect(l.conditions.find((c: { type: string }) => c.type === 'ResolvedRefs').message).toContain(
      'BackendTLSPolicy auth-tls',
    );
    expect(r.xdsIR.gateways.get('infra/gw')?.ports ?? []).toEqual([]);
  });
});
