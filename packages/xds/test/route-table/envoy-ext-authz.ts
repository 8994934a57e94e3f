// The route-table check's model of envoy.filters.http.ext_authz (ext_authz.proto), the pre-routing
// listener filters' ExternalAuth: which of a connection manager's ext_authz filters run on a request,
// what each sends its auth service, and what its answer does. Facts, from the proto's documentation and
// Envoy's filter (extensions/filters/http/ext_authz, filters/common/ext_authz):
// - Filters run in http_filters order, each once, before the router. HttpFilter.disabled: "the filter
//   is disabled by default and must be explicitly enabled by setting per filter configuration in the
//   route configuration"; the per-filter config is the virtual host's, else the route configuration's
//   (a route's own is not modelled: none is generated). ExtAuthzPerRoute.disabled: "Disable the ext auth filter for
//   this particular vhost or route".
// - The HTTP service gets Host, :method, :path (path_prefix + the request's path), Content-Length and
//   Authorization, and the request headers allowed_headers matches; the gRPC service every header
//   unless allowed_headers is set. An HTTP answer of 200 allows, any other status is a denial answered
//   to the client with that status; the gRPC service allows with OK.
// - A cluster that does not exist is an error, and so is a gRPC call that fails (a cluster without a
//   healthy endpoint, UNAVAILABLE): answered status_on_error (403 unless set) unless failure_mode_allow.
//   The HTTP service's cluster without a healthy endpoint answers 503 itself ("no healthy upstream"),
//   which is a non-200 answer: the client gets 503.
// - Allowed: the answer's headers matching allowed_upstream_headers (HTTP; every header of the gRPC
//   OkHttpResponse) are set on the request; with decoder_header_mutation_rules set, the routing headers
//   (host, :authority, :path, :method, :scheme) and x-envoy-* are not changed (HeaderMutationRules
//   defaults; disallow_is_error false: the change is ignored). clear_route_cache: the route is chosen
//   again with the changed headers, in the same virtual host (Host did not change).
// The connection manager's Lua and Wasm filters run in the same order (envoy-plugin-filters.ts): a
// listener's ExtensionRef plugins, the Host guard, and a route's plugins where the first route chosen
// enables them.
import type { HttpConnectionManager, Route, RouteConfiguration, VirtualHost } from '../../src/envoy-types.js';
import { pluginCode, runPluginFilter, type PluginBehaviour, type PluginRequest } from './envoy-plugin-filters.js';
import { re2FullMatch } from './re2.js';

const EXT_AUTHZ = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const HTTP_STATUS: Record<string, number> = {
  Forbidden: 403,
  Unauthorized: 401,
  ServiceUnavailable: 503,
  InternalServerError: 500,
  BadGateway: 502,
};
const ROUTING_HEADERS = new Set(['host', ':authority', ':path', ':method', ':scheme']);

/** What one ext_authz filter sends its auth service. */
export interface AuthzCheck {
  filter: string;
  protocol: 'HTTP' | 'GRPC';
  cluster: string;
  method: string;
  /** HTTP: path_prefix and the request's path; gRPC: the request's path. */
  path: string;
  headers: Record<string, string>;
}

/** The auth service's answer: HTTP 200 (or gRPC OK, given as 200) allows; any other status denies. */
export interface AuthzAnswer {
  status: number;
  headers?: Record<string, string>;
}

export type AuthzService = (check: AuthzCheck) => AuthzAnswer;

export interface AuthzOutcome {
  checks: AuthzCheck[];
  /** The request was answered by a filter: its status and why. */
  denied?: { status: number; why: string };
  /** The headers route matching sees: changed by the answers when clear_route_cache, else as sent. */
  routingHeaders: Map<string, string[]>;
  /** The :authority the route (and virtual host) is chosen again from, when a plugin cleared the route cache. */
  routingAuthority?: string;
  /** The plugin filters that ran, in order. */
  plugins: string[];
}

type Matcher = { exact?: string; prefix?: string; ignore_case?: boolean; safe_regex?: { regex?: string } };

function listMatches(patterns: Matcher[] | undefined, name: string): boolean {
  return (patterns ?? []).some((m) => {
    const v = m.ignore_case ? name.toLowerCase() : name;
    if (m.exact !== undefined) return v === (m.ignore_case ? m.exact.toLowerCase() : m.exact);
    if (m.prefix !== undefined) return v.startsWith(m.ignore_case ? m.prefix.toLowerCase() : m.prefix);
    if (m.safe_regex?.regex !== undefined) return re2FullMatch(m.safe_regex.regex, name);
    throw new Error(`unsupported string matcher ${JSON.stringify(m)}`);
  });
}

interface ExtAuthzConfig {
  failure_mode_allow?: boolean;
  status_on_error?: { code?: string };
  clear_route_cache?: boolean;
  decoder_header_mutation_rules?: object;
  allowed_headers?: { patterns?: Matcher[] };
  grpc_service?: { envoy_grpc?: { cluster_name?: string } };
  http_service?: {
    server_uri?: { cluster?: string };
    path_prefix?: string;
    authorization_response?: { allowed_upstream_headers?: { patterns?: Matcher[] } };
  };
}

