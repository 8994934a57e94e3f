// backendRefs: only core Services (and only with a port); another namespace needs a
// ReferenceGrant, and without one we never say whether the Service exists. Endpoints come
// from the Service's EndpointSlices; an upstream BackendTLSPolicy is attached to the cluster.
import { GATEWAY_GROUP, type BackendRef, type KubeObject, type Service } from '@turnpike/api';
import type { Problem } from '../conditions.js';
import type { ClusterIR } from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import { referenceNotPermitted } from '../reference-grants.js';

export interface ResolvedBackend {
  cluster: ClusterIR;
  weight: number;
  port: number;
}

export function resolveBackend(
  ctx: TranslationContext,
  route: KubeObject,
  routeKind: string,
  ref: BackendRef,
  field: string,
  protocol: ClusterIR['protocol'],
): { backend?: ResolvedBackend; problem?: Problem; policy?: string } {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Service';
  const weight = ref.weight ?? 1;
  if (group !== '' || kind !== 'Service') {
    return {
      problem: {
        reason: 'InvalidKind',
        message: `${field}: ${group ? group + '/' : ''}${kind} is not a supported backend, use a core Service`,
      },
    };
  }
  const routeNs = route.metadata.namespace ?? '';
  const ns = ref.namespace ?? routeNs;
  const notPermitted = referenceNotPermitted(
    ctx.inputs,
    { group: GATEWAY_GROUP, kind: routeKind, namespace: routeNs },
    { group: '', kind: 'Service', namespace: ns, name: ref.name },
    field,
  );
  if (notPermitted) return { problem: notPermitted };
  const svc = ctx.inputs.get<Service>('Service', ns, ref.name);
  if (!svc) return { problem: { reason: 'BackendNotFound', message: `${field}: Service ${ns}/${ref.name} not found` } };
  if (ref.port === undefined)
    return { problem: { reason: 'BackendNotFound', message: `${field}.port must be set for a Service backend` } };
  const wantProtocol = protocol === 'udp' ? 'UDP' : 'TCP';
  const sp = (svc.spec?.ports ?? []).find((p) => p.port === ref.port && (p.protocol ?? 'TCP') === wantProtocol);
  if (!sp)
    return {
      problem: {
        reason: 'BackendNotFound',
        message: `${field}: Service ${ns}/${ref.name} has no ${wantProtocol} port ${ref.port}`,
      },
    };
  const tls = ctx.backendTLS(ns, ref.name, sp.name);
  if (tls && (tls.notAccepted || tls.refsProblem)) {
    return {
      policy: `${tls.policy.metadata.namespace}/${tls.policy.metadata.name}`,
      problem: {
        reason: 'InvalidBackendTLSPolicy',
        message:
          `${field}: BackendTLSPolicy ${tls.policy.metadata.namespace}/${tls.policy.metadata.name} for ` +
          `Service ${ns}/${ref.name} is not valid: ${(tls.notAccepted ?? tls.refsProblem)?.message}`,
      },
    };
  }
  const clusterProtocol = appProtocol(sp.appProtocol, protocol);
  // Endpoints are not part of the cluster: they are the endpoint stage's, per cluster name.
  const cluster: ClusterIR = {
    name: clusterName(ns, ref.name, ref.port, clusterProtocol),
    service: { namespace: ns, name: ref.name, port: ref.port },
    protocol: clusterProtocol,
  };
  if (tls) {
    cluster.tls = {
      sni: tls.hostname,
      subjectAltNames: tls.subjectAltNames,
      policy: `${tls.policy.metadata.namespace}/${tls.policy.metadata.name}`,
    };
    if (tls.caBundle !== undefined) cluster.tls.caBundle = tls.caBundle;
    if (tls.wellKnown) cluster.tls.wellKnownCA = tls.wellKnown;
  }
  return { backend: { cluster, weight, port: ref.port }, ...(tls ? { policy: cluster.tls!.policy } : {}) };
}

function appProtocol(ap: string | undefined, dflt: ClusterIR['protocol']): ClusterIR['protocol'] {
  if (dflt === 'udp' || dflt === 'tcp') return dflt;
  if (ap === 'kubernetes.io/h2c' || ap === 'grpc' || ap === 'h2c') return 'h2';
  return dflt;
}

/**
 * `namespace/service/port`, with `/udp` for a UDP port and `/h2` when the proxy speaks HTTP/2 to
 * it. The name carries what the cluster's config depends on: a Service may serve one port number
 * over TCP and UDP (DNS), and a GRPCRoute (HTTP/2) and an HTTPRoute (HTTP/1.1, unless the port's
 * appProtocol says h2c) may send to the same port; one shared cluster would speak one of them.
 */
export function clusterName(namespace: string, service: string, port: number, protocol: ClusterIR['protocol']): string {
  const suffix = protocol === 'udp' ? '/udp' : protocol === 'h2' ? '/h2' : '';
  return `${namespace}/${service}/${port}${suffix}`;
}
