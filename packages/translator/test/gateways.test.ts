// Gateway listeners (gateways.ts, listener-validity.ts, listener-conflicts.ts, listener-protocols.ts): validity, conflicts, attachedRoutes.
import { describe, expect, it } from '@jest/globals';
import {
  gateway,
  gatewayClass,
  http,
  httpRoute,
  listener,
  namespace,
  referenceGrant,
  run,
  service,
  sr,
  statusOf,
  tlsSecret,
} from './builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_CERT, OTHER_TEST_KEY } from './tls-fixtures.js';
import { generatedName } from '../src/index.js';

const https = (name: string, certName: string, ns?: string, hostname?: string) => ({
  name,
  port: 443,
  protocol: 'HTTPS',
  ...(hostname ? { hostname } : {}),
  allowedRoutes: { namespaces: { from: 'All' } },
  tls: { mode: 'Terminate', certificateRefs: [{ name: certName, ...(ns ? { namespace: ns } : {}) }] },
});

describe('Gateway listeners', () => {
  it('an unsupported protocol makes the listener Accepted=False/UnsupportedProtocol and, alone, the Gateway ListenersNotValid', () => {
    const r = run([gatewayClass(), gateway('gw', [{ name: 'x', port: 80, protocol: 'INVALID' }])]);
    expect(sr(listener(r, 'infra', 'gw', 'x').conditions, 'Accepted')).toBe('False/UnsupportedProtocol');
    expect(sr(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toBe('False/ListenersNotValid');
  });
  it('one valid and one invalid listener: Gateway Accepted=True/ListenersNotValid', () => {
    const r = run([gatewayClass(), gateway('gw', [http(), { name: 'x', port: 81, protocol: 'INVALID' }])]);
    expect(sr(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toBe('True/ListenersNotValid');
  });
  it('allowedRoutes.kinds the protocol cannot serve give ResolvedRefs=False/InvalidRouteKinds and keep the valid kinds', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http('http', 80, { allowedRoutes: { kinds: [{ kind: 'FooRoute' }, { kind: 'HTTPRoute' }] } })]),
    ]);
    const l = listener(r, 'infra', 'gw', 'http');
    expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidRouteKinds');
    expect(l.supportedKinds).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
  });
  it('only invalid kinds leave supportedKinds empty', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http('http', 80, { allowedRoutes: { kinds: [{ kind: 'TCPRoute' }] } })]),
    ]);
    expect(listener(r, 'infra', 'gw', 'http').supportedKinds).toEqual([]);
  });
  it('default supportedKinds follow the protocol', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [
        http(),
        { name: 'tcp', port: 9000, protocol: 'TCP' },
        { name: 'udp', port: 53, protocol: 'UDP' },
        { name: 'tls', port: 8443, protocol: 'TLS', tls: { mode: 'Passthrough' } },
      ]),
    ]);
    const kinds = (n: string) => listener(r, 'infra', 'gw', n).supportedKinds.map((k: { kind: string }) => k.kind);
    expect(kinds('http')).toEqual(['HTTPRoute', 'GRPCRoute']);
    expect(kinds('tcp')).toEqual(['TCPRoute']);
    expect(kinds('udp')).toEqual(['UDPRoute']);
    expect(kinds('tls')).toEqual(['TLSRoute']);
  });
  it('HTTP and HTTPS on one port is a ProtocolConflict for both, with no winner', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      gateway('gw', [http('a', 443), https('b', 'cert')]),
    ]);
    for (const n of ['a', 'b']) {
      expect(sr(listener(r, 'infra', 'gw', n).conditions, 'Conflicted')).toBe('True/ProtocolConflict');
      expect(sr(listener(r, 'infra', 'gw', n).conditions, 'Programmed')).toBe('False/Invalid');
    }
  });
  it('two HTTP listeners with the same port and hostname are a HostnameConflict', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [
        http('a', 80, { hostname: 'x.test' }),
        http('b', 80, { hostname: 'x.test' }),
        http('c', 80, { hostname: 'y.test' }),
      ]),
    ]);
    expect(sr(listener(r, 'infra', 'gw', 'a').conditions, 'Conflicted')).toBe('True/HostnameConflict');
    expect(sr(listener(r, 'infra', 'gw', 'c').conditions, 'Conflicted')).toBeUndefined();
  });
  it('TLS and UDP listeners on the same number do not conflict (different transports)', () => {
    const r = run([gatewayClass(), gateway('gw', [http('a', 80), { name: 'u', port: 80, protocol: 'UDP' }])]);
    expect(sr(listener(r, 'infra', 'gw', 'u').conditions, 'Programmed')).toBe('True/Programmed');
  });
  it('a certificate Secret that does not exist is ResolvedRefs=False/InvalidCertificateRef and the listener is not programmed', () => {
    const r = run([gatewayClass(), gateway('gw', [https('s', 'missing')])]);
    const l = listener(r, 'infra', 'gw', 's');
    expect(sr(l.conditions, 'ResolvedRefs')).toBe('False/InvalidCertificateRef');
    expect(sr(l.conditions, 'Programmed')).toBe('False/Invalid');
    expect(cMessage(l.conditions, 'ResolvedRefs')).toContain(
      'spec.listeners[0].tls.certificateRefs[0]: Secret infra/missing not found',
    );
  });
  it('a Secret whose key does not belong to its certificate is InvalidCertificateRef', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, OTHER_TEST_KEY),
      gateway('gw', [https('s', 'cert')]),
    ]);
    expect(cMessage(listener(r, 'infra', 'gw', 's').conditions, 'ResolvedRefs')).toMatch(/does not belong/);
  });
  it('a Secret with garbage PEM is InvalidCertificateRef', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('cert', 'infra', 'garbage', 'garbage'),
      gateway('gw', [https('s', 'cert')]),
    ]);
    expect(sr(listener(r, 'infra', 'gw', 's').conditions, 'ResolvedRefs')).toBe('False/InvalidCertificateRef');
  });
  it('a certificate in another namespace needs a ReferenceGrant (RefNotPermitted) and is accepted with one', () => {
    const base = [
      gatewayClass(),
      tlsSecret('cert', 'certs', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      gateway('gw', [https('s', 'cert', 'certs')]),
    ];
    const denied = run(base);
    expect(sr(listener(denied, 'infra', 'gw', 's').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
    const grant = referenceGrant(
      'g',
      'certs',
      [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
      [{ group: '', kind: 'Secret' }],
    );
    const allowed = run([...base, grant]);
    expect(sr(listener(allowed, 'infra', 'gw', 's').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(sr(listener(allowed, 'infra', 'gw', 's').conditions, 'Programmed')).toBe('True/Programmed');
  });
  it('RefNotPermitted does not reveal whether the Secret exists', () => {
    const a = run([gatewayClass(), gateway('gw', [https('s', 'cert', 'certs')])]);
    const b = run([
      gatewayClass(),
      tlsSecret('cert', 'certs', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      gateway('gw', [https('s', 'cert', 'certs')]),
    ]);
    expect(listener(a, 'infra', 'gw', 's').conditions).toEqual(listener(b, 'infra', 'gw', 's').conditions);
  });
  it('certificates that cover a common hostname on one port are OverlappingTLSConfig', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('c1', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      tlsSecret('c2', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      tlsSecret('c3', 'infra', OTHER_TEST_CERT, OTHER_TEST_KEY),
      gateway('gw', [
        https('a', 'c1', undefined, 'a.example.com'),
        https('b', 'c2', undefined, 'b.example.com'),
        https('c', 'c3', undefined, 'other.test'),
      ]),
    ]);
    expect(sr(listener(r, 'infra', 'gw', 'a').conditions, 'OverlappingTLSConfig')).toBe('True/OverlappingCertificates');
    expect(sr(listener(r, 'infra', 'gw', 'c').conditions, 'OverlappingTLSConfig')).toBeUndefined();
  });
  it('a TLS listener without mode is UnsupportedValue; Passthrough ignores certificateRefs, even one that does not exist', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [
        { name: 't', port: 9443, protocol: 'TLS' },
        { name: 'p', port: 9444, protocol: 'TLS', tls: { mode: 'Passthrough', certificateRefs: [{ name: 'x' }] } },
      ]),
    ]);
    expect(sr(listener(r, 'infra', 'gw', 't').conditions, 'Accepted')).toBe('False/UnsupportedValue');
    const p = listener(r, 'infra', 'gw', 'p').conditions;
    expect([sr(p, 'Accepted'), sr(p, 'ResolvedRefs'), sr(p, 'Programmed')]).toEqual([
      'True/Accepted',
      'True/ResolvedRefs',
      'True/Programmed',
    ]);
    const port = r.xdsIR.gateways.get('infra/gw')!.ports.find((x) => x.port === 9444)!;
    expect(JSON.stringify(port)).not.toContain('infra/x');
  });
  it('two HTTPS listeners whose hostnames and certificates both overlap: OverlappingCertificates', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('c1', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      tlsSecret('c2', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      gateway('gw', [
        https('wide', 'c1', undefined, '*.example.com'),
        https('narrow', 'c2', undefined, 'www.example.com'),
      ]),
    ]);
    expect(sr(listener(r, 'infra', 'gw', 'wide').conditions, 'OverlappingTLSConfig')).toBe(
      'True/OverlappingCertificates',
    );
    expect(sr(listener(r, 'infra', 'gw', 'narrow').conditions, 'OverlappingTLSConfig')).toBe(
      'True/OverlappingCertificates',
    );
  });
  it('attachedRoutes counts the routes each listener accepted; observedGeneration follows the generation', () => {
    const gw = gateway('gw', [http('a', 80, { hostname: 'a.test' }), http('b', 81)], {}, 'infra', { generation: 7 });
    const r = run([
      gatewayClass(),
      gw,
      service('svc'),
      httpRoute('r1', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        hostnames: ['a.test'],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
      httpRoute('r2', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'b' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    expect(listener(r, 'infra', 'gw', 'a').attachedRoutes).toBe(1);
    expect(listener(r, 'infra', 'gw', 'b').attachedRoutes).toBe(2);
    const s = statusOf(r, 'Gateway', 'infra', 'gw');
    for (const c of [...s.conditions, ...s.listeners.flatMap((l: { conditions: unknown[] }) => l.conditions)])
      expect((c as { observedGeneration: number }).observedGeneration).toBe(7);
  });
  it('attachedRoutes leaves out a route that is not Accepted (all its rules invalid), though its matches answer 500', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http('a', 80)]),
      service('svc'),
      httpRoute('good', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
      httpRoute('bad', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [
          {
            matches: [{ path: { type: 'RegularExpression', value: '(?=x)' } }],
            backendRefs: [{ name: 'svc', port: 8080 }],
          },
        ],
      }),
    ]);
    expect(sr(statusOf(r, 'HTTPRoute', 'apps', 'bad').parents[0].conditions, 'Accepted')).toBe(
      'False/UnsupportedValue',
    );
    expect(listener(r, 'infra', 'gw', 'a').attachedRoutes).toBe(1);
  });
  it('an unsupported address type is Accepted=False/UnsupportedAddress', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()], { addresses: [{ type: 'test/fake-invalid-type', value: 'x' }] }),
    ]);
    expect(sr(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toBe('False/UnsupportedAddress');
  });
  it('spec.infrastructure.parametersRef to a missing ProxyConfig is InvalidParameters', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()], {
        infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'nope' } },
      }),
    ]);
    expect(sr(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toBe('False/InvalidParameters');
  });
  it('the Gateway address comes from the generated Service, typed', () => {
    const svc = { ...service(generatedName('infra', 'gw'), 'infra'), spec: { clusterIP: '10.96.0.10', ports: [] } };
    const r = run([gatewayClass(), gateway('gw', [http()]), svc]);
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toEqual([
      { type: 'IPAddress', value: '10.96.0.10', routability: 'Cluster' },
    ]);
  });
  it('a Gateway of a class that is not ours gets no status', () => {
    const r = run([
      gatewayClass(),
      { ...gateway('gw', [http()]), spec: { gatewayClassName: 'someone-else', listeners: [http()] } },
    ]);
    expect(r.statuses.get('Gateway/infra/gw')).toBeUndefined();
  });
  it('allowedRoutes from Selector selects namespaces by label', () => {
    const gw = gateway('gw', [
      http('http', 80, {
        allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'a' } } } },
      }),
    ]);
    const r = run([
      gatewayClass(),
      gw,
      namespace('apps', { team: 'a' }),
      namespace('other', { team: 'b' }),
      service('svc'),
      service('svc', 'other'),
      httpRoute('in', {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
      httpRoute(
        'out',
        { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }] },
        'other',
      ),
    ]);
    expect(sr(statusOf(r, 'HTTPRoute', 'apps', 'in').parents[0].conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(statusOf(r, 'HTTPRoute', 'other', 'out').parents[0].conditions, 'Accepted')).toBe(
      'False/NotAllowedByListeners',
    );
  });
});

function cMessage(list: unknown, type: string): string {
  return (list as { type: string; message: string }[]).find((c) => c.type === type)?.message ?? '';
}
