// Policies of kinds Turnpike does not read (another implementation's SecurityPolicy, an x-k8s.io policy
// it does not implement, any GEP-713 policy) that target an object Turnpike serves: the object is served
// without them, so the author of the policy must hear of it. For `analyze` and `explain`.
import { CLUSTER_SCOPED, KIND_GROUP, ROUTE_KINDS, isWatchedKind, objectKey, type KubeObject } from '@turnpike/api';
import type { TranslateResult, Translator } from '../translate.js';

export interface IgnoredPolicy {
  /** The policy, `Kind/namespace/name`. */
  object: string;
  /** Its target reference, `spec.targetRefs[i]` or `spec.targetRef`. */
  where: string;
  /** What it targets, `Kind/namespace/name` (a key of the statuses for the kinds whose status we write). */
  target: string;
  message: string;
}

interface TargetRef {
  group?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  sectionName?: string;
}

/** The kinds a policy may target that Turnpike serves: what it writes a status for, and backend Services. */
const SERVED_KINDS = new Set<string>(['GatewayClass', 'Gateway', 'ListenerSet', ...ROUTE_KINDS, 'Service']);

/** The group of a policy's apiVersion (`gateway.envoyproxy.io/v1alpha1` → `gateway.envoyproxy.io`). */
const groupOf = (o: KubeObject) => (o.apiVersion.includes('/') ? o.apiVersion.split('/')[0]! : '');

export function ignoredPolicies(
  policies: readonly KubeObject[],
  translator: Translator,
  result: TranslateResult,
): IgnoredPolicy[] {
  const services = translator.backendServices();
  const out: IgnoredPolicy[] = [];
  for (const policy of policies) {
    const spec = policy.spec as { targetRefs?: TargetRef[]; targetRef?: TargetRef } | undefined;
    const refs: [string, TargetRef][] = Array.isArray(spec?.targetRefs)
      ? spec.targetRefs.map((t, i) => [`spec.targetRefs[${i}]`, t])
      : spec?.targetRef
        ? [['spec.targetRef', spec.targetRef]]
        : [];
    const ns = policy.metadata.namespace ?? '';
    for (const [where, t] of refs) {
      const kind = t?.kind ?? '';
      if (!SERVED_KINDS.has(kind) || !isWatchedKind(kind) || !t.name) continue;
      if ((t.group ?? '') !== KIND_GROUP[kind] && !(kind === 'Service' && t.group === 'core')) continue;
      const targetNs = CLUSTER_SCOPED.has(kind) ? undefined : (t.namespace ?? ns);
      const served =
        kind === 'Service'
          ? services.has(`${targetNs}/${t.name}`)
          : result.statuses.get(objectKey(kind, targetNs, t.name)) !== undefined;
      if (!served) continue;
      const target = objectKey(kind, targetNs, t.name);
      const section = t.sectionName ? ` (section ${t.sectionName})` : '';
      const what = kind === 'Service' ? 'a backend of routes turnpike serves' : 'which turnpike serves';
      out.push({
        object: objectKey(policy.kind, policy.metadata.namespace, policy.metadata.name),
        where,
        target,
        message:
          `targets ${kind} ${targetNs ? `${targetNs}/` : ''}${t.name}${section}, ${what}; turnpike does not read ` +
          `${groupOf(policy) ? `${groupOf(policy)}/` : ''}${policy.kind}, so it serves that ${kind} without this ` +
          'policy (whatever it asks: authentication, limits, rewrites)',
      });
    }
  }
  return out;
}
