// The two listeners of the bootstrap that the pod network may reach, each answering one path of
// Envoy's admin and nothing else: the admin itself stays on loopback, where /quitquitquit,
// /config_dump (certificates, keys in SDS), /drain_listeners and /healthcheck/fail live.
//
// - readiness (PROXY_READINESS_PORT): GET /ready. The admin answers 200 only in the LIVE state and
//   503 otherwise (https://www.envoyproxy.io/docs/envoy/latest/operations/admin#get--ready); the
//   server is LIVE once its init manager finished: CDS answered and its clusters warmed, then LDS
//   answered and its listeners warmed with their RDS
//   (https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/operations/init). With the
//   bootstrap's initial_fetch_timeout of 0 that wait has no bound, so a proxy without config is
//   never ready. After /healthcheck/fail (the drain helper's first step) the state is DRAINING: 503.
// - stats (PROXY_STATS_PORT): GET /stats/prometheus, for Prometheus to scrape.
//
// Both are static listeners, which (the init page again) only accept connections once
// initialization is done: before that a probe's connection is refused, which a probe counts as a
// failure, as it should. Their traffic_direction is left unspecified (not INBOUND), so the drain
// helper's `/drain_listeners?inboundonly` leaves them serving while the Gateway listeners drain;
// drain_type MODIFY_ONLY keeps /healthcheck/fail from draining them too.
import { PROXY_ADMIN_PORT, PROXY_READINESS_PORT, PROXY_STATS_PORT } from '@turnpike/api';
import { typed } from './envoy-values.js';
import type { Cluster, HttpConnectionManager, Listener, Route, Router } from './envoy-types.js';

/** The static cluster that reaches the admin on loopback. */
export const ADMIN_CLUSTER = 'turnpike-admin';
/** Stat prefixes of the two listeners: the drain helper leaves their connections out of its count. */
export const READINESS_STAT_PREFIX = 'turnpike_readiness';
export const STATS_STAT_PREFIX = 'turnpike_stats';

export const READINESS_PATH = '/ready';
export const PROMETHEUS_PATH = '/stats/prometheus';

export function adminCluster(adminPort = PROXY_ADMIN_PORT): Cluster {
  return {
    name: ADMIN_CLUSTER,
    type: 'STATIC',
    connect_timeout: { seconds: '1', nanos: 0 },
    load_assignment: {
      cluster_name: ADMIN_CLUSTER,
      endpoints: [
        {
          lb_endpoints: [
            { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: adminPort } } } },
          ],
        },
      ],
    },
  };
}

/**
 * A listener on every address at `port` that forwards `GET|HEAD <path>` (the query string is not
 * part of a path match) to the admin and answers 404 to anything else. The path must match exactly
 * as sent: no normalisation, so `/ready/../config_dump` is a 404 here and never reaches the admin.
 */
function adminPathListener(name: string, port: number, statPrefix: string, path: string): Listener {
  const forward: Route = {
    name: `${name}-forward`,
    match: {
      path,
      headers: [{ name: ':method', string_match: { safe_regex: { regex: 'GET|HEAD' } } }],
    },
    route: { cluster: ADMIN_CLUSTER, timeout: { seconds: '5', nanos: 0 } },
  };
  const refuse: Route = { name: `${name}-refuse`, match: { prefix: '/' }, direct_response: { status: 404 } };
  return {
    name,
    stat_prefix: statPrefix,
    drain_type: 'MODIFY_ONLY',
    address: { socket_address: { address: '0.0.0.0', port_value: port } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: typed<HttpConnectionManager>(
              'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              {
                stat_prefix: statPrefix,
                route_config: {
                  name,
                  virtual_hosts: [{ name, domains: ['*'], routes: [forward, refuse] }],
                },
                http_filters: [
                  {
                    name: 'envoy.filters.http.router',
                    typed_config: typed<Router>('envoy.extensions.filters.http.router.v3.Router', {}),
                  },
                ],
              },
            ),
          },
        ],
      },
    ],
  };
}

export function readinessListener(port = PROXY_READINESS_PORT): Listener {
  return adminPathListener('turnpike-readiness', port, READINESS_STAT_PREFIX, READINESS_PATH);
}

export function statsListener(port = PROXY_STATS_PORT): Listener {
  return adminPathListener('turnpike-stats', port, STATS_STAT_PREFIX, PROMETHEUS_PATH);
}
