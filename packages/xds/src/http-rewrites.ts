// Gateway API path rewrites and redirect targets in Envoy's terms.
import { escapeRegex, type HTTPRouteIR, type RedirectIR } from '@turnpike/api';
import type { RedirectAction, RouteAction } from './envoy-types.js';

/** The PathPrefix a route matches, without trailing slashes ('' for `/`); '' for other matches. */
export function pathPrefixOf(r: HTTPRouteIR): string {
  return r.match.path.type === 'PathPrefix' ? r.match.path.value.replace(/\/+$/, '') : '';
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
 * http, 443 for https; the listener's for another scheme); else the listener's port. Undefined when
 * the Location should not write it ("Implementations SHOULD NOT add the port number in the 'Location'
 * header" for HTTP and port 80, HTTPS and port 443).
 */
function httpRedirectPort(red: RedirectIR, listener: RedirectListener): { scheme: string; port?: number } {
  const scheme = red.scheme ?? listenerScheme(listener);
  const port = red.port ?? (red.scheme ? (WELL_KNOWN_PORTS[red.scheme] ?? listener.port) : listener.port);
  return { scheme, ...(WELL_KNOWN_PORTS[scheme] === port ? {} : { port }) };
}

const listenerScheme = (listener: RedirectListener) => (listener.protocol === 'HTTPS' ? 'https' : 'http');

/**
 * The RedirectAction's scheme, host and port, in Envoy's terms (route_components.proto, RedirectAction;
 * source/common/http/utility.cc, newUri and processRequestHost):
 *
 * - port_redirect: "The port value of the URL will be swapped with this value": a non-zero value is
 *   written as `:port`, whatever it is, so it is set only for a port the Location must carry.
 * - host_redirect: "The host portion of the URL will be swapped with this value": the request's Host
 *   and its port go (envoyproxy/envoy#17318), and the Location has a port only if port_redirect gives one.
 * - Without host_redirect, the request's Host is kept as the client sent it. Its port is removed when
 *   port_redirect is set (and replaced by it), or when the scheme changes and the port is the old
 *   scheme's default (scheme_rewrite_specifier: "If the source URI scheme is http and the port is
 *   explicitly set to :80, the port will be removed after the redirection", and :443 for https).
 *
 * So a Location whose port is the scheme's default (a path-only or scheme-only redirect on a listener
 * of port 80 or 443) sets no port_redirect: a client of port 80 or 443 sends a Host without a port
 * (or with the old scheme's default, which the scheme change removes), and Location has none. On a
 * listener of another port the client's Host carries that port, which only port_redirect can replace:
 * there the default port is written (`https://host:443/` for a scheme-only redirect from :8080), as the
 * MUST (the scheme's port, not the listener's) outranks the SHOULD NOT.
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
  else if (!red.hostname && WELL_KNOWN_PORTS[listenerScheme(listener)] !== listener.port)
    out.port_redirect = WELL_KNOWN_PORTS[scheme];
  return out;
}
