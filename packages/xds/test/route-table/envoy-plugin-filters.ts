// The route-table check's model of the Lua and Wasm HTTP filters that run plugins (plugin-filters.ts)
// and the Host guard (host-guard.ts). What a plugin does is the test's to say (`PluginBehaviour`, by its
// Lua source or its Wasm vm_id); the Host guard's two scripts and the fail-closed script are modelled
// here. Facts, from Envoy's documentation and filters:
// - Whether a filter runs is decided when the filter chain is created, from the route first chosen
//   (FilterChainOptions.filterDisabled: "Skip filter creation if the filter is explicitly disabled after
//   the filter chain is selected"): the most specific FilterConfig / LuaPerRoute `disabled` of that route,
//   its virtual host or the route configuration, else HttpFilter.disabled.
// - A Lua script's change to the request headers clears the route cache (lua.proto Lua.clear_route_cache,
//   "Default is true"); so does a Wasm module's (extensions/common/wasm/context.cc). The route is then
//   chosen again from the headers as they are, :authority included: the virtual host too.
// - `respond()` (Lua) or a local reply (Wasm) ends the request there with its status.
// - Dynamic metadata set by one filter is read by a later one on the same request.
// - A Lua filter runs the source_code of the LuaPerRoute of the route as it is when the filter runs (the
//   route, else its virtual host, else the route configuration), else its default_source_code.
// The route plugins check's two scripts (route-plugin-check.ts) are modelled too.
import type { HttpFilter } from '../../src/envoy-types.js';
import { RECORD_AUTHORITY_LUA, RESTORE_AUTHORITY_LUA, HOST_GUARD_NAMESPACE } from '../../src/host-guard.js';
import { checkRoutePluginsLua, recordRoutePluginsLua } from '../../src/route-plugin-check.js';

const LUA = 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua';
const WASM = 'type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm';

/** The request as a plugin sees and changes it. */
export interface PluginRequest {
  authority: string | undefined;
  headers: Map<string, string[]>;
  metadata: Map<string, Map<string, string>>;
}

/** What a plugin does with a request: changes it, or answers it (its status). */
export type PluginBehaviour = (request: PluginRequest) => { respond?: number } | void;

/**
 * A plugin filter's code: its Lua source (the current route's LuaPerRoute source_code, else its default) or
 * its Wasm vm_id; undefined for another filter.
 */
export function pluginCode(f: HttpFilter, perRoute?: unknown): { kind: 'lua' | 'wasm'; code: string } | undefined {
  const config = f.typed_config as { '@type'?: string } & Record<string, any>;
  if (config?.['@type'] === LUA) {
    const source =
      (perRoute as { source_code?: { inline_string?: string } } | undefined)?.source_code ?? config.default_source_code;
    if (source?.inline_string === undefined) throw new Error(`${f.name}: only inline Lua is modelled`);
    return { kind: 'lua', code: source.inline_string };
  }
  if (config?.['@type'] === WASM) return { kind: 'wasm', code: config.config?.vm_config?.vm_id ?? '' };
  return undefined;
}

const BUILT_IN: Record<string, PluginBehaviour> = {
  [RECORD_AUTHORITY_LUA]: (r) => {
    if (r.authority === undefined) return;
    const ns = r.metadata.get(HOST_GUARD_NAMESPACE) ?? new Map<string, string>();
    r.metadata.set(HOST_GUARD_NAMESPACE, ns.set('authority', r.authority));
  },
  [RESTORE_AUTHORITY_LUA]: (r) => {
    const recorded = r.metadata.get(HOST_GUARD_NAMESPACE)?.get('authority');
    if (r.authority !== recorded) r.authority = recorded;
  },
};

const ROUTE_PLUGINS = 'turnpike.route-plugins';
/** The set a route plugins check script was written for (route-plugin-check.ts), by writing it again. */
function routePluginsScript(code: string): PluginBehaviour | undefined {
  const set = /"first", "([^"]*)"\)/.exec(code)?.[1] ?? /~= "([^"]*)" then/.exec(code)?.[1];
  if (set === undefined) return undefined;
  if (code === recordRoutePluginsLua(set)) return (r) => void r.metadata.set(ROUTE_PLUGINS, new Map([['first', set]]));
  if (code === checkRoutePluginsLua(set))
    return (r) => (r.metadata.get(ROUTE_PLUGINS)?.get('first') === set ? undefined : { respond: 500 });
  return undefined;
}

/**
 * Runs one plugin filter on the request; whether it changed the request headers (:authority included),
 * or the status it answered with.
 */
export function runPluginFilter(
  f: HttpFilter,
  code: { kind: 'lua' | 'wasm'; code: string },
  request: PluginRequest,
  behaviours: Record<string, PluginBehaviour> | undefined,
): { changed: boolean; respond?: number } {
  // The fail-closed script of a plugin without content (plugin-filters.ts).
  if (code.kind === 'lua' && code.code.includes('plugin content unavailable')) return { changed: false, respond: 500 };
  const behaviour = BUILT_IN[code.code] ?? routePluginsScript(code.code) ?? behaviours?.[code.code];
  if (!behaviour) throw new Error(`${f.name} runs a plugin: give the route-table check its behaviour`);
  const before = JSON.stringify([request.authority, [...request.headers]]);
  const answer = behaviour(request);
  if (answer?.respond !== undefined) return { changed: false, respond: answer.respond };
  return { changed: JSON.stringify([request.authority, [...request.headers]]) !== before };
}
