// xDS IR → Envoy v3 resources for one Gateway's proxy. Typed with the generated message types
// (a misspelt field is a compile error); Any values are built through `typed()` so their
// contents are typed too.
import type {
  ClusterIR,
  EndpointIR,
  GatewayIR,
  GatewayListenerIR,
  HTTPFiltersIR,
  HTTPRouteIR,
  HeaderChangesIR,
  L4RouteIR,
  PortIR,
  VirtualHostIR,
} from '@turnpike/api';
import { proxyListenPort } from '@turnpike/api';
import type { BootstrapTls } from './bootstrap.js';
import {
  escapeRegex,
  pathPrefixOf,
  redirectTarget,
  replacePrefixMatch,
  type RedirectListener,
} from './http-rewrites.js';
import {
  enablePlugin,
  pluginContentClusters,
  pluginFilterName,
  pluginHttpFilters,
  pluginsUsed,
  type PluginLookup,
  type PluginUse,
} from './plugin-filters.js';
import type {
  Any,
  Cluster,
  ClusterLoadAssignment,
  Cors,
  CorsPolicy,
  DownstreamTlsContext,
  Duration,
  Filter,
  FilterChain,
  HeaderMatcher,
  HeaderValueOption,
  HttpConnectionManager,
  Listener,
  Route,
  RouteAction,
  RouteConfiguration,
  RouteMatch,
  Router,
  Secret,
  TcpProxy,
  TlsInspector,
  UdpProxyConfig,
  UpstreamTlsContext,
  VirtualHost,
  HttpFilter,
} from './envoy-types.js';

export interface EnvoyResources {
  listeners: Listener[];
  routes: RouteConfiguration[];
  clusters: Cluster[];
  endpoints: ClusterLoadAssignment[];
  secrets: Secret[];
}

/** TLS material for SDS, looked up by Secret key `namespace/name`. */
export type SecretLookup = (key: string) => { certificateChain: string; privateKey: string } | undefined;

export type { PluginLookup } from './plugin-filters.js';

export const INVALID_BACKEND_CLUSTER = 'turnpike/invalid-backend';
/**
 * The name HTTP routes give the share of invalid backends. No cluster of that name is ever sent:
 * the proxy answers that share with the route's cluster_not_found_response_code, 500, as the
 * Gateway API requires (an empty cluster would answer 503). gRPC clients fail those calls.
 */
export const INVALID_HTTP_BACKEND = 'turnpike/invalid-backend-500';

/** Set while building when some resource names the invalid-backend cluster (so it is defined). */
let invalidBackendUsed = false;
function invalidBackend(): string {
  invalidBackendUsed = true;
  return INVALID_BACKEND_CLUSTER;
}

const ADS = { ads: {}, resource_api_version: 'V3' as const };

function typed<T extends object>(message: string, value: T): Any {
  return { '@type': `type.googleapis.com/${message}`, ...value } as Any;
}

