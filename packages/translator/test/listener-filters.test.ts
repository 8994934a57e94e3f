// Pre-routing listener filters (Gateway API v1.7, GEP-5224): ExternalAuth (HTTP and gRPC) and
// ExtensionRef filters naming our PluginInstallation are served (listener-filters.ts); a reference that
// does not resolve, or a plugin not fetched yet, leaves the listener unserved, never served without it.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { explain, snapshotFromObjects, Translator } from '../src/index.js';
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

const SHA = 'a'.repeat(64);
const pluginFilter = (name: string) => ({
  type: 'ExtensionRef',
  extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name },
});
const plugin = (name: string, ns = 'infra'): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'PluginInstallation',
  metadata: { name, namespace: ns, generation: 1 },
  spec: { image: `registry.example.com/team/${name}:v1`, type: 'lua' },
});
/** The fetch worker's result for the plugin's current spec: content, or a failure (none fetched before). */
const fetched = (name: string, ns = 'infra', ok = true): KubeObject => ({
  apiVersion: 'turnpike.dev/internal',
  kind: 'PluginFetch',
  metadata: { name, namespace: ns },
  status: {
    observedGeneration: 1,
    image: `registry.example.com/team/${name}:v1`,
    fetched: ok,
    reason: ok ? 'Fetched' : 'NotFound',
    message: ok ? 'Fetched sha256:1234 (10 bytes)' : 'registry.example.com answered 404',
    ...(ok ? { digest: 'sha256:1234', sha256: SHA, size: 10, storage: { configMap: `turnpike-plugin-${name}` } } : {}),
  },
});
const messageOf = (l: Record<string, any>, type: string): string =>
  l.conditions.find((c: { type: string }) => c.type === type).message;

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

  it('an ExtensionRef to a fetched PluginInstallation runs it before routing, in list order with ExternalAuth', () => {
    const requests = [
      { type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: authRef } },
      pluginFilter('p'),
    ];
    const r = run([
      gatewayClass(),
      gateway('gw', [http('guarded', 80, { filters: { requests } }), http('open', 8080)]),
      authService(),
      grantToAuth(),
      plugin('p'),
      fetched('p'),
    ]);
    const l = listener(r, 'infra', 'gw', 'guarded');
    expect(sr(l.conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(l.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(sr(l.conditions, 'Programmed')).toBe('True/Programmed');
    expect(irListener(r, 'guarded')!.preRouting).toEqual([
      { type: 'ExternalAuth', protocol: 'HTTP', cluster: 'apps/auth/9000' },
      { type: 'ExtensionRef', plugin: { name: 'infra/p', type: 'lua', sha256: SHA } },
    ]);
    expect(irListener(r, 'open')!.preRouting).toBeUndefined();
    // The Gateway runs it: a consumer of the plugin.
    expect(statusOf(r, 'PluginInstallation', 'infra', 'p').consumers).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' },
    ]);
  });

  it(
    'an ExtensionRef to a PluginInstallation that does not exist is ResolvedRefs=False/InvalidListenerFilterRef ' +
      'naming the filter, and the listener serves nothing',
    () => {
      const r = run([gatewayClass(), gateway('gw', [http('l', 80, { filters: { requests: [pluginFilter('p')] } })])]);
      const l = listener(r, 'infra', 'gw', 'l');
      expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidListenerFilterRef');
      expect(messageOf(l, 'ResolvedRefs')).toContain(
        'spec.listeners[0].filters.requests[0].extensionRef: PluginInstallation infra/p not found',
      );
      expect(sr(l.conditions, 'Programmed')).toMatch(/^False\//);
      expect(r.xdsIR.gateways.get('infra/gw')?.ports ?? []).toEqual([]);
    },
  );

  it('an ExtensionRef of a kind other than turnpike.dev/PluginInstallation is InvalidListenerFilterRef', () => {
    const requests = [{ type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Filter', name: 'p' } }];
    const r = run([
      gatewayClass(),
      gateway('gw', [http('l', 80, { filters: { requests } })]),
      plugin('p'),
      fetched('p'),
    ]);
    const l = listener(r, 'infra', 'gw', 'l');
    expect(sr(l.conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidListenerFilterRef');
    expect(messageOf(l, 'ResolvedRefs')).toContain(
      'spec.listeners[0].filters.requests[0].extensionRef: example.com/Filter',
    );
    expect(r.xdsIR.gateways.get('infra/gw')?.ports ?? []).toEqual([]);
  });

  it(
    'extensionRef is a LocalObjectReference: a PluginInstallation of that name in another namespace is not ' +
      'used (InvalidListenerFilterRef), however a ReferenceGrant reads',
    () => {
      const grant = referenceGrant(
        'to-plugin',
        'apps',
        [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
        [{ group: 'turnpike.dev', kind: 'PluginInstallation' }],
      );
      const r = run([
        gatewayClass(),
        gateway('gw', [http('l', 80, { filters: { requests: [pluginFilter('p')] } })]),
        plugin('p', 'apps'),
        fetched('p', 'apps'),
        grant,
      ]);
      expect(sr(listener(r, 'infra', 'gw', 'l').conditions, 'ResolvedRefs')).toBe('False/InvalidListenerFilterRef');
      expect(r.xdsIR.gateways.get('infra/gw')?.ports ?? []).toEqual([]);
    },
  );

  it(
    'a plugin not fetched yet, or whose current spec failed to fetch, fails closed: the listener serves nothing ' +
      'until it is, and the Gateway is a consumer of it already',
    () => {
      const objects = (fetch?: KubeObject) => [
        gatewayClass(),
        gateway('gw', [http('l', 80, { filters: { requests: [pluginFilter('p')] } }), http('open', 8080)]),
        plugin('p'),
        ...(fetch ? [fetch] : []),
      ];
      for (const r of [run(objects()), run(objects(fetched('p', 'infra', false)))]) {
        const l = listener(r, 'infra', 'gw', 'l');
        expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidListenerFilterRef');
        expect(messageOf(l, 'ResolvedRefs')).toContain('PluginInstallation infra/p is not fetched');
        expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([8080]);
        expect(statusOf(r, 'PluginInstallation', 'infra', 'p').consumers).toEqual([
          { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' },
        ]);
      }
      const served = run(objects(fetched('p')));
      expect(irListener(served, 'l')!.preRouting).toHaveLength(1);
    },
  );

  it('incrementally: the listener is served once its plugin is fetched, and unserved when the plugin goes', () => {
    const base = [gatewayClass(), gateway('gw', [http('l', 80, { filters: { requests: [pluginFilter('p')] } })])];
    const t = new Translator();
    t.translate(snapshotFromObjects([...base, plugin('p')]));
    const served = t.translateWithChanges(snapshotFromObjects([...base, plugin('p'), fetched('p')]));
    expect(sr(listener(served.result, 'infra', 'gw', 'l').conditions, 'Programmed')).toBe('True/Programmed');
    expect(irListener(served.result, 'l')!.preRouting).toHaveLength(1);
    expect(served.changes.statuses).toContain('Gateway/infra/gw');
    const gone = t.translateWithChanges(snapshotFromObjects(base));
    expect(sr(listener(gone.result, 'infra', 'gw', 'l').conditions, 'ResolvedRefs')).toBe(
      'False/InvalidListenerFilterRef',
    );
    expect(gone.result.xdsIR.gateways.get('infra/gw')?.ports ?? []).toEqual([]);
  });

  it('an ExtensionRef filter without extensionRef is InvalidListenerFilter (the CRD refuses it)', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http('l', 80, { filters: { requests: [{ type: 'ExtensionRef' }] } })]),
    ]);
    const l = listener(r, 'infra', 'gw', 'l');
    expect(sr(l.conditions, 'Accepted')).toBe('False/InvalidListenerFilter');
    expect(messageOf(l, 'Accepted')).toContain('spec.listeners[0].filters.requests[0].extensionRef must be set');
  });

  it(
    '"If a filter is unsupported by the implementation, the listener MUST be rejected via status ' +
      '(Accepted=False, Reason=UnsupportedValue)": a filter type other than ExternalAuth and ExtensionRef',
    () => {
      const r = run([
        gatewayClass(),
        gateway('gw', [http('l', 80, { filters: { requests: [{ type: 'RateLimit' }] } }), http('open', 8080)]),
      ]);
      const l = listener(r, 'infra', 'gw', 'l');
      expect(sr(l.conditions, 'Accepted')).toBe('False/UnsupportedValue');
      expect(messageOf(l, 'Accepted')).toContain(
        'spec.listeners[0].filters.requests[0]: pre-routing RateLimit filters are not supported',
      );
      expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([8080]);
    },
  );

  it("a ListenerSet listener's ExtensionRef names a PluginInstallation of the ListenerSet's namespace", () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()], { allowedListeners: { namespaces: { from: 'Same' } } }),
      listenerSet([http('guarded', 8081, { filters: { requests: [pluginFilter('p')] } })]),
      plugin('p'),
      fetched('p'),
    ]);
    const s = statusOf(r, 'ListenerSet', 'infra', 'ls');
    expect(sr(s.listeners[0].conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(irListener(r, 'guarded')!.preRouting).toEqual([
      { type: 'ExtensionRef', plugin: { name: 'infra/p', type: 'lua', sha256: SHA } },
    ]);
  });

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

  it('explain names what runs before routing on the listener that serves the route, plugins included', () => {
    const requests = [...extAuth.requests, pluginFilter('p')];
    const objects = [
      gatewayClass(),
      gateway('gw', [http('guarded', 80, { filters: { requests } })]),
      plugin('p'),
      fetched('p'),
      service('svc'),
      authService(),
      grantToAuth(),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'guarded' })], rules: [{ backendRefs: [backend()] }] }),
    ];
    const text = explain(snapshotFromObjects(objects), 'HTTPRoute', 'apps', 'r').lines.join('\n');
    expect(text).toContain(
      'before routing, every request passes ExternalAuth HTTP to apps/auth/9000, then plugin infra/p (lua)',
    );
  });

  describe('an auth Service a BackendTLSPolicy targets: checks are made over TLS, never in plain text', () => {
    const tlsPolicy = (validation: Record<string, unknown>): KubeObject => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'auth-tls', namespace: 'apps', generation: 1 },
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'auth' }], validation },
    });
    const valid = () => tlsPolicy({ wellKnownCACertificates: 'System', hostname: 'auth.example' });
    const base = () => [
      gatewayClass(),
      gateway('gw', [http('guarded', 80, { filters: extAuth })]),
      authService(),
      grantToAuth(),
    ];
    const authCluster = (r: ReturnType<typeof run>) =>
      r.xdsIR.gateways.get('infra/gw')?.clusters.find((c) => c.name === 'apps/auth/9000');

    it('the policy applies to the check as to a route backend, and lists the Gateway as its ancestor', () => {
      const r = run([...base(), valid()]);
      const l = listener(r, 'infra', 'gw', 'guarded');
      expect(sr(l.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
      expect(sr(l.conditions, 'Programmed')).toBe('True/Programmed');
      expect(authCluster(r)?.tls).toMatchObject({
        sni: 'auth.example',
        wellKnownCA: 'System',
        policy: 'apps/auth-tls',
      });
      const ancestors = statusOf(r, 'BackendTLSPolicy', 'apps', 'auth-tls').ancestors;
      expect(ancestors).toHaveLength(1);
      expect(ancestors[0].ancestorRef).toEqual({
        group: 'gateway.networking.k8s.io',
        kind: 'Gateway',
        namespace: 'infra',
        name: 'gw',
      });
      expect(sr(ancestors[0].conditions, 'Accepted')).toBe('True/Accepted');
      const route = httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'guarded' })],
        rules: [{ backendRefs: [backend()] }],
      });
      const text = explain(snapshotFromObjects([...base(), valid(), route]), 'HTTPRoute', 'apps', 'r').lines.join('\n');
      expect(text).toContain(
        'before routing, every request passes ExternalAuth HTTP to apps/auth/9000 over TLS (BackendTLSPolicy apps/auth-tls)',
      );
    });

    it('an invalid policy leaves the listener unserved (InvalidListenerFilterRef naming the policy)', () => {
      const r = run([
        ...base(),
        tlsPolicy({ caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'none' }], hostname: 'auth.example' }),
      ]);
      const l = listener(r, 'infra', 'gw', 'guarded');
      expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidListenerFilterRef');
      expect(l.conditions.find((c: { type: string }) => c.type === 'ResolvedRefs').message).toContain(
        'BackendTLSPolicy apps/auth-tls for Service apps/auth is not valid',
      );
      expect(r.xdsIR.gateways.get('infra/gw')?.ports ?? []).toEqual([]);
      // The policy's own status says why, on the Gateway that uses it (as on a route's parent).
      const ancestors = statusOf(r, 'BackendTLSPolicy', 'apps', 'auth-tls').ancestors;
      expect(ancestors.map((a: { ancestorRef: { name: string } }) => a.ancestorRef.name)).toEqual(['gw']);
      expect(sr(ancestors[0].conditions, 'ResolvedRefs')).toBe('False/InvalidCACertificateRef');
    });

    it('a policy whose sectionName names no port of the auth Service: not applied, the Gateway told TargetNotFound', () => {
      const policy = valid();
      (policy.spec as { targetRefs: Record<string, unknown>[] }).targetRefs[0]!.sectionName = 'grpc';
      const r = run([...base(), policy]);
      expect(sr(listener(r, 'infra', 'gw', 'guarded').conditions, 'Programmed')).toBe('True/Programmed');
      expect(authCluster(r)?.tls).toBeUndefined();
      const ancestors = statusOf(r, 'BackendTLSPolicy', 'apps', 'auth-tls').ancestors;
      expect(ancestors.map((a: { ancestorRef: { name: string } }) => a.ancestorRef.name)).toEqual(['gw']);
      expect(sr(ancestors[0].conditions, 'Accepted')).toBe('False/TargetNotFound');
    });

    it('incrementally as fresh: the policy added, then removed, changes the check and the policy status', () => {
      const t = new Translator();
      t.translate(snapshotFromObjects(base()));
      const added = t.translateWithChanges(snapshotFromObjects([...base(), valid()]));
      expect(authCluster(added.result)?.tls?.sni).toBe('auth.example');
      expect(added.changes.statuses).toContain('BackendTLSPolicy/apps/auth-tls');
      expect(statusOf(added.result, 'BackendTLSPolicy', 'apps', 'auth-tls').ancestors).toHaveLength(1);
      const removed = t.translateWithChanges(snapshotFromObjects(base()));
      expect(authCluster(removed.result)).toBeDefined();
      expect(authCluster(removed.result)?.tls).toBeUndefined();
      // The Gateway no longer calls it (its listener dropped the filter): the policy has no ancestor left.
      const t2 = new Translator();
      t2.translate(snapshotFromObjects([...base(), valid()]));
      const unfiltered = t2.translate(
        snapshotFromObjects([
          gatewayClass(),
          gateway('gw', [http('guarded', 80)]),
          authService(),
          grantToAuth(),
          valid(),
        ]),
      );
      expect(unfiltered.statuses.get('BackendTLSPolicy/apps/auth-tls')).toBeUndefined();
    });
  });
});
