// ClusterLoadAssignments (EDS): the endpoints of one cluster, in one locality, or for a cluster
// spread over several Services (ClusterIR.members) in a weighted locality per Service.
import type { ClusterIR, EndpointIR } from '@turnpike/api';
import type { ClusterLoadAssignment, LocalityLbEndpoints } from './envoy-types.js';

function lbEndpoints(c: ClusterIR, endpoints: readonly EndpointIR[]): LocalityLbEndpoints['lb_endpoints'] {
  return endpoints.map((e) => ({
    endpoint: {
      address: {
        socket_address: {
          address: e.address,
          port_value: e.port,
          protocol: c.protocol === 'udp' ? ('UDP' as const) : ('TCP' as const),
        },
      },
    },
    health_status: e.ready ? ('HEALTHY' as const) : ('UNHEALTHY' as const),
  }));
}

/** The EDS resource of one cluster. */
export function buildEndpoints(c: ClusterIR, endpoints: readonly EndpointIR[]): ClusterLoadAssignment {
  if (c.members) {
    // LocalityLbEndpoints.load_balancing_weight: "The load balancing weight for a locality is divided
    // by the sum of the weights of all localities at the same priority level to produce the
    // effective percentage of traffic for the locality" (with locality_weighted_lb_config set on
    // the cluster). A member without endpoints has no locality: Envoy would give it no traffic
    // anyway (a locality's effective weight scales with its healthy share).
    return {
      cluster_name: c.name,
      endpoints: c.members
        .map((m) => ({ m, own: endpoints.filter((e) => e.locality?.name === m.cluster) }))
        .filter(({ own }) => own.length > 0)
        .map(({ m, own }) => ({
          locality: { sub_zone: m.cluster },
          load_balancing_weight: { value: m.weight },
          lb_endpoints: lbEndpoints(c, own),
        })),
    };
  }
  return {
    cluster_name: c.name,
    // gRPC's xDS client ignores localities without a weight.
    endpoints: endpoints.length
      ? [{ locality: {}, load_balancing_weight: { value: 1 }, lb_endpoints: lbEndpoints(c, endpoints) }]
      : [],
  };
}
