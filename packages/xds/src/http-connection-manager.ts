// The HTTP connection manager network filter: RDS from ADS, CORS and plugin filters when routes use
// them, the router last; its access logs (observability.ts); and on a Gateway's listeners the edge
// hardening below, with what ProxyConfig.spec.http changes of it (GatewayIR.http).
//
// The hardening is what Envoy's "Configuring Envoy as an edge proxy" page asks of an HTTP proxy
// facing the internet (https://www.envoyproxy.io/docs/envoy/latest/configuration/best_practices/edge
// and its example, docs/root/configuration/best_practices/_include/edge.yaml): Envoy's own defaults
// "are tailored for the service mesh use case". Quotes below are from the fields' documentation in
// envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto (HCM)
// and envoy/config/core/v3/protocol.proto.
import type { HttpSettingsIR } from '@turnpike/api';
import { ADS, msDuration, typed } from './envoy-values.js';
import type { AccessLog, Any, Cors, HttpConnectionManager, HttpFilter, Router } from './envoy-types.js';
import { statefulSessionFilter } from './stateful-session.js';

/** What a Gateway gets of each setting ProxyConfig.spec.http leaves out. */
export const EDGE_HTTP_DEFAULTS: Readonly<Required<HttpSettingsIR>> = Object.freeze<Required<HttpSettingsIR>>({
  // tls.proto, alpn_protocols: "h2,http/1.1" if the listener is going to support both; "If empty,
  // Envoy will not expose ALPN", and a TLS client then speaks HTTP/1.1 (grpc-go refuses to).
  alpn: ['h2', 'http/1.1'],
  // HCM xff_num_trusted_hops: "The default is zero": with use_remote_address the client is the peer
  // of the connection. Behind a load balancer that appends to X-Forwarded-For, its hops.
  xffNumTrustedHops: 0,
  escapedSlashes: 'UnescapeAndRedirect',
  // The edge page: "headers_with_underscores_action setting to REJECT_REQUEST, to protect upstream
  // services that treat '_' and '-' as interchangeable".
  headersWithUnderscores: 'RejectRequest',
  // Envoy's own defaults ("If unconfigured, the default max request headers allowed is 60 KiB";
  // max_headers_count: "the default maximum number of request headers allowed is 100"), written out
  // so a config dump shows them and a ProxyConfig can change them.
  maxRequestHeadersKiB: 60,
  maxRequestHeaders: 100,
  // HCM request_headers_timeout: "If not specified or set to 0, this timeout is disabled": a client
  // could hold a stream open by sending headers a byte at a time. 10 s is ample for any real client.
  requestHeadersTimeoutMs: 10_000,
  // The edge example's stream_idle_timeout (300s), which is also Envoy's default.
  streamIdleTimeoutMs: 300_000,
  // The edge example's common_http_protocol_options.idle_timeout (1 hour), Envoy's default too.
  connectionIdleTimeoutMs: 3_600_000,
});

const ESCAPED_SLASHES = {
  UnescapeAndRedirect: 'UNESCAPE_AND_REDIRECT',
  RejectRequest: 'REJECT_REQUEST',
  UnescapeAndForward: 'UNESCAPE_AND_FORWARD',
  KeepUnchanged: 'KEEP_UNCHANGED',
} as const;

const UNDERSCORES = { RejectRequest: 'REJECT_REQUEST', DropHeader: 'DROP_HEADER', Allow: 'ALLOW' } as const;

/** What the edge hardening adds to a Gateway's HTTP connection managers and HTTPS listeners. */
export interface EdgeHttp {
  /** Fields of the HttpConnectionManager. */
  hcm: Partial<HttpConnectionManager>;
  /** DownstreamTlsContext.common_tls_context.alpn_protocols of a TLS-terminating HTTP chain. */
  alpn: string[];
}

const built = new WeakMap<HttpSettingsIR, EdgeHttp>();
let withDefaults: EdgeHttp | undefined;

/** The edge hardening with a Gateway's settings; built once per settings object. */
export function edgeHttp(settings: HttpSettingsIR | undefined): EdgeHttp {
  if (!settings) return (withDefaults ??= buildEdgeHttp(EDGE_HTTP_DEFAULTS));
  let edge = built.get(settings);
  if (!edge) built.set(settings, (edge = buildEdgeHttp({ ...EDGE_HTTP_DEFAULTS, ...settings })));
  return edge;
}

