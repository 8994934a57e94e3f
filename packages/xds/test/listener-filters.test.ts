// Pre-routing listener filters (GEP-5224) in Envoy resources: an ExternalAuth is an ext_authz filter
// before every other, failing closed; listeners sharing a plain-HTTP port disable each other's filters
// per virtual host. Every resource passes the proto (PGV) rules and Envoy's load rules.
import { describe, expect, it } from '@jest/globals';
import type { ExternalAuthIR, GatewayIR, GatewayListenerIR, HTTPRouteIR } from '@turnpike/api';
import { envoyLoadProblems, decodeMessage, encodeMessage, envoyResourcesFor, validateResources } from '../src/index.js';
import { listenerFilterName } from '../src/listener-filters.js';

const route = (name: string): HTTPRouteIR => ({
  name,
  source: { kind: 'HTTPRoute', namespace: 'apps', name, rule: 0 },
  match: { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] },
  backends: [{ cluster: 'apps/web/8080', weight: 1 }],
});

const httpAuth: ExternalAuthIR = {
  type: 'ExternalAuth',
  protocol: 'HTTP',
  cluster: 'apps/auth/9000',
  pathPrefix: '/check',
  allowedHeaders: ['x-token'],
  allowedResponseHeaders: ['x-user'],
  forwardBodyMaxSize: 4096,
};
const grpcAuth: ExternalAuthIR = { type: 'ExternalAuth', protocol: 'GRPC', cluster: 'apps/authz/9001/h2' };

function httpListener(name: string, host: string, preRouting?: ExternalAuthIR[]): GatewayListenerIR {
  return {
    name: `Gateway/infra/gw/${name}`,
    protocol: 'HTTP',
    hostname: host,
    virtualHosts: [{ name: host, domains: [host], routes: [route(name)] }],
    ...(preRouting ? { preRouting } : {}),
  };
}

function gatewayIR(listeners: GatewayListenerIR[]): GatewayIR {
  return {
    name: 'gw',
    namespace: 'infra',
    ports: [{ name: 'tcp-80', port: 80, listenPort: 10080, transport: 'tcp', listeners }],
    clusters: [
      { name: 'apps/web/8080', service: { namespace: 'apps', name: 'web', port: 8080 }, protocol: 'http' },
      { name: 'apps/auth/9000', service: { namespace: 'apps', name: 'auth', port: 9000 }, protocol: 'http' },
      { name: 'apps/authz/9001/h2', service: { namespace: 'apps', name: 'authz', port: 9001 }, protocol: 'h2' },
    ],
    secrets: [],
  };
}

type Filter = { name: string; disabled?: boolean; typed_config: Record<string, any> };
function hcmFilters(res: ReturnType<typeof envoyResourcesFor>): Filter[] {
  const hcm = res.listeners[0]!.filter_chains![0]!.filters![0]!.typed_config as unknown as { http_filters: Filter[] };
  return hcm.http_filters;
}

describe('listener filters in xDS (GEP-5224)', () => {
  it('ExternalAuth HTTP and gRPC: ext_authz first, in list order, failing closed; every resource valid', () => {
    const res = envoyResourcesFor(gatewayIR([httpListener('a', 'a.example', [httpAuth, grpcAuth])]), () => undefined);
    expect(validateResources(res)).toEqual([]);
    expect(envoyLoadProblems(res)).toEqual([]);
    const filters = hcmFilters(res);
    expect(filters.map((f) => f.name)).toEqual([
      listenerFilterName('Gateway/infra/gw/a', 0),
      listenerFilterName('Gateway/infra/gw/a', 1),
      'envoy.filters.http.router',
    ]);
    expect(filters[0]!.typed_config).toMatchObject({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      failure_mode_allow: false,
      status_on_error: { code: 'Forbidden' },
      clear_route_cache: true,
      http_service: {
        server_uri: { cluster: 'apps/auth/9000' },
        path_prefix: '/check',
        authorization_response: { allowed_upstream_headers: { patterns: [{ exact: 'x-user', ignore_case: true }] } },
      },
      allowed_headers: { patterns: [{ exact: 'x-token', ignore_case: true }] },
      with_request_body: { max_request_bytes: 4096, allow_partial_message: false },
    });
    expect(filters[1]!.typed_config).toMatchObject({
      failure_mode_allow: false,
      grpc_service: { envoy_grpc: { cluster_name: 'apps/authz/9001/h2' } },
    });
    expect(filters[1]!.typed_config.allowed_headers).toBeUndefined();
    // A single listener's port: nothing to disable.
    expect(res.routes[0]!.virtual_hosts![0]!.typed_per_filter_config).toBeUndefined();
    const bytes = encodeMessage('envoy.config.listener.v3.Listener', res.listeners[0]!);
    expect(JSON.stringify(decodeMessage('envoy.config.listener.v3.Listener', bytes))).toContain('/check');
  });

  it("listeners sharing a plain-HTTP port: each virtual host disables the other listeners' filters", () => {
    const res = envoyResourcesFor(
      gatewayIR([
        httpListener('a', 'a.example', [httpAuth]),
        httpListener('b', 'b.example', [grpcAuth]),
        httpListener('open', 'open.example'),
      ]),
      () => undefined,
    );
    expect(validateResources(res)).toEqual([]);
    expect(envoyLoadProblems(res)).toEqual([]);
    const a = listenerFilterName('Gateway/infra/gw/a', 0);
    const b = listenerFilterName('Gateway/infra/gw/b', 0);
    expect(hcmFilters(res).map((f) => f.name)).toEqual([a, b, 'envoy.filters.http.router']);
    const off = (host: string) =>
      Object.entries(res.routes[0]!.virtual_hosts!.find((v) => v.name === host)!.typed_per_filter_config ?? {}).map(
        ([name, c]) => [name, (c as unknown as { disabled: boolean }).disabled],
      );
    expect(off('a.example')).toEqual([[b, true]]);
    expect(off('b.example')).toEqual([[a, true]]);
    expect(off('open.example')).toEqual([
      [a, true],
      [b, true],
    ]);
  });
});
