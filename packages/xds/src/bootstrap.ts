// The Envoy bootstrap for a Gateway's proxy: ADS over gRPC to the controller, node named after
// the Gateway (node.cluster = "<namespace>/<name>"), admin on loopback only, and the readiness and
// stats listeners that expose one admin path each (admin-listeners.ts). With TLS, the proxy
// presents the client certificate that names its Gateway and checks the controller's serving
// certificate against the control-plane CA. Both come through file-based SDS, so that a renewed
// certificate (a Secret volume updated in place) is picked up without a restart or a dropped stream.
// The overload manager keeps the heap under the proxy's memory limit (overloadManager below).
import { PROXY_ADMIN_PORT } from '@turnpike/api';
import { adminCluster, readinessListener, statsListener } from './admin-listeners.js';
import type { Bootstrap, FixedHeapConfig, OverloadManager, UpstreamTlsContext } from './envoy-types.js';
import { typed } from './envoy-values.js';

/** Where the proxy finds its xDS credentials. */
export interface BootstrapTls {
  /** Directory holding tls.crt, tls.key and ca.crt (a mounted Secret). */
  certDir: string;
  /** Directory holding the SDS files of `bootstrapSdsFiles` (e.g. the bootstrap ConfigMap). */
  sdsDir: string;
  /** The name the controller's serving certificate carries (its Service's DNS name). */
  serverName: string;
}

export interface BootstrapOptions {
  namespace: string;
  name: string;
  xdsHost: string;
  xdsPort: number;
  nodeId?: string;
  adminPort?: number;
  tls?: BootstrapTls;
  /** Serve /stats/prometheus on PROXY_STATS_PORT (default true). */
  stats?: boolean;
  /** The Envoy container's memory limit in bytes, when it has one: the heap is sized from it. */
  memoryLimitBytes?: number;
}

/**
 * The heap of a proxy whose memory limit is not known: the edge page's example value
 * (max_heap_size_bytes 2 GiB, "TODO: Tune for your system").
 */
export const DEFAULT_MAX_HEAP_BYTES = 2 * 1024 ** 3;
/**
 * The share of the container's memory limit the heap may reach. The fixed_heap monitor counts the
 * allocator's heap ("currently reserved heap memory", fixed_heap.proto), while the kernel kills the
 * container on everything it uses (the binary, thread stacks, buffers outside the heap): with a
 * fifth left over, stop_accepting_requests (98% of the heap) comes before the OOM killer.
 */
export const HEAP_SHARE_OF_MEMORY_LIMIT = 0.8;
const FIXED_HEAP = 'envoy.resource_monitors.fixed_heap';

/**
 * The overload manager of the edge page ("TCP proxies should configure ... overload_manager"), as in
 * its example (edge.yaml): the fixed_heap resource monitor, shrink_heap at 95% of the heap (return
 * free memory to the system) and stop_accepting_requests at 98% (new requests are answered 503 until
 * usage falls), read every 250 ms.
 */
export function overloadManager(memoryLimitBytes?: number): OverloadManager {
  const maxHeap =
    memoryLimitBytes !== undefined && memoryLimitBytes > 0
      ? Math.max(1, Math.floor(memoryLimitBytes * HEAP_SHARE_OF_MEMORY_LIMIT))
      : DEFAULT_MAX_HEAP_BYTES;
  const at = (value: number) => [{ name: FIXED_HEAP, threshold: { value } }];
  return {
    refresh_interval: { seconds: '0', nanos: 250_000_000 },
    resource_monitors: [
      {
        name: FIXED_HEAP,
        typed_config: typed<FixedHeapConfig>('envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig', {
          max_heap_size_bytes: String(maxHeap),
        }),
      },
    ],
    actions: [
      { name: 'envoy.overload_actions.shrink_heap', triggers: at(0.95) },
      { name: 'envoy.overload_actions.stop_accepting_requests', triggers: at(0.98) },
    ],
  };
}

/** SDS resource names (read from files in the pod, not Kubernetes Secrets). */
const SDS_CLIENT_CERT = 'turnpike-xds-client';
const SDS_CONTROL_PLANE_CA = 'turnpike-xds-ca';
const SDS_SECRET_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';

const sdsConfig = (dir: string, file: string) => ({
  resource_api_version: 'V3' as const,
  path_config_source: { path: `${dir}/${file}`, watched_directory: { path: dir } },
});

