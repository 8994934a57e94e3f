// What Envoy does with one request, given the Listeners, RouteConfigurations and Clusters we
// generate: the route-table check (in the spirit of Envoy's own router_check_tool). No Envoy can
// run on these machines, so this follows Envoy's documented semantics field by field; the comments
// quote the field documentation in envoy/config/{listener,route}/v3/*.proto where it is subtle.
// Only the fields Turnpike emits are modelled; anything else is reported as unsupported rather
// than guessed.
import type {
  Cluster,
  CorsPolicy,
  DownstreamTlsContext,
  FilterChain,
  HeaderMatcher,
  HeaderValueOption,
  HttpConnectionManager,
  Listener,
  Route,
  RouteAction,
  RouteConfiguration,
  TcpProxy,
  VirtualHost,
} from '../../src/envoy-types.js';
import type { EnvoyResources } from '../../src/index.js';
import { hasGrpcContentType, normalizeRequestPath } from './envoy-path.js';
import { re2FullMatch, re2Replacer } from './re2.js';
import { runExtAuthz, type AuthzCheck, type AuthzService } from './envoy-ext-authz.js';
import type { PluginBehaviour } from './envoy-plugin-filters.js';

export interface HttpRequestSpec {
  /** The Gateway listener port the client dials (the proxy listens on its mapped port). */
  port: number;
  /** TLS server name; absent for a plain-text connection. */
  sni?: string;
  /** Host / :authority as sent (a port in it is kept, as a client sends it). */
  authority: string;
  method?: string;
  /** :path with its query string, as sent (`curl --path-as-is`). */
  path: string;
  headers?: Record<string, string>;
  /** The ALPN protocols the client offers on a TLS connection, in its order; none: no ALPN extension. */
  alpn?: string[];
  /**
   * The client speaks HTTP/2 and nothing else (a gRPC client): over TLS only if ALPN selects h2
   * (grpc-go refuses a connection that negotiated none), over plain text with prior knowledge.
   */
  http2Only?: boolean;
  /** The auth service(s) of the listener's ext_authz filters (envoy-ext-authz.ts), when a request meets one. */
  authz?: AuthzService;
  /** What the plugins the request meets do, by Lua source or Wasm vm_id (envoy-plugin-filters.ts). */
  plugins?: Record<string, PluginBehaviour>;
}

export interface UpstreamRequest {
  host: string;
  path: string;
  method: string;
  headers: Map<string, string[]>;
}

export interface WeightedTarget {
  cluster: string;
  weight: number;
  /** The request this target receives (weighted-cluster header changes and host rewrites applied). */
  request: UpstreamRequest;
  responseHeaders: HeaderMutation;
  /** Whether a Cluster of that name exists (Envoy answers cluster_not_found_response_code when not). */
  exists: boolean;
  /** Whether that cluster has a healthy endpoint (Envoy answers 503 "no healthy upstream" when not). */
  healthy: boolean;
}

export interface HeaderMutation {
  add: HeaderValueOption[];
  remove: string[];
}

export interface CorsAnswer {
  /** The filter answered the preflight itself (it was not forwarded upstream). */
  preflight: boolean;
  allowed: boolean;
  headers: Record<string, string>;
}

export type HttpOutcome =
  | { kind: 'refused'; reason: string }
  | {
      kind: 'http';
      filterChain: string;
      /** The protocol the connection speaks, and what ALPN selected on a TLS one (none: no ALPN). */
      protocol: 'HTTP/1.1' | 'HTTP/2';
      alpn?: string;
      /** Why the connection manager answered itself, before routing (the status says how). */
      localReply?: string;
      /** The stream was reset (HTTP/2) where HTTP/1.1 gets a status. */
      reset?: boolean;
      virtualHost?: string;
      route?: string;
      /** 404 when no virtual host or route matches; the direct response's status; a redirect's code. */
      status?: number;
      location?: string;
      cors?: CorsAnswer;
      targets?: WeightedTarget[];
      action?: RouteAction;
      mirrors?: { cluster: string; percent: number }[];
      responseHeaders?: HeaderMutation;
      /** What the pre-routing ext_authz filters that ran sent their auth services, in order. */
      authz?: AuthzCheck[];
      /** The Lua and Wasm filters that ran, in order. */
      plugins?: string[];
    };

