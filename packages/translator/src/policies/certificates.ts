// TLS material checks done without I/O: PEM certificates and keys are parsed with node:crypto
// (pure computation), and a key must belong to its certificate.
import { X509Certificate, createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import {
  parseRedactedValue,
  publicPemOf,
  recordedOf,
  secretText,
  valueDigest,
  type RecordedReference,
  type Secret,
} from '@turnpike/api';

export interface ParsedCertificate {
  fingerprint: string;
  /**
   * sha256 of the certificate chain and key as served (the key by its digest under the DigestKey): a
   * rotation changes it, so it reaches the proxies.
   */
  sha256: string;
  dnsNames: string[];
  notAfter: string;
}

export type TLSSecretVerdict = { error: string } | { cert: ParsedCertificate };

/**
 * Verdicts by a digest of what they depend on (certificate and key). Parsing a key and matching it to its
 * certificate takes about a millisecond, and one certificate is often served from many Secrets (a
 * wildcard copied into each namespace; 100 Gateways' Secrets holding two certificates cost 0.1 s of a
 * first translation). A verdict is a pure function of that content, so sharing one changes only the time;
 * the key itself is not kept. Emptied when full.
 */
const verdicts = new Map<string, TLSSecretVerdict>();
const MAX_VERDICTS = 512;

/**
 * Returns an error message, or the parsed certificate when the Secret holds a usable TLS pair.
 * `digestKey`: the DigestKey of the store (api/secret-data.ts), which the values are digested under.
 */
export function checkTLSSecret(secret: Secret, digestKey?: Buffer): TLSSecretVerdict {
  const recorded = recordedOf(secret);
  if (recorded) return recordedTLSVerdict(recorded);
  if (secret.type !== undefined && secret.type !== 'kubernetes.io/tls') {
    return { error: `type is ${secret.type}, want kubernetes.io/tls` };
  }
  const crt = secretText(secret, 'tls.crt');
  const key = secretText(secret, 'tls.key');
  if (!crt) return { error: 'data["tls.crt"] is missing' };
  if (!key) return { error: 'data["tls.key"] is missing' };
  // The DigestKey is part of what a verdict depends on: the digest in it is made under that key.
  const digest = createHash('sha256')
    .update(`${crt.length}:${key.length}:`)
    .update(crt)
    .update(key)
    .update(digestKey ?? '')
    .digest('hex');
  let verdict = verdicts.get(digest);
  if (!verdict) {
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    verdicts.set(digest, (verdict = deepFrozen(checkPair(publicPemOf(crt, digestKey)!, key, digestKey))));
  }
  return verdict;
}

/** Shared between Secrets: frozen, so no caller can change another's. */
function deepFrozen(v: TLSSecretVerdict): TLSSecretVerdict {
  if ('cert' in v) Object.freeze(Object.freeze(v.cert).dnsNames);
  return Object.freeze(v);
}

/**
 * `crt`: the certificates of tls.crt (publicPemOf): read by its public blocks, and stood for by its digest
 * when it holds anything else (as an event log keeps it).
 */
function checkPair(
  crt: { pem: string; digest?: string },
  key: string,
  digestKey: Buffer | undefined,
): TLSSecretVerdict {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(crt.pem);
  } catch {
    return { error: 'data["tls.crt"] is not a PEM certificate' };
  }
  // A Secret from an event log: the key's verdict and digest were kept, the key was not.
  const redacted = parseRedactedValue(key);
  if (redacted) {
    if (redacted.privateKey !== 'matches' && redacted.privateKey !== 'other')
      return { error: 'data["tls.key"] is not a PEM private key' };
    if (redacted.privateKey === 'other')
      return { error: 'data["tls.key"] does not belong to the certificate in data["tls.crt"]' };
    return { cert: parsed(cert, crt, redacted.digest) };
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    return { error: 'data["tls.key"] is not a PEM private key' };
  }
  try {
    if (!cert.checkPrivateKey(privateKey))
      return { error: 'data["tls.key"] does not belong to the certificate in data["tls.crt"]' };
  } catch {
    const a = cert.publicKey.export({ type: 'spki', format: 'der' });
    const b = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
    if (!a.equals(b)) return { error: 'data["tls.key"] does not belong to the certificate in data["tls.crt"]' };
  }
  return { cert: parsed(cert, crt, valueDigest(key, digestKey)) };
}

/** `keyDigest`: the digest of the key (what an event log keeps of it), so a replay hashes the same. */
function parsed(cert: X509Certificate, crt: { pem: string; digest?: string }, keyDigest: string): ParsedCertificate {
  const served = crt.digest === undefined ? crt.pem : `sha256:${crt.digest}`;
  const sha256 = createHash('sha256').update(served).update('\0').update(keyDigest).digest('hex');
  return { fingerprint: cert.fingerprint256, sha256, dnsNames: certificateDnsNames(cert), notAfter: cert.validTo };
}

/** What a live tool says of a use of a Secret or ConfigMap that the controller's record does not cover. */
export const NOT_TOLD = 'the controller judges it (its status says how)';

/**
 * A live tool's stand-in (api/secret-data.ts): the controller's verdict as its record has it. The
 * sha256 stands for the served content (the record has no digest of the key): the same certificate
 * gives the same one, which is all a tool's two translations compare.
 */
function recordedTLSVerdict(r: RecordedReference): TLSSecretVerdict {
  const c = r.certificate;
  if (!c) return { error: `not readable here, and not in the controller's record as a certificate: ${NOT_TOLD}` };
  if (c.problem !== undefined) return { error: c.problem };
  const fingerprint = c.fingerprint ?? '';
  return {
    cert: {
      fingerprint,
      sha256: createHash('sha256').update(`recorded certificate ${fingerprint}`).digest('hex'),
      dnsNames: c.dnsNames ?? [],
      notAfter: c.notAfter ?? '',
    },
  };
}

/** The DNS names a certificate serves: its DNS SANs, sorted, else its subject's CN. */
export function certificateDnsNames(cert: X509Certificate): string[] {
  const san = cert.subjectAltName ?? '';
  const names = san
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
  if (names.length) return names.sort();
  const cn = /CN=([^\n,]+)/.exec(cert.subject)?.[1];
  return cn ? [cn] : [];
}

/** A CA bundle is usable when it holds at least one PEM certificate that parses. */
export function checkCABundle(pem: string | undefined, field = '"ca.crt"'): string | undefined {
  // A ConfigMap or Secret may lack the key; a ClusterTrustBundle always has the field, maybe empty.
  if (!pem) return field === '"ca.crt"' ? 'no "ca.crt" entry' : `${field} is empty`;
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) return `${field} holds no PEM certificate`;
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch {
      return `${field} holds a certificate that does not parse`;
    }
  }
  return undefined;
}
