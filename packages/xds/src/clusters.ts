// Clusters (CDS): one per backend Service port a route uses, EDS-fed, with the upstream TLS of its
// BackendTLSPolicy; and the empty cluster that stands for invalid L4 backends.
import type { ClusterIR } from '@turnpike/api';
import { ADS, typed } from './envoy-values.js';
import type { Cluster, UpstreamTlsContext } from './envoy-types.js';

/** The cluster L4 routes name for the share of invalid backends: no endpoints, so the connection is refused. */
export const INVALID_BACKEND_CLUSTER = 'turnpike/invalid-backend';

export function invalidBackendCluster(): Cluster {
  return {
    name: INVALID_BACKEND_CLUSTER,
    type: 'STATIC',
    connect_timeout: { seconds: '1', nanos: 0 },
    load_assignment: { cluster_name: INVALID_BACKEND_CLUSTER, endpoints: [] },
  };
}

/**
 * The names the backend's certificate must carry: BackendTLSPolicy's subjectAltNames, each with
 * the SAN type its `type` field names, or else the SNI hostname as a DNS name.
 */
function subjectAltNameMatchers(tls: NonNullable<ClusterIR['tls']>) {
  const names = tls.subjectAltNames.length ? tls.subjectAltNames : [{ type: 'DNS' as const, value: tls.sni }];
  return names.map((n) => ({ san_type: n.type, matcher: { exact: n.value } }));
}

/** `clientCertificate`: the SDS Secret the proxy presents to a TLS backend (the Gateway's spec.tls.backend). */
export function buildCluster(c: ClusterIR, clientCertificate?: string): Cluster {
  const cluster: Cluster = c.external
    ? externalCluster(c.name, c.external)
    : {
        name: c.name,
        type: 'EDS',
        eds_cluster_config: { eds_config: ADS, service_name: c.name },
        connect_timeout: { seconds: '5', nanos: 0 },
        lb_policy: 'ROUND_ROBIN',
      };
  if (c.protocol === 'h2') cluster.http2_protocol_options = {};
  // A cluster spread over Services: traffic is split by locality weight (endpoints.ts), then
  // round robin within a locality (arch_overview_load_balancing_locality_weighted_lb).
  if (c.members) cluster.common_lb_config = { locality_weighted_lb_config: {} };
  // The cluster's own certificate (an XBackend's ClientAndServer), none (ServerOnly), or the Gateway's.
  const own = c.tls?.clientCertificate;
  const certificate = own === false ? undefined : own ? own.secret : clientCertificate;
  if (c.tls) {
    const ctx: UpstreamTlsContext = {
      sni: c.tls.sni,
      common_tls_context: {
        // HTTP/2 over TLS is negotiated by ALPN: gRPC servers (grpc-go since 1.67) refuse a TLS
        // connection that offers none. CommonTlsContext.alpn_protocols is what the ClientHello
        // offers; said here rather than left to the HTTP/2 pool's fallback.
        ...(c.protocol === 'h2' ? { alpn_protocols: ['h2'] } : {}),
        ...(certificate ? { tls_certificate_sds_secret_configs: [{ name: certificate, sds_config: ADS }] } : {}),
        validation_context: {
          ...(c.tls.caBundle
            ? { trusted_ca: { inline_string: c.tls.caBundle } }
            : { trusted_ca: { filename: '/etc/ssl/certs/ca-certificates.crt' } }),
          match_typed_subject_alt_names: subjectAltNameMatchers(c.tls),
        },
      },
    };
    cluster.transport_socket = {
      name: 'envoy.transport_sockets.tls',
      typed_config: typed<UpstreamTlsContext>('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', ctx),
    };
  }
  return cluster;
}

/**
 * An XBackend's external hostname (GEP-4894 ExternalHostname), resolved by the proxy. LOGICAL_DNS: Envoy's
 * service discovery page calls it "optimal for large scale web services that must be accessed via DNS"
 * (it connects to the first address of the latest answer rather than treating every address as a
 * host, as STRICT_DNS does); the one endpoint is the hostname and port, in the cluster's own
 * load_assignment (no EDS).
 */
function externalCluster(name: string, external: NonNullable<ClusterIR['external']>): Cluster {
  return {
    name,
    type: 'LOGICAL_DNS',
    connect_timeout: { seconds: '5', nanos: 0 },
    lb_policy: 'ROUND_ROBIN',
    // Both families, IPv4 first: a pod network may have either.
    dns_lookup_family: 'V4_PREFERRED',
    load_assignment: {
      cluster_name: name,
      endpoints: [
        {
          lb_endpoints: [
            { endpoint: { address: { socket_address: { address: external.hostname, port_value: external.port } } } },
          ],
        },
      ],
    },
  };
}