export function duration(d: string): Duration {
  let ms = 0;
  for (const [, n, unit] of d.matchAll(/(\d+)(h|ms|m|s)/g))
    ms += Number(n) * ({ h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as Record<string, number>)[unit as string]!;
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
}

function headerOptions(c: HeaderChangesIR | undefined): HeaderValueOption[] {
  if (!c) return [];
  return [
    ...c.set.map((h): HeaderValueOption => ({
      header: { key: h.name, value: h.value },
      append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
    })),
    ...c.add.map((h): HeaderValueOption => ({
      header: { key: h.name, value: h.value },
      append_action: 'APPEND_IF_EXISTS_OR_ADD',
    })),
  ];
}

function stringMatch(type: 'Exact' | 'RegularExpression' | 'Prefix', value: string) {
  return type === 'Exact' ? { exact: value } : type === 'Prefix' ? { prefix: value } : { safe_regex: { regex: value } };
}

function routeMatch(r: HTTPRouteIR): RouteMatch {
  const m = r.match;
  const match: RouteMatch = {};
  switch (m.path.type) {
    case 'Exact':
      match.path = m.path.value;
      break;
    case 'RegularExpression':
      match.safe_regex = { regex: m.path.value };
      break;
    default: {
      // Gateway API prefixes match whole path elements; so does path_separated_prefix. gRPC
      // paths are always /service/method, so a plain prefix is exact for them (and proxyless
      // gRPC clients know no other).
      const v = m.path.value.replace(/\/+$/, '');
      if (v === '') match.prefix = '/';
      else if (r.source.kind === 'GRPCRoute') match.prefix = `${v}/`;
      else match.path_separated_prefix = v;
    }
  }
  const headers: HeaderMatcher[] = m.headers.map((h) => ({ name: h.name, string_match: stringMatch(h.type, h.value) }));
  if (m.method) headers.push({ name: ':method', string_match: { exact: m.method } });
  if (headers.length) match.headers = headers;
  if (m.queryParams.length)
    match.query_parameters = m.queryParams.map((q) => ({ name: q.name, string_match: stringMatch(q.type, q.value) }));
  return match;
}

const REDIRECT_CODES = {
  301: 'MOVED_PERMANENTLY',
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
} as const;

function applyFilters(
  route: Route,
  action: RouteAction | undefined,
  f: HTTPFiltersIR | undefined,
  matchedPrefix: string,
): void {
  if (!f) return;
  const req = headerOptions(f.requestHeaders);
  if (req.length) route.request_headers_to_add = req;
  if (f.requestHeaders?.remove.length) route.request_headers_to_remove = f.requestHeaders.remove;
  const res = headerOptions(f.responseHeaders);
  if (res.length) route.response_headers_to_add = res;
  if (f.responseHeaders?.remove.length) route.response_headers_to_remove = f.responseHeaders.remove;
  if (action && f.rewrite) {
    if (f.rewrite.hostname) action.host_rewrite_literal = f.rewrite.hostname;
    if (f.rewrite.path?.type === 'ReplacePrefixMatch')
      action.regex_rewrite = replacePrefixMatch(matchedPrefix, f.rewrite.path.value);
    if (f.rewrite.path?.type === 'ReplaceFullPath')
      action.regex_rewrite = { pattern: { regex: '^.*$' }, substitution: f.rewrite.path.value };
  }
  if (action && f.mirrors?.length) {
    action.request_mirror_policies = f.mirrors.map((m) => ({
      cluster: m.cluster,
      runtime_fraction: { default_value: { numerator: Math.round(m.percent * 10_000), denominator: 'MILLION' } },
    }));
  }
  const perFilter: Record<string, Any> = {};
  if (f.cors) {
    perFilter['envoy.filters.http.cors'] = typed<CorsPolicy>('envoy.extensions.filters.http.cors.v3.CorsPolicy', {
      allow_origin_string_match: f.cors.allowOrigins.map((o) =>
        o === '*'
          ? { safe_regex: { regex: '.*' } }
          : o.includes('*')
            ? { safe_regex: { regex: corsOriginPattern(o) } }
            : { exact: o },
      ),
      allow_methods: f.cors.allowMethods.join(','),
      allow_headers: f.cors.allowHeaders.join(','),
      expose_headers: f.cors.exposeHeaders.join(','),
      allow_credentials: { value: f.cors.allowCredentials },
      // A preflight from an origin not allowed is answered here (200 without allow-origin), not
      // passed to the backend, which would answer it as an ordinary OPTIONS request.
      forward_not_matching_preflights: { value: false },
      ...(f.cors.maxAge !== undefined ? { max_age: String(f.cors.maxAge) } : {}),
    });
  }
  for (const p of f.plugins ?? []) perFilter[pluginFilterName(p.name)] = enablePlugin();
  if (Object.keys(perFilter).length) route.typed_per_filter_config = perFilter;
}

/** The listener a route is served on, for what depends on it (a redirect's default port and scheme). */
const DEFAULT_LISTENER: RedirectListener = { port: 80, protocol: 'HTTP' };

/**
 * HTTPCORSFilter allowOrigins: "A wildcard character `*` ... matches any characters (greedy)", so
 * `https://*.bar.com` allows `https://a.b.bar.com` too.
 */
function corsOriginPattern(origin: string): string {
  return `^${escapeRegex(origin).replaceAll('\\*', '.+')}$`;
}

export function buildRoute(r: HTTPRouteIR, listener: RedirectListener = DEFAULT_LISTENER): Route {
  const route: Route = { name: r.name, match: routeMatch(r) };
  // A named rule (HTTPRouteNamedRouteRule) keeps its name where access logs and admin dumps see it.
  if (r.source.ruleName)
    route.metadata = {
      filter_metadata: { 'turnpike.dev': { fields: { rule_name: { stringValue: r.source.ruleName } } } },
    };
  if (r.directResponse) {
    route.direct_response = {
      status: r.directResponse.status,
      ...(r.directResponse.body ? { body: { inline_string: r.directResponse.body } } : {}),
    };
    // Plugins still run on a route answered by the proxy itself (e.g. 503 with no endpoints).
    if (r.filters?.plugins?.length)
      route.typed_per_filter_config = Object.fromEntries(
        r.filters.plugins.map((p) => [pluginFilterName(p.name), enablePlugin()]),
      );
    return route;
  }
  if (r.redirect) {
    const red = r.redirect;
    route.redirect = {
      response_code: REDIRECT_CODES[red.statusCode as keyof typeof REDIRECT_CODES] ?? 'FOUND',
      ...redirectTarget(red, listener),
      ...(red.path?.type === 'ReplaceFullPath' ? { path_redirect: red.path.value } : {}),
      ...(red.path?.type === 'ReplacePrefixMatch'
        ? { regex_rewrite: replacePrefixMatch(pathPrefixOf(r), red.path.value) }
        : {}),
    };
    applyFilters(route, undefined, r.filters, pathPrefixOf(r));
    return route;
  }
  const backends = r.backends ?? [];
  const action: RouteAction = {};
  if (backends.length === 1 && !r.invalidWeight && !backends[0]!.filters) {
    action.cluster = backends[0]!.cluster;
  } else {
    const clusters = backends.map((b) => {
      const wc: NonNullable<NonNullable<RouteAction['weighted_clusters']>['clusters']>[number] = {
        name: b.cluster,
        weight: { value: b.weight },
      };
      const req = headerOptions(b.filters?.requestHeaders);
      if (req.length) wc.request_headers_to_add = req;
      if (b.filters?.requestHeaders?.remove.length) wc.request_headers_to_remove = b.filters.requestHeaders.remove;
      const res = headerOptions(b.filters?.responseHeaders);
      if (res.length) wc.response_headers_to_add = res;
      if (b.filters?.responseHeaders?.remove.length) wc.response_headers_to_remove = b.filters.responseHeaders.remove;
      if (b.filters?.rewrite?.hostname) wc.host_rewrite_literal = b.filters.rewrite.hostname;
      return wc;
    });
    if (r.invalidWeight) {
      clusters.push({ name: INVALID_HTTP_BACKEND, weight: { value: r.invalidWeight } });
      action.cluster_not_found_response_code = 'INTERNAL_SERVER_ERROR';
    }
    action.weighted_clusters = { clusters };
  }
  // RouteAction.timeout "defaults to 15s" and covers every try: a backendRequest timeout alone
  // (the Gateway API's request timeout unset) must not be cut short by it, so it is disabled (0).
  if (r.timeouts?.request) action.timeout = duration(r.timeouts.request);
  else if (r.timeouts?.backendRequest) action.timeout = { seconds: '0', nanos: 0 };
  if (r.retry || r.timeouts?.backendRequest) {
    // With a retry stanza, connection errors (reset, refused, connect failure, and a backend
    // request timeout, which Envoy counts as a reset) are retried besides the listed codes, as
    // the spec says implementations SHOULD; without codes, any 5xx is.
    action.retry_policy = {
      retry_on: r.retry
        ? `${r.retry.codes.length ? 'retriable-status-codes' : '5xx'},reset,connect-failure,refused-stream`
        : '5xx',
      num_retries: { value: r.retry ? r.retry.attempts : 0 },
      ...(r.retry?.codes.length ? { retriable_status_codes: r.retry.codes } : {}),
      ...(r.retry?.backoff ? { retry_back_off: { base_interval: backoffInterval(r.retry.backoff) } } : {}),
      ...(r.timeouts?.backendRequest ? { per_try_timeout: duration(r.timeouts.backendRequest) } : {}),
    };
  }
  route.route = action;
  applyFilters(route, action, r.filters, pathPrefixOf(r));
  return route;
}

/**
 * RetryBackOff.base_interval "must be greater than zero. Values less than 1 ms are rounded up to
 * 1 ms": a Gateway API backoff of 0s (retry at once) is the shortest interval Envoy takes, 1 ms.
 */
function backoffInterval(backoff: string): Duration {
  const d = duration(backoff);
  return d.seconds === '0' && d.nanos === 0 ? { seconds: '0', nanos: 1_000_000 } : d;
}

/** Built routes by the identity of their IR, with whether they name the invalid-backend cluster. */
export type RouteMemo = WeakMap<HTTPRouteIR, { route: Route; invalid: boolean }>;
let routeMemo: RouteMemo | undefined;

function builtRoute(r: HTTPRouteIR, listener: RedirectListener): Route {
  // A redirect's default port and scheme are its listener's: built per listener, not shared.
  if (r.redirect) return buildRoute(r, listener);
  const known = routeMemo?.get(r);
  if (known) {
    if (known.invalid) invalidBackendUsed = true;
    return known.route;
  }
  const before = invalidBackendUsed;
  invalidBackendUsed = false;
  const route = buildRoute(r);
  routeMemo?.set(r, { route, invalid: invalidBackendUsed });
  invalidBackendUsed ||= before;
  return route;
}

/**
 * The hosts a listener answers with 421 (GatewayHTTPSListenerDetectMisdirectedRequests, decided by
 * the translator): other listeners' hosts on the port, and every other host when it has a hostname.
 */
function withMisdirectedHost(l: GatewayListenerIR, vhosts: VirtualHost[]): VirtualHost[] {
  const answering = (name: string, domains: string[], status: number): VirtualHost => ({
    name,
    domains,
    routes: [{ name, match: { prefix: '/' }, direct_response: { status } }],
  });
  const taken = new Set(vhosts.flatMap((v) => v.domains ?? []));
  const out = [...vhosts];
  const hosts = (l.misdirectedHosts ?? []).filter((h) => !taken.has(h));
  if (hosts.length) out.push(answering(`${l.name}/misdirected-hosts`, hosts, 421));
  if (l.misdirectedStatus !== undefined && !taken.has('*'))
    out.push(answering(`${l.name}/misdirected`, ['*'], l.misdirectedStatus));
  return out;
}

/**
 * The virtual hosts of the HTTP listeners sharing a port, one per domain. Which listener serves a
 * host is the translator's decision (GatewayHTTPListenerIsolation leaves each host to one listener);
 * should two still name one domain, their routes are kept in the IR's order, since Envoy refuses
 * a route configuration with a domain twice.
 */
function portVirtualHosts(listeners: GatewayListenerIR[], port: number): VirtualHost[] {
  const routesByDomain = new Map<string, Route[]>();
  for (const listener of listeners) {
    for (const virtualHost of listener.virtualHosts ?? []) {
      for (const domain of virtualHost.domains) {
        const routes = routesByDomain.get(domain) ?? [];
        const served = { port, protocol: listener.protocol };
        routes.push(...virtualHost.routes.map((r) => builtRoute(r, served)));
        routesByDomain.set(domain, routes);
      }
    }
  }
  return [...routesByDomain.keys()]
    .sort()
    .map((domain) => ({ name: domain, domains: [domain], routes: routesByDomain.get(domain)! }));
}

function httpConnectionManager(
  statPrefix: string,
  routeConfigName: string,
  withCors: boolean,
  pluginFilters: HttpFilter[] = [],
): Any {
  const filters: NonNullable<HttpConnectionManager['http_filters']> = [];
  if (withCors)
    filters.push({
      name: 'envoy.filters.http.cors',
      typed_config: typed<Cors>('envoy.extensions.filters.http.cors.v3.Cors', {}),
    });
  filters.push(...pluginFilters);
  filters.push({
    name: 'envoy.filters.http.router',
    typed_config: typed<Router>('envoy.extensions.filters.http.router.v3.Router', {}),
  });
  return typed<HttpConnectionManager>(
    'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    {
      stat_prefix: statPrefix,
      rds: { route_config_name: routeConfigName, config_source: ADS },
      http_filters: filters,
      // WebSocket upgrades pass through to backends (HTTPRouteBackendProtocolWebSocket).
      upgrade_configs: [{ upgrade_type: 'websocket' }],
    },
  );
}

