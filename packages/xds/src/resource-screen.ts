// The last check before resources reach a proxy. Envoy refuses a resource whole: one bad route
// would take its route configuration down, one bad filter chain its listener, and with it every
// connection of the port. Whatever breaks a field rule (validate.ts) or a load rule
// (envoy-load-rules.ts) is withheld at the smallest unit that can be left out (a route, a filter
// chain, a virtual host's domain, a listener, a cluster, a secret) and the rest is sent. The
// translator refuses bad input with conditions long before this; a withheld resource here is a
// bug on our side, reported so that it is seen (ProxyStatus → a Gateway condition) rather than
// found as a dark port.
import type { Listener, Route, RouteConfiguration } from './envoy-types.js';
import {
  crossResourceProblems,
  listenerLoadProblems,
  routeLoadProblems,
  type LoadProblem,
  type LoadableResources,
} from './envoy-load-rules.js';
import { validateMessage } from './validate.js';

export interface WithheldResource extends LoadProblem {
  /** The object that made it, when the resource says (`HTTPRoute apps/web spec.rules[0].matches[1]`). */
  source?: string;
  /** That object's key (`HTTPRoute/apps/web`), for its own status. */
  object?: string;
}

/** Route and filter chain names we build carry their route's identity (http-routes.ts, listeners.ts). */
const ROUTE_NAME = /(httproute|grpcroute)\/([^/]+)\/([^/]+)\/rule\/(\d+)\/match\/(\d+)$/;
const KINDS: Record<string, string> = { httproute: 'HTTPRoute', grpcroute: 'GRPCRoute' };

function sourceOfRoute(route: Route): { source: string; object: string } | undefined {
  const m = ROUTE_NAME.exec(route.name ?? '');
  if (!m) return undefined;
  const kind = KINDS[m[1]!]!;
  return { source: `${kind} ${m[2]}/${m[3]} spec.rules[${m[4]}].matches[${m[5]}]`, object: `${kind}/${m[2]}/${m[3]}` };
}

/** Validation of what does not change between builds (the same Route object), kept per object. */
export type ScreenMemo = WeakMap<object, string[]>;

function routeProblems(route: Route, memo: ScreenMemo | undefined): string[] {
  let known = memo?.get(route);
  if (!known) {
    known = [
      ...validateMessage('envoy.config.route.v3.Route', route, 'route'),
      ...routeLoadProblems(route, '', 'route').map((p) => `${p.field}: ${p.message}`),
    ];
    memo?.set(route, known);
  }
  return known;
}

/** A virtual host's own fields (not its routes), checked once per name and domain list. */
const virtualHostChecks = new Map<string, string[]>();
function virtualHostProblems(vh: NonNullable<RouteConfiguration['virtual_hosts']>[number]): string[] {
  const { routes: _routes, ...own } = vh;
  const key = JSON.stringify(own);
  let known = virtualHostChecks.get(key);
  if (!known) {
    known = validateMessage('envoy.config.route.v3.VirtualHost', own, '');
    if (virtualHostChecks.size >= 100_000) virtualHostChecks.clear();
    virtualHostChecks.set(key, known);
  }
  return known;
}

function screenRouteConfiguration(
  rc: RouteConfiguration,
  memo: ScreenMemo | undefined,
  withheld: WithheldResource[],
): RouteConfiguration {
  const resource = `RouteConfiguration ${rc.name ?? ''}`;
  let changed = false;
  const domainsTaken = new Set<string>();
  const virtualHosts = (rc.virtual_hosts ?? []).map((vh, i) => {
    const routes = (vh.routes ?? []).filter((route, j) => {
      const problems = routeProblems(route, memo);
      if (!problems.length) return true;
      withheld.push({
        resource,
        field: `virtual_hosts[${i}].routes[${j}]`,
        message: `route withheld: ${problems.join('; ')}`,
        ...sourceOfRoute(route),
      });
      return false;
    });
    const domains = (vh.domains ?? []).filter((d) => {
      const key = d.toLowerCase();
      if (!domainsTaken.has(key)) return domainsTaken.add(key);
      withheld.push({ resource, field: `virtual_hosts[${i}].domains`, message: `domain "${d}" withheld: named twice` });
      return false;
    });
    const own = virtualHostProblems(vh).map((e) => `virtual_hosts[${i}]${e}`);
    if (own.length) {
      withheld.push({ resource, field: `virtual_hosts[${i}]`, message: `virtual host withheld: ${own.join('; ')}` });
      changed = true;
      return { ...vh, domains: [] };
    }
    if (routes.length === (vh.routes ?? []).length && domains.length === (vh.domains ?? []).length) return vh;
    changed = true;
    return { ...vh, routes, domains };
  });
  const kept = virtualHosts.filter((vh) => (vh.domains ?? []).length > 0);
  if (!changed && kept.length === virtualHosts.length) return rc;
  return { ...rc, virtual_hosts: kept };
}

