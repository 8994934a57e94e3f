// The assertions of the upstream Gateway API conformance tests that need no traffic, ported to
// the translator (test names follow the upstream ShortName).
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import {
  gateway,
  gatewayClass,
  http,
  httpRoute,
  listener,
  parent,
  referenceGrant,
  route,
  run,
  service,
  sr,
  statusOf,
  tlsSecret,
} from './builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from './tls-fixtures.js';

const grantSecrets = (ns: string, name?: string) =>
  referenceGrant(
    'g',
    ns,
    [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
    [{ group: '', kind: 'Secret', ...(name ? { name } : {}) }],
  );
const httpsTo = (ref: Record<string, unknown>) => ({
  name: 'https',
  port: 443,
  protocol: 'HTTPS',
  allowedRoutes: { namespaces: { from: 'All' } },
  tls: { mode: 'Terminate', certificateRefs: [ref] },
});
const btls = (name: string, svc: string, caRef: Record<string, unknown>, created: string): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'BackendTLSPolicy',
  metadata: { name, namespace: 'apps', generation: 1, creationTimestamp: created },
  spec: {
    targetRefs: [{ group: '', kind: 'Service', name: svc }],
    validation: { caCertificateRefs: [caRef], hostname: 'backend.test' },
  },
});

describe('conformance (status only)', () => {
  it('GatewayClassObservedGenerationBump: conditions follow the generation', () => {
    const gc = { ...gatewayClass(), metadata: { name: 'turnpike', generation: 2 } };
    expect(statusOf(run([gc]), 'GatewayClass', undefined, 'turnpike').conditions[0].observedGeneration).toBe(2);
  });
  it('GatewayInvalidTLSConfiguration: missing, wrong group, wrong kind and malformed Secrets are InvalidCertificateRef', () => {
    const malformed: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'malformed', namespace: 'infra' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'Zm9v', 'tls.key': 'YmFy' },
    };
    for (const ref of [
      { name: 'nonexistent' },
      { group: 'wrong.group.company.io', kind: 'Secret', name: 'malformed' },
      { kind: 'WrongKind', name: 'malformed' },
      { name: 'malformed' },
    ]) {
      const r = run([gatewayClass(), malformed, gateway('gw', [httpsTo(ref)])]);
      expect(sr(listener(r, 'infra', 'gw', 'https').conditions, 'ResolvedRefs')).toBe('False/InvalidCertificateRef');
    }
  });
  it('GatewaySecretMissingReferenceGrant / InvalidReferenceGrant: RefNotPermitted', () => {
    const secret = tlsSecret('cert', 'certs', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY);
    const missing = run([gatewayClass(), secret, gateway('gw', [httpsTo({ name: 'cert', namespace: 'certs' })])]);
    expect(sr(listener(missing, 'infra', 'gw', 'https').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
    const wrongName = run([
      gatewayClass(),
      secret,
      grantSecrets('certs', 'not-cert'),
      gateway('gw', [httpsTo({ name: 'cert', namespace: 'certs' })]),
    ]);
    expect(sr(listener(wrongName, 'infra', 'gw', 'https').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
  });
  it('GatewaySecretReferenceGrantAllInNamespace / Specific: ResolvedRefs and Programmed True', () => {
    for (const name of [undefined, 'cert']) {
      const r = run([
        gatewayClass(),
        tlsSecret('cert', 'certs', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
        grantSecrets('certs', name),
        gateway('gw', [httpsTo({ name: 'cert', namespace: 'certs' })]),
      ]);
      expect(sr(listener(r, 'infra', 'gw', 'https').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
      expect(sr(listener(r, 'infra', 'gw', 'https').conditions, 'Programmed')).toBe('True/Programmed');
    }
  });
  it('GatewayWithAttachedRoutes: routes count even on a listener with a bad certificate; a non-matching hostname does not', () => {
    const r = run([
      gatewayClass(),
      service('svc'),
      gateway('gw', [http('http', 80, { hostname: 'foo.example.com' }), httpsTo({ name: 'missing' })]),
      httpRoute('a', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
      httpRoute('b', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'https' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
      httpRoute('c', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }],
        hostnames: ['bar.example.com'],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    expect(listener(r, 'infra', 'gw', 'http').attachedRoutes).toBe(1);
    expect(listener(r, 'infra', 'gw', 'https').attachedRoutes).toBe(1);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'c').conditions, 'Accepted')).toBe('False/NoMatchingListenerHostname');
  });
  it('GatewayInvalidTLSBackendConfiguration: a bad clientCertificateRef is Gateway ResolvedRefs=False, still Accepted', () => {
    for (const [ref, reason] of [
      [{ name: 'nonexistent' }, 'InvalidClientCertificateRef'],
      [{ group: 'x.io', kind: 'Secret', name: 'c' }, 'InvalidClientCertificateRef'],
      [{ name: 'c', namespace: 'other' }, 'RefNotPermitted'],
    ] as const) {
      const r = run([gatewayClass(), gateway('gw', [http()], { tls: { backend: { clientCertificateRef: ref } } })]);
      const c = statusOf(r, 'Gateway', 'infra', 'gw').conditions;
      expect(sr(c, 'ResolvedRefs')).toBe(`False/${reason}`);
      expect(sr(c, 'Accepted')).toBe('True/Accepted');
    }
  });
  it('GatewayNameMaximumLength: a 253-character Gateway name still gets status and 63-character object names', () => {
    const name = 'g'.repeat(253);
    const r = run([gatewayClass(), gateway(name, [http()])]);
    expect(sr(statusOf(r, 'Gateway', 'infra', name).conditions, 'Accepted')).toBe('True/Accepted');
    const infra = r.infraIR.gateways.get(`infra/${name}`)!;
    expect(infra.name.length).toBeLessThanOrEqual(63);
    expect(infra.labels['gateway.networking.k8s.io/gateway-name']!.length).toBeLessThanOrEqual(63);
  });
  it('GatewayInfrastructure: spec.infrastructure labels and annotations reach the generated objects', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()], { infrastructure: { labels: { team: 'a' }, annotations: { 'x.io/y': 'z' } } }),
    ]);
    const infra = r.infraIR.gateways.get('infra/gw')!;
    expect(infra.labels).toMatchObject({ team: 'a', 'gateway.networking.k8s.io/gateway-name': 'gw' });
    expect(infra.annotations).toEqual({ 'x.io/y': 'z' });
    expect(infra.pod.labels.team).toBe('a');
  });
  it('HTTPRouteDisallowedKind: a listener allowing only TLSRoute refuses HTTPRoutes', () => {
    const r = run([
      gatewayClass(),
      service('svc'),
      gateway('gw', [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'TLSRoute' }] },
        },
      ]),
      httpRoute('r', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
    expect(listener(r, 'infra', 'gw', 'tls').attachedRoutes).toBe(0);
  });
  it('HTTPRouteInvalidCrossNamespaceParentRef: from Same refuses a route from another namespace', () => {
    const r = run([
      gatewayClass(),
      service('svc'),
      gateway('gw', [{ name: 'http', port: 80, protocol: 'HTTP' }]),
      httpRoute('r', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
  });
  it('HTTPRouteInvalidParentRefSectionNameNotMatchingPort: right sectionName, wrong port', () => {
    const r = run([
      gatewayClass(),
      service('svc'),
      gateway('gw', [http()]),
      httpRoute('r', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http', port: 81 }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingParent');
  });
  it('TLSRouteInvalidNoMatchingListener: a TLSRoute to an HTTP listener is NotAllowedByListeners', () => {
    const r = run([
      gatewayClass(),
      service('svc'),
      gateway('gw', [http()]),
      route('TLSRoute', 't', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        hostnames: ['a.test'],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    expect(sr(parent(r, 'TLSRoute', 'apps', 't').conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
  });
  it('TLSRouteInvalidNoMatchingListenerHostname and TLSRouteInvalidReferenceGrant', () => {
    const gw = gateway('gw', [
      {
        name: 'tls',
        port: 443,
        protocol: 'TLS',
        hostname: '*.example.com',
        tls: { mode: 'Passthrough' },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
    ]);
    const r = run([
      gatewayClass(),
      gw,
      service('svc', 'other'),
      route('TLSRoute', 'nohost', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        hostnames: ['a.other.org'],
        rules: [{ backendRefs: [{ name: 'svc', namespace: 'other', port: 8080 }] }],
      }),
      route('TLSRoute', 'nogrant', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        hostnames: ['a.example.com'],
        rules: [{ backendRefs: [{ name: 'svc', namespace: 'other', port: 8080 }] }],
      }),
    ]);
    expect(sr(parent(r, 'TLSRoute', 'apps', 'nohost').conditions, 'Accepted')).toBe('False/NoMatchingListenerHostname');
    expect(sr(parent(r, 'TLSRoute', 'apps', 'nogrant').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(parent(r, 'TLSRoute', 'apps', 'nogrant').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
  });
  it('TLSRouteListenerPassthroughSupportedKinds: TCPRoute on a passthrough listener is InvalidRouteKinds; TLSRoute stays', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { kinds: [{ kind: 'TCPRoute' }, { kind: 'TLSRoute' }] },
        },
      ]),
    ]);
    const l = listener(r, 'infra', 'gw', 'tls');
    expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidRouteKinds');
    expect(l.supportedKinds.map((k: { kind: string }) => k.kind)).toEqual(['TLSRoute']);
  });
  it('TLSRouteListenerTerminateSupportedKinds: a TLS Terminate listener accepts TLSRoute', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      gateway('gw', [
        { name: 'tls', port: 443, protocol: 'TLS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] } },
      ]),
    ]);
    const l = listener(r, 'infra', 'gw', 'tls');
    expect(sr(l.conditions, 'Accepted')).toBe('True/Accepted');
    expect(l.supportedKinds.map((k: { kind: string }) => k.kind)).toContain('TLSRoute');
  });
  it('TLSRouteMixedTerminationSameNamespace: Terminate and Passthrough share a port, told apart by SNI (TLSRouteModeMixed)', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      service('svc'),
      gateway('gw', [
        {
          name: 'term',
          port: 8443,
          protocol: 'TLS',
          hostname: 'a.test',
          tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
        {
          name: 'pass',
          port: 8443,
          protocol: 'TLS',
          hostname: 'b.test',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ]),
      route('TLSRoute', 't', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'term' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
      route('TLSRoute', 'p', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'pass' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    for (const n of ['term', 'pass'])
      expect(sr(listener(r, 'infra', 'gw', n).conditions, 'Accepted')).toBe('True/Accepted');
    const port = r.xdsIR.gateways.get('infra/gw')!.ports.find((p) => p.port === 8443)!;
    expect(port.listeners.map((l) => [l.name, l.tls?.mode, l.routes?.map((x) => x.source.name)])).toEqual([
      ['Gateway/infra/gw/pass', 'Passthrough', ['p']],
      ['Gateway/infra/gw/term', 'Terminate', ['t']],
    ]);
  });
  it('TCPRouteInvalidBackendRefNonexistent / InvalidCrossNamespaceBackendRef / InvalidNonTCPListener', () => {
    const gw = gateway('gw', [
      { name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } },
      http(),
    ]);
    const r = run([
      gatewayClass(),
      gw,
      service('svc', 'other', [{ port: 9000, protocol: 'TCP' }]),
      route('TCPRoute', 'missing', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'tcp' }],
        rules: [{ backendRefs: [{ name: 'nope', port: 9000 }] }],
      }),
      route('TCPRoute', 'cross', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'tcp' }],
        rules: [{ backendRefs: [{ name: 'svc', namespace: 'other', port: 9000 }] }],
      }),
      route('TCPRoute', 'nontcp', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }],
        rules: [{ backendRefs: [{ name: 'nope', port: 9000 }] }],
      }),
    ]);
    expect(sr(parent(r, 'TCPRoute', 'apps', 'missing').conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
    expect(sr(parent(r, 'TCPRoute', 'apps', 'cross').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
    expect(sr(parent(r, 'TCPRoute', 'apps', 'nontcp').conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
  });
  it('UDPRouteNotAllowedByListeners: a UDPRoute to a TLS listener', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ]),
      route('UDPRoute', 'u', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 53 }] }],
      }),
    ]);
    expect(sr(parent(r, 'UDPRoute', 'apps', 'u').conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
  });
  it('BackendTLSPolicyInvalidCACertificateRef / InvalidKind / ConflictResolution', () => {
    const objs = [
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      service('svc2'),
      httpRoute('r', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [
          {
            backendRefs: [
              { name: 'svc', port: 8080 },
              { name: 'svc2', port: 8080 },
            ],
          },
        ],
      }),
      btls('bad-ref', 'svc', { group: '', kind: 'ConfigMap', name: 'missing' }, '2026-01-01T00:00:00Z'),
      btls('newer', 'svc', { group: '', kind: 'ConfigMap', name: 'missing' }, '2026-01-02T00:00:00Z'),
      btls('bad-kind', 'svc2', { group: '', kind: 'Bucket', name: 'x' }, '2026-01-01T00:00:00Z'),
    ];
    const r = run(objs);
    const anc = (n: string) => statusOf(r, 'BackendTLSPolicy', 'apps', n).ancestors[0];
    expect(sr(anc('bad-ref').conditions, 'ResolvedRefs')).toBe('False/InvalidCACertificateRef');
    expect(sr(anc('bad-ref').conditions, 'Accepted')).toBe('False/NoValidCACertificate');
    expect(sr(anc('bad-kind').conditions, 'ResolvedRefs')).toBe('False/InvalidKind');
    expect(anc('bad-ref').ancestorRef).toEqual({
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      namespace: 'infra',
      name: 'gw',
    });
    expect(sr(anc('newer').conditions, 'Accepted')).toBe('False/Conflicted');
  });
});