function usesFilter(listeners: GatewayListenerIR[], pick: (f: HTTPFiltersIR) => unknown): boolean {
  return listeners.some((l) => (l.virtualHosts ?? []).some((v) => v.routes.some((r) => r.filters && pick(r.filters))));
}

function tcpProxy(statPrefix: string, route: L4RouteIR | undefined): Filter {
  const backends = route?.backends ?? [];
  const value: TcpProxy = { stat_prefix: statPrefix };
  if (backends.length === 1 && !route?.invalidWeight) value.cluster = backends[0]!.cluster;
  else if (backends.length)
    value.weighted_clusters = {
      clusters: [
        ...backends.map((b) => ({ name: b.cluster, weight: b.weight })),
        ...(route?.invalidWeight ? [{ name: invalidBackend(), weight: route.invalidWeight }] : []),
      ],
    };
  else value.cluster = invalidBackend();
  return {
    name: 'envoy.filters.network.tcp_proxy',
    typed_config: typed<TcpProxy>('envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', value),
  };
}

function downstreamTls(l: GatewayListenerIR): FilterChain['transport_socket'] {
  const ctx: DownstreamTlsContext = {
    common_tls_context: {
      tls_certificate_sds_secret_configs: (l.tls?.certificates ?? []).map((name) => ({ name, sds_config: ADS })),
      // AllowInsecureFallback: ask for a certificate, let the backend decide what an untrusted one means.
      ...(l.tls?.clientCA
        ? {
            validation_context: {
              trusted_ca: { inline_string: l.tls.clientCA },
              ...(l.tls.clientCAOptional ? { trust_chain_verification: 'ACCEPT_UNTRUSTED' as const } : {}),
            },
          }
        : {}),
    },
    ...(l.tls?.clientCA ? { require_client_certificate: { value: !l.tls.clientCAOptional } } : {}),
  };
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: typed<DownstreamTlsContext>('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', ctx),
  };
}

