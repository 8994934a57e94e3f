// Hostname rules of the Gateway API (httproute_types.go Hostnames, concepts/hostnames.md).
// "*.example.com" matches one or more labels, never "example.com" itself.

export function isWildcard(h: string): boolean {
  return h.startsWith('*.');
}

/** Does a wildcard pattern cover a concrete hostname? */
function wildcardCovers(pattern: string, host: string): boolean {
  const suffix = pattern.slice(1); // ".example.com"
  return host.endsWith(suffix) && host.length > suffix.length;
}

/**
 * Of `hosts`, the ones wider than `host` that also match its requests ("*", or a wildcard whose
 * suffix it has), most specific first. A request to `host` matches the routes of those hosts too,
 * after the routes of `host` itself: precedence goes to the most characters in a matching
 * non-wildcard hostname, then in a matching hostname (HTTPRouteRule, GRPCRouteRule).
 */
export function widerMatchingHosts(host: string, hosts: Iterable<string>): string[] {
  const out: string[] = [];
  for (const other of hosts) {
    if (other === host) continue;
    if (other === '*' || (isWildcard(other) && wildcardCovers(other, host))) out.push(other);
  }
  return out.sort((a, b) => b.length - a.length);
}

/**
 * The intersection of a listener hostname and a route hostname, or undefined when they do not
 * intersect. An absent listener hostname matches anything.
 */
export function intersectHostnames(listener: string | undefined, route: string): string | undefined {
  if (!listener) return route;
  if (listener === route) return route;
  const lw = isWildcard(listener),
    rw = isWildcard(route);
  if (!lw && !rw) return undefined;
  if (lw && !rw) return wildcardCovers(listener, route) ? route : undefined;
  if (!lw && rw) return wildcardCovers(route, listener) ? listener : undefined;
  // Two wildcards: the more specific one, when one covers the other.
  if (route.endsWith(listener.slice(1))) return route;
  if (listener.endsWith(route.slice(1))) return listener;
  return undefined;
}

/**
 * Hostnames a route serves on a listener. Route hostnames that do not intersect are ignored;
 * an empty result means the route does not match this listener.
 */
export function routeHostnamesOnListener(
  listener: string | undefined,
  routeHostnames: readonly string[] | undefined,
): string[] {
  if (!routeHostnames || routeHostnames.length === 0) return [listener || '*'];
  const out = new Set<string>();
  for (const h of routeHostnames) {
    const i = intersectHostnames(listener, h);
    if (i !== undefined) out.add(i);
  }
  return [...out].sort();
}

/**
 * GatewayRouteHostnameIntersectionPrecedence: how specific the route's own hostname is that gave it
 * `host` on a listener. Routes intersecting to the same host rank by "the largest number of
 * characters in a matching non-wildcard hostname", then "characters in a matching hostname", of
 * their original hostnames, not of the intersection (httproute_types.go Hostnames). One number:
 * non-wildcard characters, then characters (hostnames are at most 253 long). A route without
 * hostnames matches with none: 0.
 */
export function originalHostnameRank(routeHostnames: readonly string[] | undefined, host: string): number {
  let best = 0;
  for (const h of routeHostnames ?? []) {
    const matches = h === host || (isWildcard(h) && wildcardCovers(h, isWildcard(host) ? host.slice(2) : host));
    if (!matches) continue;
    const rank = (isWildcard(h) ? 0 : h.length) * 256 + h.length;
    if (rank > best) best = rank;
  }
  return best;
}

const IPV4 = /^(\d{1,3})(\.\d{1,3}){3}$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** RFC 1123 hostname with an optional leading "*." label; IP addresses are not hostnames. */
export function validateHostname(h: string): string | undefined {
  if (IPV4.test(h) || h.includes(':')) return `"${h}" is an IP address, not a hostname`;
  const body = isWildcard(h) ? h.slice(2) : h;
  if (h.length > 253) return `"${h}" is longer than 253 characters`;
  if (!body.split('.').every((l) => l.length <= 63 && LABEL.test(l))) return `"${h}" is not a valid RFC 1123 hostname`;
  return undefined;
}
