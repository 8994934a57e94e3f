// BackendTLSPolicy: upstream TLS for a Service (or one of its ports, by sectionName). The CA
// references must be usable ConfigMaps or Secrets (ca.crt) or ClusterTrustBundles; a policy that
// loses a conflict (same target, newer) is not accepted. Status is written per ancestor: the route
// parents that use the Service. A targetRef whose sectionName names no port of its Service does not
// attach ("If a SectionName is specified, but does not exist on the targeted object, the Policy must
// fail to attach", LocalPolicyTargetReferenceWithSectionName): it applies to no port, wins no conflict,
// and the Gateways of the routes that use that Service are told so (Accepted=False, TargetNotFound).
import { CLUSTER_TRUST_BUNDLE_GROUP, type BackendTLSPolicy, type SubjectAltNameIR } from '@turnpike/api';
import { caBundleInClusterTrustBundle, caBundleInObject, isClusterTrustBundleRef } from './ca-certificate-refs.js';
import { servicePorts } from '../ir/service-facts.js';
import { compareAge } from '../compare.js';
import type { Problem } from '../status/conditions.js';
import type { Inputs } from '../incremental/inputs.js';
import type { Reason } from '../status/reasons.js';

/** status.ancestors holds at most 16 entries (CRD maxItems); beyond that the policy is unimplementable. */
export const MAX_ANCESTORS = 16;

export interface BackendTLSModel {
  policy: BackendTLSPolicy;
  /** Accepted=False problem; ResolvedRefs problem. */
  notAccepted?: Problem;
  refsProblem?: Problem;
  caBundle?: string;
  wellKnown?: string;
  hostname: string;
  subjectAltNames: SubjectAltNameIR[];
  /** The older policy that won the target this one also names. */
  lostTo?: BackendTLSModel;
  /** Targets whose sectionName names no port of their Service: the policy does not attach to them. */
  detached?: DetachedTarget[];
}

export interface DetachedTarget {
  /** Index in spec.targetRefs. */
  index: number;
  service: string;
  sectionName: string;
  /** Accepted=False (TargetNotFound) on the ancestors reached through this target. */
  problem: Problem;
}

export class BackendTLSIndex {
  /** `namespace/service/sectionName` ('' for the whole Service) → the winning policy. */
  readonly byTarget = new Map<string, BackendTLSModel>();
  /** `namespace/service` → the policies with a target naming a port that Service does not have. */
  readonly detachedByService = new Map<string, BackendTLSModel[]>();
  readonly models: BackendTLSModel[] = [];

  /** `evaluate` gives each policy's own verdict (memoised by the caller); conflicts are decided here. */
  constructor(policies: readonly BackendTLSPolicy[], evaluate: (p: BackendTLSPolicy) => BackendTLSModel) {
    for (const p of [...policies].sort(compareAge)) {
      const m = { ...evaluate(p) };
      this.models.push(m);
      for (const d of m.detached ?? []) {
        const key = `${p.metadata.namespace}/${d.service}`;
        const list = this.detachedByService.get(key) ?? [];
        if (!list.includes(m)) list.push(m);
        this.detachedByService.set(key, list);
      }
      (p.spec?.targetRefs ?? []).forEach((t, i) => {
        if ((t.group ?? '') !== '' || t.kind !== 'Service') return;
        if (m.detached?.some((d) => d.index === i)) return;
        const key = `${p.metadata.namespace}/${t.name}/${t.sectionName ?? ''}`;
        const existing = this.byTarget.get(key);
        if (existing) {
          m.lostTo ??= existing;
          m.notAccepted = {
            reason: 'Conflicted',
            message: `spec.targetRefs: Service ${t.name}${t.sectionName ? ' port ' + t.sectionName : ''} is already targeted by the older BackendTLSPolicy ${existing.policy.metadata.name}`,
          };
          return;
        }
        this.byTarget.set(key, m);
      });
    }
  }

  /** The policies (`namespace/name`) with a target naming a port this Service does not have. */
  detachedFrom(namespace: string, service: string): string[] {
    return (this.detachedByService.get(`${namespace}/${service}`) ?? []).map(
      (m) => `${m.policy.metadata.namespace}/${m.policy.metadata.name}`,
    );
  }

  /** The policy for a Service port: one naming the port wins over one for the whole Service. */
  forBackend(namespace: string, service: string, portName: string | undefined): BackendTLSModel | undefined {
    return (
      (portName ? this.byTarget.get(`${namespace}/${service}/${portName}`) : undefined) ??
      this.byTarget.get(`${namespace}/${service}/`)
    );
  }
}

/**
 * Targets whose sectionName names no port of their Service ("Service: Port name"). Without the Service
 * nothing sends to it, and nothing is said; a port that gains the name attaches the policy.
 */