function serverNames(hostname: string | undefined): string[] {
  return hostname && hostname !== '*' ? [hostname] : [];
}

interface PluginContext {
  gw: GatewayIR;
  lookup: PluginLookup;
  used: PluginUse[];
}

function pluginFilters(listeners: GatewayListenerIR[], pc: PluginContext): HttpFilter[] {
  const used = pluginsUsed(listeners);
  pc.used.push(...used);
  return pluginHttpFilters(used, pc.gw, pc.lookup);
}

/** An HTTP connection manager filter chain whose routes come over RDS as `routeName`. */
function httpFilterChain(
  routeName: string,
  listeners: GatewayListenerIR[],
  plugins: PluginContext,
): Pick<FilterChain, 'filters'> {
  return {
    filters: [
      {
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: httpConnectionManager(
          routeName,
          routeName,
          usesFilter(listeners, (f) => f.cors),
          pluginFilters(listeners, plugins),
        ),
      },
    ],
  };
}

/** UDP: Envoy's udp_proxy sends to one cluster, so the heaviest backend of the route takes it all. */
function udpListenerFilters(port: PortIR, first: GatewayListenerIR): Listener['listener_filters'] {
  const route = first.routes?.[0];
  const heaviest = [...(route?.backends ?? [])].sort((a, b) => b.weight - a.weight)[0];
  return [
    {
      name: 'envoy.filters.udp_listener.udp_proxy',
      typed_config: typed<UdpProxyConfig>('envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig', {
        stat_prefix: port.name,
        cluster: heaviest?.cluster ?? invalidBackend(),
      }),
    },
  ];
}

