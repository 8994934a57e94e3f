// XBackend backends (GEP-4894) as the proxy gets them: the clusters and routes pass PGV and Envoy's
// load rules, and the route-table check sends a request to the XBackend's cluster.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { envoyLoadProblems, envoyResourcesFor, validateResources, type EnvoyResources } from '../../src/index.js';
import { gateway, gatewayClass, http, route, tlsSecret, xbackend } from '../../../translator/test/builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../../translator/test/tls-fixtures.js';
import type { UpstreamTlsContext } from '../../src/envoy-types.js';
import { routeHttp, routeTcp } from './envoy-router.js';

const X = 'gateway.networking.x-k8s.io';

const external = (extra: Record<string, unknown> = {}) =>
  xbackend('ext', {
    type: 'ExternalHostname',
    port: { number: 8443 },
    externalHostname: { hostname: 'api.example.com' },
    tls: { mode: 'None' },
    ...extra,
  });

const toX = (kind = 'HTTPRoute') =>
  route(kind, 'r', {
    parentRefs: [{ name: 'gw', namespace: 'infra' }],
    rules: [{ backendRefs: [{ group: X, kind: 'XBackend', name: 'ext' }] }],
  });

function served(objects: KubeObject[], listeners = [http()], gwSpec: Record<string, unknown> = {}): EnvoyResources {
  const all = [gatewayClass(), gateway('gw', listeners, gwSpec), ...objects];
  const result = new Translator().translate(snapshotFromObjects(all));
  const res = envoyResourcesFor(
    result.xdsIR.gateways.get('infra/gw')!,
    (kind, ns, name) => all.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name),
    undefined,
    result.xdsIR.endpoints,
  );
  expect(validateResources(res)).toEqual([]);
  expect(envoyLoadProblems(res)).toEqual([]);
  return res;
}

