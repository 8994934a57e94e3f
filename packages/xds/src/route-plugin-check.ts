// The route plugins check, for a connection manager whose listeners run pre-routing filters (GEP-5224)
// and whose routes run plugins. Whether a route's plugin filter runs is decided once, when Envoy creates
// the filter chain, from the route it chose first (FilterChainOptions.filterDisabled: "Skip filter creation
// if the filter is explicitly disabled after the filter chain is selected"); a listener filter that sets a
// header then routes the request, once, to the route its headers match (listener-filters.ts), whose
// plugins may be others. Such a request would reach that route without its plugins (or with another
// route's), so it is answered 500 instead, fail closed: a Lua filter before every listener filter records
// the first route's plugins, one after the last compares them with those of the route chosen then.
// Which plugins a route runs each of them reads at run time, from the route's own LuaPerRoute source_code
// ("A configured per-route Lua source code that can be served by RDS or provided inline"), which Envoy
// reads from the route as it is when the filter runs, after a changed header cleared the route cache.
import type { GatewayListenerIR, HTTPRouteIR } from '@turnpike/api';
import type { Any, HttpFilter, Lua, LuaPerRoute } from './envoy-types.js';
import { typed } from './envoy-values.js';
import { pluginsUsed } from './plugin-filters.js';

export const ROUTE_PLUGINS_FIRST = 'turnpike.listener-filter/route-plugins/first';
export const ROUTE_PLUGINS_CHECK = 'turnpike.listener-filter/route-plugins/check';
const NAMESPACE = 'turnpike.route-plugins';

/** A route's plugins as one string (`namespace/name`, sorted, comma-separated; empty: none). */
function pluginSet(r: HTTPRouteIR | undefined): string {
  return [...new Set((r?.filters?.plugins ?? []).map((p) => p.name))].sort().join(',');
}

/** Records the plugins of the route Envoy chose first. */
export function recordRoutePluginsLua(set: string): string {
  return `function envoy_on_request(request_handle)
  request_handle:streamInfo():dynamicMetadata():set("${NAMESPACE}", "first", "${set}")
end
`;
}

/** Answers 500 when the route chosen after the listener filters runs other plugins than the first. */
export function checkRoutePluginsLua(set: string): string {
  return `function envoy_on_request(request_handle)
  local recorded = request_handle:streamInfo():dynamicMetadata():get("${NAMESPACE}")
  if recorded == nil or recorded["first"] ~= "${set}" then
    request_handle:respond({[":status"] = "500"},
      "the listener filters routed this request to a route whose plugins were not set up for it")
  end
end
`;
}

/** Whether a connection manager of these listeners needs the check. */
export function needsRoutePluginCheck(listeners: readonly GatewayListenerIR[]): boolean {
  return listeners.some((l) => l.preRouting?.length) && pluginsUsed(listeners).length > 0;
}

function lua(code: string): Any {
  return typed<Lua>('envoy.extensions.filters.http.lua.v3.Lua', { default_source_code: { inline_string: code } });
}

/** The two filters: the first before every listener filter, the check after the last. */
export function routePluginCheckFilters(): { first: HttpFilter; check: HttpFilter } {
  return {
    first: { name: ROUTE_PLUGINS_FIRST, typed_config: lua(recordRoutePluginsLua('')) },
    check: { name: ROUTE_PLUGINS_CHECK, typed_config: lua(checkRoutePluginsLua('')) },
  };
}

/** A route's config of both filters, when it runs plugins (a route without them is the filters' default). */
export function routePluginCheckConfig(r: HTTPRouteIR): Record<string, Any> | undefined {
  const set = pluginSet(r);
  if (!set) return undefined;
  const source = (code: string) =>
    typed<LuaPerRoute>('envoy.extensions.filters.http.lua.v3.LuaPerRoute', { source_code: { inline_string: code } });
  return {
    [ROUTE_PLUGINS_FIRST]: source(recordRoutePluginsLua(set)),
    [ROUTE_PLUGINS_CHECK]: source(checkRoutePluginsLua(set)),
  };
}