export type TcpOutcome =
  | { kind: 'refused'; reason: string }
  | {
      kind: 'tcp';
      filterChain: string;
      /** The filter chain ends the client's TLS (a transport_socket): the backend gets what was inside it. */
      terminatesTls: boolean;
      targets: { cluster: string; weight: number; exists: boolean; healthy: boolean }[];
    };

const lower = (s: string) => s.toLowerCase();

/**
 * The listener that accepts a connection on a Gateway port. The proxy listens on a mapped port
 * (proxy-ports.ts; the Service's targetPort): the listener is found by the Gateway port its name
 * carries, and `envoyLoadProblems` checks that no two listeners share an address.
 */
export function listenerFor(res: EnvoyResources, port: number, transport: 'TCP' | 'UDP' = 'TCP'): Listener | undefined {
  return (
    res.listeners.find((l) => l.name === `${transport.toLowerCase()}-${port}`) ??
    // The bootstrap's own listeners (readiness, stats) are found by the port they bind in the Pod.
    res.listeners.find(
      (l) =>
        !/^(tcp|udp)-\d+$/.test(l.name ?? '') &&
        l.address?.socket_address?.port_value === port &&
        (l.address.socket_address.protocol ?? 'TCP') === transport,
    )
  );
}

/**
 * FilterChainMatch: "For criteria that allow ranges or wildcards, the most specific value in any of
 * the configured filter chains that matches the incoming connection is going to be used (e.g. for
 * SNI www.example.com the most specific match would be www.example.com, then *.example.com, then
 * *.com, then any filter chain without server_names requirements)." A connection without SNI
 * (plain text) can only match a chain without server_names.
 */
export function selectFilterChain(listener: Listener, sni: string | undefined): FilterChain | undefined {
  const chains = listener.filter_chains ?? [];
  const names = (c: FilterChain) => c.filter_chain_match?.server_names ?? [];
  if (sni) {
    const name = lower(sni);
    const exact = chains.find((c) => names(c).some((n) => lower(n) === name));
    if (exact) return exact;
    const labels = name.split('.');
    for (let i = 1; i < labels.length; i++) {
      const wildcard = `*.${labels.slice(i).join('.')}`;
      const chain = chains.find((c) => names(c).some((n) => lower(n) === wildcard));
      if (chain) return chain;
    }
  }
  return chains.find((c) => names(c).length === 0) ?? listener.default_filter_chain;
}

function typedConfig<T>(chain: FilterChain, filterName: string): T | undefined {
  return chain.filters?.find((f) => f.name === filterName)?.typed_config as T | undefined;
}

/**
 * VirtualHost.domains: "Domain search order: 1. Exact domain names: www.foo.com. 2. Suffix domain
 * wildcards: *.foo.com or *-bar.foo.com. 3. Prefix domain wildcards: foo.* or foo-*. 4. Special
 * wildcard * matching any domain. The wildcard will not match the empty string ... The longest
 * wildcards match first." Host matching is case-insensitive.
 */
export function selectVirtualHost(rc: RouteConfiguration, host: string): VirtualHost | undefined {
  const h = lower(host);
  const vhosts = rc.virtual_hosts ?? [];
  const withDomain = (pred: (d: string) => boolean) =>
    vhosts
      .flatMap((v) => (v.domains ?? []).filter((d) => pred(lower(d))).map((d) => ({ v, d })))
      .sort((a, b) => b.d.length - a.d.length);
  const exact = vhosts.find((v) => (v.domains ?? []).some((d) => lower(d) === h));
  if (exact) return exact;
  const suffix = withDomain(
    (d) => d.startsWith('*') && d.length > 1 && h.endsWith(d.slice(1)) && h.length > d.length - 1,
  );
  if (suffix[0]) return suffix[0].v;
  const prefix = withDomain(
    (d) => d.endsWith('*') && d.length > 1 && h.startsWith(d.slice(0, -1)) && h.length > d.length - 1,
  );
  if (prefix[0]) return prefix[0].v;
  return vhosts.find((v) => (v.domains ?? []).includes('*'));
}

function splitPath(path: string): { path: string; query: string } {
  const i = path.indexOf('?');
  return i < 0 ? { path, query: '' } : { path: path.slice(0, i), query: path.slice(i) };
}

const fullMatch = re2FullMatch;

