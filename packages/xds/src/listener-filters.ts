// Pre-routing listener filters (GEP-5224) in Envoy: each filter of a Gateway listener is an HTTP filter
// of its own in the connection manager, named `turnpike.listener-filter/<listener>/<index>`, in the
// listener's order and before every other filter (CORS and the plugins read the route; the router
// routes). An ExternalAuth is envoy.filters.http.ext_authz; an ExtensionRef is the plugin's Lua or Wasm
// filter (plugin-filters.ts), its own instance, followed by the Host guard (host-guard.ts). Plain-HTTP
// listeners sharing a port share one connection manager: there each virtual host disables the filters of
// the listeners it does not belong to (typed_per_filter_config: ExtAuthzPerRoute `disabled`, and
// FilterConfig `disabled` for a plugin: "If true, the filter is disabled in the route or virtual host"),
// so every listener runs exactly its own list, in its own order, whatever the others list; no two lists
// have to be merged, so no order is ever refused (InvalidListenerFilterOrder is never needed).
import type { ExternalAuthIR, GatewayListenerIR } from '@turnpike/api';
import { typed } from './envoy-values.js';
import type { Any, ExtAuthz, ExtAuthzPerRoute, FilterConfig, HttpFilter, ListStringMatcher } from './envoy-types.js';
import { recordAuthorityFilter, restoreAuthorityFilter } from './host-guard.js';
import { pluginConfig, type PluginContext } from './plugin-filters.js';
import { needsRoutePluginCheck, routePluginCheckFilters } from './route-plugin-check.js';

export const LISTENER_FILTER_PREFIX = 'turnpike.listener-filter/';

/** How long a check may take before it counts as an error (answered 403, below). */
const CHECK_TIMEOUT = { seconds: '10', nanos: 0 };

export function listenerFilterName(listener: string, index: number): string {
  return `${LISTENER_FILTER_PREFIX}${listener}/${index}`;
}

function exactly(names: readonly string[]): ListStringMatcher {
  return { patterns: names.map((n) => ({ exact: n, ignore_case: true })) };
}

/**
 * An ExternalAuth as ext_authz (envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto).
 *
 * Fails closed: failure_mode_allow false ("When set to true, the filter will accept client request
 * even if the communication with the authorization service has failed"), and such a failure, a
 * timeout, or an auth cluster without endpoints, is answered status_on_error 403: the GEP's
 * HTTPExternalAuthFilter counts "Any other code" than 200 as "an authorization failure".
 *
 * Routing sees what the auth service allowed: "Implementations MUST evaluate route matching exactly
 * once after the last ListenerFilter has run" (GEP-5224, Listener.filters). clear_route_cache makes
 * Envoy recompute the route once a check allowed the request and its answer added or changed a request
 * header ("Clears route cache in order to allow the external authorization service to correctly affect
 * routing decisions"). The recomputed route is chosen from the same Host: "Requests MUST NOT be
 * interpreted as changing which Listener handles the request. [...] Because filters cannot modify Host
 * or :authority, the input to cleartext-HTTP Listener selection cannot change" (GEP-5224).
 * decoder_header_mutation_rules, set to Envoy's defaults, refuses any change the auth service asks of
 * `host`, `:authority` and the other routing and x-envoy-* headers ("If a ListenerFilter attempts to
 * modify either header, implementations MUST NOT allow that modification to take effect.
 * Implementations SHOULD satisfy this by ignoring the mutation"): disallow_is_error stays false, so
 * the change is ignored and the request continues with the original Host.
 */
