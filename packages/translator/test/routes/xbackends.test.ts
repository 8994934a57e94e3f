// backendRefs to an XBackend (GEP-4894): ExternalHostname with TLS None is served as a DNS cluster;
// what is not served is a ResolvedRefs problem naming the field.
import { describe, expect, it } from '@jest/globals';
import {
  gateway,
  gatewayClass,
  http,
  irRoutes,
  parent,
  referenceGrant,
  route,
  run,
  sr,
  statusOf,
  tlsSecret,
  xbackend,
} from '../builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../tls-fixtures.js';
import { snapshotFromObjects, Translator } from '../../src/index.js';
import type { KubeObject } from '@turnpike/api';

const X = 'gateway.networking.x-k8s.io';

const external = (extra: Record<string, unknown> = {}) =>
  xbackend('ext', {
    type: 'ExternalHostname',
    port: { number: 443 },
    externalHostname: { hostname: 'api.example.com' },
    tls: { mode: 'None' },
    ...extra,
  });

const toX = (ref: Record<string, unknown> = {}, kind = 'HTTPRoute') =>
  route(kind, 'r', {
    parentRefs: [{ name: 'gw', namespace: 'infra' }],
    rules: [{ backendRefs: [{ group: X, kind: 'XBackend', name: 'ext', ...ref }] }],
  });

const MUTUAL = {
  mode: 'ClientAndServer',
  clientCertificateRef: { name: 'client' },
  validation: { hostname: 'api.example.com', wellKnownCACertificates: 'System' },
};

const caConfigMap: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'ca', namespace: 'apps' },
  data: { 'ca.crt': EXAMPLE_COM_CERT },
};

const base = (listeners = [http()]) => [gatewayClass(), gateway('gw', listeners)];

