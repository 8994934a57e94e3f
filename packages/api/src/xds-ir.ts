// The xDS IR: per Gateway, what its proxy listens on and where traffic goes. Plain JSON; the
// xds package turns it into Envoy resources.
import type { EscapedSlashesAction, HeadersWithUnderscoresAction, HttpAlpnProtocol } from './turnpike.js';

/** Where an IR route came from; `ruleName` is the rule's `name` when it has one (HTTPRouteNamedRouteRule). */
export interface RouteSource {
  kind: string;
  namespace: string;
  name: string;
  rule: number;
  match?: number;
  ruleName?: string;
}

export interface EndpointIR {
  address: string;
  port: number;
  ready: boolean;
  /** In a cluster spread over several Services (ClusterIR.members): the member it belongs to, and its weight. */
  locality?: { name: string; weight: number };
}

export interface ClusterIR {
  /**
   * `namespace/service/port`, suffixed with how routes speak to it: none for HTTPRoutes (HTTP/1.1, or
   * HTTP/2 by the port's appProtocol), `/h2` for GRPCRoutes, `/tcp`, `/udp`. Its endpoints are in XdsIR.endpoints.
   */
  name: string;
  service: { namespace: string; name: string; port: number };
  protocol: 'http' | 'h2' | 'tcp' | 'udp';
  tls?: {
    sni: string;
    caBundle?: string;
    wellKnownCA?: string;
    subjectAltNames: SubjectAltNameIR[];
    policy: string;
    /**
     * The certificate presented: absent, the Gateway's backend client certificate if it has one
     * (BackendTLSPolicy); false, none (an XBackend in TLS mode ServerOnly); a Secret (`namespace/name`,
     * with the sha256 of what is served, as GatewayIR.secrets has it), an XBackend's own in ClientAndServer.
     */
    clientCertificate?: false | { secret: string; sha256: string };
  };
  /**
   * A cluster spread over several Services by weight, one locality each (a UDPRoute with several
   * backends: udp_proxy sends to one cluster). `service` is the first member's.
   */
  members?: { cluster: string; service: { namespace: string; name: string; port: number }; weight: number }[];
  /**
   * An XBackend of type ExternalHostname (GEP-4894): the proxy resolves `hostname` by DNS itself (a
   * LOGICAL_DNS cluster with no EDS); `service` names the XBackend. Such a cluster has no endpoints here.
   */
  external?: { hostname: string; port: number };
  /**
   * An XBackend of type EndpointSelector (GEP-4894): its endpoints are the ready Pods of `service.namespace`
   * that carry every label of `matchLabels`, at `service.port` (an EDS cluster like a Service's; `service`
   * names the XBackend).
   */
  endpointSelector?: { matchLabels: Record<string, string> };
  /** An EndpointSelector XBackend's session persistence (GEP-1619): its routes keep a session on one Pod. */
  sessionPersistence?: SessionPersistenceIR;
}

/**
 * Envoy's stateful session (envoy.filters.http.stateful_session) for a route: the upstream host the
 * router's cluster gave a session is written to a cookie or header, and a request carrying it goes back
 * to that host if it is still in the cluster the router chose. `ttlSeconds` 0: a session cookie.
 */
export type SessionPersistenceIR =
  { type: 'Cookie'; name: string; path: string; ttlSeconds: number } | { type: 'Header'; name: string };

/** A name the backend's certificate must carry, of the SAN type BackendTLSPolicy's `type` names. */
export interface SubjectAltNameIR {
  type: 'DNS' | 'URI';
  value: string;
}

export interface WeightedCluster {
  cluster: string;
  weight: number;
  filters?: HTTPFiltersIR;
}

export interface StringMatchIR {
  type: 'Exact' | 'RegularExpression' | 'Prefix';
  value: string;
}

export interface HTTPMatchIR {
  path: { type: 'Exact' | 'PathPrefix' | 'RegularExpression'; value: string };
  headers: ({ name: string } & StringMatchIR)[];
  queryParams: ({ name: string } & StringMatchIR)[];
  method?: string;
  /** A GRPCRoute's service and method match, as written (precedence counts their characters). */
  grpc?: { service?: string; method?: string };
}

export interface HeaderChangesIR {
  set: { name: string; value: string }[];
  add: { name: string; value: string }[];
  remove: string[];
}

export interface HTTPFiltersIR {
  requestHeaders?: HeaderChangesIR;
  responseHeaders?: HeaderChangesIR;
  rewrite?: { hostname?: string; path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string } };
  mirrors?: { cluster: string; percent: number }[];
  cors?: {
    allowOrigins: string[];
    allowMethods: string[];
    allowHeaders: string[];
    exposeHeaders: string[];
    allowCredentials: boolean;
    maxAge?: number;
  };
  /** Plugins enabled on this route. */
  plugins?: PluginRefIR[];
}