/** The SDS files the bootstrap's TLS refers to: file name → content. */
export function bootstrapSdsFiles(tls: BootstrapTls): Record<string, string> {
  const cert = (f: string) => ({ filename: `${tls.certDir}/${f}` });
  return {
    'sds-xds-client.json': JSON.stringify({
      resources: [
        {
          '@type': SDS_SECRET_TYPE,
          name: SDS_CLIENT_CERT,
          tls_certificate: {
            certificate_chain: cert('tls.crt'),
            private_key: cert('tls.key'),
            watched_directory: { path: tls.certDir },
          },
        },
      ],
    }),
    'sds-xds-ca.json': JSON.stringify({
      resources: [
        {
          '@type': SDS_SECRET_TYPE,
          name: SDS_CONTROL_PLANE_CA,
          validation_context: { trusted_ca: cert('ca.crt'), watched_directory: { path: tls.certDir } },
        },
      ],
    }),
  };
}

/**
 * The TLS a proxy uses towards the controller: for xDS (gRPC, so ALPN h2, which the Node HTTP/2
 * server insists on) and for plugin content (HTTP/1.1).
 */
export function controlPlaneTlsContext(
  tls: BootstrapTls,
  use: 'xds' | 'plugins' = 'xds',
  serverName = tls.serverName,
): UpstreamTlsContext {
  return {
    sni: serverName,
    common_tls_context: {
      tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
      tls_certificate_sds_secret_configs: [
        { name: SDS_CLIENT_CERT, sds_config: sdsConfig(tls.sdsDir, 'sds-xds-client.json') },
      ],
      combined_validation_context: {
        default_validation_context: {
          match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: serverName } }],
        },
        validation_context_sds_secret_config: {
          name: SDS_CONTROL_PLANE_CA,
          sds_config: sdsConfig(tls.sdsDir, 'sds-xds-ca.json'),
        },
      },
      alpn_protocols: [use === 'xds' ? 'h2' : 'http/1.1'],
    },
  };
}

export function buildBootstrap(o: BootstrapOptions): Bootstrap {
  // ConfigSource.initial_fetch_timeout: "0 means no timeout - Envoy will wait indefinitely for the
  // first xDS config" (config_source.proto; the default, 15 s, lets a proxy that never heard from the
  // controller go LIVE with nothing, and /ready answer 200). A connection failure does not end the
  // wait either; a rejected first config does (and the NACK shows in ProxiesInSync).
  const ads = { ads: {}, resource_api_version: 'V3' as const, initial_fetch_timeout: { seconds: '0', nanos: 0 } };
  const isIp = /^[0-9.]+$|:/.test(o.xdsHost);
  return {
    node: { id: o.nodeId ?? `${o.namespace}/${o.name}`, cluster: `${o.namespace}/${o.name}` },
    dynamic_resources: {
      ads_config: {
        api_type: 'GRPC',
        transport_api_version: 'V3',
        set_node_on_first_message_only: true,
        grpc_services: [{ envoy_grpc: { cluster_name: 'turnpike-xds' } }],
      },
      cds_config: ads,
      lds_config: ads,
    },
    static_resources: {
      listeners: [readinessListener(), ...(o.stats === false ? [] : [statsListener()])],
      clusters: [
        {
          name: 'turnpike-xds',
          type: isIp ? 'STATIC' : 'STRICT_DNS',
          connect_timeout: { seconds: '5', nanos: 0 },
          http2_protocol_options: {},
          load_assignment: {
            cluster_name: 'turnpike-xds',
            endpoints: [
              {
                lb_endpoints: [
                  { endpoint: { address: { socket_address: { address: o.xdsHost, port_value: o.xdsPort } } } },
                ],
              },
            ],
          },
          ...(o.tls
            ? {
                transport_socket: {
                  name: 'envoy.transport_sockets.tls',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
                    ...controlPlaneTlsContext(o.tls),
                  },
                },
              }
            : {}),
        },
        adminCluster(o.adminPort),
      ],
    },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: o.adminPort ?? PROXY_ADMIN_PORT } } },
    overload_manager: overloadManager(o.memoryLimitBytes),
  };
}

export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(s);
  if (!m) throw new Error(`"${s}" is not HOST:PORT`);
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`"${s}": port ${port} is above 65535`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}
