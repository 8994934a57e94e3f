// The Envoy bootstrap for a Gateway's proxy: ADS over gRPC to the controller, node named after
// the Gateway (node.cluster = "<namespace>/<name>"), admin on loopback only.
import type { Bootstrap } from './envoy-types.js';

export interface BootstrapOptions { namespace: string; name: string; xdsHost: string; xdsPort: number; nodeId?: string; adminPort?: number }

export function buildBootstrap(o: BootstrapOptions): Bootstrap {
  const ads = { ads: {}, resource_api_version: 'V3' as const };
  const isIp = /^[0-9.]+$|:/.test(o.xdsHost);
  return {
    node: { id: o.nodeId ?? `${o.namespace}/${o.name}`, cluster: `${o.namespace}/${o.name}` },
    dynamic_resources: {
      ads_config: { api_type: 'GRPC', transport_api_version: 'V3', set_node_on_first_message_only: true, grpc_services: [{ envoy_grpc: { cluster_name: 'turnpike-xds' } }] },
      cds_config: ads,
      lds_config: ads,
    },
    static_resources: {
      clusters: [{
        name: 'turnpike-xds',
        type: isIp ? 'STATIC' : 'STRICT_DNS',
        connect_timeout: { seconds: '5', nanos: 0 },
        http2_protocol_options: {},
        load_assignment: { cluster_name: 'turnpike-xds', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: o.xdsHost, port_value: o.xdsPort } } } }] }] },
      }],
    },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: o.adminPort ?? 19000 } } },
  };
}

export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(s);
  if (!m) throw new Error(`"${s}" is not HOST:PORT`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
