// Listener TLS: certificateRefs must name Secrets of type kubernetes.io/tls whose certificate and
// key parse and belong together; a Secret in another namespace needs a ReferenceGrant from the
// declaring kind (Gateway or ListenerSet — grants are not shared between them).
import {
  CLUSTER_TRUST_BUNDLE_GROUP,
  DIGEST_KEY_KIND,
  DIGEST_KEY_NAME,
  digestKeyOf,
  GATEWAY_GROUP,
  type Gateway,
  type Listener,
  type ListenerSet,
  type Secret,
  type SecretObjectReference,
} from '@turnpike/api';
import {
  caBundleInClusterTrustBundle,
  caBundleInObject,
  isClusterTrustBundleRef,
} from '../policies/ca-certificate-refs.js';
import { checkTLSSecret } from '../policies/certificates.js';
import type { Problem } from '../status/conditions.js';
import type { CertificateModel } from '../model.js';
import type { Inputs } from '../incremental/inputs.js';
import type { Reason } from '../status/reasons.js';
import { referenceNotPermitted } from '../policies/reference-grants.js';

export interface SecretCheck {
  problem?: Problem;
  certificate?: CertificateModel;
}

/** Checks one reference to a TLS Secret; `field` names it in messages. */
export function checkSecretRef(
  inputs: Inputs,
  from: { kind: string; namespace: string },
  ref: SecretObjectReference,
  field: string,
  reasons: { invalid: Reason },
): SecretCheck {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Secret';
  if (group !== '' || kind !== 'Secret') {
    return {
      problem: {
        reason: reasons.invalid,
        message: `${field}: ${group ? group + '/' : ''}${kind} is not supported, only core Secret`,
      },
    };
  }
  const ns = ref.namespace ?? from.namespace;
  const notPermitted = referenceNotPermitted(
    inputs,
    { group: GATEWAY_GROUP, kind: from.kind, namespace: from.namespace },
    { group: '', kind: 'Secret', namespace: ns, name: ref.name },
    field,
  );
  if (notPermitted) return { problem: notPermitted };
  const secret = inputs.get<Secret>('Secret', ns, ref.name);
  if (!secret) return { problem: { reason: reasons.invalid, message: `${field}: Secret ${ns}/${ref.name} not found` } };
  // Read through `inputs`: a piece that checks a certificate depends on the key its digest is made under.
  const r = checkTLSSecret(secret, digestKeyOf(inputs.get(DIGEST_KEY_KIND, undefined, DIGEST_KEY_NAME)));
  if ('error' in r)
    return { problem: { reason: reasons.invalid, message: `${field}: Secret ${ns}/${ref.name}: ${r.error}` } };
  return {
    certificate: {
      secret: `${ns}/${ref.name}`,
      fingerprint: r.cert.fingerprint,
      sha256: r.cert.sha256,
      dnsNames: r.cert.dnsNames,
    },
  };
}

export interface ListenerTLSResult {
  notAccepted?: Problem;
  refsProblem?: Problem;
  /**
   * Some certificateRefs are invalid but others are usable: those are served (multiple refs are
   * implementation-specific).
   */
  someCertificatesInvalid?: boolean;
  certificates: CertificateModel[];
  clientCA?: string;
  clientCAOptional?: boolean;
}

/** TLS settings that cannot work as written: Passthrough on HTTPS, a TLS listener without mode. */
function tlsModeProblem(listener: Listener, field: string): Problem | undefined {
  if (listener.protocol === 'HTTPS' && listener.tls?.mode === 'Passthrough')
    return {
      reason: 'UnsupportedValue',
      message: `${field}.tls.mode: HTTPS listeners terminate TLS; use protocol TLS for Passthrough`,
    };
  if (listener.protocol === 'TLS' && !listener.tls?.mode)
    return {
      reason: 'UnsupportedValue',
      message: `${field}.tls.mode must be set on a TLS listener (Terminate or Passthrough)`,
    };
  return undefined;
}

/** The serving certificates: every invalid reference is named, the valid ones still serve. */
function checkCertificates(
  inputs: Inputs,
  owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet',
  listener: Listener,
  field: string,
  out: ListenerTLSResult,
): void {
  const refs = listener.tls?.certificateRefs ?? [];
  if (refs.length === 0) {
    // Nothing to resolve, so not a reference problem: the listener is malformed, like the other
    // TLS listeners that cannot work as written (mode missing, Passthrough on HTTPS).
    const missing = listener.tls ? `${field}.tls.certificateRefs is empty` : `${field}.tls is not set`;
    out.notAccepted = {
      reason: 'UnsupportedValue',
      message:
        `${missing}: ${listener.protocol === 'HTTPS' ? 'an' : 'a'} ${listener.protocol} listener that terminates ` +
        `TLS needs at least one certificate (tls.certificateRefs)`,
    };
    return;
  }
  const from = { kind: ownerKind, namespace: owner.metadata.namespace ?? '' };
  const problems: Problem[] = [];
  refs.forEach((ref, index) => {
    const checked = checkSecretRef(inputs, from, ref, `${field}.tls.certificateRefs[${index}]`, {
      invalid: 'InvalidCertificateRef',
    });
    if (checked.problem) problems.push(checked.problem);
    if (checked.certificate) out.certificates.push(checked.certificate);
  });
  if (!problems.length) return;
  const served = out.certificates.length ? `; serving the other ${out.certificates.length} certificate(s)` : '';
  out.refsProblem = {
    reason: problems[0]!.reason,
    message: `${problems.map((problem) => problem.message).join('; ')}${served}`,
  };
  if (out.certificates.length) out.someCertificatesInvalid = true;
}

