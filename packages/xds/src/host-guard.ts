// The Host guard of pre-routing plugins (GEP-5224): "Requests MUST NOT be interpreted as changing which
// Listener handles the request. [...] If a ListenerFilter attempts to modify either header [Host or
// :authority], implementations MUST NOT allow that modification to take effect". ext_authz is kept from
// it by its header mutation rules; a Lua or Wasm plugin may change any request header, and either clears
// Envoy's route cache when it does (lua.proto Lua.clear_route_cache: "If set to true, the Lua filter will
// clear the route cache automatically if the request headers are modified by the Lua script [...]
// Default is true"; the Wasm host clears it on every request-header change, extensions/common/wasm/
// context.cc), so routing would choose the virtual host, and the listener, anew. A Lua filter before the
// first plugin records the request's :authority in dynamic metadata; one right after each plugin sets it
// back if the plugin changed it, before any later filter or the router reads it. The change never takes
// effect. Both run on every virtual host: whether a filter runs is decided from the first route Envoy
// chose (FilterChainOptions.filterDisabled: "Skip filter creation if the filter is explicitly disabled
// after the filter chain is selected"), and a guard must not depend on which one that was.
import type { Any, HttpFilter, Lua } from './envoy-types.js';
import { typed } from './envoy-values.js';

export const HOST_GUARD_NAMESPACE = 'turnpike.host-guard';
export const HOST_GUARD_RECORD = 'turnpike.listener-filter/host-guard';

/** Records :authority as the request arrived, before any plugin ran. */
export const RECORD_AUTHORITY_LUA = `function envoy_on_request(request_handle)
  local authority = request_handle:headers():get(":authority")
  if authority ~= nil then
    request_handle:streamInfo():dynamicMetadata():set("${HOST_GUARD_NAMESPACE}", "authority", authority)
  end
end
`;

/** Sets :authority back to what was recorded, when a plugin changed or removed it. */
export const RESTORE_AUTHORITY_LUA = `function envoy_on_request(request_handle)
  local recorded = request_handle:streamInfo():dynamicMetadata():get("${HOST_GUARD_NAMESPACE}")
  local authority = recorded and recorded["authority"]
  if request_handle:headers():get(":authority") ~= authority then
    if authority == nil then
      request_handle:headers():remove(":authority")
    else
      request_handle:headers():replace(":authority", authority)
    end
  end
end
`;

function lua(code: string): Any {
  return typed<Lua>('envoy.extensions.filters.http.lua.v3.Lua', { default_source_code: { inline_string: code } });
}

/** The filter that records :authority, first in the connection manager. */
export function recordAuthorityFilter(): HttpFilter {
  return { name: HOST_GUARD_RECORD, typed_config: lua(RECORD_AUTHORITY_LUA) };
}

/** The filter that restores :authority right after the plugin filter named `after`. */
export function restoreAuthorityFilter(after: string): HttpFilter {
  return { name: `${after}/host-guard`, typed_config: lua(RESTORE_AUTHORITY_LUA) };
}
