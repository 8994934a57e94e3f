// xDS resource type URLs, in the order updates are sent (make before break: clusters before
// their endpoints, listeners before their routes; secrets first so listeners find them).
export const TYPE = {
  secret: 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret',
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoint: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  route: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
} as const;

export type TypeUrl = (typeof TYPE)[keyof typeof TYPE];

export const SEND_ORDER: TypeUrl[] = [TYPE.secret, TYPE.cluster, TYPE.endpoint, TYPE.listener, TYPE.route];

/** Types whose empty subscription means "everything" (wildcard) in state-of-the-world. */
export const WILDCARD_TYPES = new Set<string>([TYPE.listener, TYPE.cluster]);

export function messageName(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
}