type StringMatcher = NonNullable<HeaderMatcher['string_match']>;

function stringMatches(m: StringMatcher, value: string): boolean {
  const ci = m.ignore_case ?? false;
  const v = ci ? lower(value) : value;
  const c = (s: string) => (ci ? lower(s) : s);
  if (m.exact !== undefined) return v === c(m.exact);
  if (m.prefix !== undefined) return v.startsWith(c(m.prefix));
  if (m.suffix !== undefined) return v.endsWith(c(m.suffix));
  if (m.contains !== undefined) return v.includes(c(m.contains));
  // RegexMatcher: "The regex match string. The string must be supported by the configured engine.
  // The regex is matched against the full string, not as a partial match."
  if (m.safe_regex) return fullMatch(m.safe_regex.regex, value);
  throw new Error(`unsupported string matcher ${JSON.stringify(m)}`);
}

/** Request headers as Envoy sees them: lowercased names, pseudo-headers included. */
function headerValues(headers: Map<string, string[]>, name: string): string[] | undefined {
  return headers.get(lower(name));
}

function routeMatches(route: Route, method: string, path: string, headers: Map<string, string[]>): boolean {
  const m = route.match ?? {};
  const { path: p, query } = splitPath(path);
  const caseSensitive = m.case_sensitive?.value ?? true;
  const eq = (a: string, b: string) => (caseSensitive ? a === b : lower(a) === lower(b));
  if (m.prefix !== undefined) {
    if (!(caseSensitive ? p.startsWith(m.prefix) : lower(p).startsWith(lower(m.prefix)))) return false;
  } else if (m.path !== undefined) {
    if (!eq(p, m.path)) return false;
  } else if (m.safe_regex) {
    // RouteMatch.safe_regex: "the entire path (without the query string) must match the regex".
    if (!fullMatch(m.safe_regex.regex, p)) return false;
  } else if (m.path_separated_prefix !== undefined) {
    // "the :path header (without the query string) must either exactly match the
    // path_separated_prefix or have it as a prefix, followed by /".
    const prefix = m.path_separated_prefix;
    if (!(eq(p, prefix) || (p.length > prefix.length && eq(p.slice(0, prefix.length + 1), `${prefix}/`)))) return false;
  } else {
    throw new Error(`route ${route.name}: unsupported path specifier`);
  }
  for (const h of m.headers ?? []) {
    const values = h.name === ':method' ? [method] : headerValues(headers, h.name);
    // HeaderMatcher: a header with several values is matched on the values joined with ",".
    const matched = values !== undefined && (h.string_match ? stringMatches(h.string_match, values.join(',')) : true);
    if (matched === (h.invert_match ?? false)) return false;
  }
  if (m.query_parameters?.length) {
    const params = new URLSearchParams(query.slice(1));
    for (const q of m.query_parameters) {
      // QueryParameterMatcher: the first value of the parameter is matched.
      const value = params.get(q.name);
      if (value === null) return false;
      if (q.string_match && !stringMatches(q.string_match as StringMatcher, value)) return false;
    }
  }
  return true;
}

function applyHeaders(headers: Map<string, string[]>, add: HeaderValueOption[], remove: string[]): void {
  for (const option of add) {
    const key = lower(option.header!.key!);
    const value = option.header!.value ?? '';
    // HeaderValueOption.append_action: APPEND_IF_EXISTS_OR_ADD (the default) adds a value beside
    // any present; OVERWRITE_IF_EXISTS_OR_ADD replaces them.
    if (option.append_action === 'OVERWRITE_IF_EXISTS_OR_ADD') headers.set(key, [value]);
    else if (option.append_action === 'ADD_IF_ABSENT') {
      if (!headers.has(key)) headers.set(key, [value]);
    } else headers.set(key, [...(headers.get(key) ?? []), value]);
  }
  for (const name of remove) headers.delete(lower(name));
}

/**
 * The path after RouteAction's rewrite. prefix_rewrite: "the matched prefix (or path) should be
 * swapped with this value" (for path_separated_prefix the matched part is the prefix itself, so a
 * rewrite to "/" of "/strip/x" gives "//x": the reason we use regex_rewrite for ReplacePrefixMatch).
 * regex_rewrite rewrites "portions of the path that match the pattern" (every match, as RE2's
 * GlobalReplace does), on the path without its query string, which is kept.
 */
