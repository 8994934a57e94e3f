// A reflector keeps one kind's objects in step with the API server: a paginated LIST (the first one from the
// watch cache), then a WATCH (bookmarks on, jittered server timeout, inactivity watchdog) from the list's
// resourceVersion; 410 Gone → relist and emit the difference as upserts and deletes; any other
// failure → exponential backoff with jitter, reset after a healthy watch. A kind whose CRD is not
// installed (or whose API is not served) is reported once and looked for again periodically; a
// kind with fallback versions is listed at the first version the server serves. It never stops on
// its own.
import type { KubeObject } from '@turnpike/api';
import { deepEqual, remove, storable, upsert, type SourceEvent } from '@turnpike/engine';
import { createInterface } from 'node:readline';
import { KubeApiError, type KubeClient } from './client.js';
import { apiVersionOf, collectionPath, versionsOf, type ResourceInfo } from './resources.js';

export interface ReflectorOptions {
  client: KubeClient;
  resource: ResourceInfo;
  source: string;
  emit: (e: SourceEvent) => void;
  onSynced: () => void;
  /**
   * Which version of the kind the server serves, at each list (before the objects it brings), or
   * `undefined` when it serves none.
   */
  onServed?: (version: string | undefined) => void;
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  fieldSelector?: string;
  labelSelector?: string;
  /** Watch one namespace only. */
  namespace?: string;
  /**
   * Cuts each object down to what the translator reads before it is emitted (Pods: slimPod); an update
   * whose cut-down form did not change is not emitted at all (a Pod's status rewritten by a probe).
   */
  slim?: (o: KubeObject) => KubeObject;
  /**
   * A list the controller may not make (403) counts as synced with nothing, warned and tried again
   * later: for a kind that only refines the output (the proxy Deployments), so that RBAC of an
   * older release does not keep the controller from starting.
   */
  optional?: string;
  pageSize?: number;
  /** Server-side watch timeout range in seconds; a random value in it per watch. */
  timeoutSeconds?: [number, number];
  /** Abort a watch that received nothing (not even a bookmark) for this long. */
  watchdogMs?: number;
  backoffMs?: [number, number];
  /** How often to look for a missing CRD again. */
  missingRetryMs?: number;
  random?: () => number;
}

class Gone extends Error {}

export class Reflector {
  private running = false;
  private abort?: AbortController;
  private sleepTimer?: NodeJS.Timeout;
  private wake?: () => void;
  private readonly known = new Map<string, { rv: string; namespace?: string; name: string }>();
  /** With `slim`: the form last emitted per object, to drop updates that change nothing in it. */
  private readonly emitted = new Map<string, KubeObject>();
  private synced = false;
  /** The newest resourceVersion seen on the current watch, kept when the watch breaks. */
  private lastSeenRv?: string;
  private missingReported = false;
  /** The version listed and watched now (the first of versionsOf that the server serves). */
  private version: string;
  /** The version of the last list that succeeded. */
  private listedVersion?: string;
  /** Counters for metrics and tests. */
  readonly stats = { lists: 0, watches: 0, relists: 0, errors: 0, events: 0 };

  constructor(private readonly o: ReflectorOptions) {
    this.version = o.resource.version;
  }

  /** Where the kind is listed and watched now. */
  private path(): string {
    return collectionPath({ ...this.o.resource, version: this.version }, this.o.namespace);
  }

  get kind(): string {
    return this.o.resource.kind;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.loop();
  }

  stop(): void {
    this.running = false;
    this.abort?.abort();
    if (this.sleepTimer) clearTimeout(this.sleepTimer);
    this.wake?.();
  }