/**
 * Runs the connection manager's ext_authz, Lua and Wasm filters in order on a request whose virtual host
 * is `vhost` and first route `route` (whether each runs is decided from them).
 */
export function runExtAuthz(
  hcm: HttpConnectionManager,
  rc: RouteConfiguration,
  vhost: VirtualHost | undefined,
  request: { method: string; path: string; authority: string; headers: Map<string, string[]> },
  cluster: { exists: (name: string) => boolean; healthy: (name: string) => boolean },
  service: AuthzService | undefined,
  route?: Route,
  plugins?: Record<string, PluginBehaviour>,
  /** The route as routing would choose it now, from these headers and :authority (a cleared route cache). */
  routeNow?: (authority: string | undefined, headers: Map<string, string[]>) => Route | undefined,
): AuthzOutcome {
  const original = new Map(request.headers);
  const headers = new Map(request.headers);
  const out: AuthzOutcome = { checks: [], routingHeaders: request.headers, plugins: [] };
  const pluginRequest: PluginRequest = { authority: request.authority, headers, metadata: new Map() };
  let changed = false;
  let clearRouteCache = false;
  for (const f of hcm.http_filters ?? []) {
    const config = f.typed_config as (ExtAuthzConfig & { '@type'?: string }) | undefined;
    const name = f.name ?? '';
    const perFilter = (route?.typed_per_filter_config?.[name] ??
      vhost?.typed_per_filter_config?.[name] ??
      rc.typed_per_filter_config?.[name]) as { disabled?: boolean } | undefined;
    // A Lua filter reads its per-route config from the route as it is when it runs.
    const current = routeNow && clearRouteCache ? routeNow(pluginRequest.authority, headers) : route;
    const code = pluginCode(f, current?.typed_per_filter_config?.[name] ?? vhost?.typed_per_filter_config?.[name]);
    if (config?.['@type'] !== EXT_AUTHZ && !code) continue;
    if (perFilter ? perFilter.disabled : f.disabled) continue;
    if (code) {
      out.plugins.push(name);
      const ran = runPluginFilter(f, code, pluginRequest, plugins);
      if (ran.respond !== undefined) {
        out.denied = { status: ran.respond, why: `${name}: answered by the plugin` };
        return out;
      }
      // A Lua or Wasm change to the request headers clears the route cache.
      if (ran.changed) changed = clearRouteCache = true;
      continue;
    }
    if (!config) continue;
    const grpc = config.grpc_service !== undefined;
    const target =
      (grpc ? config.grpc_service?.envoy_grpc?.cluster_name : config.http_service?.server_uri?.cluster) ?? '';
    const onError = HTTP_STATUS[config.status_on_error?.code ?? 'Forbidden'] ?? 403;
    const fail = (why: string): boolean => {
      if (config.failure_mode_allow) return false;
      out.denied = { status: onError, why: `${name}: ${why} (status_on_error)` };
      return true;
    };
    if (!cluster.exists(target) && fail(`auth cluster ${target} does not exist`)) return out;
    if (!cluster.healthy(target)) {
      if (grpc && fail(`auth cluster ${target} has no healthy endpoint (UNAVAILABLE)`)) return out;
      if (!grpc) {
        out.denied = { status: 503, why: `${name}: auth cluster ${target} has no healthy endpoint` };
        return out;
      }
    }
    const sent: Record<string, string> = {};
    const always = grpc ? [] : ['host', 'content-length', 'authorization'];
    for (const [k, v] of headers)
      if (always.includes(k) || (config.allowed_headers ? listMatches(config.allowed_headers.patterns, k) : grpc))
        sent[k] = v.join(',');
    const check: AuthzCheck = {
      filter: name,
      protocol: grpc ? 'GRPC' : 'HTTP',
      cluster: target,
      method: request.method,
      path: `${grpc ? '' : (config.http_service?.path_prefix ?? '')}${request.path}`,
      headers: { host: request.authority, ...sent },
    };
    out.checks.push(check);
    if (!service) throw new Error(`${name} checks the request: give the route-table check an auth service`);
    const answer = service(check);
    if (answer.status !== 200) {
      out.denied = { status: answer.status, why: `${name}: denied by ${target}` };
      return out;
    }
    const allowed = config.http_service?.authorization_response?.allowed_upstream_headers?.patterns;
    for (const [k, v] of Object.entries(answer.headers ?? {})) {
      const h = k.toLowerCase();
      if (!grpc && !listMatches(allowed, h)) continue;
      if (config.decoder_header_mutation_rules && (ROUTING_HEADERS.has(h) || h.startsWith('x-envoy-'))) continue;
      headers.set(h, [v]);
      changed = true;
    }
    clearRouteCache ||= config.clear_route_cache === true;
  }
  // The request goes on with the changed headers; routing sees them only when the cache was cleared.
  request.headers.clear();
  for (const [k, v] of headers) request.headers.set(k, v);
  out.routingHeaders = changed && !clearRouteCache ? original : request.headers;
  if (clearRouteCache && pluginRequest.authority !== request.authority) out.routingAuthority = pluginRequest.authority;
  return out;
}
