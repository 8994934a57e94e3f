// ClusterLoadAssignments (EDS): the endpoints of one cluster.
import type { ClusterIR, EndpointIR } from '@turnpike/api';
import type { ClusterLoadAssignment } from './envoy-types.js';

/** The EDS resource of one cluster. */
export function buildEndpoints(c: ClusterIR, endpoints: readonly EndpointIR[]): ClusterLoadAssignment {
  return {
    cluster_name: c.name,
    // gRPC's xDS client ignores localities without a weight.
    endpoints: endpoints.length
      ? [
          {
            locality: {},
            load_balancing_weight: { value: 1 },
            lb_endpoints: endpoints.map((e) => ({
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
            })),
          },
        ]
      : [],
  };
}