export function rewrittenPath(
  route: Route,
  action: { prefix_rewrite?: string; regex_rewrite?: RouteAction['regex_rewrite'] },
  path: string,
): string {
  const { path: p, query } = splitPath(path);
  if (action.prefix_rewrite !== undefined && action.prefix_rewrite !== '') {
    const m = route.match ?? {};
    const matched = m.prefix ?? m.path ?? m.path_separated_prefix;
    if (matched === undefined) throw new Error(`route ${route.name}: prefix_rewrite needs a prefix or path match`);
    return action.prefix_rewrite + p.slice(matched.length) + query;
  }
  if (action.regex_rewrite) {
    const re = re2Replacer(action.regex_rewrite.pattern!.regex);
    return substitute(p, re, action.regex_rewrite.substitution ?? '') + query;
  }
  return p + query;
}

/** RE2 substitution: \0-\9 name capture groups, \\ a backslash. */
function substitute(subject: string, re: RegExp, substitution: string): string {
  return subject.replace(re, (...groups: unknown[]) =>
    substitution.replace(/\\(\d|\\)/g, (_, g: string) => (g === '\\' ? '\\' : String(groups[Number(g)] ?? ''))),
  );
}

const REDIRECT_STATUS: Record<string, number> = {
  MOVED_PERMANENTLY: 301,
  FOUND: 302,
  SEE_OTHER: 303,
  TEMPORARY_REDIRECT: 307,
  PERMANENT_REDIRECT: 308,
};

function splitHostPort(authority: string): { host: string; port?: string } {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(authority);
  return m ? { host: m[1]!, ...(m[2] ? { port: m[2] } : {}) } : { host: authority };
}

/**
 * The Location of a RedirectAction. host_redirect: "The host portion of the URL will be swapped
 * with this value"; port_redirect: "The port value of the URL will be swapped with this value".
 * The rest is Envoy's (source/common/http/utility.cc, processRequestHost, and envoyproxy/envoy#17318):
 * host_redirect replaces host and port, so the request's port is dropped unless port_redirect
 * gives one; without host_redirect the request's Host is kept, its port removed when port_redirect
 * is set (and replaced by it) or when the scheme changes and the port is the old scheme's default
 * (proto: "If the source URI scheme is http and the port is explicitly set to :80, the port will be
 * removed after the redirection").
 */
export function redirectLocation(route: Route, scheme: 'http' | 'https', host: string, path: string): string {
  const r = route.redirect!;
  const finalScheme = r.https_redirect ? 'https' : r.scheme_redirect || scheme;
  const newPort = r.port_redirect ? `:${r.port_redirect}` : '';
  let finalHost: string;
  if (r.host_redirect) finalHost = r.host_redirect + newPort;
  else {
    const original = splitHostPort(host);
    const defaultPort =
      (scheme === 'http' && original.port === '80') || (scheme === 'https' && original.port === '443');
    const removePort = newPort !== '' || (finalScheme !== scheme && defaultPort);
    finalHost = (removePort || !original.port ? original.host : `${original.host}:${original.port}`) + newPort;
  }
  let finalPath: string;
  if (r.path_redirect !== undefined)
    finalPath = r.path_redirect + (r.path_redirect.includes('?') ? '' : splitPath(path).query);
  else finalPath = rewrittenPath(route, r, path);
  if (r.strip_query) finalPath = splitPath(finalPath).path;
  return `${finalScheme}://${finalHost}${finalPath}`;
}

/**
 * CorsPolicy on the route, run by the CORS filter (source/extensions/filters/http/cors/cors_filter.cc).
 * A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered by the filter
 * itself with 200 unless its origin is not allowed and forward_not_matching_preflights is true
 * (the default), in which case it goes upstream. The answer carries allow-credentials,
 * allow-methods and allow-headers (a `*` for either echoes what the request asked for) and
 * max-age, and allow-origin only for an allowed origin. Every response to a request from an
 * allowed origin, the filter's own preflight answer included, passes the filter's encodeHeaders,
 * which sets allow-origin, allow-credentials and expose-headers. An origin matcher that matches
 * the literal `*` allows every origin.
 */
