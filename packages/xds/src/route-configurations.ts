// RouteConfigurations (RDS): the virtual hosts of the HTTP listeners of one port, or of one HTTPS
// listener, with the 421/404 answers the translator decided for misdirected hosts.
import type { GatewayListenerIR, HTTPRouteIR } from '@turnpike/api';
import type { Route, RouteConfiguration, VirtualHost } from './envoy-types.js';
import type { RedirectListener } from './http-rewrites.js';
import { buildRoute } from './http-routes.js';
import { disabledListenerFilters } from './listener-filters.js';
import { needsRoutePluginCheck, routePluginCheckConfig } from './route-plugin-check.js';

/** Built routes by the identity of their IR (route results keep theirs while unchanged). */
export type RouteMemo = WeakMap<HTTPRouteIR, Route>;

function builtRoute(r: HTTPRouteIR, listener: RedirectListener, memo: RouteMemo | undefined): Route {
  // A redirect's default port and scheme are its listener's: built per listener, not shared.
  if (r.redirect) return buildRoute(r, listener);
  const known = memo?.get(r);
  if (known) return known;
  const route = buildRoute(r);
  memo?.set(r, route);
  return route;
}

/** A built route (maybe shared: never changed) with its plugins told to the route plugins check. */
function withRoutePluginCheck(r: HTTPRouteIR, route: Route, checked: boolean): Route {
  const config = checked ? routePluginCheckConfig(r) : undefined;
  return config ? { ...route, typed_per_filter_config: { ...route.typed_per_filter_config, ...config } } : route;
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
function portVirtualHosts(listeners: GatewayListenerIR[], port: number, memo: RouteMemo | undefined): VirtualHost[] {
  const routesByDomain = new Map<string, Route[]>();
  const ownersByDomain = new Map<string, Set<string>>();
  const checked = needsRoutePluginCheck(listeners);
  for (const listener of listeners) {
    for (const virtualHost of listener.virtualHosts ?? []) {
      for (const domain of virtualHost.domains) {
        const owners = ownersByDomain.get(domain) ?? new Set();
        ownersByDomain.set(domain, owners.add(listener.name));
        const routes = routesByDomain.get(domain) ?? [];
        const served = { port, protocol: listener.protocol };
        routes.push(...virtualHost.routes.map((r) => withRoutePluginCheck(r, builtRoute(r, served, memo), checked)));
        routesByDomain.set(domain, routes);
      }
    }
  }
  // Each listener's pre-routing filters run on its own hosts only (listener-filters.ts).
  const shared = listeners.length > 1 && listeners.some((l) => l.preRouting?.length);
  return [...routesByDomain.keys()].sort().map((domain) => {
    const vhost: VirtualHost = { name: domain, domains: [domain], routes: routesByDomain.get(domain)! };
    const off = shared ? disabledListenerFilters(listeners, ownersByDomain.get(domain)!) : undefined;
    if (off) vhost.typed_per_filter_config = off;
    return vhost;
  });
}

/**
 * The route configuration of a port's HTTP listeners, or (`tlsListener`) of one HTTPS listener,
 * which also answers the hosts it must not serve. Host headers carry the port on non-default
 * ports: virtual hosts are chosen by hostname alone (ignore_port_in_host_matching), and the Host
 * header reaches the backend as the client sent it (strip_any_host_port would remove the port
 * upstream too, and from redirects).
 */
export function httpRouteConfiguration(
  name: string,
  listeners: GatewayListenerIR[],
  port: number,
  memo: RouteMemo | undefined,
  tlsListener?: GatewayListenerIR,
): RouteConfiguration {
  const virtualHosts = portVirtualHosts(listeners, port, memo);
  return {
    name,
    virtual_hosts: tlsListener ? withMisdirectedHost(tlsListener, virtualHosts) : virtualHosts,
    ignore_port_in_host_matching: true,
  };
}
