// backendRefs: only core Services (and only with a port); another namespace needs a
// ReferenceGrant, and without one we never say whether the Service exists. Endpoints come
// from the Service's EndpointSlices; an upstream BackendTLSPolicy is attached to the cluster.
import { GATEWAY_GROUP, type BackendRef, type EndpointSlice, type KubeObject, type Service } from '@turnpike/api';
import type { Problem } from '../conditions.js';
import type { ClusterIR, EndpointIR } from '@turnpike/api';
import type { TranslationContext } from '../context.js';

export interface ResolvedBackend { cluster: ClusterIR; weight: number; port: number }

export function resolveBackend(
  ctx: TranslationContext, route: KubeObject, routeKind: string, ref: BackendRef, field: string, protocol: ClusterIR['protocol'],
): { backend?: ResolvedBackend; problem?: Problem; policy?: string } {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Service';
  const weight = ref.weight ?? 1;
  if (group !== '' || kind !== 'Service') {
    return { problem: { reason: 'InvalidKind', message: `${field}: ${group ? group + '/' : ''}${kind} is not a supported backend, use a core Service` } };
  }
  const routeNs = route.metadata.namespace ?? '';
  const ns = ref.namespace ?? routeNs;
  if (!ctx.grants.allows({ group: GATEWAY_GROUP, kind: routeKind, namespace: routeNs }, { group: '', kind: 'Service', namespace: ns, name: ref.name })) {
    return { problem: { reason: 'RefNotPermitted', message: `${field}: Service ${ns}/${ref.name} is in another namespace and no ReferenceGrant allows it` } };
  }
  const svc = ctx.services.get(`${ns}/${ref.name}`);
  if (!svc) return { problem: { reason: 'BackendNotFound', message: `${field}: Service ${ns}/${ref.name} not found` } };
  if (ref.port === undefined) return { problem: { reason: 'BackendNotFound', message: `${field}.port must be set for a Service backend` } };
  const wantProtocol = protocol === 'udp' ? 'UDP' : 'TCP';
  const sp = (svc.spec?.ports ?? []).find((p) => p.port === ref.port && (p.protocol ?? 'TCP') === wantProtocol);
  if (!sp) return { problem: { reason: 'BackendNotFound', message: `${field}: Service ${ns}/${ref.name} has no ${wantProtocol} port ${ref.port}` } };
  const tls = ctx.backendTLS.forBackend(ns, ref.name, sp.name);
  if (tls && (tls.notAccepted || tls.refsProblem)) {
    return { policy: `${tls.policy.metadata.namespace}/${tls.policy.metadata.name}`, problem: { reason: 'InvalidBackendTLSPolicy', message: `${field}: BackendTLSPolicy ${tls.policy.metadata.namespace}/${tls.policy.metadata.name} for Service ${ns}/${ref.name} is not valid: ${(tls.notAccepted ?? tls.refsProblem)?.message}` } };
  }
  const name = `${ns}/${ref.name}/${ref.port}`;
  const cluster: ClusterIR = { name, service: { namespace: ns, name: ref.name, port: ref.port }, protocol: appProtocol(sp.appProtocol, protocol), endpoints: endpointsFor(ctx, ns, ref.name, sp.name, sp.targetPort, sp.port) };
  if (tls) {
    cluster.tls = { sni: tls.hostname, subjectAltNames: tls.subjectAltNames, policy: `${tls.policy.metadata.namespace}/${tls.policy.metadata.name}` };
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

function endpointsFor(ctx: TranslationContext, ns: string, service: string, portName: string | undefined, targetPort: number | string | undefined, port: number): EndpointIR[] {
  const out: EndpointIR[] = [];
  for (const slice of ctx.slicesByService.get(`${ns}/${service}`) ?? []) {
    const sp = (slice.ports ?? []).find((p) => (p.name ?? '') === (portName ?? '')) ?? (slice.ports?.length === 1 ? slice.ports[0] : undefined);
    const epPort = sp?.port ?? (typeof targetPort === 'number' ? targetPort : port);
    for (const ep of slice.endpoints ?? []) {
      const ready = ep.conditions?.ready !== false;
      for (const address of ep.addresses ?? []) out.push({ address, port: epPort, ready });
    }
  }
  return out.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port));
}

export function indexSlices(slices: readonly EndpointSlice[]): Map<string, EndpointSlice[]> {
  const m = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    const svc = s.metadata.labels?.['kubernetes.io/service-name'];
    if (!svc) continue;
    const key = `${s.metadata.namespace}/${svc}`;
    const l = m.get(key) ?? [];
    l.push(s);
    m.set(key, l);
  }
  return m;
}

export function indexServices(services: readonly Service[]): Map<string, Service> {
  return new Map(services.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
}