describe('XBackend backendRefs (GEP-4894)', () => {
  it('ExternalHostname, TLS None: a DNS cluster of the hostname and spec.port, and the route resolves', () => {
    const r = run([...base(), external(), toX()]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(sr(p.conditions, 'Accepted')).toBe('True/Accepted');
    expect(irRoutes(r)[0].backends).toEqual([{ cluster: 'apps/XBackend/ext', weight: 1 }]);
    const cluster = r.xdsIR.gateways.get('infra/gw')!.clusters.find((c) => c.name === 'apps/XBackend/ext');
    expect(cluster).toMatchObject({ protocol: 'http', external: { hostname: 'api.example.com', port: 443 } });
    expect(cluster?.tls).toBeUndefined();
    // No endpoints of ours: the proxy resolves the name.
    expect(r.xdsIR.endpoints.get('apps/XBackend/ext') ?? []).toEqual([]);
  });

  it('a TLS block left out is TLS None (the CRD defaults it to {mode: None})', () => {
    const r = run([...base(), external({ tls: undefined }), toX()]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
  });

  it('"Must not have port for Backend reference" (the CRD rule on BackendObjectReference): refused', () => {
    const r = run([...base(), external(), toX({ port: 443 })]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'ResolvedRefs')).toBe('False/UnsupportedValue');
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
  });

  it('"Backends MUST live in the same namespace as any route ... that references them": a grant does not help', () => {
    const grant = referenceGrant(
      'g',
      'other',
      [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }],
      [{ group: X, kind: 'XBackend' }],
    );
    const r = run([
      ...base(),
      xbackend('ext', external().spec as Record<string, unknown>, 'other'),
      grant,
      toX({ namespace: 'other' }),
    ]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
  });

  it('a missing XBackend is BackendNotFound', () => {
    const r = run([...base(), toX()]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
  });

  it('refused by name: an EndpointSelector without labels (it would select every Pod), session persistence on a hostname', () => {
    const sel = xbackend('ext', {
      type: 'EndpointSelector',
      port: { number: 80 },
      endpointSelector: { matchLabels: {} },
    });
    const p2 = parent(run([...base(), sel, toX()]), 'HTTPRoute', 'apps', 'r');
    expect(sr(p2.conditions, 'ResolvedRefs')).toBe('False/UnsupportedValue');
    expect(p2.conditions.find((c: { type: string }) => c.type === 'ResolvedRefs')?.message).toContain(
      'spec.endpointSelector.matchLabels',
    );
    const sticky = external({ sessionPersistence: { type: 'Cookie', cookie: { name: 's' } } });
    const p3 = parent(run([...base(), sticky, toX()]), 'HTTPRoute', 'apps', 'r');
    expect(p3.conditions.find((c: { type: string }) => c.type === 'ResolvedRefs')?.message).toContain(
      'spec.sessionPersistence can only be set when spec.type is EndpointSelector',
    );
  });

  it('protocol H2C: HTTP/2 without TLS to the hostname; a GRPCRoute speaks HTTP/2 to it', () => {
    const r = run([...base(), external({ protocol: 'H2C' }), toX()]);
    expect(irRoutes(r)[0].backends).toEqual([{ cluster: 'apps/XBackend/ext/h2', weight: 1 }]);
    const g = run([...base(), external(), toX({}, 'GRPCRoute')]);
    expect(sr(parent(g, 'GRPCRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(g.xdsIR.gateways.get('infra/gw')!.clusters.map((c) => c.name)).toContain('apps/XBackend/ext/h2');
  });

  it('protocol WSS: an HTTP/1.1 cluster over TLS for an HTTPRoute (Upgrade requests pass); not for a GRPCRoute', () => {
    const wss = external({
      protocol: 'WSS',
      tls: { mode: 'ServerOnly', validation: { hostname: 'api.example.com', wellKnownCACertificates: 'System' } },
    });
    const r = run([...base(), wss, toX()]);
    const c = r.xdsIR.gateways.get('infra/gw')!.clusters.find((x) => x.name === 'apps/XBackend/ext');
    expect(c).toMatchObject({ protocol: 'http', tls: { sni: 'api.example.com' } });
    const g = run([...base(), wss, toX({}, 'GRPCRoute')]);
    expect(sr(parent(g, 'GRPCRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/UnsupportedProtocol');
  });

  it('protocol HTTP11 cannot carry a GRPCRoute: UnsupportedProtocol', () => {
    const g = run([...base(), external({ protocol: 'HTTP11' }), toX({}, 'GRPCRoute')]);
    expect(sr(parent(g, 'GRPCRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/UnsupportedProtocol');
  });

  it('a TCPRoute to an ExternalHostname: the bytes go to the DNS cluster', () => {
    const listeners = [{ name: 'tcp', port: 5432, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }];
    const r = run([...base(listeners), external(), toX({}, 'TCPRoute')]);
    expect(sr(parent(r, 'TCPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    const cluster = r.xdsIR.gateways.get('infra/gw')!.clusters.find((c) => c.name === 'apps/XBackend/ext/tcp');
    expect(cluster?.external).toEqual({ hostname: 'api.example.com', port: 443 });
  });

  it('"MUST add either TLS or JWT validation on sensitive localhost endpoints": the proxy\'s own are refused', () => {
    for (const extra of [
      { port: { number: 19000 } },
      { port: { number: 19003 } },
      { externalHostname: { hostname: 'a.localhost' } },
    ]) {
      const r = run([...base(), external(extra), toX()]);
      expect([extra, sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')]).toEqual([
        extra,
        'False/UnsupportedValue',
      ]);
    }
  });

  it("a UDPRoute to an XBackend is refused (UnsupportedProtocol): its backends are Services' endpoints by locality", () => {
    const listeners = [{ name: 'dns', port: 53, protocol: 'UDP', allowedRoutes: { namespaces: { from: 'All' } } }];
    const r = run([...base(listeners), external(), toX({}, 'UDPRoute')]);
    expect(sr(parent(r, 'UDPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/UnsupportedProtocol');
  });

  it('a hostname the CRD refuses (.cluster.local) is refused here too, for objects stored before the rule', () => {
    const r = run([...base(), external({ externalHostname: { hostname: 'svc.ns.svc.cluster.local' } }), toX()]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/UnsupportedValue');
  });

  it('status.ancestors: the Gateway of each route that reaches it, Accepted; refused ones say why; none left: no status', () => {
    const ok = run([...base(), external(), toX()]);
    const st = statusOf(ok, 'XBackend', 'apps', 'ext');
    expect(st.ancestors).toHaveLength(1);
    expect(st.ancestors[0].ancestorRef).toEqual({
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      namespace: 'infra',
      name: 'gw',
    });
    expect(sr(st.ancestors[0].conditions, 'Accepted')).toBe('True/Accepted');
    const tls = external({ tls: MUTUAL });
    const refused = statusOf(run([...base(), tls, toX()]), 'XBackend', 'apps', 'ext');
    // Its client certificate Secret does not exist.
    expect(sr(refused.ancestors[0].conditions, 'Accepted')).toBe('False/InvalidClientCertificateRef');
    expect(run([...base(), external()]).statuses.get('XBackend/apps/ext')).toBeUndefined();
  });

  it('status.ancestors follow the routes on an incremental translation, and are told as changed (a route added, then removed)', () => {
    const t = new Translator();
    const without = snapshotFromObjects([...base(), external()]);
    t.translate(without);
    const added = t.translateWithChanges(snapshotFromObjects([...base(), external(), toX()]));
    expect(added.result.statuses.get('XBackend/apps/ext')).toEqual(
      run([...base(), external(), toX()]).statuses.get('XBackend/apps/ext'),
    );
    // The sinks (status writer, printer) write only what a translation says changed.
    expect(added.changes.statuses).toContain('XBackend/apps/ext');
    const removed = t.translateWithChanges(without);
    expect(removed.result.statuses.get('XBackend/apps/ext')).toBeUndefined();
    expect(removed.changes.statuses).toContain('XBackend/apps/ext');
  });

  describe('TLS ServerOnly: "enables TLS with server certificate verification"', () => {
    const serverOnly = (validation: Record<string, unknown>) => external({ tls: { mode: 'ServerOnly', validation } });
    const clusterOf = (objects: KubeObject[]) =>
      run([...base(), ...objects, toX()])
        .xdsIR.gateways.get('infra/gw')
        ?.clusters.find((c) => c.external);

    it('the system CA: SNI and the names from validation, and no client certificate presented', () => {
      const c = clusterOf([
        serverOnly({
          hostname: 'api.example.com',
          wellKnownCACertificates: 'System',
          subjectAltNames: [{ type: 'Hostname', hostname: 'alt.example.com' }],
        }),
      ]);
      expect(c?.tls).toEqual({
        sni: 'api.example.com',
        wellKnownCA: 'System',
        subjectAltNames: [{ type: 'DNS', value: 'alt.example.com' }],
        clientCertificate: false,
        policy: 'XBackend/apps/ext',
      });
    });

    it('a CA from a ConfigMap in the XBackend namespace', () => {
      const c = clusterOf([
        caConfigMap,
        serverOnly({ hostname: 'api.example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] }),
      ]);
      expect(c?.tls?.caBundle).toContain('BEGIN CERTIFICATE');
    });

    it('a CA reference that does not resolve refuses the backend: TLS it cannot verify is not sent', () => {
      const r = run([
        ...base(),
        serverOnly({
          hostname: 'api.example.com',
          caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'nope' }],
        }),
        toX(),
      ]);
      const p = parent(r, 'HTTPRoute', 'apps', 'r');
      expect(sr(p.conditions, 'ResolvedRefs')).toBe('False/InvalidCACertificateRef');
      expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
    });
  });

  describe('TLS ClientAndServer: "enables mutual TLS (mTLS)" with the XBackend\'s own certificate', () => {
    it('its Secret is presented over SDS, with the server checked as in ServerOnly', () => {
      const r = run([
        ...base(),
        tlsSecret('client', 'apps', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
        external({ tls: MUTUAL }),
        toX(),
      ]);
      expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
      const gw = r.xdsIR.gateways.get('infra/gw')!;
      const c = gw.clusters.find((x) => x.external)!;
      expect(c.tls).toMatchObject({
        sni: 'api.example.com',
        wellKnownCA: 'System',
        clientCertificate: { secret: 'apps/client' },
      });
      expect(gw.secrets.map((s) => s.name)).toEqual(['apps/client']);
    });

    it('a Secret in another namespace is refused (a ReferenceGrant names no XBackend referrer)', () => {
      const tls = { ...MUTUAL, clientCertificateRef: { name: 'client', namespace: 'other' } };
      const r = run([
        ...base(),
        tlsSecret('client', 'other', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
        external({ tls }),
        toX(),
      ]);
      expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
    });
  });
});
