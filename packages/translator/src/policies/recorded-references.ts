// The Secrets and ConfigMaps that Turnpike's objects reference and the translator reads (listener and
// backend client certificates, CA bundles, plugin pull Secrets), and what the controller records of
// each for the live tools, which read no Secret (api/secret-data.ts, ReferenceRecord). Only references
// the translator would follow are listed: from Gateways of our classes and their ListenerSets, from
// BackendTLSPolicies and PluginInstallations, and across namespaces only where a ReferenceGrant allows
// it, so the record says nothing of a Secret nobody may use. Pure: node:crypto parses, no I/O.
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import {
  CONTROLLER_NAME,
  GATEWAY_GROUP,
  TURNPIKE_GROUP,
  secretText,
  type BackendTLSPolicy,
  type ConfigMap,
  type Gateway,
  type GatewayClass,
  type KubeObject,
  type Listener,
  type ListenerSet,
  type PluginInstallation,
  type RecordedCABundle,
  type RecordedCertificate,
  type RecordedReference,
  type Secret,
  type SecretObjectReference,
} from '@turnpike/api';
import { getObject, listObjects, type Snapshot } from '../snapshot.js';
import { listenerSetParent } from '../gateways/gateways.js';
import { ReferenceGrantIndex } from './reference-grants.js';
import { CA_BUNDLE_KEY, isClusterTrustBundleRef } from './ca-certificate-refs.js';
import { certificateDnsNames, checkCABundle, checkTLSSecret } from './certificates.js';
import { DOCKER_CONFIG_KEY } from '../plugins/plugins.js';

export type ReferenceUse = 'certificate' | 'caBundle' | 'pullSecret';

export interface SecretReference {
  kind: 'Secret' | 'ConfigMap';
  namespace: string;
  name: string;
  use: ReferenceUse;
  /** The referring object (`Kind/namespace/name`) and the field that names the target. */
  from: string;
  field: string;
}

/** A listener whose certificateRefs the translator reads: it terminates TLS as written. */
function terminatesTLS(l: Listener): boolean {
  if (l.protocol === 'HTTPS') return l.tls?.mode !== 'Passthrough';
  return l.protocol === 'TLS' && l.tls?.mode === 'Terminate';
}