/** HTTPS and TLS listeners share the port; the filter chain is chosen by SNI. */
function sniFilterChains(port: PortIR, out: EnvoyResources, plugins: PluginContext): FilterChain[] {
  const chains: FilterChain[] = [];
  /** Server names of the port's TLS route chains so far ('' for a chain without server_names). */
  const claimedNames = new Set<string>();
  for (const listener of port.listeners) {
    if (listener.protocol === 'HTTPS') {
      const routeName = `${port.name}/${listener.name}`;
      chains.push({
        name: listener.name,
        filter_chain_match: { server_names: serverNames(listener.hostname) },
        transport_socket: downstreamTls(listener),
        ...httpFilterChain(routeName, [listener], plugins),
      });
      out.routes.push({
        name: routeName,
        virtual_hosts: withMisdirectedHost(listener, portVirtualHosts([listener], port.port)),
        ignore_port_in_host_matching: true,
      });
      continue;
    }
    // TLS: a chain per route, by the route's hostnames (or the listener's). Envoy refuses a
    // listener whose filter chains share a match ("multiple filter chains with the same matching
    // rules are defined"), which would take every SNI of the port down: a server name already
    // claimed by an older route (routes come oldest first) stays with it.
    for (const route of listener.routes ?? []) {
      const wanted = (route.hostnames ?? []).filter((h) => h !== '*');
      // '' stands for a chain without server_names (every SNI the others do not name).
      const keys = wanted.length ? wanted : serverNames(listener.hostname);
      const names = (keys.length ? keys : ['']).filter((n) => !claimedNames.has(n));
      if (!names.length) continue;
      for (const n of names) claimedNames.add(n);
      chains.push({
        name: `${listener.name}/${route.name}`,
        filter_chain_match: { server_names: names.filter((n) => n !== '') },
        ...(listener.tls?.mode === 'Terminate' ? { transport_socket: downstreamTls(listener) } : {}),
        filters: [tcpProxy(`${port.name}/${route.name}`, route)],
      });
    }
  }
  return chains;
}