function extAuthz(f: ExternalAuthIR): Any {
  const value: ExtAuthz = {
    failure_mode_allow: false,
    status_on_error: { code: 'Forbidden' },
    clear_route_cache: true,
    decoder_header_mutation_rules: {},
    transport_api_version: 'V3',
  };
  if (f.protocol === 'GRPC') {
    value.grpc_service = { envoy_grpc: { cluster_name: f.cluster }, timeout: CHECK_TIMEOUT };
    // "If this list is empty, then all headers must be sent" (GRPCAuthConfig.allowedHeaders): Envoy's
    // default without allowed_headers.
    if (f.allowedHeaders?.length) value.allowed_headers = exactly(f.allowedHeaders);
  } else {
    value.http_service = {
      server_uri: { uri: `http://${f.cluster}`, cluster: f.cluster, timeout: CHECK_TIMEOUT },
      ...(f.pathPrefix ? { path_prefix: f.pathPrefix } : {}),
      // "If this list is empty, then all headers from the authorization server except Authority or
      // Host must be copied" (HTTPAuthConfig.allowedResponseHeaders); Host and :authority are kept
      // by the mutation rules above.
      authorization_response: {
        allowed_upstream_headers: f.allowedResponseHeaders?.length
          ? exactly(f.allowedResponseHeaders)
          : { patterns: [{ safe_regex: { regex: '.*' } }] },
      },
    };
    // Host, Method, Path, Content-Length and Authorization are always sent, "If this list is empty,
    // then only those headers must be sent" (HTTPAuthConfig.allowedHeaders); Envoy adds the same five
    // to allowed_headers for an HTTP service, which without the field would send every header.
    value.allowed_headers = exactly(f.allowedHeaders?.length ? f.allowedHeaders : ['authorization']);
  }
  // "Bodies over that size must be rejected with a 4xx series error" (ForwardBody): without
  // allow_partial_message Envoy answers 413 to a larger body.
  if (f.forwardBodyMaxSize)
    value.with_request_body = { max_request_bytes: f.forwardBodyMaxSize, allow_partial_message: false };
  return typed<ExtAuthz>('envoy.extensions.filters.http.ext_authz.v3.ExtAuthz', value);
}

/**
 * The HTTP filters of these listeners' pre-routing filters, each listener's in its order; a plugin's
 * content is found as a route's is (`plugins`, which records the plugins used). With any plugin, the
 * Host guard records :authority first and restores it after each plugin.
 *
 * Routing happens once, after the last filter: Envoy routes the request when the router (or a filter
 * reading the route) asks, from the headers as they are then, and a plugin that changed them cleared
 * the route cached before (host-guard.ts): a header a plugin adds is routed on.
 */
export function listenerHttpFilters(listeners: readonly GatewayListenerIR[], plugins: PluginContext): HttpFilter[] {
  const out: HttpFilter[] = [];
  for (const l of listeners)
    (l.preRouting ?? []).forEach((f, i) => {
      const name = listenerFilterName(l.name, i);
      if (f.type === 'ExternalAuth') {
        out.push({ name, typed_config: extAuthz(f) });
        return;
      }
      plugins.used.push(f.plugin);
      out.push({ name, typed_config: pluginConfig(f.plugin, plugins.gw, plugins.lookup) });
      out.push(restoreAuthorityFilter(name));
    });
  const guarded = out.some((f) => f.name?.endsWith('/host-guard')) ? [recordAuthorityFilter(), ...out] : out;
  if (!needsRoutePluginCheck(listeners)) return guarded;
  // Routes that run plugins: a request these filters move to another route must not skip its plugins.
  const { first, check } = routePluginCheckFilters();
  return [first, ...guarded, check];
}

/** The per-virtual-host config that turns a listener's filter off. */
function disabledFilter(f: NonNullable<GatewayListenerIR['preRouting']>[number]): Any {
  if (f.type === 'ExternalAuth')
    return typed<ExtAuthzPerRoute>('envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute', { disabled: true });
  return typed<FilterConfig>('envoy.config.route.v3.FilterConfig', { disabled: true });
}

/**
 * On a port whose listeners share a connection manager: for a virtual host served by `owners`, the
 * filters of every other listener of the port, disabled. Undefined when there is nothing to disable.
 */
export function disabledListenerFilters(
  listeners: readonly GatewayListenerIR[],
  owners: ReadonlySet<string>,
): Record<string, Any> | undefined {
  let out: Record<string, Any> | undefined;
  for (const l of listeners) {
    if (owners.has(l.name)) continue;
    (l.preRouting ?? []).forEach((f, i) => ((out ??= {})[listenerFilterName(l.name, i)] = disabledFilter(f)));
  }
  return out;
}