/** Every reference the translator would follow to a Secret or ConfigMap, in a stable order. */
export function secretReferences(snapshot: Snapshot, controllerName: string = CONTROLLER_NAME): SecretReference[] {
  const grants = new ReferenceGrantIndex(snapshot);
  const out: SecretReference[] = [];
  const add = (
    from: KubeObject,
    fromGroup: string,
    target: { kind: 'Secret' | 'ConfigMap'; namespace: string; name: string },
    use: ReferenceUse,
    field: string,
  ) => {
    const namespace = from.metadata.namespace ?? '';
    const referrer = { group: fromGroup, kind: from.kind, namespace };
    if (!grants.allows(referrer, { group: '', ...target })) return;
    out.push({ ...target, use, from: `${from.kind}/${namespace}/${from.metadata.name}`, field });
  };
  const secretRef = (from: KubeObject, ref: SecretObjectReference, use: ReferenceUse, field: string) => {
    if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') return;
    const namespace = ref.namespace ?? from.metadata.namespace ?? '';
    add(from, GATEWAY_GROUP, { kind: 'Secret', namespace, name: ref.name }, use, field);
  };
  const caRef = (from: KubeObject, ref: SecretObjectReference, field: string) => {
    if (isClusterTrustBundleRef(ref)) return;
    const kind = ref.kind ?? 'ConfigMap';
    if ((ref.group ?? '') !== '' || (kind !== 'ConfigMap' && kind !== 'Secret')) return;
    const namespace = ref.namespace ?? from.metadata.namespace ?? '';
    add(from, GATEWAY_GROUP, { kind, namespace, name: ref.name }, 'caBundle', field);
  };
  const listeners = (from: KubeObject, list: readonly Listener[] | undefined) =>
    (list ?? []).forEach((l, i) => {
      if (!terminatesTLS(l)) return;
      (l.tls?.certificateRefs ?? []).forEach((ref, j) =>
        secretRef(from, ref, 'certificate', `spec.listeners[${i}].tls.certificateRefs[${j}]`),
      );
    });

  const ours = new Set(
    listObjects<GatewayClass>(snapshot, 'GatewayClass')
      .filter((c) => c.spec?.controllerName === controllerName)
      .map((c) => c.metadata.name),
  );
  for (const gw of listObjects<Gateway>(snapshot, 'Gateway')) {
    if (!ours.has(gw.spec?.gatewayClassName)) continue;
    listeners(gw, gw.spec.listeners);
    const ccr = gw.spec.tls?.backend?.clientCertificateRef;
    if (ccr) secretRef(gw, ccr, 'certificate', 'spec.tls.backend.clientCertificateRef');
    const frontend = gw.spec.tls?.frontend;
    (frontend?.default?.validation?.caCertificateRefs ?? []).forEach((ref, i) =>
      caRef(gw, ref, `spec.tls.frontend.default.validation.caCertificateRefs[${i}]`),
    );
    (frontend?.perPort ?? []).forEach((p, i) =>
      (p.tls?.validation?.caCertificateRefs ?? []).forEach((ref, j) =>
        caRef(gw, ref, `spec.tls.frontend.perPort[${i}].tls.validation.caCertificateRefs[${j}]`),
      ),
    );
  }
  for (const ls of listObjects<ListenerSet>(snapshot, 'ListenerSet')) {
    const parent = listenerSetParent(ls)?.split('/');
    const gw = parent && getObject<Gateway>(snapshot, 'Gateway', parent[0], parent[1]!);
    if (gw && ours.has(gw.spec?.gatewayClassName)) listeners(ls, ls.spec?.listeners);
  }
  for (const p of listObjects<BackendTLSPolicy>(snapshot, 'BackendTLSPolicy')) {
    const v = p.spec?.validation;
    if (!v || v.wellKnownCACertificates) continue;
    // Always in the policy's own namespace.
    (v.caCertificateRefs ?? []).forEach((ref, i) =>
      caRef(p, { ...ref, namespace: p.metadata.namespace ?? '' }, `spec.validation.caCertificateRefs[${i}]`),
    );
  }
  for (const pi of listObjects<PluginInstallation>(snapshot, 'PluginInstallation')) {
    const ref = pi.spec?.pullSecretRef;
    if (!ref) continue;
    const namespace = ref.namespace || pi.metadata.namespace || '';
    add(pi, TURNPIKE_GROUP, { kind: 'Secret', namespace, name: ref.name }, 'pullSecret', 'spec.pullSecretRef');
  }
  return out;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function certificateFacts(secret: Secret): RecordedCertificate {
  const verdict = checkTLSSecret(secret);
  const facts: RecordedCertificate = 'error' in verdict ? { problem: verdict.error } : {};
  const crt = secretText(secret, 'tls.crt');
  let cert: X509Certificate | undefined;
  try {
    cert = crt === undefined ? undefined : new X509Certificate(crt);
  } catch {
    cert = undefined;
  }
  if (!cert) return facts;
  facts.fingerprint = cert.fingerprint256;
  facts.dnsNames = certificateDnsNames(cert);
  facts.notBefore = new Date(cert.validFrom).toISOString();
  facts.notAfter = new Date(cert.validTo).toISOString();
  facts.keyMatches = 'cert' in verdict || keyBelongs(cert, secretText(secret, 'tls.key'));
  return facts;
}

function keyBelongs(cert: X509Certificate, key: string | undefined): boolean {
  if (!key) return false;
  try {
    return cert.checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}

function caBundleFacts(pem: string | undefined): RecordedCABundle {
  const problem = checkCABundle(pem);
  if (problem) return { problem };
  // Only the certificates: text around them is not public and is left out, even of a digest.
  const blocks = pem!.match(PEM_CERTIFICATE) ?? [];
  return { certificates: blocks.length, sha256: createHash('sha256').update(blocks.join('\n')).digest('hex') };
}

/** What the record says of one object for the uses given (`object` undefined: there is none). */
export function recordReference(
  target: { kind: 'Secret' | 'ConfigMap'; namespace: string; name: string },
  object: Secret | ConfigMap | undefined,
  uses: Iterable<ReferenceUse>,
): RecordedReference {
  const r: RecordedReference = { kind: target.kind, namespace: target.namespace, name: target.name, found: !!object };
  if (!object) return r;
  const secret = target.kind === 'Secret' ? (object as Secret) : undefined;
  if (secret?.type !== undefined) r.type = secret.type;
  for (const use of [...new Set(uses)].sort()) {
    if (use === 'certificate' && secret) r.certificate = certificateFacts(secret);
    else if (use === 'pullSecret' && secret) r.pullSecret = { dockerConfig: !!secretText(secret, DOCKER_CONFIG_KEY) };
    else if (use === 'caBundle')
      r.caBundle = caBundleFacts(
        secret ? secretText(secret, CA_BUNDLE_KEY) : (object as ConfigMap).data?.[CA_BUNDLE_KEY],
      );
  }
  return r;
}

/** `Kind/namespace/name` of a reference's target. */
export const referenceTarget = (r: { kind: string; namespace: string; name: string }): string =>
  `${r.kind}/${r.namespace}/${r.name}`;

/** The uses of each referenced object, by `Kind/namespace/name`. */
export function usesByTarget(references: readonly SecretReference[]): Map<string, Set<ReferenceUse>> {
  const out = new Map<string, Set<ReferenceUse>>();
  for (const r of references) {
    const key = referenceTarget(r);
    const uses = out.get(key) ?? new Set();
    uses.add(r.use);
    out.set(key, uses);
  }
  return out;
}

/** Entries kept per object while it is unchanged (the store keeps an unchanged object identical). */
const recorded = new WeakMap<KubeObject, { uses: string; entry: RecordedReference }>();

/** The record's entries for a snapshot: every referenced object, sorted by kind, namespace and name. */
export function referenceRecordEntries(
  snapshot: Snapshot,
  controllerName: string = CONTROLLER_NAME,
): RecordedReference[] {
  const out: RecordedReference[] = [];
  for (const [key, uses] of usesByTarget(secretReferences(snapshot, controllerName))) {
    const [kind, namespace, name] = key.split('/') as ['Secret' | 'ConfigMap', string, string];
    const object = getObject<Secret | ConfigMap>(snapshot, kind, namespace, name);
    const usesKey = [...uses].sort().join(',');
    const kept = object && recorded.get(object);
    if (kept && kept.uses === usesKey) {
      out.push(kept.entry);
      continue;
    }
    const entry = recordReference({ kind, namespace, name }, object, uses);
    if (object) recorded.set(object, { uses: usesKey, entry });
    out.push(entry);
  }
  return out.sort((a, b) => compareText(referenceTarget(a), referenceTarget(b)));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
