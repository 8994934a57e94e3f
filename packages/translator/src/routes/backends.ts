// backendRefs: only core Services (and only with a port); another namespace needs a
// ReferenceGrant, and without one we never say whether the Service exists. Endpoints come
// from the Service's EndpointSlices; an upstream BackendTLSPolicy is attached to the cluster. A
// route reads only the Service's ports (service-facts.ts): whether the proxy speaks HTTP/2 to a
// port (its appProtocol) is the Gateway's assembly's to decide, so the cluster's name never
// depends on it.
import { GATEWAY_GROUP, type BackendRef, type KubeObject } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import type { ClusterIR } from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import { referenceNotPermitted } from '../policies/reference-grants.js';
import { servicePorts } from '../ir/service-facts.js';
import { flat } from '../compact-values.js';
import { isXBackendRef, resolveXBackend } from './xbackends.js';

export interface ResolvedBackend {
  cluster: ClusterIR;
  weight: number;
  port: number;
}

/** `route` is the referrer: a route, or (group turnpike.dev) a ProxyConfig naming a collector. */
export function resolveBackend(
  ctx: Pick<TranslationContext, 'inputs' | 'backendTLS'> & Partial<Pick<TranslationContext, 'detachedTLS'>>,
  route: KubeObject,
  routeKind: string,
  ref: BackendRef,
  field: string,
  protocol: ClusterIR['protocol'],
  routeGroup: string = GATEWAY_GROUP,
): {
  backend?: ResolvedBackend;
  problem?: Problem;
  policy?: string;
  detachedPolicies?: string[];
  /** An XBackend (`namespace/name`) the ref reached: its status lists the route's Gateways. */
  xbackend?: string;
} {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Service';
  const weight = ref.weight ?? 1;
  if (isXBackendRef(ref) && routeGroup === GATEWAY_GROUP) {
    const x = resolveXBackend(ctx.inputs, route, ref, field, protocol);
    const about = x.xbackend ? { xbackend: x.xbackend } : {};
    return x.cluster
      ? { backend: { cluster: x.cluster, weight, port: x.cluster.service.port }, ...about }
      : { problem: x.problem!, ...about };
  }
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
  // A reference within the route's namespace needs no grant (and no objects to ask about one).
  const notPermitted =
    ns === routeNs
      ? undefined
      : referenceNotPermitted(
          ctx.inputs,
          { group: routeGroup, kind: routeKind, namespace: routeNs },
          { group: '', kind: 'Service', namespace: ns, name: ref.name },
          field,
        );
  if (notPermitted) return { problem: notPermitted };
  const ports = servicePorts(ctx.inputs, ns, ref.name);
  if (!ports)
    return { problem: { reason: 'BackendNotFound', message: `${field}: Service ${ns}/${ref.name} not found` } };
  if (ref.port === undefined)
    return { problem: { reason: 'BackendNotFound', message: `${field}.port must be set for a Service backend` } };
  const wantProtocol = protocol === 'udp' ? 'UDP' : 'TCP';
  const sp = ports.find((p) => p.port === ref.port && p.protocol === wantProtocol);
  if (!sp)
    return {
      problem: {
        reason: 'BackendNotFound',
        message: `${field}: Service ${ns}/${ref.name} has no ${wantProtocol} port ${ref.port}`,
      },
    };
  const tls = ctx.backendTLS(ns, ref.name, sp.name);
  // Policies meant for this Service that name none of its ports: they apply to nothing here, but the
  // Gateways of this route are their ancestors, told why they do not attach.
  const detached = ctx.detachedTLS?.(ns, ref.name);
  const detachedPolicies = detached?.length ? { detachedPolicies: detached } : {};
  if (tls && (tls.notAccepted || tls.refsProblem)) {
    return {
      ...detachedPolicies,
      policy: `${tls.policy.metadata.namespace}/${tls.policy.metadata.name}`,
      problem: {
        reason: 'InvalidBackendTLSPolicy',
        message:
          `${field}: BackendTLSPolicy ${tls.policy.metadata.namespace}/${tls.policy.metadata.name} for ` +
          `Service ${ns}/${ref.name} is not valid: ${(tls.notAccepted ?? tls.refsProblem)?.message}`,
      },
    };
  }
  // Endpoints are not part of the cluster: they are the endpoint stage's, per cluster name.
  const cluster: ClusterIR = {
    name: clusterName(ns, ref.name, ref.port, protocol),
    service: { namespace: ns, name: ref.name, port: ref.port },
    protocol,
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
  const backend = { cluster, weight, port: ref.port };
  return tls ? { backend, policy: cluster.tls!.policy, ...detachedPolicies } : { backend, ...detachedPolicies };
}

/**
 * `namespace/service/port`, with a suffix for what the route asks of the port: none for HTTP
 * (HTTP/1.1, or HTTP/2 when the port's appProtocol says h2c), `/h2` for a GRPCRoute (always
 * HTTP/2), `/tcp` for TLS and TCP routes (bytes), `/udp` for a UDP port. Two routes may send to one
 * port in different ways (a GRPCRoute and an HTTPRoute, a TCPRoute and an HTTPRoute to an h2c port,
 * DNS over TCP and UDP); each way is a cluster of its own. The name does not depend on the Service,
 * so a change of its appProtocol changes one cluster's config and no route.
 */
export function clusterName(namespace: string, service: string, port: number, protocol: ClusterIR['protocol']): string {
  const suffix = protocol === 'http' ? '' : `/${protocol}`;
  return flat(`${namespace}/${service}/${port}${suffix}`);
}
