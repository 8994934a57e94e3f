// The HTTP connection manager network filter: RDS from ADS, CORS and plugin filters when routes use
// them, the router last; its access logs (observability.ts).
import { ADS, typed } from './envoy-values.js';
import type { AccessLog, Any, Cors, HttpConnectionManager, HttpFilter, Router } from './envoy-types.js';

export function httpConnectionManager(
  statPrefix: string,
  routeConfigName: string,
  withCors: boolean,
  pluginFilters: HttpFilter[] = [],
  accessLog: AccessLog[] = [],
): Any {
  const filters: NonNullable<HttpConnectionManager['http_filters']> = [];
  if (withCors)
    filters.push({
      name: 'envoy.filters.http.cors',
      typed_config: typed<Cors>('envoy.extensions.filters.http.cors.v3.Cors', {}),
    });
  filters.push(...pluginFilters);
  filters.push({
    name: 'envoy.filters.http.router',
    typed_config: typed<Router>('envoy.extensions.filters.http.router.v3.Router', {}),
  });
  return typed<HttpConnectionManager>(
    'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    {
      stat_prefix: statPrefix,
      rds: { route_config_name: routeConfigName, config_source: ADS },
      http_filters: filters,
      // WebSocket upgrades pass through to backends (HTTPRouteBackendProtocolWebSocket).
      upgrade_configs: [{ upgrade_type: 'websocket' }],
      ...(accessLog.length ? { access_log: accessLog } : {}),
    },
  );
}
