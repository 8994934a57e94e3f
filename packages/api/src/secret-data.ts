// Reading and writing a Secret's values. The API server stores `data` base64-encoded and folds
// `stringData` into it on write, so stringData is only ever seen in file input; both are read, data
// first.
import { createHash, createHmac, createPublicKey, X509Certificate } from 'node:crypto';
import type { Secret } from './core.js';
import type { KubeObject } from './meta.js';

/** The value of `key` as UTF-8 text, or undefined when the Secret has no such key. */
export function secretText(secret: Pick<Secret, 'data' | 'stringData'>, key: string): string | undefined {
  const encoded = secret.data?.[key];
  if (encoded !== undefined) return Buffer.from(encoded, 'base64').toString('utf8');
  return secret.stringData?.[key];
}

/** The value of `key` as bytes (keys and binary plugin content). */
export function secretBytes(secret: Pick<Secret, 'data' | 'stringData'>, key: string): Buffer | undefined {
  const encoded = secret.data?.[key];
  if (encoded !== undefined) return Buffer.from(encoded, 'base64');
  const text = secret.stringData?.[key];
  return text === undefined ? undefined : Buffer.from(text, 'utf8');
}

/** A Secret's `data` for a write: each value base64-encoded. */
export function encodeSecretData(values: Record<string, string | Buffer>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
}

/**
 * The key a controller process digests Secret values with (HMAC-SHA256), so that what an event log keeps
 * of a value (redactedValue) is no plain sha256: a leaked log gives no dictionary or precomputed-table
 * lookup of a weak value, and the same value digests differently in two processes' logs. The controller
 * makes one at random when it starts and feeds it into its stream as this internal object (the first
 * event), so the log holds it and every tool that rebuilds a store from the log (replay, verify, bisect,
 * the console) hands the translator the key the values were digested with. Without one (logs written
 * before, `translate -f`) values are digested with plain sha256, as they were.
 */
export const DIGEST_KEY_KIND = 'DigestKey';
export const DIGEST_KEY_NAME = 'secret-values';

export interface DigestKey extends KubeObject {
  /** 32 random bytes, base64. */
  spec: { hmacSha256Key: string };
}

export function digestKeyObject(key: Buffer): DigestKey {
  return {
    apiVersion: 'turnpike.dev/internal',
    kind: DIGEST_KEY_KIND,
    metadata: { name: DIGEST_KEY_NAME },
    spec: { hmacSha256Key: key.toString('base64') },
  };
}

/** The key a DigestKey object holds; undefined for none (or one that is not a key). */
export function digestKeyOf(o: KubeObject | undefined): Buffer | undefined {
  const text = (o as DigestKey | undefined)?.spec?.hmacSha256Key;
  if (typeof text !== 'string') return undefined;
  const key = Buffer.from(text, 'base64');
  return key.length ? key : undefined;
}

/** What stands for a value in digests and in an event log: HMAC-SHA256 under `key`, else its sha256 (hex). */
export function valueDigest(value: string | Buffer, key: Buffer | undefined): string {
  return (key ? createHmac('sha256', key) : createHash('sha256')).update(value).digest('hex');
}

/**
 * What an event log keeps of a Secret value that is not public (event-log.md): its digest (valueDigest),
 * and for a PEM private key whether it belongs to the certificate beside it (`tls.crt`). The
 * translator reads these instead of the value (certificates.ts), so a replay reproduces the same
 * outputs without the private material.
 */
export const REDACTED_PREFIX = 'turnpike-redacted:';

export interface RedactedValue {
  /** valueDigest of the value: HMAC-SHA256 under the log's DigestKey (`keyed`), else sha256 (logs before keys). */
  digest: string;
  keyed?: boolean;
  /** Set for a value kept under `tls.key`: whether it is a private key of `tls.crt`. */
  privateKey?: 'matches' | 'other' | 'invalid';
  /** The certificates and public keys of a value that holds other material too (publicPem), as PEM. */
  publicBlocks?: string;
}

export function redactedValue(r: RedactedValue): string {
  return (
    `${REDACTED_PREFIX}${r.keyed ? 'hmac-sha256' : 'sha256'}=${r.digest}` +
    (r.privateKey ? `;private-key=${r.privateKey}` : '') +
    (r.publicBlocks ? `;public=${Buffer.from(r.publicBlocks).toString('base64')}` : '')
  );
}