function buildPort(port: PortIR, out: EnvoyResources, plugins: PluginContext): void {
  const first = port.listeners[0];
  if (!first) return;
  const listener: Listener = {
    name: port.name,
    address: {
      socket_address: {
        address: '0.0.0.0',
        port_value: proxyListenPort(port.port),
        protocol: port.transport === 'udp' ? ('UDP' as const) : ('TCP' as const),
      },
    },
  };
  if (port.transport === 'udp') {
    listener.listener_filters = udpListenerFilters(port, first);
  } else if (first.protocol === 'HTTP') {
    listener.filter_chains = [httpFilterChain(port.name, port.listeners, plugins)];
    // Host headers carry the port on non-default ports: virtual hosts are chosen by hostname alone,
    // and the Host header reaches the backend as the client sent it (strip_any_host_port would
    // remove the port upstream too, and from redirects).
    out.routes.push({
      name: port.name,
      virtual_hosts: portVirtualHosts(port.listeners, port.port),
      ignore_port_in_host_matching: true,
    });
  } else if (first.protocol === 'TCP') {
    listener.filter_chains = [{ filters: [tcpProxy(port.name, first.routes?.[0])] }];
  } else {
    listener.listener_filters = [
      {
        name: 'envoy.filters.listener.tls_inspector',
        typed_config: typed<TlsInspector>('envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector', {}),
      },
    ];
    listener.filter_chains = sniFilterChains(port, out, plugins);
  }
  out.listeners.push(listener);
}

