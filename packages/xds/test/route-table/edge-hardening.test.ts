// The edge hardening of a Gateway's HTTP connection managers and HTTPS listeners (issue #46 items 1
// and 2), on translated Gateways, through the route-table check: the path Envoy routes is the
// normalised one, and HTTPS listeners negotiate HTTP/2 through ALPN. "Before" is the same
// resources without the fields, as Turnpike generated them until then: Envoy without them.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject, ProxyHttp } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import type { DownstreamTlsContext, HttpConnectionManager } from '../../src/envoy-types.js';
import { envoyLoadProblems, envoyResourcesFor, validateResources, type EnvoyResources } from '../../src/index.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  route,
  service,
  tlsSecret,
} from '../../../translator/test/builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../../translator/test/tls-fixtures.js';
import { routeHttp, type HttpOutcome, type HttpRequestSpec } from './envoy-router.js';

const HCM = 'envoy.filters.network.http_connection_manager';

/** The Envoy resources of Gateway infra/gw, checked as the proxy would load them. */
export function envoyOf(objects: KubeObject[]): EnvoyResources {
  const snapshot = snapshotFromObjects(objects);
  const result = new Translator().translate(snapshot);
  const lookup = (kind: string, ns: string, name: string) =>
    snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
  const res = envoyResourcesFor(result.xdsIR.gateways.get('infra/gw')!, lookup, undefined, result.xdsIR.endpoints);
  expect(validateResources(res)).toEqual([]);
  expect(envoyLoadProblems(res)).toEqual([]);
  return res;
}

/** ProxyConfig infra/pc with `spec.http`, and the Gateway's parametersRef to it. */
const proxyConfig = (settings: ProxyHttp): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ProxyConfig',
  metadata: { name: 'pc', namespace: 'infra' },
  spec: { http: settings },
});
const configured = { infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } } };

const backends = (...names: string[]) => names.flatMap((n) => [service(n), endpointSlice(n)]);
const rule = (type: string, value: string, backend: string) => ({
  matches: [{ path: { type, value } }],
  backendRefs: [{ name: backend, port: 8080 }],
});

/** The same resources without the edge fields: what Envoy did before they were set. */
function withoutEdgeFields(res: EnvoyResources): EnvoyResources {
  const copy = structuredClone(res);
  for (const l of copy.listeners)
    for (const chain of l.filter_chains ?? []) {
      const tls = chain.transport_socket?.typed_config as DownstreamTlsContext | undefined;
      delete tls?.common_tls_context?.alpn_protocols;
      for (const f of chain.filters ?? []) {
        if (f.name !== HCM) continue;
        const hcm = f.typed_config as HttpConnectionManager;
        for (const k of [
          'normalize_path',
          'merge_slashes',
          'path_with_escaped_slashes_action',
          'use_remote_address',
          'common_http_protocol_options',
          'max_request_headers_kb',
          'request_headers_timeout',
          'stream_idle_timeout',
          'http2_protocol_options',
        ] as const)
          delete hcm[k];
      }
    }
  return copy;
}

const reached = (o: HttpOutcome) =>
  o.kind !== 'http'
    ? o.kind
    : o.targets
      ? `${o.targets.map((t) => t.cluster).join(',')} ${o.targets[0]!.request.path}`
      : `${o.status}${o.location ? ` ${o.location}` : ''}`;

