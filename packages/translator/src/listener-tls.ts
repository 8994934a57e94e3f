// Listener TLS: certificateRefs must name Secrets of type kubernetes.io/tls whose certificate and
// key parse and belong together; a Secret in another namespace needs a ReferenceGrant from the
// declaring kind (Gateway or ListenerSet — grants are not shared between them).
import {
  GATEWAY_GROUP,
  type Gateway,
  type Listener,
  type ListenerSet,
  type Secret,
  type SecretObjectReference,
} from '@turnpike/api';
import { caBundleInObject } from './ca-certificate-refs.js';
import { checkTLSSecret } from './certificates.js';
import type { Problem } from './conditions.js';
import type { CertificateModel } from './model.js';
import type { Inputs } from './incremental/inputs.js';
import type { Reason } from './reasons.js';
import { referenceNotPermitted } from './reference-grants.js';

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
  const r = checkTLSSecret(secret);
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

export function checkListenerTLS(
  inputs: Inputs,
  owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet',
  gateway: Gateway,
  l: Listener,
  field: string,
): ListenerTLSResult {
  const out: ListenerTLSResult = { certificates: [] };
  const refs = l.tls?.certificateRefs ?? [];
  if (l.protocol === 'HTTP' || l.protocol === 'TCP' || l.protocol === 'UDP') return out;
  if (l.protocol === 'HTTPS' && l.tls?.mode === 'Passthrough') {
    out.notAccepted = {
      reason: 'UnsupportedValue',
      message: `${field}.tls.mode: HTTPS listeners terminate TLS; use protocol TLS for Passthrough`,
    };
    return out;
  }
  if (l.protocol === 'TLS') {
    if (!l.tls?.mode) {
      out.notAccepted = {
        reason: 'UnsupportedValue',
        message: `${field}.tls.mode must be set on a TLS listener (Terminate or Passthrough)`,
      };
      return out;
    }
    if (l.tls.mode === 'Passthrough') {
      if (refs.length)
        out.notAccepted = {
          reason: 'UnsupportedValue',
          message: `${field}.tls.certificateRefs must be empty with mode Passthrough: the proxy does not terminate TLS`,
        };
      return out;
    }
  }
  if (refs.length === 0) {
    // Nothing to resolve, so not a reference problem: the listener is malformed, like the other
    // TLS listeners that cannot work as written (mode missing, Passthrough on HTTPS).
    const missing = l.tls ? `${field}.tls.certificateRefs is empty` : `${field}.tls is not set`;
    out.notAccepted = {
      reason: 'UnsupportedValue',
      message:
        `${missing}: ${l.protocol === 'HTTPS' ? 'an' : 'a'} ${l.protocol} listener that terminates TLS ` +
        `needs at least one certificate (tls.certificateRefs)`,
    };
    return out;
  }
  const ns = owner.metadata.namespace ?? '';
  const problems: Problem[] = [];
  refs.forEach((ref, i) => {
    const r = checkSecretRef(inputs, { kind: ownerKind, namespace: ns }, ref, `${field}.tls.certificateRefs[${i}]`, {
      invalid: 'InvalidCertificateRef',
    });
    if (r.problem) problems.push(r.problem);
    if (r.certificate) out.certificates.push(r.certificate);
  });
  if (problems.length) {
    // Every invalid reference is named; the valid ones still serve.
    const served = out.certificates.length ? `; serving the other ${out.certificates.length} certificate(s)` : '';
    out.refsProblem = { reason: problems[0]!.reason, message: `${problems.map((p) => p.message).join('; ')}${served}` };
    if (out.certificates.length) out.someCertificatesInvalid = true;
  }
  const fv = frontendValidationFor(gateway, l);
  if (fv?.caCertificateRefs?.length) {
    const bundles: string[] = [];
    let first: Problem | undefined;
    fv.caCertificateRefs.forEach((ref, i) => {
      const f = `spec.tls.frontend.caCertificateRefs[${i}]`;
      const kind = ref.kind ?? 'ConfigMap';
      if ((ref.group ?? '') !== '' || (kind !== 'ConfigMap' && kind !== 'Secret')) {
        first ??= {
          reason: 'InvalidCACertificateKind',
          message: `${f}: ${kind} is not supported, use ConfigMap or Secret`,
        };
        return;
      }
      const refNs = ref.namespace ?? gateway.metadata.namespace ?? '';
      const notPermitted = referenceNotPermitted(
        inputs,
        { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gateway.metadata.namespace ?? '' },
        { group: '', kind, namespace: refNs, name: ref.name },
        f,
      );
      if (notPermitted) {
        first ??= notPermitted;
        return;
      }
      const bundle = caBundleInObject(inputs, kind, refNs, ref.name);
      if ('problem' in bundle) first ??= { reason: 'InvalidCACertificateRef', message: `${f}: ${bundle.problem}` };
      else bundles.push(bundle.pem);
    });
    if (first) out.refsProblem ??= first;
    if (bundles.length) out.clientCA = bundles.join('\n');
    else
      out.notAccepted = {
        reason: 'NoValidCACertificate',
        message: 'spec.tls.frontend: none of the CA certificate references is usable',
      };
    if (fv.mode === 'AllowInsecureFallback') out.clientCAOptional = true;
    else if (fv.mode !== undefined && fv.mode !== 'AllowValidOnly')
      out.notAccepted ??= {
        reason: 'UnsupportedValue',
        message:
          `spec.tls.frontend validation mode: "${fv.mode}" is not supported (AllowValidOnly, ` +
          `AllowInsecureFallback)`,
      };
  }
  return out;
}

function frontendValidationFor(gateway: Gateway, l: Listener) {
  const fe = gateway.spec?.tls?.frontend;
  if (!fe) return undefined;
  const perPort = fe.perPort?.find((p) => p.port === l.port);
  return perPort?.tls?.validation ?? fe.default?.validation;
}