function corsAnswer(policy: CorsPolicy, method: string, headers: Map<string, string[]>): CorsAnswer | undefined {
  const origin = headerValues(headers, 'origin')?.[0];
  if (!origin) return undefined;
  const matchers = (policy.allow_origin_string_match ?? []) as StringMatcher[];
  const allowed = matchers.some((m) => stringMatches(m, '*') || stringMatches(m, origin));
  const requestedMethod = headerValues(headers, 'access-control-request-method')?.[0];
  const forwardNotMatching = policy.forward_not_matching_preflights?.value ?? true;
  const preflight = method === 'OPTIONS' && !!requestedMethod && (allowed || !forwardNotMatching);
  const out: Record<string, string> = {};
  if (preflight) {
    if (policy.allow_credentials?.value) out['access-control-allow-credentials'] = 'true';
    if (policy.allow_methods)
      out['access-control-allow-methods'] = policy.allow_methods === '*' ? requestedMethod! : policy.allow_methods;
    if (policy.allow_headers)
      out['access-control-allow-headers'] =
        policy.allow_headers === '*'
          ? (headerValues(headers, 'access-control-request-headers')?.[0] ?? '')
          : policy.allow_headers;
    if (policy.max_age) out['access-control-max-age'] = policy.max_age;
  }
  if (allowed) {
    out['access-control-allow-origin'] = origin;
    if (policy.allow_credentials?.value) out['access-control-allow-credentials'] = 'true';
    if (policy.expose_headers) out['access-control-expose-headers'] = policy.expose_headers;
  }
  return { preflight, allowed, headers: out };
}

function clusterExists(res: EnvoyResources, name: string): boolean {
  return res.clusters.some((c: Cluster) => c.name === name);
}

/**
 * HealthStatus UNKNOWN, which an unset health_status is: "The health status is not known. This is
 * interpreted by Envoy as HEALTHY" (health_check.proto).
 */
const servesTraffic = (s: string | undefined) => (s ?? 'UNKNOWN') === 'HEALTHY' || (s ?? 'UNKNOWN') === 'UNKNOWN';

/** A healthy endpoint in the cluster's EDS resource, or in its own load_assignment (STATIC, DNS). */
function clusterHealthy(res: EnvoyResources, name: string): boolean {
  const cluster = res.clusters.find((c: Cluster) => c.name === name);
  if (!cluster) return false;
  const assignment =
    cluster.type === 'EDS' ? res.endpoints.find((e) => e.cluster_name === name) : cluster.load_assignment;
  return (assignment?.endpoints ?? []).some((l) => (l.lb_endpoints ?? []).some((e) => servesTraffic(e.health_status)));
}

/**
 * ALPN on a chain that terminates TLS (CommonTlsContext.alpn_protocols: "If empty, Envoy will not
 * expose ALPN"). Envoy's server picks "the standard selection algorithm in priority order"
 * (ServerContextImpl::alpnSelectCallback: SSL_select_next_proto over its own list first): the first
 * protocol of the chain's list the client offers. None in common: no ALPN (SSL_TLSEXT_ERR_NOACK),
 * the handshake goes on.
 */
export function negotiateAlpn(chain: FilterChain, offered: readonly string[] | undefined): string | undefined {
  const ctx = chain.transport_socket?.typed_config as DownstreamTlsContext | undefined;
  const served = ctx?.common_tls_context?.alpn_protocols ?? [];
  return served.find((p) => (offered ?? []).includes(p));
}

/**
 * The codec's checks of the request headers, before the path is looked at (protocol.proto,
 * HttpProtocolOptions): headers_with_underscores_action REJECT_REQUEST ("HTTP/1 requests are rejected
 * with the 400 status. HTTP/2 requests end with the stream reset") or DROP_HEADER (dropped before
 * any filter); max_headers_count ("Requests that exceed this limit will receive a 431 response for
 * HTTP/1.x and cause a stream reset for HTTP/2", default 100) and HCM max_request_headers_kb ("Requests
 * that exceed this limit will receive a 431 response", default 60 KiB). The size is modelled as the
 * bytes of every name and value, the request's pseudo-headers included.
 */
