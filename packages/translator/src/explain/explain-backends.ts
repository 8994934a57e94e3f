// What a backendRef's cluster is, for `explain`: a Service's endpoints, the Pods an XBackend selects by label,
// or a host outside the cluster the proxy resolves itself; and how a route keeps a session on one endpoint.
import type { ClusterIR, SessionPersistenceIR } from '@turnpike/api';

/** `readyEndpoints`: the cluster's ready endpoints as the translator has them (none for a DNS cluster). */
export function clusterText(name: string, cluster: ClusterIR | undefined, readyEndpoints: number): string {
  const tls = cluster?.tls ? `, over TLS to ${cluster.tls.sni}` : '';
  if (cluster?.external) {
    const { hostname, port } = cluster.external;
    return `cluster ${name}: ${hostname}:${port} outside the cluster, resolved by the proxy's DNS${tls}`;
  }
  if (cluster?.endpointSelector) {
    const labels = Object.entries(cluster.endpointSelector.matchLabels).map(([k, v]) => `${k}=${v}`);
    const pods = `the Pods of ${cluster.service.namespace} labelled ${labels.join(',') || '(any)'}`;
    return `cluster ${name}: ${pods}, port ${cluster.service.port}, ${readyEndpoints} ready${tls}`;
  }
  return `cluster ${name}, ${readyEndpoints} ready endpoint(s)${tls}`;
}

/** GEP-1619 as Envoy's stateful session runs it: after the backend is chosen, back to the same endpoint. */
export function sessionText(s: SessionPersistenceIR): string {
  if (s.type === 'Header') return `keeps each session on one endpoint by header ${s.name}`;
  const lifetime = s.ttlSeconds === 0 ? 'a session cookie' : `Max-Age ${s.ttlSeconds}s`;
  return `keeps each session on one endpoint by cookie ${s.name} (${lifetime}, path ${s.path})`;
}