describe('XBackend ExternalHostname on the data plane', () => {
  it('an HTTPRoute request goes to a LOGICAL_DNS cluster of the hostname and port, with no EDS resource', () => {
    const res = served([external(), toX()]);
    const cluster = res.clusters.find((c) => c.name === 'apps/XBackend/ext')!;
    expect(cluster.type).toBe('LOGICAL_DNS');
    expect(cluster.eds_cluster_config).toBeUndefined();
    expect(cluster.transport_socket).toBeUndefined(); // TLS None
    expect(cluster.load_assignment?.endpoints?.[0]?.lb_endpoints?.[0]?.endpoint?.address?.socket_address).toEqual({
      address: 'api.example.com',
      port_value: 8443,
    });
    expect(res.endpoints.map((e) => e.cluster_name)).not.toContain('apps/XBackend/ext');
    const o = routeHttp(res, { port: 80, authority: 'example.com', path: '/x' });
    expect(o.kind === 'http' && o.targets?.map((t) => [t.cluster, t.exists, t.healthy])).toEqual([
      ['apps/XBackend/ext', true, true],
    ]);
  });

  it('protocol H2C: the cluster speaks HTTP/2 in clear text', () => {
    const res = served([external({ protocol: 'H2C' }), toX()]);
    const cluster = res.clusters.find((c) => c.name === 'apps/XBackend/ext/h2')!;
    expect(cluster.http2_protocol_options).toEqual({});
    expect(cluster.transport_socket).toBeUndefined();
  });

  it('a TCPRoute connection goes to the DNS cluster', () => {
    const listeners = [{ name: 'tcp', port: 5432, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }];
    const res = served([external(), toX('TCPRoute')], listeners);
    const o = routeTcp(res, 5432);
    expect(o.kind === 'tcp' && o.targets.map((t) => [t.cluster, t.exists, t.healthy])).toEqual([
      ['apps/XBackend/ext/tcp', true, true],
    ]);
  });

  it('the load rule: a LOGICAL_DNS cluster with two endpoints is refused, as Envoy does', () => {
    const res = served([external(), toX()]);
    const cluster = res.clusters.find((c) => c.name === 'apps/XBackend/ext')!;
    const locality = cluster.load_assignment!.endpoints![0]!;
    const two = {
      ...cluster,
      load_assignment: {
        ...cluster.load_assignment,
        endpoints: [{ lb_endpoints: [...locality.lb_endpoints!, ...locality.lb_endpoints!] }],
      },
    };
    expect(envoyLoadProblems({ ...res, clusters: [two] }).map((p) => p.field)).toEqual(['load_assignment']);
  });

  it("TLS ServerOnly with protocol HTTP2: SNI, ALPN h2, the system CA, and not the Gateway's client certificate", () => {
    const clientCert = { tls: { backend: { clientCertificateRef: { name: 'client' } } } };
    const res = served(
      [
        tlsSecret('client', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
        external({
          protocol: 'HTTP2',
          tls: { mode: 'ServerOnly', validation: { hostname: 'api.example.com', wellKnownCACertificates: 'System' } },
        }),
        toX(),
      ],
      [http()],
      clientCert,
    );
    // The Gateway has a backend client certificate (served over SDS); the XBackend's cluster does not present it.
    expect(res.secrets.map((x) => x.name)).toContain('infra/client');
    const cluster = res.clusters.find((c) => c.name === 'apps/XBackend/ext/h2')!;
    const ctx = cluster.transport_socket!.typed_config as unknown as UpstreamTlsContext;
    expect(ctx.sni).toBe('api.example.com');
    expect(ctx.common_tls_context?.alpn_protocols).toEqual(['h2']);
    expect(ctx.common_tls_context?.tls_certificate_sds_secret_configs).toBeUndefined();
    expect(ctx.common_tls_context?.validation_context).toMatchObject({
      trusted_ca: { filename: '/etc/ssl/certs/ca-certificates.crt' },
      match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'api.example.com' } }],
    });
    const o = routeHttp(res, { port: 80, authority: 'example.com', path: '/' });
    expect(o.kind === 'http' && o.targets?.map((t) => t.cluster)).toEqual(['apps/XBackend/ext/h2']);
  });

  it("TLS ClientAndServer: the XBackend's own Secret over SDS, not the Gateway's", () => {
    const res = served(
      [
        tlsSecret('client', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
        tlsSecret('mine', 'apps', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
        external({
          tls: {
            mode: 'ClientAndServer',
            clientCertificateRef: { name: 'mine' },
            validation: { hostname: 'api.example.com', wellKnownCACertificates: 'System' },
          },
        }),
        toX(),
      ],
      [http()],
      { tls: { backend: { clientCertificateRef: { name: 'client' } } } },
    );
    const cluster = res.clusters.find((c) => c.name === 'apps/XBackend/ext')!;
    const ctx = cluster.transport_socket!.typed_config as unknown as UpstreamTlsContext;
    expect(ctx.common_tls_context?.tls_certificate_sds_secret_configs).toEqual([
      { name: 'apps/mine', sds_config: { ads: {}, resource_api_version: 'V3' } },
    ]);
    expect(res.secrets.map((x) => x.name)).toContain('apps/mine');
  });

  it('protocol WSS: HTTP/1.1 over TLS, and a WebSocket Upgrade request is routed to it', () => {
    const res = served([
      external({
        protocol: 'WSS',
        tls: { mode: 'ServerOnly', validation: { hostname: 'api.example.com', wellKnownCACertificates: 'System' } },
      }),
      toX(),
    ]);
    const cluster = res.clusters.find((c) => c.name === 'apps/XBackend/ext')!;
    expect(cluster.http2_protocol_options).toBeUndefined();
    expect(cluster.transport_socket?.name).toBe('envoy.transport_sockets.tls');
    const headers = { connection: 'Upgrade', upgrade: 'websocket' };
    const o = routeHttp(res, { port: 80, authority: 'example.com', path: '/ws', headers });
    expect(o.kind === 'http' && o.targets?.map((t) => t.cluster)).toEqual(['apps/XBackend/ext']);
  });
});
