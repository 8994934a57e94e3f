// Listeners (LDS): one per port of a Gateway. HTTP ports run one HTTP connection manager; HTTPS and
// TLS ports choose a filter chain by SNI; TCP and UDP ports proxy to their route's backends. Every
// connection manager and proxy writes the Gateway's access log (observability.ts); a filter chain is
// named after the Gateway listener it serves (`%FILTER_CHAIN_NAME%` in an HTTP entry).
import type { GatewayListenerIR, HTTPFiltersIR, L4RouteIR, PortIR } from '@turnpike/api';
import { INVALID_BACKEND_CLUSTER } from './clusters.js';
import { ADS, typed } from './envoy-values.js';
import type {
  DownstreamTlsContext,
  Filter,
  FilterChain,
  HttpFilter,
  Listener,
  TcpProxy,
  TlsInspector,
  UdpProxyConfig,
} from './envoy-types.js';
import { httpConnectionManager, type EdgeHttp } from './http-connection-manager.js';
import { listenerHttpFilters } from './listener-filters.js';
import { accessLogs, type AccessLogSite } from './observability.js';
import { pluginHttpFilters, pluginsUsed, type PluginContext } from './plugin-filters.js';
import type { EnvoyResources } from './resources.js';
import { httpRouteConfiguration, type RouteMemo } from './route-configurations.js';
import { hcmTracing, withSpanName } from './tracing.js';

function usesFilter(listeners: GatewayListenerIR[], pick: (f: HTTPFiltersIR) => unknown): boolean {
  return listeners.some((l) => (l.virtualHosts ?? []).some((v) => v.routes.some((r) => r.filters && pick(r.filters))));
}

function tcpProxy(statPrefix: string, route: L4RouteIR | undefined, listener: string, build: ListenerBuild): Filter {
  const backends = route?.backends ?? [];
  const value: TcpProxy = { stat_prefix: statPrefix };
  const log = accessLogs(build.plugins.gw, 'tcp', l4Site(route, listener));
  if (log.length) value.access_log = log;
  if (backends.length === 1 && !route?.invalidWeight) value.cluster = backends[0]!.cluster;
  else if (backends.length)
    value.weighted_clusters = {
      clusters: [
        ...backends.map((b) => ({ name: b.cluster, weight: b.weight })),
        ...(route?.invalidWeight ? [{ name: invalidBackend(build), weight: route.invalidWeight }] : []),
      ],
    };
  else value.cluster = invalidBackend(build);
  return {
    name: 'envoy.filters.network.tcp_proxy',
    typed_config: typed<TcpProxy>('envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', value),
  };
}

/**
 * `alpn`: the protocols an HTTPS chain offers (edge hardening); none on a chain that terminates TLS
 * for a TCP proxy, whose backend speaks whatever it speaks.
 */
function downstreamTls(l: GatewayListenerIR, alpn?: string[]): FilterChain['transport_socket'] {
  const ctx: DownstreamTlsContext = {
    common_tls_context: {
      tls_certificate_sds_secret_configs: (l.tls?.certificates ?? []).map((name) => ({ name, sds_config: ADS })),
      ...(alpn?.length ? { alpn_protocols: alpn } : {}),
      // AllowInsecureFallback: ask for a certificate, let the backend decide what an untrusted one means.
      ...(l.tls?.clientCA
        ? {
            validation_context: {
              trusted_ca: { inline_string: l.tls.clientCA },
              ...(l.tls.clientCAOptional ? { trust_chain_verification: 'ACCEPT_UNTRUSTED' as const } : {}),
            },
          }
        : {}),
    },
    ...(l.tls?.clientCA ? { require_client_certificate: { value: !l.tls.clientCAOptional } } : {}),
  };
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: typed<DownstreamTlsContext>('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', ctx),
  };
}

function l4Site(route: L4RouteIR | undefined, listener: string): AccessLogSite {
  return route ? { route: route.name, listener } : { listener };
}

function serverNames(hostname: string | undefined): string[] {
  return hostname && hostname !== '*' ? [hostname] : [];
}

/** What building a Gateway's listeners needs and adds to besides the listeners themselves. */
export interface ListenerBuild {
  out: EnvoyResources;
  /** The Gateway's edge hardening of its HTTP connection managers and HTTPS chains. */
  edge: EdgeHttp;
  plugins: PluginContext;
  routes: RouteMemo | undefined;
  /** Set when some filter names the invalid-backend cluster (so it is sent). */
  invalidBackendUsed: boolean;
}

function invalidBackend(build: ListenerBuild): string {
  build.invalidBackendUsed = true;
  return INVALID_BACKEND_CLUSTER;
}

function pluginFilters(listeners: GatewayListenerIR[], pc: PluginContext): HttpFilter[] {
  const used = pluginsUsed(listeners);
  pc.used.push(...used);
  return pluginHttpFilters(used, pc.gw, pc.lookup);
}