/** A plugin a route or listener runs: `namespace/name`; content by sha256, or from `url` when served over HTTP. */
export interface PluginRefIR {
  name: string;
  type: 'lua' | 'wasm';
  sha256: string;
  url?: string;
}

export interface RedirectIR {
  scheme?: string;
  hostname?: string;
  port?: number;
  path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string };
  statusCode: number;
}

export interface HTTPRouteIR {
  /** Unique within the Gateway: `kind/namespace/name/rule/match`. */
  name: string;
  source: RouteSource;
  match: HTTPMatchIR;
  filters?: HTTPFiltersIR;
  backends?: WeightedCluster[];
  /** Share of traffic (by weight) that goes to invalid backends and is answered with 500. */
  invalidWeight?: number;
  directResponse?: { status: number; body?: string };
  redirect?: RedirectIR;
  timeouts?: { request?: string; backendRequest?: string };
  retry?: { codes: number[]; attempts: number; backoff?: string };
  /** The session persistence of the rule's backends (XBackend EndpointSelector, GEP-1619). */
  sessionPersistence?: SessionPersistenceIR;
}

export interface VirtualHostIR {
  name: string;
  domains: string[];
  routes: HTTPRouteIR[];
}

export interface L4RouteIR {
  name: string;
  source: RouteSource;
  hostnames?: string[];
  backends: WeightedCluster[];
  invalidWeight?: number;
}

export interface ListenerTLSIR {
  mode: 'Terminate' | 'Passthrough';
  /** Secret keys `namespace/name`; their content is in GatewayIR.secrets. */
  certificates: string[];
  clientCA?: string;
  /** AllowInsecureFallback: a missing or failing client certificate does not refuse the connection. */
  clientCAOptional?: boolean;
}

export interface GatewayListenerIR {
  /** `Gateway|ListenerSet/namespace/name/listener`. */
  name: string;
  protocol: string;
  hostname?: string;
  tls?: ListenerTLSIR;
  virtualHosts?: VirtualHostIR[];
  routes?: L4RouteIR[];
  /**
   * On an HTTPS listener with a hostname: the status answering a request for any host it does not
   * serve, on a connection negotiated for it (GatewayHTTPSListenerDetectMisdirectedRequests: 421).
   * A listener without a hostname has none (such a host is a 404), only `misdirectedHosts`.
   */
  misdirectedStatus?: number;
  /** Hosts other listeners of the port serve, answered 421 on this listener's connections. */
  misdirectedHosts?: string[];
  /** Pre-routing filters (GEP-5224), in the listener's order: each runs on every request before routing. */
  preRouting?: PreRoutingFilterIR[];
}

/** A listener's ExternalAuth filter: the ext_authz check every request of the listener passes first. */
export interface ExternalAuthIR {
  type: 'ExternalAuth';
  protocol: 'HTTP' | 'GRPC';
  /** The auth Service's cluster (one of the Gateway's `clusters`). */
  cluster: string;
  /** HTTP: the prefix added to the request's path in the check request. */
  pathPrefix?: string;
  /** Request headers sent to the auth service besides those always sent (HTTP), or the only ones (gRPC). */
  allowedHeaders?: string[];
  /** HTTP: headers of an allowing answer copied into the request; empty: all but Host and Authority. */
  allowedResponseHeaders?: string[];
  /** Bytes of the request body sent along; absent or 0: none. */
  forwardBodyMaxSize?: number;
}

/** A listener's ExtensionRef filter: a plugin (PluginInstallation) every request of the listener passes first. */
export interface PluginFilterIR {
  type: 'ExtensionRef';
  plugin: PluginRefIR;
}

export type PreRoutingFilterIR = ExternalAuthIR | PluginFilterIR;

export interface PortIR {
  name: string;
  port: number;
  /** The port the proxy listens on for it in its pod (proxy-ports.ts). */
  listenPort: number;
  transport: 'tcp' | 'udp';
  listeners: GatewayListenerIR[];
}

/** What the proxies log per request or connection (ProxyConfig.spec.accessLog), resolved; absent: nothing. */
export interface AccessLogIR {
  format: 'json' | 'text';
  /** JSON: field → Envoy command operator string, sorted by field. */
  json?: Record<string, string>;
  /** Text: Envoy's format string. */
  text?: string;
  /** Written to the proxy's stdout. */
  stdout: boolean;
  /** Also sent to an OpenTelemetry collector: its cluster (one of the Gateway's `clusters`). */
  openTelemetry?: { cluster: string };
}

