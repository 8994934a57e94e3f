// Envoy's stateful session filter (envoy.filters.http.stateful_session), modelled from its documented
// behaviour, after the router has chosen a cluster (routeHttp's targets: the weighted choice is the
// router's, made before and whatever the session says). The cookie or header session state (its protos):
// the upstream address is encoded (base64 of "ip:port") into a `set-cookie` or response header; "when
// new requests are incoming, this extension will try to parse the specific upstream host address by the
// cookie name. If the address parsed from the cookie corresponds to a valid upstream host, this upstream
// host will be selected first"; "If ... indeed the final choice the extension does nothing. If ... not
// the final choice, the new selected host will be used to update the cookie". StatefulSession.strict:
// "If the requested destination is not available, Envoy returns 503"; otherwise the load balancer picks.
// The per-route StatefulSessionPerRoute applies only where the connection manager runs the filter.
import type { EnvoyResources } from '../../src/index.js';
import type { FilterChain, HttpConnectionManager, Route } from '../../src/envoy-types.js';
import { listenerFor } from './envoy-router.js';

const FILTER = 'envoy.filters.http.stateful_session';

interface SessionState {
  kind: 'cookie' | 'header';
  name: string;
  ttlSeconds?: number;
  path?: string;
  strict: boolean;
}

export interface SessionUpstream {
  /** The endpoint the request reaches ("ip:port"), or undefined with status 503. */
  host?: string;
  status?: number;
  /** What the filter adds to the response: a set-cookie or the session header. */
  responseHeaders: [string, string][];
}

/** The route's session state, when its connection manager on `port` runs the filter; undefined: none. */
function sessionState(res: EnvoyResources, port: number, route: Route): SessionState | undefined {
  const chains: FilterChain[] = listenerFor(res, port)?.filter_chains ?? [];
  const runs = chains.some((c) =>
    c.filters?.some((f) =>
      ((f.typed_config as HttpConnectionManager | undefined)?.http_filters ?? []).some((h) => h.name === FILTER),
    ),
  );
  const perRoute = route.typed_per_filter_config?.[FILTER] as
    | { stateful_session?: { strict?: boolean; session_state?: { name: string; typed_config: Record<string, any> } } }
    | undefined;
  const s = perRoute?.stateful_session;
  if (!runs || !s?.session_state) return undefined;
  const cfg = s.session_state.typed_config;
  if (s.session_state.name === 'envoy.http.stateful_session.cookie')
    return {
      kind: 'cookie',
      name: cfg.cookie.name,
      ttlSeconds: Number(cfg.cookie.ttl?.seconds ?? 0),
      ...(cfg.cookie.path ? { path: cfg.cookie.path } : {}),
      strict: s.strict === true,
    };
  return { kind: 'header', name: cfg.name, strict: s.strict === true };
}

/** The healthy endpoints of an EDS cluster, "ip:port", in order. */
function hostsOf(res: EnvoyResources, cluster: string): string[] {
  const assignment = res.endpoints.find((e) => e.cluster_name === cluster);
  return (assignment?.endpoints ?? []).flatMap((l) =>
    (l.lb_endpoints ?? []).map((e) => {
      const a = e.endpoint?.address?.socket_address;
      return `${a?.address}:${a?.port_value}`;
    }),
  );
}

const cookieValue = (cookieHeader: string | undefined, name: string) =>
  cookieHeader
    ?.split(';')
    .map((p) => p.trim().split('='))
    .find(([k]) => k === name)?.[1]
    ?.replace(/^"|"$/g, '');

/**
 * The upstream a request reaches once the router chose `cluster` on `route` (served on `port`): the
 * session's host if it is one of that cluster's, else the load balancer's (`lbPick`, an index into the
 * cluster's hosts: whichever Envoy's balancer would take).
 */
export function upstreamWithSession(
  res: EnvoyResources,
  port: number,
  route: Route,
  cluster: string,
  request: { cookie?: string; headers?: Record<string, string> },
  lbPick: number,
): SessionUpstream {
  const hosts = hostsOf(res, cluster);
  const state = sessionState(res, port, route);
  const balanced = hosts.length ? hosts[lbPick % hosts.length] : undefined;
  if (!state) return balanced ? { host: balanced, responseHeaders: [] } : { status: 503, responseHeaders: [] };
  const encoded =
    state.kind === 'cookie' ? cookieValue(request.cookie, state.name) : request.headers?.[state.name.toLowerCase()];
  const asked = encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
  let host = asked && hosts.includes(asked) ? asked : undefined;
  if (!host && asked && state.strict) return { status: 503, responseHeaders: [] };
  host ??= balanced;
  if (!host) return { status: 503, responseHeaders: [] };
  if (host === asked) return { host, responseHeaders: [] };
  const value = Buffer.from(host).toString('base64');
  if (state.kind === 'header') return { host, responseHeaders: [[state.name.toLowerCase(), value]] };
  const attrs = [
    ...(state.ttlSeconds ? [`Max-Age=${state.ttlSeconds}`] : []),
    ...(state.path ? [`Path=${state.path}`] : []),
    'HttpOnly',
  ];
  return { host, responseHeaders: [['set-cookie', [`${state.name}="${value}"`, ...attrs].join('; ')]] };
}
