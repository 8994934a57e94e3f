// The status writer (leader only): read-modify-write of the status subresource. Only our route
// parents / policy ancestors are touched and our stale ones removed; a write is skipped when
// nothing but lastTransitionTime would change, so in steady state it writes nothing. Conflicts
// (409) re-read and retry; other failures are retried with backoff; writes are rate-bounded.
import { CONTROLLER_NAME, objectKey, type KubeObject } from '@turnpike/api';
import { mergeStatus, sameButTransitionTimes, type Snapshot, type TranslateResult } from '@turnpike/translator';
import { deepEqual } from '@turnpike/engine';
import { KubeApiError, type KubeClient } from './client.js';
import { objectPath, resourceInfo } from './resources.js';
import { WorkTimer } from './work-timer.js';

type AnyStatus = Record<string, unknown>;

export interface StatusWriterOptions {
  client: KubeClient;
  controllerName?: string;
  now?: () => string;
  /** Writes per second at most. */
  ratePerSecond?: number;
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  onWrite?: (key: string, ok: boolean) => void;
}

/** How long one slice of comparing statuses with the objects may hold the event loop. */
const CONSIDER_SLICE_MS = 5;

const PARENT_KINDS = new Set(['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);
/** Policies: their status lists ancestors. */
const POLICY_KINDS: readonly string[] = ['BackendTLSPolicy', 'XTelemetryPolicy', 'XBackend'];

/** Our entries in a route or policy status, if any. */
function hasOwnEntries(o: KubeObject, controller: string): boolean {
  const s = o.status as
    { parents?: { controllerName?: string }[]; ancestors?: { controllerName?: string }[] } | undefined;
  return [...(s?.parents ?? []), ...(s?.ancestors ?? [])].some((e) => e.controllerName === controller);
}

/** A stored condition newer than the object we hold means our copy is stale: do not write. */
function newerThanUs(o: KubeObject): boolean {
  const gen = o.metadata.generation ?? 0;
  const walk = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(walk);
    if (v && typeof v === 'object') {
      const r = v as Record<string, unknown>;
      if (typeof r.observedGeneration === 'number' && typeof r.type === 'string' && r.observedGeneration > gen)
        return true;
      return Object.values(r).some(walk);
    }
    return false;
  };
  return walk(o.status);
}

export class StatusWriter {
  private readonly desired = new Map<string, { kind: string; namespace?: string; name: string; status: AnyStatus }>();
  private readonly attempts = new Map<string, number>();
  /** When a failed object may be tried again: one failing object never delays the others. */
  private readonly notBefore = new Map<string, number>();
  private readonly timer = new WorkTimer(() => this.drain());
  private draining = false;
  readonly stats = { writes: 0, conflicts: 0, failures: 0, skipped: 0 };
  private readonly controller: string;

  constructor(private readonly o: StatusWriterOptions) {
    this.controller = o.controllerName ?? CONTROLLER_NAME;
  }

  private now(): string {
    return this.o.now?.() ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /**
   * Schedules what a translation asks to be written: every status, or with `changed` only the
   * statuses a translation changed (the writer has seen every output before). Which of them differ
   * from what the objects hold is worked out soon after, in slices (consider), not here: this runs
   * in the same turn as the xDS push, whose writes would wait for it (3 s at a restart with 100k routes).
   */
  update(result: TranslateResult, snapshot: Snapshot, changed?: readonly string[]): void {
    this.latest = { result, snapshot };
    if (changed) {
      for (const key of changed) this.toConsider.add(key);
    } else {
      for (const key of result.statuses.keys()) this.toConsider.add(key);
      // Also routes and policies that are ours no more but still carry our entries.
      for (const kind of [...PARENT_KINDS, ...POLICY_KINDS])
        for (const shard of snapshot.get(kind)?.values() ?? [])
          for (const o of shard.values()) this.toConsider.add(objectKey(kind, o.metadata.namespace, o.metadata.name));
    }
    this.considerSoon();
  }

  /** The latest translation, and the keys still to compare with it, in the order they came. */
  private latest?: { result: TranslateResult; snapshot: Snapshot };
  private readonly toConsider = new Set<string>();
  private considering?: NodeJS.Immediate;

  private considerSoon(): void {
    if (this.considering || this.timer.stopped || !this.toConsider.size) return;
    this.considering = setImmediate(() => {
      this.considering = undefined;
      this.considerSlice();
    });
  }

  /** Compares keys with the objects for CONSIDER_SLICE_MS, then lets I/O in and goes on. */
  private considerSlice(): void {
    if (!this.latest) return;
    const { result, snapshot } = this.latest;
    const deadline = performance.now() + CONSIDER_SLICE_MS;
    let n = 0;
    for (const key of this.toConsider) {
      this.toConsider.delete(key);
      this.consider(key, result, snapshot);
      if (++n % 16 === 0 && performance.now() >= deadline) break;
    }
    if (this.desired.size) this.timer.schedule(0);
    this.considerSoon();
  }

  /** Whether the object `key` must be written for this translation: `desired` says so. */
  private consider(key: string, result: TranslateResult, snapshot: Snapshot): void {
    const [kind, ns, ...rest] = key.split('/') as [string, string, ...string[]];
    const name = rest.join('/');
    const current = snapshot
      .get(kind)
      ?.get(ns ?? '')
      ?.get(name);
    if (!current) return;
    let ours = result.statuses.get(key) as AnyStatus | undefined;
    if (!ours) {
      // A route or policy that still carries our entries but is ours no more: remove them.
      if (!(PARENT_KINDS.has(kind) || POLICY_KINDS.includes(kind)) || !hasOwnEntries(current, this.controller)) {
        this.desired.delete(key);
        return;
      }
      ours = POLICY_KINDS.includes(kind) ? { ancestors: [] } : { parents: [] };
    }
    if (newerThanUs(current)) {
      this.stats.skipped++;
      return;
    }
    const merged = mergeStatus(kind, current.status as AnyStatus | undefined, ours, this.controller, this.now());
    if (sameButTransitionTimes(merged, current.status ?? {})) {
      this.desired.delete(key);
      return;
    }
    const prev = this.desired.get(key);
    if (!prev || !deepEqual(prev.status, ours)) this.notBefore.delete(key); // new content: try at once
    this.desired.set(key, { kind, ...(ns ? { namespace: ns } : {}), name, status: ours });
  }

  stop(): void {
    this.timer.stop();
    if (this.considering) clearImmediate(this.considering);
    this.considering = undefined;
  }

  /** Statuses to write, and keys not yet compared with their objects. */
  get pending(): number {
    return this.desired.size + this.toConsider.size;
  }

  private async drain(): Promise<void> {
    if (this.draining || this.timer.stopped) return;
    this.draining = true;
    const interval = 1000 / (this.o.ratePerSecond ?? 50);
    try {
      for (const [key, d] of [...this.desired]) {
        if (this.timer.stopped) break;
        if (this.desired.get(key) !== d) continue;
        if ((this.notBefore.get(key) ?? 0) > Date.now()) continue;
        const ok = await this.write(key, d);
        if (ok) {
          if (this.desired.get(key) === d) this.desired.delete(key);
          this.attempts.delete(key);
          this.notBefore.delete(key);
        } else {
          const n = this.attempts.get(key) ?? 1;
          this.notBefore.set(key, Date.now() + Math.min(30_000, 500 * 2 ** Math.min(n, 6)));
        }
        await new Promise((r) => setTimeout(r, interval));
      }
    } finally {
      this.draining = false;
    }
    if (this.desired.size) {
      const next = Math.min(...[...this.desired.keys()].map((k) => this.notBefore.get(k) ?? 0));
      this.timer.schedule(Math.max(0, next - Date.now()));
    }
  }

  /** One read-modify-write, retried on conflict. */
  private async write(
    key: string,
    d: { kind: string; namespace?: string; name: string; status: AnyStatus },
  ): Promise<boolean> {
    const info = resourceInfo(d.kind);
    if (!info) return true;
    const path = objectPath(info, d.namespace, d.name);
    for (let i = 0; i < 5; i++) {
      try {
        const current = await this.o.client.must<KubeObject>('GET', path);
        if (newerThanUs(current)) return true;
        const merged = mergeStatus(
          d.kind,
          current.status as AnyStatus | undefined,
          d.status,
          this.controller,
          this.now(),
        );
        if (sameButTransitionTimes(merged, current.status ?? {})) return true;
        await this.o.client.must('PUT', `${path}/status`, { ...current, status: merged });
        this.stats.writes++;
        this.o.onWrite?.(key, true);
        return true;
      } catch (e) {
        if (e instanceof KubeApiError && e.status === 409) {
          this.stats.conflicts++;
          continue;
        }
        if (e instanceof KubeApiError && e.status === 404) return true; // deleted meanwhile
        this.stats.failures++;
        this.attempts.set(key, (this.attempts.get(key) ?? 0) + 1);
        this.o.log?.(
          e instanceof KubeApiError && e.status === 422 ? 'error' : 'warn',
          `status write failed, will retry: ${(e as Error).message}`,
          { object: key },
        );
        this.o.onWrite?.(key, false);
        return false;
      }
    }
    this.attempts.set(key, (this.attempts.get(key) ?? 0) + 1);
    return false;
  }
}
