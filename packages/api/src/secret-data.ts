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
