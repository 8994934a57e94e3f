// Gateway API path rewrites and redirect targets in Envoy's terms.
import type { HTTPRouteIR, RedirectIR } from '@turnpike/api';
import type { RedirectAction, RouteAction } from './envoy-types.js';

/** The PathPrefix a route matches, without trailing slashes ('' for `/`); '' for other matches. */
export function pathPrefixOf(r: HTTPRouteIR): string {
  return r.match.path.type === 'PathPrefix' ? r.match.path.value.replace(/\/+$/, '') : '';
}

/** `s` as an RE2 (and JavaScript) pattern that matches it literally. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * ReplacePrefixMatch: the matched path prefix (whole path elements) is replaced, so `/prefix/one`
 * → `/one` turns `/prefix/one/two` into `/one/two`, and `/strip` → `/` turns `/strip/three` into
 * `/three` and `/strip` into `/`. Envoy's prefix_rewrite swaps the matched prefix literally ("Pay
 * careful attention to the use of trailing slashes", route_components.proto), which after a
 * path_separated_prefix match leaves `//three`; a regex_rewrite anchored at the start does it in
 * one route. When the replacement ends in `/` (or is empty), the separator after the prefix is
 * consumed with it. RegexMatchAndSubstitute applies to the path only; the query string is kept.
 */
export function replacePrefixMatch(prefix: string, replacement: string): NonNullable<RouteAction['regex_rewrite']> {
  const withSlash = replacement === '' || replacement.endsWith('/');
  return {
    pattern: { regex: `^${escapeRegex(prefix)}${withSlash ? '/?' : ''}` },
    substitution: replacement === '' ? '/' : replacement,
  };
}

/** The listener a redirect is answered on: its Gateway port and protocol. */
export interface RedirectListener {
  port: number;
  protocol: string;
}

const WELL_KNOWN_PORTS: Record<string, number> = { http: 80, https: 443 };

/**
 * HTTPRequestRedirectFilter's port: the one given; else, with a scheme, its well-known port (80 for
 * http, 443 for https; the listener's for another scheme); else the listener's port. The Location
 * leaves out 80 for http and 443 for https.
 */
function httpRedirectPort(red: RedirectIR, listener: RedirectListener): { scheme: string; port?: number } {
  const listenerScheme = listener.protocol === 'HTTPS' ? 'https' : 'http';
  const scheme = red.scheme ?? listenerScheme;
  const port = red.port ?? (red.scheme ? (WELL_KNOWN_PORTS[red.scheme] ?? listener.port) : listener.port);
  return { scheme, ...(WELL_KNOWN_PORTS[scheme] === port ? {} : { port }) };
}

/**
 * The RedirectAction's scheme, host and port. Envoy keeps the request's Host port unless
 * port_redirect is set or host_redirect replaces the host (host_redirect alone drops the port,
 * envoyproxy/envoy#17318), so the port is always written when the Location needs one, and a
 * default port is reached by replacing the host, or by naming the default port explicitly.
 */
export function redirectTarget(
  red: RedirectIR,
  listener: RedirectListener,
): Pick<RedirectAction, 'scheme_redirect' | 'host_redirect' | 'port_redirect'> {
  const { scheme, port } = httpRedirectPort(red, listener);
  const out: Pick<RedirectAction, 'scheme_redirect' | 'host_redirect' | 'port_redirect'> = {};
  if (red.scheme) out.scheme_redirect = red.scheme;
  if (red.hostname) out.host_redirect = red.hostname;
  if (port !== undefined) out.port_redirect = port;
  else if (!red.hostname) out.port_redirect = WELL_KNOWN_PORTS[scheme];
  return out;
}
