// The hash of a translation's whole output. Each status and each Gateway's IR is hashed as
// canonical JSON once per object (the translator reuses unchanged objects, so at 10k routes a
// one-route change re-hashes one route's status, not ten megabytes); the output hash is the
// sha256 of the sorted `key hash` lines. Equal outputs have equal hashes whatever their key order.
import { createHash } from 'node:crypto';
import type { TranslateResult } from '@turnpike/translator';
import stringify from 'safe-stable-stringify';

export function canonicalJSON(value: unknown): string {
  return stringify(value) ?? 'null';
}

const valueHashes = new WeakMap<object, string>();

function valueHash(v: unknown): string {
  if (typeof v !== 'object' || v === null) return createHash('sha256').update(canonicalJSON(v)).digest('hex');
  let h = valueHashes.get(v);
  if (!h) {
    h = createHash('sha256').update(canonicalJSON(v)).digest('hex');
    valueHashes.set(v, h);
  }
  return h;
}

function section(hash: ReturnType<typeof createHash>, name: string, record: Record<string, unknown>): void {
  hash.update(`${name}\n`);
  for (const k of Object.keys(record).sort()) hash.update(`${k}\t${valueHash(record[k])}\n`);
}

export function outputHash(result: Pick<TranslateResult, 'statuses' | 'xdsIR' | 'infraIR'>): string {
  const h = createHash('sha256');
  section(h, 'statuses', result.statuses);
  section(h, 'xds', result.xdsIR.gateways as Record<string, unknown>);
  section(h, 'infra', result.infraIR.gateways as Record<string, unknown>);
  return h.digest('hex');
}
