// XBackend backends (GEP-4894) as the proxy gets them: the clusters and routes pass PGV and Envoy's
// load rules, and the route-table check sends a request to the XBackend's cluster.
import { describe, expect, it } from '@jest/globals';
import { slimPod, type KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { envoyLoadProblems, envoyResourcesFor, validateResources, type EnvoyResources } from '../../src/index.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  route,
  service,
  tlsSecret,
  xbackend,
} from '../../../translator/test/builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../../translator/test/tls-fixtures.js';
import type { UpstreamTlsContext } from '../../src/envoy-types.js';
import { routeHttp, routeTcp } from './envoy-router.js';
import { upstreamWithSession } from './envoy-stateful-session.js';

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

describe('XBackend EndpointSelector and session persistence on the data plane', () => {
  const pod = (name: string, ip: string, app: string): KubeObject =>
    slimPod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'apps', labels: { app } },
      status: { phase: 'Running', podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
    });
  const selector = (name: string, app: string, sessionPersistence?: Record<string, unknown>) =>
    xbackend(name, {
      type: 'EndpointSelector',
      port: { number: 8080 },
      endpointSelector: { matchLabels: { app } },
      ...(sessionPersistence ? { sessionPersistence } : {}),
    });
  const split = (...names: string[]) =>
    route('HTTPRoute', 'r', {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [{ backendRefs: names.map((name) => ({ group: X, kind: 'XBackend', name, weight: 1 })) }],
    });
  const pods = [pod('a1', '10.2.0.1', 'a'), pod('a2', '10.2.0.2', 'a'), pod('b1', '10.2.1.1', 'b')];
  const request = { port: 80, authority: 'example.com', path: '/x' };
  const chosen = (res: EnvoyResources) => {
    const o = routeHttp(res, request);
    if (o.kind !== 'http' || !o.targets) throw new Error('not routed');
    const r = res.routes.flatMap((rc) => rc.virtual_hosts ?? []).flatMap((v) => v.routes ?? [])[0]!;
    return { route: r, targets: o.targets.map((t) => [t.cluster, t.healthy]) };
  };

  it('the selected Pods are the endpoints of an EDS cluster, which the route reaches', () => {
    const res = served([selector('a', 'a'), split('a'), ...pods]);
    const cluster = res.clusters.find((c) => c.name === 'apps/XBackend/a')!;
    expect(cluster.type).toBe('EDS');
    const eds = res.endpoints.find((e) => e.cluster_name === 'apps/XBackend/a')!;
    expect(eds.endpoints![0]!.lb_endpoints!.map((e) => e.endpoint?.address?.socket_address)).toEqual([
      { address: '10.2.0.1', port_value: 8080, protocol: 'TCP' },
      { address: '10.2.0.2', port_value: 8080, protocol: 'TCP' },
    ]);
    expect(chosen(res).targets).toEqual([['apps/XBackend/a', true]]);
    // No route sets a session: the connection manager runs no stateful session filter.
    expect(JSON.stringify(res.listeners)).not.toContain('stateful_session');
  });

  it('Cookie: a first request gets a Set-Cookie for its Pod; a second one with it reaches that Pod again', () => {
    const sp = { type: 'Cookie', absoluteTimeout: '1h', cookie: { name: 'sid', lifetimeType: 'Permanent' } };
    const res = served([selector('a', 'a', sp), split('a'), ...pods]);
    const { route: r } = chosen(res);
    const first = upstreamWithSession(res, 80, r, 'apps/XBackend/a', {}, 1);
    expect(first.host).toBe('10.2.0.2:8080');
    const [name, setCookie] = first.responseHeaders[0]!;
    expect(name).toBe('set-cookie');
    expect(setCookie).toMatch(/^sid="[^"]+"; Max-Age=3600; Path=\/; HttpOnly$/);
    const cookie = setCookie.split(';')[0]!;
    // The balancer would take the other Pod: the session decides.
    const again = upstreamWithSession(res, 80, r, 'apps/XBackend/a', { cookie }, 0);
    expect(again).toEqual({ host: '10.2.0.2:8080', responseHeaders: [] });
  });

  it('Header: the session header is answered, and sent back it keeps the Pod', () => {
    const res = served([selector('a', 'a', { type: 'Header', header: { name: 'X-Session' } }), split('a'), ...pods]);
    const { route: r } = chosen(res);
    const first = upstreamWithSession(res, 80, r, 'apps/XBackend/a', {}, 0);
    expect(first.responseHeaders[0]![0]).toBe('x-session');
    const headers = { 'x-session': first.responseHeaders[0]![1] };
    expect(upstreamWithSession(res, 80, r, 'apps/XBackend/a', { headers }, 1).host).toBe(first.host);
  });

  it('a rule splitting between a persistent XBackend and a Service keeps its weights; the session holds in either', () => {
    const mixed = route('HTTPRoute', 'r', {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [
        {
          backendRefs: [
            { group: X, kind: 'XBackend', name: 'a', weight: 3 },
            { name: 'svc', port: 8080, weight: 1 },
          ],
        },
      ],
    });
    const sp = { type: 'Cookie', cookie: { name: 'sid' } };
    const res = served([
      selector('a', 'a', sp),
      service('svc'),
      endpointSlice('svc', 'apps', ['10.6.0.1', '10.6.0.2']),
      mixed,
      ...pods,
    ]);
    const o = routeHttp(res, request);
    expect(o.kind === 'http' && o.targets?.map((t) => [t.cluster, t.weight])).toEqual([
      ['apps/XBackend/a', 3],
      ['apps/svc/8080', 1],
    ]);
    const { route: r } = chosen(res);
    const first = upstreamWithSession(res, 80, r, 'apps/svc/8080', {}, 1);
    const cookie = first.responseHeaders[0]![1].split(';')[0]!;
    expect(upstreamWithSession(res, 80, r, 'apps/svc/8080', { cookie }, 0)).toEqual({
      host: first.host,
      responseHeaders: [],
    });
  });

  it('proxyless gRPC clients are served the route without its stateful session (they would refuse the route table)', () => {
    const sp = { type: 'Header', header: { name: 'x-session' } };
    const grpc = route('GRPCRoute', 'g', {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      hostnames: ['grpc.example.com'],
      rules: [{ backendRefs: [{ group: X, kind: 'XBackend', name: 'a' }] }],
    });
    const all = [gatewayClass(), gateway('gw', [http()]), selector('a', 'a', sp), grpc, ...pods];
    const result = new Translator().translate(snapshotFromObjects(all));
    const res = envoyResourcesFor(
      { ...result.xdsIR.gateways.get('infra/gw')!, proxyless: true },
      () => undefined,
      undefined,
      result.xdsIR.endpoints,
    );
    expect(validateResources(res)).toEqual([]);
    const sticky = (name: string) =>
      JSON.stringify(res.routes.find((r) => r.name === name)).includes('envoy.filters.http.stateful_session');
    expect(res.routes.map((r) => [r.name, sticky(r.name!)])).toEqual([
      [expect.not.stringContaining('proxyless'), true],
      ['proxyless/grpc.example.com', false],
    ]);
  });

  it("a weighted split's choice is not changed by the cookie: the session holds only within the chosen cluster", () => {
    const sp = { type: 'Cookie', cookie: { name: 'sid' } };
    const res = served([selector('a', 'a', sp), selector('b', 'b', sp), split('a', 'b'), ...pods]);
    const { route: r, targets } = chosen(res);
    expect(targets).toEqual([
      ['apps/XBackend/a', true],
      ['apps/XBackend/b', true],
    ]);
    const inA = upstreamWithSession(res, 80, r, 'apps/XBackend/a', {}, 0);
    const cookie = inA.responseHeaders[0]![1].split(';')[0]!;
    // The router chose b this time: b's Pod answers, and the session moves there (a session cookie).
    const inB = upstreamWithSession(res, 80, r, 'apps/XBackend/b', { cookie }, 0);
    expect(inB.host).toBe('10.2.1.1:8080');
    expect(inB.responseHeaders[0]![1]).toMatch(/^sid="[^"]+"; Path=\/; HttpOnly$/);
    // Not strict: a Pod that is not in the chosen cluster never answers 503.
    expect(inB.status).toBeUndefined();
  });
});
