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