function headerRejection(
  hcm: HttpConnectionManager,
  headers: Map<string, string[]>,
  pseudo: { method: string; path: string; authority: string },
): { status: number; why: string; resetOnHttp2: boolean } | undefined {
  const options = hcm.common_http_protocol_options;
  const underscores = options?.headers_with_underscores_action ?? 'ALLOW';
  for (const name of [...headers.keys()]) {
    if (!name.includes('_')) continue;
    if (underscores === 'REJECT_REQUEST')
      return { status: 400, why: `header "${name}" has an underscore (REJECT_REQUEST)`, resetOnHttp2: true };
    if (underscores === 'DROP_HEADER') headers.delete(name);
  }
  const count = headers.size + 1; // and the Host / :authority header
  const maxCount = options?.max_headers_count?.value ?? 100;
  if (count > maxCount)
    return { status: 431, why: `${count} request headers, over max_headers_count ${maxCount}`, resetOnHttp2: true };
  let bytes = pseudo.method.length + pseudo.path.length + pseudo.authority.length;
  for (const [name, values] of headers) for (const v of values) bytes += name.length + v.length;
  const maxKb = hcm.max_request_headers_kb?.value ?? 60;
  if (bytes > maxKb * 1024)
    return { status: 431, why: `request headers of ${bytes} bytes, over ${maxKb} KiB`, resetOnHttp2: false };
  return undefined;
}