/**
 * A Gateway's tracing (the XTelemetryPolicy that applies to it, GEP-4768), resolved: every HTTP connection
 * manager of its proxies traces through Envoy's OpenTelemetry tracer to `cluster` (one of the Gateway's
 * `clusters`, HTTP/2: OTLP over gRPC).
 */
export interface TracingIR {
  cluster: string;
  /** The collector's authority (the Service's DNS name and port), for the gRPC :authority. */
  authority: string;
  /** Percent of new traces sampled (tracing.samplingRate); absent: Envoy's default, 100. */
  samplingPercent?: number;
  /** The OpenTelemetry resource's service.name; absent: Envoy's default. */
  serviceName?: string;
  /** The name of every span (a route decorator's operation on every route of the Gateway). */
  spanName?: string;
  /** Headers sent with every export request (tracing.provider.headers), as gRPC initial metadata. */
  headers?: { name: string; value: string }[];
  /** Span tags, in the policy's order: a literal value or a request header's. */
  tags?: { name: string; literal?: string; requestHeader?: string }[];
  /** The policy (`namespace/name`), for explain and the logs. */
  policy: string;
}

/**
 * ProxyConfig.spec.http as the Gateway's HTTP connection managers apply it: only what the ProxyConfig
 * sets and the translator found valid (the defaults are the xds side's, http-connection-manager.ts).
 */
export interface HttpSettingsIR {
  alpn?: HttpAlpnProtocol[];
  xffNumTrustedHops?: number;
  escapedSlashes?: EscapedSlashesAction;
  headersWithUnderscores?: HeadersWithUnderscoresAction;
  maxRequestHeadersKiB?: number;
  maxRequestHeaders?: number;
  requestHeadersTimeoutMs?: number;
  streamIdleTimeoutMs?: number;
  connectionIdleTimeoutMs?: number;
}

export interface GatewayIR {
  name: string;
  namespace: string;
  ports: PortIR[];
  clusters: ClusterIR[];
  /**
   * TLS Secrets the listeners use, by `namespace/name`, with the sha256 of what is served (the
   * content stays out of the IR, but a rotation changes the IR and so reaches the proxies).
   */
  secrets: { name: string; sha256: string }[];
  /** gRPC services exposed to proxyless clients, when the ProxyConfig asks for it. */
  proxyless?: boolean;
  /** The Secret (`namespace/name`, also in `secrets`) whose certificate the proxies present to TLS backends. */
  backendClientCertificate?: string;
  /**
   * Plugins installed in this Gateway's proxies (ProxyConfig.spec.plugins) whose file every proxy
   * Pod has mounted (the rollout that mounts it completed). `held`: the Pods keep this digest
   * while their rollout is held; routes run it whatever digest they name.
   */
  installedPlugins?: { name: string; sha256: string; mountPath: string; held?: boolean }[];
  accessLog?: AccessLogIR;
  /** Tracing (XTelemetryPolicy, GEP-4768); absent: the proxies trace nothing. */
  tracing?: TracingIR;
  /** ProxyConfig.spec.http, when it says anything. */
  http?: HttpSettingsIR;
}

/**
 * Per Gateway (`namespace/name`) its IR, and per cluster name the endpoints of every cluster a
 * Gateway uses: endpoints change far more often than anything else, so they stand apart.
 */
export interface XdsIR {
  gateways: ReadonlyMap<string, GatewayIR>;
  endpoints: ReadonlyMap<string, EndpointIR[]>;
}

/**
 * The plugins (`namespace/name@sha256`) this Gateway's routes and listener filters run, sorted: the
 * digest a route or listener names, or the one the proxies keep while their rollout is held. What a
 * proxy's acknowledgement of this configuration tells us it runs.
 */
export function referencedPlugins(gw: GatewayIR): string[] {
  const held = new Map((gw.installedPlugins ?? []).filter((p) => p.held).map((p) => [p.name, p.sha256]));
  const out = new Set<string>();
  const add = (p: PluginRefIR) => out.add(`${p.name}@${held.get(p.name) ?? p.sha256}`);
  for (const port of gw.ports)
    for (const listener of port.listeners) {
      for (const f of listener.preRouting ?? []) if (f.type === 'ExtensionRef') add(f.plugin);
      for (const vh of listener.virtualHosts ?? [])
        for (const route of vh.routes) for (const p of route.filters?.plugins ?? []) add(p);
    }
  return [...out].sort();
}