/** `clientCertificate`: the SDS Secret the proxy presents to a TLS backend (the Gateway's spec.tls.backend). */
function buildCluster(c: ClusterIR, clientCertificate?: string): Cluster {
  const cluster: Cluster = {
    name: c.name,
    type: 'EDS',
    eds_cluster_config: { eds_config: ADS, service_name: c.name },
    connect_timeout: { seconds: '5', nanos: 0 },
    lb_policy: 'ROUND_ROBIN',
  };
  if (c.protocol === 'h2') cluster.http2_protocol_options = {};
  if (c.tls) {
    const ctx: UpstreamTlsContext = {
      sni: c.tls.sni,
      common_tls_context: {
        ...(clientCertificate
          ? { tls_certificate_sds_secret_configs: [{ name: clientCertificate, sds_config: ADS }] }
          : {}),
        validation_context: {
          ...(c.tls.caBundle
            ? { trusted_ca: { inline_string: c.tls.caBundle } }
            : { trusted_ca: { filename: '/etc/ssl/certs/ca-certificates.crt' } }),
          match_typed_subject_alt_names: (c.tls.subjectAltNames.length ? c.tls.subjectAltNames : [c.tls.sni]).map(
            (n) => ({ san_type: n.includes('://') ? ('URI' as const) : ('DNS' as const), matcher: { exact: n } }),
          ),
        },
      },
    };
    cluster.transport_socket = {
      name: 'envoy.transport_sockets.tls',
      typed_config: typed<UpstreamTlsContext>('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', ctx),
    };
  }
  return cluster;
}

/** The EDS resource of one cluster. */
export function buildEndpoints(c: ClusterIR, endpoints: readonly EndpointIR[]): ClusterLoadAssignment {
  return {
    cluster_name: c.name,
    // gRPC's xDS client ignores localities without a weight.
    endpoints: endpoints.length
      ? [
          {
            locality: {},
            load_balancing_weight: { value: 1 },
            lb_endpoints: endpoints.map((e) => ({
              endpoint: {
                address: {
                  socket_address: {
                    address: e.address,
                    port_value: e.port,
                    protocol: c.protocol === 'udp' ? ('UDP' as const) : ('TCP' as const),
                  },
                },
              },
              health_status: e.ready ? ('HEALTHY' as const) : ('UNHEALTHY' as const),
            })),
          },
        ]
      : [],
  };
}

/**
 * Proxyless gRPC: each hostname with GRPCRoutes becomes an API listener named after the
 * hostname, so clients dialling `xds:///<hostname>` route per the GRPCRoute with no proxy.
 */
