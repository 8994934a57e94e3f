// The hash of a translation's whole output: every status, every Gateway's xDS IR, the endpoints of
// every served cluster and every Gateway's infra IR. Each entry is hashed (a Gateway's IR with its
// routes' hashes memoised) with its section and key, and the output hash is the sum of the entry
// hashes modulo 2^256: equal outputs have equal hashes whatever their order, and a change to one
// entry updates the sum in O(1), so an engine hashes only what a translation changed
// (`OutputHasher`), not the whole output again.
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
  return [
    ['statuses', result.statuses],
    ['xds', result.xdsIR.gateways],
    ['endpoints', result.xdsIR.endpoints],
    ['infra', result.infraIR.gateways],
  ];
}

/**
 * The form a Gateway's IR is hashed in: its canonical JSON, except that each route (an object with
 * a `source`) and each cluster (with a `service`) stands as the hash of its own canonical JSON,
 * memoised by identity. Outputs are immutable and a route's IR is the same object from one Gateway
 * IR to the next while the route does not change, so a changed Gateway costs its new containers
 * plus the routes that changed.
 */
const routeTokens = new WeakMap<object, string>();

function routeToken(route: object): string {
  let token = routeTokens.get(route);
  if (token === undefined) {
    token = `#${createHash('sha256').update(canonicalJSON(route)).digest('base64')}`;
    routeTokens.set(route, token);
  }
  return token;
}

function gatewayForm(ir: unknown): string {
  // Routes (`source`) and clusters (`service`) are the pieces route results share with the IR.
  return (
    stringify(ir, (_key, v: unknown) =>
      v !== ir && typeof v === 'object' && v !== null && ('source' in v || 'service' in v) ? routeToken(v) : v,
    ) ?? 'null'
  );
}

function entryHash(section: Section, key: string, value: unknown): bigint {
  // A Gateway's IR is large and shares most of its pieces with the previous one: the memoised
  // Merkle form. Everything else is small: plain canonical JSON is faster.
  const form = section === 'xds' ? gatewayForm(value) : canonicalJSON(value);
  return BigInt(`0x${createHash('sha256').update(`${section}\t${key}\t`).update(form).digest('hex')}`);
}

const hex = (sum: bigint) => sum.toString(16).padStart(64, '0');

/** The hash of a whole output, from scratch. */
export function outputHash(result: HashedOutput): string {
  let sum = 0n;
  for (const [section, map] of sections(result))
    for (const [k, v] of map) sum = (sum + entryHash(section, k, v)) % MODULUS;
  return hex(sum);
}

/** Keeps the output hash of a sequence of translations, re-hashing only the entries that changed. */
export class OutputHasher {
  private readonly entries = new Map<string, bigint>();
  private sum = 0n;

  update(result: HashedOutput, changes: OutputChanges): string {
    const steps = this.updating(result, changes);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /** The same as `update`, a step per entry: a caller can stop between entries and go on later. */
  *updating(result: HashedOutput, changes: OutputChanges): Generator<void, string> {
    const changed: Record<Section, readonly string[]> = {
      statuses: changes.statuses,
      xds: changes.gateways,
      endpoints: changes.endpoints,
      infra: changes.infra,
    };
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
        yield;
      }
    }
    this.sum = ((this.sum % MODULUS) + MODULUS) % MODULUS;
    return hex(this.sum);
  }
}

/** How long after an output the engine starts to work out its hash, unless someone reads it sooner. */
export const HASH_LATER_MS = 500;

/** An output's place in an OutputHashSequence: its hash, and whether it differs from the one before. */
export interface SequencedHash {
  /** The hash, worked out now if it is not yet. */
  hash(): string;
  changed(): boolean;
  /** Resolves with the hash once it is worked out, by `work`, `settle` or a read. */
  settled(): Promise<string>;
}

/** A hash a recorder may read at once (`read`, which works it out) or wait for (`settled`). */
export interface LaterHash {
  read(): string;
  settled: Promise<string>;
}

function noChanges(changes: OutputChanges): boolean {
  return !changes.statuses.length && !changes.gateways.length && !changes.endpoints.length && !changes.infra.length;
}

interface QueuedOutput {
  result?: HashedOutput;
  changes?: OutputChanges;
  restart: boolean;
  steps?: Generator<void, string>;
  done?: { hash: string; changed: boolean };
  settled?: Promise<string>;
  resolve?: (hash: string) => void;
}

/**
 * The hashes of a sequence of outputs, worked out after each output is made rather than before: off the
 * path from a change to the proxies (half a second of a cold start at 10k routes, seconds at 100k). Each
 * hash follows from the one before, so reading one works out those queued before it. `work` does it in
 * slices, an entry at a time, so the engine can hash a large output between the writes of a push instead
 * of stalling them; `settle` works out all of them at once. An output that changed no entry has the hash
 * of the one before: that it did not change is known at once.
 */
export class OutputHashSequence {
  private hasher = new OutputHasher();
  private last = '';
  private added = 0;
  private readonly queued: QueuedOutput[] = [];

  /** Queues an output; `restart`: the hashing starts over with it (after a failed translation). */
  add(result: HashedOutput, changes: OutputChanges, restart = false): SequencedHash {
    const entry: QueuedOutput = { result, changes, restart };
    const unchanged = !restart && this.added > 0 && noChanges(changes);
    this.added++;
    this.queued.push(entry);
    const done = () => {
      while (!entry.done) this.step(Number.POSITIVE_INFINITY);
      return entry.done;
    };
    return {
      hash: () => done().hash,
      changed: () => (unchanged ? false : done().changed),
      settled: () => {
        if (entry.done) return Promise.resolve(entry.done.hash);
        entry.settled ??= new Promise((resolve) => (entry.resolve = resolve));
        return entry.settled;
      },
    };
  }

  get size(): number {
    return this.queued.length;
  }

  settle(): void {
    while (this.queued.length) this.step(Number.POSITIVE_INFINITY);
  }

  /** Works on the queue, an entry at least, until `deadline` (performance.now()) passes; true while some is left. */
  work(deadline: number): boolean {
    if (this.queued.length) this.step(deadline);
    while (this.queued.length && performance.now() < deadline) this.step(deadline);
    return this.queued.length > 0;
  }

  /** Works on the first queued output until it is done or `deadline` passes. */
  private step(deadline: number): void {
    const entry = this.queued[0]!;
    if (!entry.steps) {
      if (entry.restart) this.hasher = new OutputHasher();
      entry.steps = this.hasher.updating(entry.result!, entry.changes!);
    }
    for (;;) {
      const next = entry.steps.next();
      if (next.done) {
        this.finish(entry, next.value);
        return;
      }
      if (performance.now() >= deadline) return;
    }
  }

  private finish(entry: QueuedOutput, hash: string): void {
    this.queued.shift();
    entry.done = { hash, changed: hash !== this.last };
    // Only the hash is kept: an output read late must not hold its translation in memory.
    entry.result = undefined;
    entry.changes = undefined;
    entry.steps = undefined;
    this.last = hash;
    entry.resolve?.(hash);
    entry.resolve = undefined;
  }
}