  private log(level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void {
    this.o.log?.(level, msg, { kind: this.kind, ...fields });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.sleepTimer = setTimeout(resolve, ms);
    });
  }

  private async loop(): Promise<void> {
    const [minBackoff, maxBackoff] = this.o.backoffMs ?? [1000, 30_000];
    const random = this.o.random ?? Math.random;
    let backoff = minBackoff;
    let rv: string | undefined;
    while (this.running) {
      try {
        if (rv === undefined) rv = await this.list();
        rv = await this.watch(rv);
        backoff = minBackoff; // a watch that ended cleanly (server timeout) is healthy
      } catch (e) {
        if (!this.running) break;
        if (e instanceof Gone) {
          this.stats.relists++;
          this.log('info', 'watch expired (410 Gone): relisting');
          rv = undefined;
          continue;
        }
        if (this.o.optional && e instanceof KubeApiError && e.status === 403 && rv === undefined) {
          if (!this.missingReported)
            this.log('warn', `cannot list ${this.o.resource.plural} (403): ${this.o.optional}; looking again later`);
          this.missingReported = true;
          if (!this.synced) this.markSynced();
          await this.sleep(this.o.missingRetryMs ?? 30_000);
          continue;
        }
        if (e instanceof KubeApiError && e.status === 404 && rv === undefined) {
          if (!this.missingReported)
            this.log(
              'warn',
              `${this.kind} is not served by the API server (its CRD not installed, or its API not enabled); skipping it and looking again later`,
            );
          this.missingReported = true;
          // Objects known from before stay (a CRD's 404 may pass); the translator reads the fact.
          this.o.onServed?.(undefined);
          if (!this.synced) this.markSynced(); // nothing to wait for
          await this.sleep(this.o.missingRetryMs ?? 30_000);
          continue;
        }
        this.stats.errors++;
        // A watch the server no longer serves (its version removed, its CRD deleted) relists, which
        // finds the version served now, if any. Any other broken watch resumes from the last event it
        // delivered, not from the list.
        if (rv !== undefined && e instanceof KubeApiError && e.status === 404) rv = undefined;
        else if (rv !== undefined && this.lastSeenRv) rv = this.lastSeenRv;
        const wait = Math.min(maxBackoff, backoff) * (0.5 + random());
        this.log(
          'warn',
          `${rv === undefined ? 'list' : 'watch'} failed, retrying in ${Math.round(wait)} ms: ${(e as Error).message}`,
        );
        await this.sleep(wait);
        backoff = Math.min(maxBackoff, backoff * 2);
      }
    }
  }

  private markSynced(): void {
    this.synced = true;
    this.o.onSynced();
  }

  /**
   * Items of a list may lack apiVersion and kind; each was parsed for us alone, so they are set in place.
   * The object is then put in the store's form (managedFields dropped, frozen) here rather than when the
   * engine applies it: at a cold start of 100 000 routes that is done while the list streams in, not
   * after the last list (0.5 s of the way to the first translation).
   */
  private normalize(item: KubeObject): KubeObject {
    const r = this.o.resource;
    const typed = item as { apiVersion: string; kind: string };
    // The preferred version's form whichever version served it (the fallbacks have the same fields).
    typed.apiVersion = apiVersionOf(r);
    typed.kind = r.kind;
    return storable(this.o.slim ? this.o.slim(item) : item);
  }

  /** Emits an upsert, unless (with `slim`) the object's form is the one emitted last. */
  private emitUpsert(key: string, item: KubeObject): void {
    if (this.o.slim) {
      if (deepEqual(this.emitted.get(key), item)) return;
      this.emitted.set(key, item);
    }
    this.stats.events++;
    this.o.emit(upsert(this.o.source, item));
  }

  /** Lists at the first version the server serves; a 404 from every version is thrown (not served). */
  private async list(): Promise<string> {
    // The first list is served from the API server's watch cache (resourceVersion 0, as client-go's
    // reflectors do): no etcd round trip per page, so a controller starting beside 100k routes has
    // them sooner. Any state is fine then, the watch brings the rest. A relist (after 410 Gone) reads
    // from etcd: the cache could be older than what we already emitted, and that would go back in time.
    const fromCache = this.stats.lists === 0;
    this.stats.lists++;
    const versions = versionsOf(this.o.resource);
    for (const [i, version] of versions.entries()) {
      this.version = version;
      try {
        const rv = await this.listVersion(fromCache);
        if (version !== this.listedVersion && (i > 0 || this.listedVersion !== undefined))
          this.log(
            'info',
            `${this.kind}: ${versions.slice(0, i).join(', ') || 'none'} not served, watching ${version}`,
          );
        this.listedVersion = version;
        return rv;
      } catch (e) {
        if (!(e instanceof KubeApiError && e.status === 404) || i === versions.length - 1) throw e;
      }
    }
    throw new Error('unreachable');
  }

  private async listVersion(fromCache: boolean): Promise<string> {
    // Items are taken as they are parsed (a large response as it arrives); a list cut short deletes
    // nothing (that needs all of it).
    const seen = new Set<string>();
    let cont: string | undefined;
    let rv = '';
    // The version served is told before the first object it brings (and once for an empty list).
    let told = false;
    const tell = () => {
      if (told) return;
      told = true;
      this.o.onServed?.(this.version);
    };
    do {
      const q = new URLSearchParams({ limit: String(this.o.pageSize ?? 500) });
      if (cont) q.set('continue', cont);
      else if (fromCache) q.set('resourceVersion', '0');
      if (this.o.fieldSelector) q.set('fieldSelector', this.o.fieldSelector);
      if (this.o.labelSelector) q.set('labelSelector', this.o.labelSelector);
      const page = await this.o.client.list<{ metadata?: { resourceVersion?: string; continue?: string } }>(
        `${this.path()}?${q}`,
        (raw) => {
          tell();
          const itemRv = (raw as KubeObject).metadata?.resourceVersion;
          const item = this.normalize(raw as KubeObject);
          const key = `${item.metadata.namespace ?? ''}/${item.metadata.name}`;
          seen.add(key);
          if (this.known.get(key)?.rv === itemRv) return;
          this.known.set(key, {
            rv: itemRv ?? '',
            ...(item.metadata.namespace ? { namespace: item.metadata.namespace } : {}),
            name: item.metadata.name,
          });
          this.emitUpsert(key, item);
        },
      );
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont);
    tell();
    // What vanished while we were not watching is deleted now.
    for (const [key, k] of [...this.known]) {
      if (seen.has(key)) continue;
      this.known.delete(key);
      this.emitted.delete(key);
      this.stats.events++;
      this.o.emit(remove(this.o.source, this.kind, k.namespace, k.name));
    }
    if (this.missingReported) this.log('info', `${this.kind} is served now: watching it`);
    this.missingReported = false;
    if (!this.synced) this.markSynced();
    return rv;
  }

  /** Watches from `rv`; returns the last resourceVersion when the server ends the watch. */
  private async watch(rv: string): Promise<string> {
    this.stats.watches++;
    const [lo, hi] = this.o.timeoutSeconds ?? [300, 600];
    const timeout = Math.floor(lo + (this.o.random ?? Math.random)() * (hi - lo));
    const q = new URLSearchParams({
      watch: '1',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(timeout),
      resourceVersion: rv,
    });
    if (this.o.fieldSelector) q.set('fieldSelector', this.o.fieldSelector);
    if (this.o.labelSelector) q.set('labelSelector', this.o.labelSelector);
    const abort = new AbortController();
    this.abort = abort;
    const res = await this.o.client.stream(`${this.path()}?${q}`, abort.signal);
    if (res.statusCode === 410) {
      res.resume();
      throw new Gone();
    }
    if ((res.statusCode ?? 0) >= 300) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      throw new KubeApiError(
        res.statusCode ?? 0,
        String(res.statusCode),
        `watch ${this.kind}: ${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`,
      );
    }
    const watchdogMs = this.o.watchdogMs ?? 120_000;
    let watchdog = setTimeout(() => abort.abort(), watchdogMs);
    res.on('data', () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => abort.abort(), watchdogMs);
    });
    let last = rv;
    this.lastSeenRv = rv;
    try {
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      for await (const line of lines) {
        if (!line.trim()) continue;
        const ev = JSON.parse(line) as { type: string; object: KubeObject & { code?: number; message?: string } };
        if (ev.type === 'ERROR') {
          if (ev.object?.code === 410) throw new Gone();
          throw new Error(`watch error: ${ev.object?.message ?? line.slice(0, 200)}`);
        }
        const objRv = ev.object?.metadata?.resourceVersion;
        if (objRv) last = this.lastSeenRv = objRv;
        if (ev.type === 'BOOKMARK') continue;
        const item = this.normalize(ev.object);
        const key = `${item.metadata.namespace ?? ''}/${item.metadata.name}`;
        if (ev.type === 'DELETED') {
          this.known.delete(key);
          this.emitted.delete(key);
          this.stats.events++;
          this.o.emit(remove(this.o.source, this.kind, item.metadata.namespace, item.metadata.name));
        } else {
          this.known.set(key, {
            rv: objRv ?? '',
            ...(item.metadata.namespace ? { namespace: item.metadata.namespace } : {}),
            name: item.metadata.name,
          });
          this.emitUpsert(key, item);
        }
      }
    } catch (e) {
      if (abort.signal.aborted && this.running)
        throw new Error(`watch of ${this.kind} went silent for ${watchdogMs} ms; reconnecting`);
      throw e;
    } finally {
      clearTimeout(watchdog);
    }
    if (abort.signal.aborted && this.running)
      throw new Error(`watch of ${this.kind} went silent for ${watchdogMs} ms; reconnecting`);
    return last;
  }
}
