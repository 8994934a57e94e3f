// The CA bundle a caCertificateRef names: `ca.crt` of a ConfigMap or Secret, or the trust bundle of a
// ClusterTrustBundle (GEP-5075). Gateway frontend validation and BackendTLSPolicy share these rules;
// each says in its own terms what is not a supported kind and what needs a ReferenceGrant.
import {
  CLUSTER_TRUST_BUNDLE_API,
  CLUSTER_TRUST_BUNDLE_GROUP,
  publicPemOf,
  recordedOf,
  secretText,
  type ClusterTrustBundle,
  type ConfigMap,
  type Secret,
  type ServedAPI,
} from '@turnpike/api';
import { checkCABundle, NOT_TOLD } from './certificates.js';
import type { Inputs } from '../incremental/inputs.js';

export const CA_BUNDLE_KEY = 'ca.crt';

/** The PEM bundle, or why the object does not hold a usable one (names the object). */
export function caBundleInObject(
  inputs: Inputs,
  kind: 'ConfigMap' | 'Secret',
  namespace: string,
  name: string,
): { pem: string } | { problem: string } {
  const object = inputs.get<ConfigMap | Secret>(kind, namespace, name);
  if (!object) return { problem: `${kind} ${namespace}/${name} not found` };
  const recorded = recordedOf(object);
  if (recorded) {
    // A live tool's stand-in: the controller's verdict, and a line that stands for the bundle in the IR.
    const b = recorded.caBundle;
    const what = `${kind} ${namespace}/${name}`;
    if (!b)
      return { problem: `${what}: not readable here, and not in the controller's record as a CA bundle: ${NOT_TOLD}` };
    if (b.problem !== undefined) return { problem: `${what}: ${b.problem}` };
    const facts = `${b.certificates} certificate(s), sha256 ${b.sha256}`;
    return { pem: `# ${what} "ca.crt" as the controller recorded it: ${facts}\n` };
  }
  // A Secret's bundle by its certificates alone when it holds anything else (as an event log keeps it).
  const value = kind === 'ConfigMap' ? undefined : secretText(object as Secret, CA_BUNDLE_KEY);
  const pem = kind === 'ConfigMap' ? (object as ConfigMap).data?.[CA_BUNDLE_KEY] : publicPemOf(value)?.pem;
  const problem = value !== undefined && !pem ? '"ca.crt" holds no PEM certificate' : checkCABundle(pem);
  // Name the object the key was looked up in: "no "ca.crt" entry" alone leaves the reader guessing which.
  return problem ? { problem: `${kind} ${namespace}/${name}: ${problem}` } : { pem: pem! };
}

/** A reference to a ClusterTrustBundle: its group must be certificates.k8s.io (the core group is another kind). */
export function isClusterTrustBundleRef(ref: { group?: string; kind?: string }): boolean {
  return ref.kind === 'ClusterTrustBundle' && ref.group === CLUSTER_TRUST_BUNDLE_GROUP;
}

/**
 * Whether the cluster serves the ClusterTrustBundle API, as the kube source last said (ServedAPI).
 * Without that fact (files, `translate -f`) it does: there is no cluster to ask. Read through
 * `inputs`, so what depends on it is derived again when it changes.
 */
export function clusterTrustBundleServed(inputs: Inputs): boolean {
  return inputs.get<ServedAPI>('ServedAPI', undefined, CLUSTER_TRUST_BUNDLE_API)?.status?.served !== false;
}

/**
 * The trust bundle of a ClusterTrustBundle (cluster-scoped: no namespace, no ReferenceGrant). `unserved`:
 * the cluster does not serve the API, so the kind cannot be resolved at all (GEP-5075: InvalidKind,
 * told apart from a bundle that is missing or unusable, InvalidCACertificateRef).
 */
export function caBundleInClusterTrustBundle(
  inputs: Inputs,
  name: string,
): { pem: string } | { problem: string; unserved?: true } {
  if (!clusterTrustBundleServed(inputs))
    return {
      problem: `ClusterTrustBundle (${CLUSTER_TRUST_BUNDLE_GROUP}) is not served by this cluster's API server`,
      unserved: true,
    };
  const ctb = inputs.get<ClusterTrustBundle>('ClusterTrustBundle', undefined, name);
  if (!ctb) return { problem: `ClusterTrustBundle ${name} not found` };
  const problem = checkCABundle(ctb.spec?.trustBundle, 'spec.trustBundle');
  return problem ? { problem: `ClusterTrustBundle ${name}: ${problem}` } : { pem: ctb.spec.trustBundle };
}