/** Client certificate validation (spec.tls.frontend): the CA bundles its refs name, and the mode. */
function checkFrontendValidation(inputs: Inputs, gateway: Gateway, listener: Listener, out: ListenerTLSResult): void {
  const validation = frontendValidationFor(gateway, listener);
  if (!validation?.caCertificateRefs?.length) return;
  const gatewayNamespace = gateway.metadata.namespace ?? '';
  const bundles: string[] = [];
  let first: Problem | undefined;
  const unusable: string[] = [];
  validation.caCertificateRefs.forEach((ref, index) => {
    const field = `spec.tls.frontend.caCertificateRefs[${index}]`;
    const reject = (problem: Problem) => {
      first ??= problem;
      unusable.push(problem.message);
    };
    // Cluster-scoped: no namespace, no ReferenceGrant (GEP-5075).
    if (isClusterTrustBundleRef(ref)) {
      if (ref.namespace !== undefined)
        return reject({
          reason: 'InvalidCACertificateRef',
          message: `${field}: ClusterTrustBundle ${ref.name} is cluster-scoped: namespace must not be set`,
        });
      const bundle = caBundleInClusterTrustBundle(inputs, ref.name);
      if ('pem' in bundle) return void bundles.push(bundle.pem);
      // Not served: the kind cannot be resolved, which a listener calls InvalidCACertificateKind.
      return reject({
        reason: bundle.unserved ? 'InvalidCACertificateKind' : 'InvalidCACertificateRef',
        message: `${field}: ${bundle.problem}`,
      });
    }
    const kind = ref.kind ?? 'ConfigMap';
    if ((ref.group ?? '') !== '' || (kind !== 'ConfigMap' && kind !== 'Secret'))
      return reject({
        reason: 'InvalidCACertificateKind',
        message:
          `${field}: ${ref.group ? ref.group + '/' : ''}${kind} is not supported, use ConfigMap, Secret or ` +
          `${CLUSTER_TRUST_BUNDLE_GROUP}/ClusterTrustBundle`,
      });
    const namespace = ref.namespace ?? gatewayNamespace;
    const notPermitted = referenceNotPermitted(
      inputs,
      { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gatewayNamespace },
      { group: '', kind, namespace, name: ref.name },
      field,
    );
    if (notPermitted) return reject(notPermitted);
    const bundle = caBundleInObject(inputs, kind, namespace, ref.name);
    if ('problem' in bundle)
      return reject({ reason: 'InvalidCACertificateRef', message: `${field}: ${bundle.problem}` });
    bundles.push(bundle.pem);
  });
  if (first) out.refsProblem ??= first;
  if (bundles.length) out.clientCA = bundles.join('\n');
  else
    out.notAccepted = {
      reason: 'NoValidCACertificate',
      message: `spec.tls.frontend: none of the CA certificate references is usable: ${unusable.join('; ')}`,
    };
  if (validation.mode === 'AllowInsecureFallback') out.clientCAOptional = true;
  else if (validation.mode !== undefined && validation.mode !== 'AllowValidOnly')
    out.notAccepted ??= {
      reason: 'UnsupportedValue',
      message:
        `spec.tls.frontend validation mode: "${validation.mode}" is not supported (AllowValidOnly, ` +
        `AllowInsecureFallback)`,
    };
}

export function checkListenerTLS(
  inputs: Inputs,
  owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet',
  gateway: Gateway,
  listener: Listener,
  field: string,
): ListenerTLSResult {
  const out: ListenerTLSResult = { certificates: [] };
  if (listener.protocol === 'HTTP' || listener.protocol === 'TCP' || listener.protocol === 'UDP') return out;
  const modeProblem = tlsModeProblem(listener, field);
  if (modeProblem) {
    out.notAccepted = modeProblem;
    return out;
  }
  // Passthrough: the proxy holds no certificate for it. "The certificateRefs field is ignored in
  // this mode": refs listed anyway are neither read nor judged.
  if (listener.protocol === 'TLS' && listener.tls?.mode === 'Passthrough') return out;
  checkCertificates(inputs, owner, ownerKind, listener, field, out);
  if (out.notAccepted) return out;
  checkFrontendValidation(inputs, gateway, listener, out);
  return out;
}

function frontendValidationFor(gateway: Gateway, l: Listener) {
  const fe = gateway.spec?.tls?.frontend;
  if (!fe) return undefined;
  const perPort = fe.perPort?.find((p) => p.port === l.port);
  return perPort?.tls?.validation ?? fe.default?.validation;
}