function detachedTargets(inputs: Inputs, p: BackendTLSPolicy): DetachedTarget[] {
  const out: DetachedTarget[] = [];
  const namespace = p.metadata.namespace ?? '';
  (p.spec?.targetRefs ?? []).forEach((t, index) => {
    if ((t.group ?? '') !== '' || t.kind !== 'Service' || !t.sectionName) return;
    const ports = servicePorts(inputs, namespace, t.name);
    if (!ports || ports.some((port) => port.name === t.sectionName)) return;
    const names = ports.map((port) => port.name ?? `(unnamed ${port.port})`).join(', ');
    out.push({
      index,
      service: t.name,
      sectionName: t.sectionName,
      problem: {
        reason: 'TargetNotFound',
        message:
          `spec.targetRefs[${index}].sectionName: Service ${namespace}/${t.name} has no port named ` +
          `"${t.sectionName}" (its ports: ${names || 'none'}); the policy does not attach to it, and ` +
          `connections to that Service are not TLS unless another policy applies`,
      },
    });
  });
  return out;
}

/**
 * BackendTLSPolicy subjectAltNames: `type` says which field holds the name (Hostname → a DNS SAN,
 * URI → a URI SAN, e.g. a SPIFFE ID); the value is never guessed from its shape.
 */
export function subjectAltNames(names: BackendTLSPolicy['spec']['validation']['subjectAltNames']): SubjectAltNameIR[] {
  const out: SubjectAltNameIR[] = [];
  for (const n of names ?? []) {
    if (n.type === 'URI' && n.uri) out.push({ type: 'URI', value: n.uri });
    else if (n.type === 'Hostname' && n.hostname) out.push({ type: 'DNS', value: n.hostname });
  }
  return out;
}

/** A policy's own verdict: the ports its targets name, its validation settings and CA references. */
export function evaluateBackendTLSPolicy(inputs: Inputs, p: BackendTLSPolicy): BackendTLSModel {
  const v = p.spec?.validation ?? { hostname: '' };
  const m: BackendTLSModel = {
    policy: p,
    hostname: v.hostname ?? '',
    subjectAltNames: subjectAltNames(v.subjectAltNames),
  };
  const detached = detachedTargets(inputs, p);
  if (detached.length) m.detached = detached;
  if (v.wellKnownCACertificates) {
    if (v.wellKnownCACertificates !== 'System') {
      m.notAccepted = {
        reason: 'Invalid',
        message: `spec.validation.wellKnownCACertificates: ${v.wellKnownCACertificates} is not supported, use System`,
      };
    } else m.wellKnown = 'System';
    return m;
  }
  const bundles: string[] = [];
  const unusable: string[] = [];
  (v.caCertificateRefs ?? []).forEach((ref, i) => {
    const f = `spec.validation.caCertificateRefs[${i}]`;
    const r = caBundleOf(inputs, p.metadata.namespace ?? '', ref);
    if ('problem' in r) {
      m.refsProblem ??= { reason: r.reason, message: `${f}: ${r.problem}` };
      unusable.push(`${f}: ${r.problem}`);
    } else bundles.push(r.pem);
  });
  if (bundles.length) m.caBundle = bundles.join('\n');
  else
    m.notAccepted ??= {
      reason: 'NoValidCACertificate',
      message: `spec.validation: none of the CA certificate references is usable: ${unusable.join('; ')}`,
    };
  return m;
}

/**
 * The PEM a caCertificateRef names: `ca.crt` of a ConfigMap or Secret in the policy's namespace, or
 * the trust bundle of a ClusterTrustBundle (cluster-scoped, group certificates.k8s.io only: GEP-5075).
 * A ClusterTrustBundle the cluster does not serve is an unresolvable kind (InvalidKind). XBackend's
 * spec.tls.validation (the same type) reads them the same way.
 */
export function caBundleOf(
  inputs: Inputs,
  namespace: string,
  ref: { group?: string; kind: string; name: string },
): { pem: string } | { problem: string; reason: Reason } {
  const group = ref.group ?? '';
  if (isClusterTrustBundleRef(ref)) {
    const bundle = caBundleInClusterTrustBundle(inputs, ref.name);
    if ('pem' in bundle) return bundle;
    return { problem: bundle.problem, reason: bundle.unserved ? 'InvalidKind' : 'InvalidCACertificateRef' };
  }
  if (group !== '' || (ref.kind !== 'ConfigMap' && ref.kind !== 'Secret')) {
    return {
      problem:
        `${group ? group + '/' : ''}${ref.kind} is not supported, use ConfigMap, Secret or ` +
        `${CLUSTER_TRUST_BUNDLE_GROUP}/ClusterTrustBundle`,
      reason: 'InvalidKind',
    };
  }
  const bundle = caBundleInObject(inputs, ref.kind, namespace, ref.name);
  return 'problem' in bundle ? { problem: bundle.problem, reason: 'InvalidCACertificateRef' } : bundle;
}