/** An HTTP connection manager filter chain whose routes come over RDS as `routeName`. */
function httpFilterChain(
  routeName: string,
  listeners: GatewayListenerIR[],
  build: ListenerBuild,
): Pick<FilterChain, 'filters'> {
  return {
    filters: [
      {
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: httpConnectionManager(routeName, routeName, {
          preRouting: listenerHttpFilters(listeners, build.plugins),
          cors: usesFilter(listeners, (f) => f.cors),
          statefulSession: listeners.some((l) =>
            (l.virtualHosts ?? []).some((v) => v.routes.some((r) => r.sessionPersistence)),
          ),
          plugins: pluginFilters(listeners, build.plugins),
          accessLog: accessLogs(build.plugins.gw, 'http'),
          tracing: hcmTracing(build.plugins.gw),
          edge: build.edge,
        }),
      },
    ],
  };
}

/** UDP: Envoy's udp_proxy sends to one cluster, so the heaviest backend of the route takes it all. */
function udpListenerFilters(
  port: PortIR,
  first: GatewayListenerIR,
  build: ListenerBuild,
): Listener['listener_filters'] {
  const route = first.routes?.[0];
  const heaviest = [...(route?.backends ?? [])].sort((a, b) => b.weight - a.weight)[0];
  const value: UdpProxyConfig = { stat_prefix: port.name, cluster: heaviest?.cluster ?? invalidBackend(build) };
  const log = accessLogs(build.plugins.gw, 'udp', l4Site(route, first.name));
  if (log.length) value.access_log = log;
  return [
    {
      name: 'envoy.filters.udp_listener.udp_proxy',
      typed_config: typed<UdpProxyConfig>('envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig', value),
    },
  ];
}

/** HTTPS and TLS listeners share the port; the filter chain is chosen by SNI. */
function sniFilterChains(port: PortIR, build: ListenerBuild): FilterChain[] {
  const chains: FilterChain[] = [];
  /** Server names of the port's TLS route chains so far ('' for a chain without server_names). */
  const claimedNames = new Set<string>();
  for (const listener of port.listeners) {
    if (listener.protocol === 'HTTPS') {
      const routeName = `${port.name}/${listener.name}`;
      chains.push({
        name: listener.name,
        filter_chain_match: { server_names: serverNames(listener.hostname) },
        transport_socket: downstreamTls(listener, build.edge.alpn),
        ...httpFilterChain(routeName, [listener], build),
      });
      build.out.routes.push(
        withSpanName(
          httpRouteConfiguration(routeName, [listener], port.port, build.routes, listener),
          build.plugins.gw,
        ),
      );
      continue;
    }
    // TLS: a chain per route, by the route's hostnames (or the listener's). Envoy refuses a
    // listener whose filter chains share a match ("multiple filter chains with the same matching
    // rules are defined"), which would take every SNI of the port down: a server name already
    // claimed by an older route (routes come oldest first) stays with it.
    for (const route of listener.routes ?? []) {
      const wanted = (route.hostnames ?? []).filter((h) => h !== '*');
      // '' stands for a chain without server_names (every SNI the others do not name).
      const keys = wanted.length ? wanted : serverNames(listener.hostname);
      const names = (keys.length ? keys : ['']).filter((n) => !claimedNames.has(n));
      if (!names.length) continue;
      for (const n of names) claimedNames.add(n);
      chains.push({
        name: `${listener.name}/${route.name}`,
        filter_chain_match: { server_names: names.filter((n) => n !== '') },
        ...(listener.tls?.mode === 'Terminate' ? { transport_socket: downstreamTls(listener) } : {}),
        filters: [tcpProxy(`${port.name}/${route.name}`, route, listener.name, build)],
      });
    }
  }
  return chains;
}

/** The Envoy listener of one port of the Gateway, and the route configurations its HTTP chains name. */
export function buildPortListener(port: PortIR, build: ListenerBuild): void {
  const first = port.listeners[0];
  if (!first) return;
  const listener: Listener = {
    name: port.name,
    // What the drain helper's /drain_listeners?inboundonly drains ("traffic_direction field in
    // Listener is used to determine whether a listener is inbound", admin docs); the bootstrap's
    // readiness and stats listeners are not, and keep answering while the Gateway's drain.
    traffic_direction: 'INBOUND',
    address: {
      socket_address: {
        address: '0.0.0.0',
        port_value: port.listenPort,
        protocol: port.transport === 'udp' ? ('UDP' as const) : ('TCP' as const),
      },
    },
  };
  if (port.transport === 'udp') {
    listener.listener_filters = udpListenerFilters(port, first, build);
  } else if (first.protocol === 'HTTP') {
    // Listeners sharing an HTTP port share its chain (they differ by hostname): named after the port then.
    const name = port.listeners.length === 1 ? first.name : port.name;
    listener.filter_chains = [{ name, ...httpFilterChain(port.name, port.listeners, build) }];
    build.out.routes.push(
      withSpanName(httpRouteConfiguration(port.name, port.listeners, port.port, build.routes), build.plugins.gw),
    );
  } else if (first.protocol === 'TCP') {
    listener.filter_chains = [
      { name: first.name, filters: [tcpProxy(port.name, first.routes?.[0], first.name, build)] },
    ];
  } else {
    listener.listener_filters = [
      {
        name: 'envoy.filters.listener.tls_inspector',
        typed_config: typed<TlsInspector>('envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector', {}),
      },
    ];
    listener.filter_chains = sniFilterChains(port, build);
  }
  build.out.listeners.push(listener);
}