function buildProxyless(gw: GatewayIR, out: EnvoyResources): void {
  const byHost = new Map<string, HTTPRouteIR[]>();
  for (const port of gw.ports)
    for (const l of port.listeners)
      for (const vh of l.virtualHosts ?? []) {
        for (const r of vh.routes) {
          if (r.source.kind !== 'GRPCRoute') continue;
          for (const d of vh.domains) {
            if (d === '*' || d.startsWith('*.')) continue;
            const list = byHost.get(d) ?? [];
            list.push(r);
            byHost.set(d, list);
          }
        }
      }
  for (const host of [...byHost.keys()].sort()) {
    const routeName = `proxyless/${host}`;
    out.listeners.push({
      name: host,
      api_listener: { api_listener: httpConnectionManager(routeName, routeName, false) },
    });
    const vh: VirtualHostIR = { name: host, domains: [host], routes: byHost.get(host)! };
    // Proxyless clients run no plugins (no Lua or Wasm in gRPC): their routes go without.
    const withoutPlugins = (r: HTTPRouteIR): HTTPRouteIR =>
      r.filters?.plugins ? { ...r, filters: { ...r.filters, plugins: undefined } } : r;
    out.routes.push({
      name: routeName,
      virtual_hosts: [
        { name: vh.name, domains: vh.domains, routes: vh.routes.map((r) => buildRoute(withoutPlugins(r))) },
      ],
    });
  }
}

/** The endpoints of a cluster by name (XdsIR.endpoints); absent means none. */
export type EndpointLookup = (cluster: string) => readonly EndpointIR[] | undefined;

/**
 * Every Envoy resource of one Gateway's proxy. Without `endpoints` no EDS resource is built (the
 * snapshot builder keeps those per cluster, apart from the rest).
 */
/** How the proxies reach the controller, when it serves them over TLS (plugin content clusters use it). */
export interface ControlPlaneOptions {
  controlPlaneTls?: BootstrapTls;
}

export function buildResources(
  gw: GatewayIR,
  secrets: SecretLookup,
  plugins: PluginLookup = () => undefined,
  endpoints?: EndpointLookup,
  memo?: { clusters: WeakMap<ClusterIR, Cluster>; routes: RouteMemo },
  options: ControlPlaneOptions = {},
): EnvoyResources {
  routeMemo = memo?.routes;
  try {
    return build(gw, secrets, plugins, endpoints, memo?.clusters, options);
  } finally {
    routeMemo = undefined;
  }
}

function build(
  gw: GatewayIR,
  secrets: SecretLookup,
  plugins: PluginLookup,
  endpoints: EndpointLookup | undefined,
  clusterMemo: WeakMap<ClusterIR, Cluster> | undefined,
  options: ControlPlaneOptions,
): EnvoyResources {
  const out: EnvoyResources = { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] };
  const pc: PluginContext = { gw, lookup: plugins, used: [] };
  invalidBackendUsed = false;
  for (const port of gw.ports) buildPort(port, out, pc);
  if (gw.proxyless) buildProxyless(gw, out);
  out.clusters.push(...pluginContentClusters(pc.used, gw, options.controlPlaneTls));
  for (const c of gw.clusters) {
    // A backend client certificate is the Gateway's, not the cluster's: such clusters are not shared.
    const own = !!(c.tls && gw.backendClientCertificate);
    let cluster = own ? undefined : clusterMemo?.get(c);
    if (!cluster) {
      cluster = buildCluster(c, own ? gw.backendClientCertificate : undefined);
      if (!own) clusterMemo?.set(c, cluster);
    }
    out.clusters.push(cluster);
    if (endpoints) out.endpoints.push(buildEndpoints(c, endpoints(c.name) ?? []));
  }
  if (invalidBackendUsed) {
    out.clusters.push({
      name: INVALID_BACKEND_CLUSTER,
      type: 'STATIC',
      connect_timeout: { seconds: '1', nanos: 0 },
      load_assignment: { cluster_name: INVALID_BACKEND_CLUSTER, endpoints: [] },
    });
  }
  for (const { name: key } of gw.secrets) {
    const s = secrets(key);
    if (!s) continue;
    out.secrets.push({
      name: key,
      tls_certificate: {
        certificate_chain: { inline_string: s.certificateChain },
        private_key: { inline_string: s.privateKey },
      },
    });
  }
  return out;
}