/** What Envoy does with an HTTP request on a Gateway port. */
export function routeHttp(res: EnvoyResources, req: HttpRequestSpec): HttpOutcome {
  const listener = listenerFor(res, req.port);
  if (!listener) return { kind: 'refused', reason: `no listener on port ${req.port}` };
  const chain = selectFilterChain(listener, req.sni);
  if (!chain) return { kind: 'refused', reason: `no filter chain for SNI ${req.sni ?? '(none)'}` };
  const hcm = typedConfig<HttpConnectionManager>(chain, 'envoy.filters.network.http_connection_manager');
  if (!hcm) return { kind: 'refused', reason: `filter chain ${chain.name ?? ''} is not HTTP` };
  if (req.sni === undefined && chain.transport_socket) return { kind: 'refused', reason: 'TLS required' };
  // HttpConnectionManager.codec_type AUTO (unset): "This mode supports both ALPN for TLS listeners as
  // well as protocol inference for plaintext listeners. If ALPN data is available, it is preferred".
  const alpn = chain.transport_socket ? negotiateAlpn(chain, req.alpn) : undefined;
  const protocol = alpn === 'h2' || (!chain.transport_socket && req.http2Only) ? 'HTTP/2' : 'HTTP/1.1';
  if (req.http2Only && protocol !== 'HTTP/2')
    return {
      kind: 'refused',
      reason: `ALPN selected ${alpn ?? 'nothing'} on filter chain ${chain.name ?? ''}: a client that speaks only HTTP/2 gives up`,
    };
  // HttpConnectionManager.route_config: "The route table for the connection manager is static and is
  // specified in this property" (the bootstrap's listeners); otherwise it comes over RDS.
  const rc = hcm.route_config ?? res.routes.find((r) => r.name === hcm.rds?.route_config_name);
  if (!rc) return { kind: 'refused', reason: `no RouteConfiguration ${hcm.rds?.route_config_name}` };
  const method = req.method ?? 'GET';
  const headers = new Map<string, string[]>();
  for (const [k, v] of Object.entries(req.headers ?? {})) headers.set(lower(k), [v]);
  // HttpConnectionManager.strip_any_host_port: "the port part should be removed from host/authority
  // header before any processing of request by HTTP filters or routing ... This affects the
  // upstream host header". RouteConfiguration.ignore_port_in_host_matching: "Envoy will ignore the
  // port number in the :authority header (if any) when picking VirtualHost" (the header is kept).
  let authority = hcm.strip_any_host_port ? splitHostPort(req.authority).host : req.authority;
  const base = { kind: 'http' as const, filterChain: chain.name ?? '', protocol, ...(alpn ? { alpn } : {}) };
  const refusal = headerRejection(hcm, headers, { method, path: req.path, authority });
  if (refusal) {
    if (protocol === 'HTTP/2' && refusal.resetOnHttp2) return { ...base, localReply: refusal.why, reset: true };
    return { ...base, status: refusal.status, localReply: refusal.why };
  }
  // The path is normalised before anything routes on it, and goes upstream as normalised.
  const normalized = normalizeRequestPath(hcm, req.path, hasGrpcContentType(headers.get('content-type')?.[0]));
  if ('reject' in normalized) return { ...base, status: 400, localReply: normalized.reject };
  if ('redirect' in normalized)
    return {
      ...base,
      status: 307,
      location: normalized.redirect,
      localReply: 'escaped slashes in the path, redirected unescaped',
    };
  const path = normalized.path;
  const hostOf = (a: string) => (rc.ignore_port_in_host_matching ? splitHostPort(a).host : a);
  const firstVhost = selectVirtualHost(rc, hostOf(authority));
  // Which filters run is decided from the route first chosen, before any runs.
  const firstRoute = firstVhost?.routes?.find((r) => routeMatches(r, method, path, headers));
  // Pre-routing listener filters (ext_authz, plugins) run before the router, whatever the route.
  const cluster = { exists: (n: string) => clusterExists(res, n), healthy: (n: string) => clusterHealthy(res, n) };
  const request = { method, path, authority, headers };
  const routeNow = (now: string | undefined, current: Map<string, string[]>) =>
    selectVirtualHost(rc, hostOf(now ?? ''))?.routes?.find((r) => routeMatches(r, method, path, current));
  const authz = runExtAuthz(hcm, rc, firstVhost, request, cluster, req.authz, firstRoute, req.plugins, routeNow);
  const checked = {
    ...(authz.checks.length ? { authz: authz.checks } : {}),
    ...(authz.plugins.length ? { plugins: authz.plugins } : {}),
  };
  // A plugin that changed :authority cleared the route cache: the virtual host is chosen again from it.
  if (authz.routingAuthority !== undefined) authority = authz.routingAuthority;
  const vhost = authz.routingAuthority !== undefined ? selectVirtualHost(rc, hostOf(authority)) : firstVhost;
  if (authz.denied)
    return {
      ...base,
      ...checked,
      ...(vhost ? { virtualHost: vhost.name } : {}),
      status: authz.denied.status,
      localReply: authz.denied.why,
    };
  if (!vhost) return { ...base, status: 404 };
  const route = (vhost.routes ?? []).find((r) => routeMatches(r, method, path, authz.routingHeaders));
  if (!route) return { ...base, virtualHost: vhost.name, status: 404 };
  const found = { ...base, ...checked, virtualHost: vhost.name, route: route.name ?? '' };
  const corsPolicy = route.typed_per_filter_config?.['envoy.filters.http.cors'] as CorsPolicy | undefined;
  const corsFilterRuns = (hcm.http_filters ?? []).some((f) => f.name === 'envoy.filters.http.cors');
  const cors = corsPolicy && corsFilterRuns ? corsAnswer(corsPolicy, method, headers) : undefined;
  if (cors?.preflight) return { ...found, status: 200, cors };
  const responseHeaders = { add: route.response_headers_to_add ?? [], remove: route.response_headers_to_remove ?? [] };
  if (route.direct_response) return { ...found, status: route.direct_response.status, responseHeaders };
  const scheme = req.sni !== undefined ? 'https' : 'http';
  if (route.redirect) {
    const status = REDIRECT_STATUS[route.redirect.response_code ?? 'MOVED_PERMANENTLY'] ?? 301;
    return { ...found, status, location: redirectLocation(route, scheme, authority, path), responseHeaders };
  }
  const action = route.route;
  if (!action) throw new Error(`route ${route.name}: no action`);
  const upstream: UpstreamRequest = {
    host: action.host_rewrite_literal ?? authority,
    path: rewrittenPath(route, action, path),
    method,
    headers: new Map(headers),
  };
  const targetFor = (
    cluster: string,
    weight: number,
    extra?: {
      add?: HeaderValueOption[];
      remove?: string[];
      host?: string;
      resAdd?: HeaderValueOption[];
      resRemove?: string[];
    },
  ): WeightedTarget => {
    const request: UpstreamRequest = { ...upstream, headers: new Map(upstream.headers) };
    // Header mutations apply from the most specific level (weighted cluster) to the route; with
    // most_specific_header_mutations_wins unset, the route's are applied last and so win.
    applyHeaders(request.headers, extra?.add ?? [], extra?.remove ?? []);
    applyHeaders(request.headers, route.request_headers_to_add ?? [], route.request_headers_to_remove ?? []);
    if (extra?.host) request.host = extra.host;
    return {
      cluster,
      weight,
      request,
      responseHeaders: {
        add: [...(extra?.resAdd ?? []), ...responseHeaders.add],
        remove: [...(extra?.resRemove ?? []), ...responseHeaders.remove],
      },
      exists: clusterExists(res, cluster),
      healthy: clusterHealthy(res, cluster),
    };
  };
  const targets = action.cluster
    ? [targetFor(action.cluster, 1)]
    : (action.weighted_clusters?.clusters ?? []).map((c) =>
        targetFor(c.name!, c.weight?.value ?? 0, {
          add: c.request_headers_to_add,
          remove: c.request_headers_to_remove,
          host: c.host_rewrite_literal,
          resAdd: c.response_headers_to_add,
          resRemove: c.response_headers_to_remove,
        }),
      );
  const mirrors = (action.request_mirror_policies ?? []).map((m) => {
    const f = m.runtime_fraction?.default_value;
    const scale = { HUNDRED: 100, TEN_THOUSAND: 10_000, MILLION: 1_000_000 }[f?.denominator ?? 'HUNDRED'] ?? 100;
    return { cluster: m.cluster!, percent: f ? ((f.numerator ?? 0) * 100) / scale : 100 };
  });
  return { ...found, targets, action, mirrors, responseHeaders, ...(cors ? { cors } : {}) };
}