function screenListener(listener: Listener, withheld: WithheldResource[]): Listener {
  const chains = listener.filter_chains ?? [];
  /** Why each chain Envoy would refuse is refused: load rules, then field rules. */
  const why = new Map<number, string[]>();
  const add = (i: number, reasons: string[]) => why.set(i, [...(why.get(i) ?? []), ...reasons]);
  for (const p of listenerLoadProblems(listener)) {
    const at = /^filter_chains\[(\d+)\]/.exec(p.field);
    if (at) add(Number(at[1]), [p.message]);
  }
  chains.forEach((chain, i) => {
    const errors = validateMessage('envoy.config.listener.v3.FilterChain', chain, `filter_chains[${i}]`);
    if (errors.length) add(i, errors);
  });
  if (!why.size) return listener;
  for (const [i, reasons] of [...why].sort(([a], [b]) => a - b))
    withheld.push({
      resource: `Listener ${listener.name ?? ''}`,
      field: `filter_chains[${i}]`,
      message: `filter chain ${chains[i]!.name ?? ''} withheld: ${reasons.join('; ')}`,
    });
  return { ...listener, filter_chains: chains.filter((_, i) => !why.has(i)) };
}

/**
 * The resources with everything Envoy would refuse left out, and what was left out. Resources
 * that pass are returned as they were (same objects), so an unchanged build encodes nothing again.
 */
export function screenResources<T extends LoadableResources>(
  res: T,
  memo?: ScreenMemo,
): { resources: T; withheld: WithheldResource[] } {
  const withheld: WithheldResource[] = [];
  const routes = res.routes.map((rc) => screenRouteConfiguration(rc, memo, withheld));
  let listeners = res.listeners.map((l) => screenListener(l, withheld));
  const keep = <R>(type: string, list: R[], name: (r: R) => string | undefined): R[] =>
    list.filter((r) => {
      const errors = memo?.get(r as object) ?? validateMessage(type, r, '');
      memo?.set(r as object, errors);
      if (!errors.length) return true;
      withheld.push({
        resource: `${type.slice(type.lastIndexOf('.') + 1)} ${name(r) ?? ''}`,
        field: '',
        message: `withheld: ${errors.join('; ')}`,
      });
      return false;
    });
  const clusters = keep('envoy.config.cluster.v3.Cluster', res.clusters, (c) => c.name);
  const secrets = keep('envoy.extensions.transport_sockets.tls.v3.Secret', res.secrets, (s) => s.name);
  const endpoints = keep('envoy.config.endpoint.v3.ClusterLoadAssignment', res.endpoints, (e) => e.cluster_name);
  listeners = keep('envoy.config.listener.v3.Listener', listeners, (l) => l.name);
  // What is left across resources: a second listener on a taken address, a chain naming a
  // withheld Secret or route configuration.
  const wholeListeners = new Set<string>();
  const badChains = new Map<string, Set<number>>();
  for (const p of crossResourceProblems({ ...res, listeners, routes, clusters, secrets, endpoints })) {
    if (!p.resource.startsWith('Listener ')) continue;
    const name = p.resource.slice('Listener '.length);
    const at = /^filter_chains\[(\d+)\]/.exec(p.field);
    if (at) badChains.set(name, (badChains.get(name) ?? new Set()).add(Number(at[1])));
    else wholeListeners.add(name);
    withheld.push({ ...p, message: `${at ? 'filter chain' : 'listener'} withheld: ${p.message}` });
  }
  if (wholeListeners.size || badChains.size)
    listeners = listeners
      .filter((l) => !wholeListeners.has(l.name ?? ''))
      .map((l) => {
        const bad = badChains.get(l.name ?? '');
        return bad ? { ...l, filter_chains: (l.filter_chains ?? []).filter((_, i) => !bad.has(i)) } : l;
      });
  const screened = { ...res, listeners, routes, clusters, secrets, endpoints };
  return { resources: screened, withheld };
}
