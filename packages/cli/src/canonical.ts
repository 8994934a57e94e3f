import stringify from 'safe-stable-stringify';

/** Canonical JSON, for comparing values whatever their key order. */
export function canonical(v: unknown): string {
  return stringify(v) ?? 'null';
}