export function parseRedactedValue(text: string | undefined): RedactedValue | undefined {
  if (!text?.startsWith(REDACTED_PREFIX)) return undefined;
  const m =
    /^(hmac-sha256|sha256)=([0-9a-f]{64})(?:;private-key=(matches|other|invalid))?(?:;public=([A-Za-z0-9+/=]+))?$/.exec(
      text.slice(REDACTED_PREFIX.length),
    );
  if (!m) return undefined;
  return {
    digest: m[2]!,
    ...(m[1] === 'hmac-sha256' ? { keyed: true } : {}),
    ...(m[3] ? { privateKey: m[3] as RedactedValue['privateKey'] } : {}),
    ...(m[4] ? { publicBlocks: Buffer.from(m[4], 'base64').toString('utf8') } : {}),
  };
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
const PUBLIC_LABELS = new Set(['CERTIFICATE', 'TRUSTED CERTIFICATE', 'PUBLIC KEY']);

function parsesAs(label: string, block: string): boolean {
  try {
    if (label === 'PUBLIC KEY') createPublicKey(block);
    else new X509Certificate(block.replaceAll('TRUSTED CERTIFICATE', 'CERTIFICATE'));
    return true;
  } catch {
    return false;
  }
}

/**
 * What of a Secret value is public: its PEM certificates and public keys, each of which must parse as
 * what its label says (a block of another base64 is not one). `whole`: the value is made of them and
 * whitespace alone. Any other text, comments included, could hold a secret (a token, a password, a key
 * without its PEM lines), so a value with any is not public: an event log keeps only its public blocks
 * and its digest (valueDigest). `publicBlocks`: those blocks in order, each on its own lines.
 */
export function publicPem(text: string): { whole: boolean; publicBlocks: string } {
  const kept: string[] = [];
  let whole = true;
  let last = 0;
  for (const m of text.matchAll(PEM_BLOCK)) {
    if (text.slice(last, m.index).trim()) whole = false;
    last = m.index + m[0].length;
    if (PUBLIC_LABELS.has(m[1]!) && /^[\sA-Za-z0-9+/=]*$/.test(m[2]!) && parsesAs(m[1]!, m[0])) kept.push(m[0]);
    else whole = false;
  }
  if (text.slice(last).trim()) whole = false;
  return { whole: whole && kept.length > 0, publicBlocks: kept.length ? `${kept.join('\n')}\n` : '' };
}

/**
 * The PEM the translator reads of a certificate or CA bundle value, and, unless the value is public PEM
 * alone, the digest that stands for it (valueDigest under `key`, the DigestKey): a value with other
 * material in it (a certificate followed by its private key, or by any text) is read by its public blocks
 * only. An event log keeps exactly those two of such a value (secret-redaction.ts), so a replay reads and
 * digests the same.
 */
export function publicPemOf(value: string | undefined, key?: Buffer): { pem: string; digest?: string } | undefined {
  if (value === undefined) return undefined;
  const redacted = parseRedactedValue(value);
  if (redacted) return { pem: redacted.publicBlocks ?? '', digest: redacted.digest };
  const pub = publicPem(value);
  if (pub.whole) return { pem: value };
  return { pem: pub.publicBlocks, digest: valueDigest(value, key) };
}

/**
 * What the controller publishes of the Secrets and ConfigMaps that Turnpike's objects reference
 * (listener and backend client certificates, CA bundles, plugin pull Secrets), for the live tools
 * (`analyze|explain|diff --kubeconfig`), which read no Secret and no ConfigMap: the ClusterRole
 * turnpike-viewer has no verb on Secrets, since RBAC cannot grant a Secret's metadata without its
 * values. It holds the controller's verdicts and what a certificate shows anyone it is presented to,
 * never a value: no key, no hash of a key, no credential. Kept in the ConfigMap
 * `turnpike-references` of the controller's namespace (kube/src/reference-record.ts).
 */
export interface ReferenceRecord {
  /** When the controller last changed it (it is rewritten whenever what it says changes). */
  updated: string;
  references: RecordedReference[];
  /** References left out because the record would pass the size of a ConfigMap (the tools cannot tell them). */
  omitted?: number;
}

/** One referenced object, as the controller last saw it. */
export interface RecordedReference {
  kind: 'Secret' | 'ConfigMap';
  namespace: string;
  name: string;
  /**
   * False: the controller saw no such object. Always set in the record; left out of a tool's stand-in for
   * an object the record does not have (which may or may not exist).
   */
  found?: boolean;
  /** A Secret's type. */
  type?: string;
  /** Used as a serving or client certificate (`tls.crt` and `tls.key`). */
  certificate?: RecordedCertificate;
  /** Used as a CA bundle (`ca.crt`). */
  caBundle?: RecordedCABundle;
  /** Used as a plugin pull Secret: whether it holds a `.dockerconfigjson`. */
  pullSecret?: { dockerConfig: boolean };
}

export interface RecordedCertificate {
  /** Why the controller does not serve it (its words, as the listener's condition has them); absent: usable. */
  problem?: string;
  /** Of the first certificate of `tls.crt`, when it parses: SHA-256 fingerprint, names, validity. */
  fingerprint?: string;
  dnsNames?: string[];
  notBefore?: string;
  notAfter?: string;
  /** Whether `tls.key` is the private key of that certificate. */
  keyMatches?: boolean;
}

export interface RecordedCABundle {
  /** Why it is not usable; absent: usable. */
  problem?: string;
  /** How many certificates it holds, and the sha256 of their PEM blocks (nothing else of the value). */
  certificates?: number;
  sha256?: string;
}

/**
 * The apiVersion of a Secret or ConfigMap that a live tool puts where the real one would be: it
 * carries `recorded` (what the controller's record says of it, for the uses it records) and no
 * values. Only the tools make these; the translator judges them by their record, and a use the
 * record does not cover as one it cannot tell. The API server serves no such version, so no object
 * from a cluster is ever taken for one, and file input naming it is refused as the API server would
 * (engine/src/schema/manifest-validation.ts).
 */
export const RECORDED_API_VERSION = 'turnpike.dev/recorded';

/** The record a tool's stand-in carries; undefined for any real object. */
export function recordedOf(o: { apiVersion?: string; recorded?: unknown }): RecordedReference | undefined {
  return o.apiVersion === RECORDED_API_VERSION ? (o.recorded as RecordedReference | undefined) : undefined;
}