function buildEdgeHttp(s: Required<HttpSettingsIR>): EdgeHttp {
  const hcm: Partial<HttpConnectionManager> = {
    // "Should paths be normalized according to RFC 3986 before any processing of requests by HTTP
    // filters or routing? This affects the upstream :path header as well." Without it
    // `GET /foo/../admin` matches PathPrefix /foo and reaches that backend as sent, where a server
    // that resolves dot-segments serves /admin: a bypass of any path-based routing or policy.
    normalize_path: { value: true },
    // "Without setting this option, incoming requests with path //dir///file will not match against
    // route with prefix match set to /dir." Envoy merges after normalising (conn_manager_utility.cc).
    merge_slashes: true,
    // %2F and %5C: the edge example's UNESCAPE_AND_REDIRECT, which "minimizes possibility of path
    // confusion exploits by forcing request with unescaped slashes to traverse all parties"
    // (a 307 to the unescaped path; a gRPC request gets 400, which gRPC clients never send).
    // KEEP_UNCHANGED (Envoy's default) leaves `/foo%2Fbar` to a backend that may decode it to
    // /foo/bar after PathPrefix /foo did not match it; UNESCAPE_AND_FORWARD "should not be enabled
    // if intermediaries perform path based access control". Both are a ProxyConfig away for APIs
    // that carry encoded slashes in a segment.
    path_with_escaped_slashes_action: ESCAPED_SLASHES[s.escapedSlashes],
    // The edge page: use_remote_address true "to avoid consuming HTTP headers from external clients"
    // (X-Forwarded-For, and x-envoy-* headers, sanitised for external requests). Envoy 1.36 trusts
    // no address as internal without internal_address_config (the RFC 1918 default is gone).
    use_remote_address: { value: true },
    ...(s.xffNumTrustedHops ? { xff_num_trusted_hops: s.xffNumTrustedHops } : {}),
    common_http_protocol_options: {
      idle_timeout: msDuration(s.connectionIdleTimeoutMs),
      max_headers_count: { value: s.maxRequestHeaders },
      headers_with_underscores_action: UNDERSCORES[s.headersWithUnderscores],
    },
    max_request_headers_kb: { value: s.maxRequestHeadersKiB },
    request_headers_timeout: msDuration(s.requestHeadersTimeoutMs),
    stream_idle_timeout: msDuration(s.streamIdleTimeoutMs),
    // request_timeout is left unset (disabled): the edge example's 300s "must be disabled for
    // long-lived and streaming requests", which GRPCRoutes and WebSocket upgrades carry; an
    // HTTPRoute's own timeouts.request is the route's.
    // The edge page: "HTTP/2 maximum concurrent streams limit to 100", "initial stream window size
    // limit to 64 KiB", "initial connection window size limit to 1 MiB" (Envoy's are 2^31-1 streams
    // and 256 MiB windows, which let one client hold a great deal of the proxy's memory).
    http2_protocol_options: {
      max_concurrent_streams: { value: 100 },
      initial_stream_window_size: { value: 65_536 },
      initial_connection_window_size: { value: 1_048_576 },
    },
  };
  return { hcm, alpn: [...s.alpn] };
}

export interface HttpConnectionManagerOptions {
  /** Pre-routing listener filters (listener-filters.ts): first, before any filter that reads the route. */
  preRouting?: HttpFilter[];
  cors?: boolean;
  plugins?: HttpFilter[];
  /** Some route sets a stateful session (stateful-session.ts): the filter, last before the router. */
  statefulSession?: boolean;
  accessLog?: AccessLog[];
  /** Tracing (tracing.ts), for a Gateway an XTelemetryPolicy applies to. */
  tracing?: NonNullable<HttpConnectionManager['tracing']> | undefined;
  /** The edge hardening (a Gateway's listeners; not the API listeners of proxyless clients). */
  edge?: EdgeHttp;
}

export function httpConnectionManager(
  statPrefix: string,
  routeConfigName: string,
  options: HttpConnectionManagerOptions = {},
): Any {
  const filters: NonNullable<HttpConnectionManager['http_filters']> = [...(options.preRouting ?? [])];
  if (options.cors)
    filters.push({
      name: 'envoy.filters.http.cors',
      typed_config: typed<Cors>('envoy.extensions.filters.http.cors.v3.Cors', {}),
    });
  filters.push(...(options.plugins ?? []));
  if (options.statefulSession) filters.push(statefulSessionFilter());
  filters.push({
    name: 'envoy.filters.http.router',
    typed_config: typed<Router>('envoy.extensions.filters.http.router.v3.Router', {}),
  });
  const accessLog = options.accessLog ?? [];
  return typed<HttpConnectionManager>(
    'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    {
      stat_prefix: statPrefix,
      rds: { route_config_name: routeConfigName, config_source: ADS },
      http_filters: filters,
      // WebSocket upgrades pass through to backends (HTTPRouteBackendProtocolWebSocket).
      upgrade_configs: [{ upgrade_type: 'websocket' }],
      ...options.edge?.hcm,
      ...(accessLog.length ? { access_log: accessLog } : {}),
      ...(options.tracing ? { tracing: options.tracing } : {}),
    },
  );
}