describe('paths are routed as Envoy normalises them', () => {
  const objects = [
    gatewayClass(),
    gateway('gw', [http()]),
    route('HTTPRoute', 'r', {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [
        rule('PathPrefix', '/foo', 'foo'),
        rule('Exact', '/foo/x', 'x'),
        rule('PathPrefix', '/admin', 'admin'),
        rule('PathPrefix', '/', 'root'),
      ],
    }),
    ...backends('foo', 'x', 'admin', 'root'),
  ];
  const res = envoyOf(objects);
  const get = (r: EnvoyResources, path: string) => reached(routeHttp(r, { port: 80, authority: 'a.example', path }));

  it('/foo/../admin, /foo//x and /foo%2Fbar reach the route of the path Envoy routes', () => {
    expect(get(res, '/foo/../admin')).toBe('apps/admin/8080 /admin');
    expect(get(res, '/foo//x')).toBe('apps/x/8080 /foo/x');
    // UNESCAPE_AND_REDIRECT: a 307 to the unescaped path, which the client then asks for.
    expect(get(res, '/foo%2Fbar')).toBe('307 /foo/bar');
    expect(get(res, '/foo/bar')).toBe('apps/foo/8080 /foo/bar');
    expect(get(res, '/foo/./x?q=/../y')).toBe('apps/x/8080 /foo/x?q=/../y');
  });

  it('before: /foo/../admin matched PathPrefix /foo and reached its backend as sent', () => {
    const before = withoutEdgeFields(res);
    expect(get(before, '/foo/../admin')).toBe('apps/foo/8080 /foo/../admin');
    expect(get(before, '/foo//x')).toBe('apps/foo/8080 /foo//x');
    expect(get(before, '/foo%2Fbar')).toBe('apps/root/8080 /foo%2Fbar');
  });

  it('escaped slashes as the ProxyConfig says: kept, unescaped and forwarded, or refused', () => {
    const withSlashes = (escapedSlashes: ProxyHttp['escapedSlashes']) =>
      envoyOf([
        ...objects.map((o) => (o.kind === 'Gateway' ? gateway('gw', [http()], configured) : o)),
        proxyConfig({ escapedSlashes }),
      ]);
    expect(get(withSlashes('KeepUnchanged'), '/foo%2Fbar')).toBe('apps/root/8080 /foo%2Fbar');
    expect(get(withSlashes('UnescapeAndForward'), '/foo%2Fbar')).toBe('apps/foo/8080 /foo/bar');
    expect(get(withSlashes('RejectRequest'), '/foo%2Fbar')).toBe('400');
    // Dot-segments are normalised whatever the escaped-slash action.
    expect(get(withSlashes('KeepUnchanged'), '/foo/../admin')).toBe('apps/admin/8080 /admin');
  });

  it('a gRPC request with an escaped slash is refused, not redirected (gRPC clients follow no redirect)', () => {
    const grpc = routeHttp(res, {
      port: 80,
      authority: 'a.example',
      path: '/pkg.Svc%2FMethod',
      method: 'POST',
      headers: { 'content-type': 'application/grpc' },
      http2Only: true,
    });
    expect(grpc).toMatchObject({ status: 400 });
  });

  it('a header name with an underscore is refused; one with a dash is not', () => {
    const with_ = (headers: Record<string, string>) =>
      routeHttp(res, { port: 80, authority: 'a.example', path: '/foo', headers });
    expect(with_({ x_forwarded_user: 'admin' })).toMatchObject({ status: 400 });
    expect(reached(with_({ 'x-forwarded-user': 'admin' }))).toBe('apps/foo/8080 /foo');
  });
});

describe('HTTPS listeners offer h2 and http/1.1 through ALPN', () => {
  const objects = [
    gatewayClass(),
    gateway('gw', [
      {
        name: 'https',
        port: 443,
        protocol: 'HTTPS',
        hostname: 'grpc.example.com',
        tls: { certificateRefs: [{ name: 'cert' }] },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
      {
        name: 'tls',
        port: 443,
        protocol: 'TLS',
        hostname: 'tcp.example.com',
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
    ]),
    tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
    route('GRPCRoute', 'g', {
      parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'https' }],
      rules: [{ matches: [{ method: { service: 'pkg.Echo' } }], backendRefs: [{ name: 'grpc', port: 8080 }] }],
    }),
    route('TCPRoute', 't', {
      parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'tls' }],
      rules: [{ backendRefs: [{ name: 'tcp', port: 8080 }] }],
    }),
    ...backends('grpc', 'tcp'),
  ];
  const res = envoyOf(objects);
  const grpcCall: HttpRequestSpec = {
    port: 443,
    sni: 'grpc.example.com',
    authority: 'grpc.example.com',
    method: 'POST',
    path: '/pkg.Echo/Echo',
    headers: { 'content-type': 'application/grpc' },
    alpn: ['h2'],
    http2Only: true,
  };

  it('a gRPC client gets h2 and reaches the GRPCRoute over HTTP/2', () => {
    const o = routeHttp(res, grpcCall);
    expect(o).toMatchObject({ protocol: 'HTTP/2', alpn: 'h2' });
    expect(reached(o)).toBe('apps/grpc/8080/h2 /pkg.Echo/Echo');
    const browser = routeHttp(res, { ...grpcCall, alpn: ['h2', 'http/1.1'], http2Only: false });
    expect(browser).toMatchObject({ protocol: 'HTTP/2', alpn: 'h2' });
    const old = routeHttp(res, { ...grpcCall, alpn: ['http/1.1'], http2Only: false });
    expect(old).toMatchObject({ protocol: 'HTTP/1.1', alpn: 'http/1.1' });
  });

  it('a ProxyConfig that pins HTTP/1.1 offers only that: a browser speaks HTTP/1.1, a gRPC client gives up', () => {
    const pinned = envoyOf([
      ...objects.map((o) => (o.kind === 'Gateway' ? { ...o, spec: { ...o.spec, ...configured } } : o)),
      proxyConfig({ alpn: ['http/1.1'] }),
    ]);
    const browser = routeHttp(pinned, { ...grpcCall, alpn: ['h2', 'http/1.1'], http2Only: false, headers: {} });
    expect(browser).toMatchObject({ protocol: 'HTTP/1.1', alpn: 'http/1.1' });
    expect(routeHttp(pinned, grpcCall)).toMatchObject({ kind: 'refused' });
  });

  it('before: no ALPN, so the gRPC client gave up', () => {
    expect(routeHttp(withoutEdgeFields(res), grpcCall)).toMatchObject({ kind: 'refused' });
  });

  it('a TLS listener that terminates for a TCPRoute offers no ALPN: its backend speaks what it speaks', () => {
    const chains = res.listeners.find((l) => l.name === 'tcp-443')!.filter_chains!;
    const alpnOf = (name: string) =>
      (chains.find((c) => c.name?.startsWith(name))!.transport_socket!.typed_config as DownstreamTlsContext)
        .common_tls_context?.alpn_protocols;
    expect(alpnOf('Gateway/infra/gw/https')).toEqual(['h2', 'http/1.1']);
    expect(alpnOf('Gateway/infra/gw/tls')).toBeUndefined();
  });
});

