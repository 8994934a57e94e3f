// Reading and writing a Secret's values. The API server stores `data` base64-encoded and folds
// `stringData` into it on write, so stringData is only ever seen in file input; both are read, data
// first.
import type { Secret } from './core.js';

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
 * What an event log keeps of a Secret value that is not public (event-log.md): its sha256, and
 * for a PEM private key whether it belongs to the certificate beside it (`tls.crt`). The
 * translator reads these instead of the value (certificates.ts), so a replay reproduces the same
 * outputs without the private material.
 */
export const REDACTED_PREFIX = 'turnpike-redacted:';

export interface RedactedValue {
  sha256: string;
  /** Set for a value kept under `tls.key`: whether it is a private key of `tls.crt`. */
  privateKey?: 'matches' | 'other' | 'invalid';
}

export function redactedValue(r: RedactedValue): string {
  return `${REDACTED_PREFIX}sha256=${r.sha256}${r.privateKey ? `;private-key=${r.privateKey}` : ''}`;
}

export function parseRedactedValue(text: string | undefined): RedactedValue | undefined {
  if (!text?.startsWith(REDACTED_PREFIX)) return undefined;
  const m = /^sha256=([0-9a-f]{64})(?:;private-key=(matches|other|invalid))?$/.exec(text.slice(REDACTED_PREFIX.length));
  if (!m) return undefined;
  return { sha256: m[1]!, ...(m[2] ? { privateKey: m[2] as RedactedValue['privateKey'] } : {}) };
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