/** What Envoy does with a TLS (or plain TCP) connection on a Gateway port. */
export function routeTcp(res: EnvoyResources, port: number, sni?: string): TcpOutcome {
  const listener = listenerFor(res, port);
  if (!listener) return { kind: 'refused', reason: `no listener on port ${port}` };
  const chain = selectFilterChain(listener, sni);
  if (!chain) return { kind: 'refused', reason: `no filter chain for SNI ${sni ?? '(none)'}` };
  const proxy = typedConfig<TcpProxy>(chain, 'envoy.filters.network.tcp_proxy');
  if (!proxy) return { kind: 'refused', reason: `filter chain ${chain.name ?? ''} is not a TCP proxy` };
  const targets = proxy.cluster
    ? [{ cluster: proxy.cluster, weight: 1 }]
    : (proxy.weighted_clusters?.clusters ?? []).map((c) => ({ cluster: c.name!, weight: Number(c.weight ?? 0) }));
  return {
    kind: 'tcp',
    filterChain: chain.name ?? '',
    terminatesTls: !!chain.transport_socket,
    // A target without a healthy endpoint gets no connection: tcp_proxy closes it (a reset).
    targets: targets.map((t) => ({
      ...t,
      exists: clusterExists(res, t.cluster),
      healthy: clusterHealthy(res, t.cluster),
    })),
  };
}

/**
 * Where a UDP listener's datagrams go: udp_proxy sends to one cluster (UdpProxyConfig.cluster).
 * That cluster splits by locality when it has locality_weighted_lb_config: a locality's share is
 * its load_balancing_weight over the sum at its priority, scaled by its availability ("effective
 * weight = weight × min(1, overprovisioning factor 1.4 × healthy hosts / hosts)",
 * arch_overview_load_balancing_locality_weighted_lb). Returned per locality (by sub_zone), or the
 * cluster itself when it does not split.
 */
export function routeUdp(res: EnvoyResources, port: number): { cluster: string; weight: number }[] | undefined {
  const listener = listenerFor(res, port, 'UDP');
  const filter = listener?.listener_filters?.find((f) => f.name === 'envoy.filters.udp_listener.udp_proxy');
  if (!filter) return undefined;
  const config = filter.typed_config as unknown as { cluster?: string };
  if (config.cluster === undefined) throw new Error(`udp_proxy on port ${port}: only a single cluster is modelled`);
  const cluster = res.clusters.find((c) => c.name === config.cluster);
  if (!cluster?.common_lb_config?.locality_weighted_lb_config) return [{ cluster: config.cluster, weight: 1 }];
  const assignment = res.endpoints.find((e) => e.cluster_name === config.cluster);
  return (assignment?.endpoints ?? []).map((l) => {
    const hosts = l.lb_endpoints ?? [];
    const healthy = hosts.filter((e) => servesTraffic(e.health_status));
    const availability = hosts.length ? Math.min(1, (1.4 * healthy.length) / hosts.length) : 0;
    return { cluster: l.locality?.sub_zone ?? '', weight: (l.load_balancing_weight?.value ?? 0) * availability };
  });
}
