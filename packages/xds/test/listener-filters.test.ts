// Pre-routing listener filters (GEP-5224) in Envoy resources: an ExternalAuth is an ext_authz filter
// before every other, failing closed; an ExtensionRef is the plugin's own Lua or Wasm filter, each
// followed by the Host guard; listeners sharing a plain-HTTP port disable each other's filters per
// virtual host. Every resource passes the proto (PGV) rules and Envoy's load rules.
import { describe, expect, it } from '@jest/globals';
import type { ExternalAuthIR, GatewayIR, GatewayListenerIR, HTTPRouteIR, PreRoutingFilterIR } from '@turnpike/api';
import { envoyLoadProblems, decodeMessage, encodeMessage, envoyResourcesFor, validateResources } from '../src/index.js';
import { listenerFilterName } from '../src/listener-filters.js';
import { HOST_GUARD_RECORD, RECORD_AUTHORITY_LUA, RESTORE_AUTHORITY_LUA } from '../src/host-guard.js';
import {
  ROUTE_PLUGINS_CHECK,
  ROUTE_PLUGINS_FIRST,
  checkRoutePluginsLua,
  recordRoutePluginsLua,
} from '../src/route-plugin-check.js';

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

function httpListener(name: string, host: string, preRouting?: PreRoutingFilterIR[]): GatewayListenerIR {
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

const SHA = 'c'.repeat(64);
const WASM_SHA = 'd'.repeat(64);
const luaPlugin: PreRoutingFilterIR = { type: 'ExtensionRef', plugin: { name: 'infra/tag', type: 'lua', sha256: SHA } };
const LUA = 'function envoy_on_request(h) h:headers():add("x-user", "alice") end\n';
const content = (sha: string) => (sha === SHA ? Buffer.from(LUA) : undefined);

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

  it(
    'an ExtensionRef: the plugin as its own filter, in list order with ext_authz, each followed by the Host ' +
      'guard after one that records :authority first; every resource valid',
    () => {
      const res = envoyResourcesFor(
        gatewayIR([httpListener('a', 'a.example', [luaPlugin, httpAuth, luaPlugin])]),
        () => undefined,
        content,
      );
      expect(validateResources(res)).toEqual([]);
      expect(envoyLoadProblems(res)).toEqual([]);
      const name = (i: number) => listenerFilterName('Gateway/infra/gw/a', i);
      const filters = hcmFilters(res);
      expect(filters.map((f) => f.name)).toEqual([
        HOST_GUARD_RECORD,
        name(0),
        `${name(0)}/host-guard`,
        name(1),
        name(2),
        `${name(2)}/host-guard`,
        'envoy.filters.http.router',
      ]);
      expect(filters.every((f) => !f.disabled)).toBe(true);
      const source = (f: Filter) => f.typed_config.default_source_code?.inline_string;
      expect(filters[0]!.typed_config['@type']).toBe('type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua');
      expect(source(filters[0]!)).toBe(RECORD_AUTHORITY_LUA);
      expect(source(filters[1]!)).toBe(LUA);
      expect(source(filters[2]!)).toBe(RESTORE_AUTHORITY_LUA);
      expect(filters[3]!.typed_config['@type']).toContain('ext_authz');
      // Route-level plugins are other filters: none of this listener's routes runs one.
      expect(filters.some((f) => f.name.startsWith('turnpike.plugin/'))).toBe(false);
    },
  );

  it(
    "a shared plain-HTTP port: the other listeners' virtual hosts disable a plugin filter (FilterConfig " +
      'disabled), never its Host guard',
    () => {
      const res = envoyResourcesFor(
        gatewayIR([httpListener('a', 'a.example', [luaPlugin]), httpListener('b', 'b.example')]),
        () => undefined,
        content,
      );
      expect(validateResources(res)).toEqual([]);
      expect(envoyLoadProblems(res)).toEqual([]);
      const vhost = (host: string) => res.routes[0]!.virtual_hosts!.find((v) => v.name === host)!;
      expect(vhost('a.example').typed_per_filter_config).toBeUndefined();
      expect(vhost('b.example').typed_per_filter_config).toEqual({
        [listenerFilterName('Gateway/infra/gw/a', 0)]: {
          '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig',
          disabled: true,
        },
      });
    },
  );

  it('a Wasm plugin over HTTP: its content cluster is sent; a plugin without content fails closed (500)', () => {
    const wasm: PreRoutingFilterIR = {
      type: 'ExtensionRef',
      plugin: { name: 'infra/big', type: 'wasm', sha256: WASM_SHA, url: 'http://10.0.0.1:18002/plugins/t.wasm' },
    };
    const missing: PreRoutingFilterIR = {
      type: 'ExtensionRef',
      plugin: { name: 'infra/gone', type: 'lua', sha256: 'e'.repeat(64) },
    };
    const res = envoyResourcesFor(gatewayIR([httpListener('a', 'a.example', [wasm, missing])]), () => undefined);
    expect(validateResources(res)).toEqual([]);
    expect(envoyLoadProblems(res)).toEqual([]);
    const filters = hcmFilters(res);
    expect(filters[1]!.typed_config).toMatchObject({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm',
      config: { fail_open: false, vm_config: { code: { remote: { sha256: WASM_SHA } } } },
    });
    expect(res.clusters.map((c) => c.name)).toContain('turnpike/plugin-content/10.0.0.1:18002');
    expect(filters[3]!.typed_config.default_source_code.inline_string).toContain('"500"');
  });

  it("proxyless gRPC clients, which run no listener filter, are not served a guarded listener's GRPCRoutes", () => {
    const grpc = (name: string): HTTPRouteIR => ({
      ...route(name),
      source: { ...route(name).source, kind: 'GRPCRoute' },
    });
    const withGrpc = (l: GatewayListenerIR): GatewayListenerIR => ({
      ...l,
      virtualHosts: l.virtualHosts!.map((v) => ({ ...v, routes: [grpc(`${l.name}-grpc`)] })),
    });
    const ir: GatewayIR = {
      ...gatewayIR([
        withGrpc(httpListener('a', 'a.example', [luaPlugin])),
        withGrpc(httpListener('b', 'b.example', [httpAuth])),
        withGrpc(httpListener('open', 'open.example')),
      ]),
      proxyless: true,
    };
    const res = envoyResourcesFor(ir, () => undefined, content);
    expect(validateResources(res)).toEqual([]);
    expect(res.listeners.filter((l) => l.api_listener).map((l) => l.name)).toEqual(['open.example']);
  });

  it(
    "routes that run plugins behind listener filters: the route plugins check records the first route's plugins " +
      'before every listener filter and checks them after the last; each such route names its own',
    () => {
      const withPlugin: HTTPRouteIR = {
        ...route('audited'),
        name: 'audited',
        filters: { plugins: [{ name: 'apps/audit', type: 'lua', sha256: SHA }] },
      };
      const l = httpListener('a', 'a.example', [httpAuth]);
      l.virtualHosts![0]!.routes.unshift(withPlugin);
      const res = envoyResourcesFor(gatewayIR([l]), () => undefined, content);
      expect(validateResources(res)).toEqual([]);
      expect(envoyLoadProblems(res)).toEqual([]);
      const filters = hcmFilters(res);
      expect(filters.map((f) => f.name)).toEqual([
        ROUTE_PLUGINS_FIRST,
        listenerFilterName('Gateway/infra/gw/a', 0),
        ROUTE_PLUGINS_CHECK,
        'turnpike.plugin/apps/audit',
        'envoy.filters.http.router',
      ]);
      expect(filters[0]!.typed_config.default_source_code.inline_string).toBe(recordRoutePluginsLua(''));
      expect(filters[2]!.typed_config.default_source_code.inline_string).toBe(checkRoutePluginsLua(''));
      const [audited, plain] = res.routes[0]!.virtual_hosts![0]!.routes!;
      const perRoute = audited!.typed_per_filter_config as Record<string, any>;
      expect(perRoute[ROUTE_PLUGINS_FIRST].source_code.inline_string).toBe(recordRoutePluginsLua('apps/audit'));
      expect(perRoute[ROUTE_PLUGINS_CHECK].source_code.inline_string).toBe(checkRoutePluginsLua('apps/audit'));
      expect(plain!.typed_per_filter_config).toBeUndefined();
      // Without listener filters nothing can move a request: no check.
      const open = envoyResourcesFor(gatewayIR([{ ...l, preRouting: undefined }]), () => undefined, content);
      expect(hcmFilters(open).map((f) => f.name)).toEqual(['turnpike.plugin/apps/audit', 'envoy.filters.http.router']);
    },
  );
});
