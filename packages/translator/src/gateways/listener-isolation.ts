// HTTP listener isolation (GatewayHTTPListenerIsolation): a request belongs to the most specific
// listener whose hostname matches it, and only that listener's routes may answer it. Listeners
// sharing a port share one route table in the proxy, so a route attached to "*.example.com" that
// names "foo.example.com" must not serve that host when a "foo.example.com" listener exists, and
// the more specific listener answers its hosts (404 without routes) rather than letting a wider
// listener's routes catch them.
import { intersectHostnames, isWildcard } from '../routes/hostnames.js';

/** Orders listener hostnames from most to least specific: exact, longer wildcard, shorter wildcard, none. */
export function specificity(hostname: string | undefined): number {
  if (!hostname) return 0;
  return isWildcard(hostname) ? hostname.length : 10_000 + hostname.length;
}

/** Does the listener hostname cover every request host of `host` (a route hostname on some listener)? */
function covers(listener: string, host: string): boolean {
  if (host === '*') return false;
  return intersectHostnames(listener, host) === host;
}

/**
 * Whether `host`, served by a listener with hostname `own`, belongs to a more specific listener
 * among `others` (the other HTTP listeners on the same port).
 */
export function claimedByMoreSpecific(
  own: string | undefined,
  host: string,
  others: readonly (string | undefined)[],
): boolean {
  return others.some((o) => o !== undefined && specificity(o) > specificity(own) && covers(o, host));
}
