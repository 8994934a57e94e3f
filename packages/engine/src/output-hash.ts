// The hash of a translation's whole output: sha256 of its canonical JSON. Equal outputs have
// equal hashes whatever the key order they were built in.
import { createHash } from 'node:crypto';
import type { TranslateResult } from '@turnpike/translator';
import stringify from 'safe-stable-stringify';

export function canonicalJSON(value: unknown): string {
  return stringify(value) ?? 'null';
}

export function outputHash(result: Pick<TranslateResult, 'statuses' | 'xdsIR' | 'infraIR'>): string {
  const { statuses, xdsIR, infraIR } = result;
  return createHash('sha256').update(canonicalJSON({ statuses, xdsIR, infraIR })).digest('hex');
}