describe('every HTTP connection manager of a Gateway carries the edge fields', () => {
  it('plain and TLS listeners alike', () => {
    const res = envoyOf([
      gatewayClass(),
      gateway('gw', [
        http(),
        http('other', 8080),
        {
          name: 'https',
          port: 443,
          protocol: 'HTTPS',
          tls: { certificateRefs: [{ name: 'cert' }] },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ]),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
    ]);
    const managers = res.listeners.flatMap((l) =>
      (l.filter_chains ?? []).flatMap((c) => (c.filters ?? []).filter((f) => f.name === HCM)),
    );
    expect(managers).toHaveLength(3);
    for (const f of managers)
      expect(f.typed_config).toMatchObject({
        normalize_path: { value: true },
        merge_slashes: true,
        path_with_escaped_slashes_action: 'UNESCAPE_AND_REDIRECT',
        use_remote_address: { value: true },
        common_http_protocol_options: {
          idle_timeout: { seconds: '3600' },
          max_headers_count: { value: 100 },
          headers_with_underscores_action: 'REJECT_REQUEST',
        },
        max_request_headers_kb: { value: 60 },
        request_headers_timeout: { seconds: '10' },
        stream_idle_timeout: { seconds: '300' },
        http2_protocol_options: {
          max_concurrent_streams: { value: 100 },
          initial_stream_window_size: { value: 65_536 },
          initial_connection_window_size: { value: 1_048_576 },
        },
      });
  });
});

describe('what the ProxyConfig sets reaches every connection manager, and Envoy takes it', () => {
  it('trusted hops, header rules and limits, timeouts ("0s" is off)', () => {
    const res = envoyOf([
      gatewayClass(),
      gateway('gw', [http()], configured),
      proxyConfig({
        xffNumTrustedHops: 1,
        headersWithUnderscores: 'Allow',
        maxRequestHeadersKiB: 96,
        maxRequestHeaders: 150,
        timeouts: { requestHeaders: '0s', streamIdle: '1h', connectionIdle: '90s' },
      }),
    ]);
    const hcm = res.listeners[0]!.filter_chains![0]!.filters![0]!.typed_config as HttpConnectionManager;
    expect(hcm).toMatchObject({
      xff_num_trusted_hops: 1,
      use_remote_address: { value: true },
      normalize_path: { value: true },
      common_http_protocol_options: {
        idle_timeout: { seconds: '90', nanos: 0 },
        max_headers_count: { value: 150 },
        headers_with_underscores_action: 'ALLOW',
      },
      max_request_headers_kb: { value: 96 },
      request_headers_timeout: { seconds: '0', nanos: 0 },
      stream_idle_timeout: { seconds: '3600', nanos: 0 },
    });
    const withUnderscore = routeHttp(res, { port: 80, authority: 'a', path: '/', headers: { x_user: 'a' } });
    expect(withUnderscore).toMatchObject({ status: 404 });
    expect(withUnderscore).not.toHaveProperty('localReply');
  });
});
