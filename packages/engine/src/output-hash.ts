// The hash of a translation's whole output: every status, every Gateway's xDS IR, the endpoints of
// every served cluster and every Gateway's infra IR. Each entry is hashed (as a Merkle tree of its
// canonical JSON) with its section and key, and the output hash is the sum of the entry hashes modulo 2^256: equal outputs
// have equal hashes whatever their order, and a change to one entry updates the sum in O(1), so an
// engine hashes only what a translation changed (`OutputHasher`), not the whole output again.
import { createHash } from 'node:crypto';
import type { OutputChanges, TranslateResult } from '@turnpike/translator';
import stringify from 'safe-stable-stringify';

export function canonicalJSON(value: unknown): string {
  return stringify(value) ?? 'null';
}

const MODULUS = 1n << 256n;
type Section = 'statuses' | 'xds' | 'endpoints' | 'infra';
type HashedOutput = Pick<TranslateResult, 'statuses' | 'xdsIR' | 'infraIR'>;

function sections(result: HashedOutput): [Section, ReadonlyMap<string, unknown>][] {
  return [['statuses', result.statuses], ['xds', result.xdsIR.gateways], ['endpoints', result.xdsIR.endpoints], ['infra', result.infraIR.gateways]];
}

/**
 * Canonical form of a value for hashing: canonical JSON, except that an object whose form is
 * longer than a few hundred characters stands as the hash of its form, memoised by identity.
 * Outputs are immutable and share unchanged pieces (a route's IR sits unchanged in its Gateway's
 * IR), so a changed Gateway is hashed from its new containers and the memoised hashes of the rest.
 */
const memo = new WeakMap<object, string>();
const INLINE_LIMIT = 256;

function hashForm(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  const known = memo.get(v);
  if (known !== undefined) return known;
  let form: string;
  if (Array.isArray(v)) {
    form = `[${v.map((x) => (x === undefined ? 'null' : hashForm(x))).join(',')}]`;
  } else if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    form = hashForm((v as { toJSON: () => unknown }).toJSON());
  } else {
    const o = v as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(o).sort()) if (o[k] !== undefined && typeof o[k] !== 'function') parts.push(`${JSON.stringify(k)}:${hashForm(o[k])}`);
    form = `{${parts.join(',')}}`;
  }
  if (form.length <= INLINE_LIMIT) return form;
  const token = `#${createHash('sha256').update(form).digest('base64')}`;
  memo.set(v, token);
  return token;
}

function entryHash(section: Section, key: string, value: unknown): bigint {
  return BigInt(`0x${createHash('sha256').update(`${section}\t${key}\t`).update(hashForm(value)).digest('hex')}`);
}

const hex = (sum: bigint) => sum.toString(16).padStart(64, '0');

/** The hash of a whole output, from scratch. */
export function outputHash(result: HashedOutput): string {
  let sum = 0n;
  for (const [section, map] of sections(result)) for (const [k, v] of map) sum = (sum + entryHash(section, k, v)) % MODULUS;
  return hex(sum);
}

/** Keeps the output hash of a sequence of translations, re-hashing only the entries that changed. */
export class OutputHasher {
  private readonly entries = new Map<string, bigint>();
  private sum = 0n;

  update(result: HashedOutput, changes: OutputChanges): string {
    const changed: Record<Section, readonly string[]> = { statuses: changes.statuses, xds: changes.gateways, endpoints: changes.endpoints, infra: changes.infra };
    for (const [section, map] of sections(result)) {
      for (const key of changed[section]) {
        const id = `${section}\t${key}`;
        const before = this.entries.get(id);
        if (before !== undefined) this.sum -= before;
        const value = map.get(key);
        if (value === undefined) {
          this.entries.delete(id);
        } else {
          const h = entryHash(section, key, value);
          this.entries.set(id, h);
          this.sum += h;
        }
      }
    }
    this.sum = ((this.sum % MODULUS) + MODULUS) % MODULUS;
    return hex(this.sum);
  }
}
