// The plugin fetch worker. It lives outside the translator, as a sink of its translations: each
// translation says, per PluginInstallation, what to fetch (the image and type, the credentials of
// the pull Secret it may use, the key its signature must verify with: PluginFetchRequest). The
// worker fetches each plugin from its registry, stores the content, and feeds its results back into
// the stream as PluginFetch events, so the translator stays pure and a replayed log reproduces what
// happened.
//
// - A change to what a fetch depends on (image, type, generation, the pull Secret's content,
//   whether the reference is permitted, the public key) fetches again at once.
// - Failures are retried with exponential backoff and jitter (1 s doubling to 5 min by default).
// - Tags are re-resolved periodically (default 10 min) and a moved tag is fetched again;
//   digests are never re-resolved.
// - Once a plugin has content, a failed re-resolve keeps it (logged); a registry down at start
//   falls back to content stored before (the ConfigMap) for the same image.
// - After its first translation, it reports `synced` (source `plugins`) once every plugin has a
//   first result; until then the controller keeps those translations from the proxies.
// - With an allow-list of registries (`--plugin-registries`), a plugin from any other registry is
//   refused before a single request (RefNotPermitted), and content stored for it is not served.
// - The content held in memory is bounded in all (PluginContentStore, `--plugin-max-total-bytes`):
//   a plugin whose content would go beyond is not fetched (TooLarge, saying so), and is tried again
//   with backoff, by when other plugins may have been dropped.
// - A plugin nothing uses (its request says `unused`) is not fetched: what the worker holds of it
//   (content, result, the storage's copy in memory) is released, so it takes none of that bound; its
//   stored ConfigMap stays, and is served at once when something uses it again.
import { createHash } from 'node:crypto';
import { parseImageReference, type PluginFetch, type PluginInstallation } from '@turnpike/api';
import { deepEqual, remove, synced, upsert, type SourceEvent } from '@turnpike/engine';
import type { PersistentMap, PluginFetchRequest } from '@turnpike/translator';
import { Subject } from 'rxjs';
import { extractPlugin, pluginLayer, type PluginType } from './artifact.js';
import type { PluginContentStore } from './content-store.js';
import { credentialsFor } from './docker-config.js';
import { PluginFetchError } from './errors.js';
import type { OciClient } from './oci-client.js';
import {
  COSIGN_SIGNATURE_ANNOTATION,
  parsePublicKey,
  signatureLayers,
  signatureProblem,
  signatureTag,
} from './signature.js';
import { CONFIGMAP_CONTENT_LIMIT, type PluginStorage } from './storage.js';

export const PLUGINS_SOURCE = 'plugins';

/** What the worker reads of a translation: the requests, and which of them changed. */
export interface PluginFetchPlan {
  result: { pluginFetches: PersistentMap<PluginFetchRequest> };
  changes: { pluginFetches: readonly string[] };
}

export interface FetchWorkerOptions {
  client: OciClient;
  storage: PluginStorage;
  content: PluginContentStore;
  /** Largest plugin, in bytes. */
  maxBytes: number;
  /** How often a tag is resolved again, in milliseconds. */
  resolveEveryMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Each attempt's outcome: `Fetched` or the failure reason (for metrics). */
  onAttempt?: (result: string) => void;
  /** Fetches in flight at most (a controller starting with many plugins does not flood a registry). */
  concurrency?: number;
  /**
   * After its first translation the worker reports `synced` (source `plugins`) once every plugin
   * has a first result (stored content or a fetch attempt), or after `syncTimeoutMs`: a restarted
   * controller then never serves routes without their plugins in the meantime.
   */
  syncTimeoutMs?: number;
  /**
   * The registries (`host[:port]`, as images name them) plugins may come from
   * (`--plugin-registries`); undefined: any. Whoever may create a PluginInstallation names the
   * registry, so without it the controller fetches from wherever they say.
   */
  registries?: readonly string[];
}

/** Parses `host[:port],...` (`--plugin-registries`); throws naming the entry that is not one. */
export function parseRegistryList(value: string): string[] {
  const label = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  const hostPort = new RegExp(`^(?:\\[[0-9A-Fa-f:.]+\\]|${label}(?:\\.${label})*)(?::[0-9]{1,5})?$`);
  const out = value
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of out)
    if (!hostPort.test(r)) throw new Error(`"${r}" is not a registry host[:port] (no scheme, no path)`);
  if (!out.length) throw new Error('names no registry (leave it out to allow any)');
  return out.map((r) => r.toLowerCase());
}

type Result = PluginFetch['status'];

interface Job {
  key: string;
  /** Fingerprint of everything the fetch depends on. */
  inputs: string;
  attempt: number;
  timer?: NodeJS.Timeout;
  running: boolean;
  rerun: boolean;
  /** The last successful result (kept across input changes: make before break). */
  good?: Result;
  /** The public key `good`'s content was verified with (undefined: not verified). */
  goodVerifiedWith?: string;
  emitted?: Result;
  /** Content put in the store by the fetch in flight, kept until the fetch settles. */
  inflight?: string;
  /** Stored content was looked for (once per job). */
  triedStored?: boolean;
  /** The spec cannot be fetched as it is (the translator says why). */
  blocked?: boolean;
  /** Nothing uses the plugin: nothing is fetched or held for it. */
  unused?: boolean;
  request: PluginFetchRequest;
}

export class PluginFetchWorker {
  /** PluginFetch upserts and deletes, for the engine. */
  readonly events = new Subject<SourceEvent>();
  private readonly jobs = new Map<string, Job>();
  private scheduled?: NodeJS.Timeout;
  private stopped = false;
  private readonly resolveEveryMs: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private active = 0;
  private readonly queue: (() => void)[] = [];
  private translated = false;
  /** Plugins still without a first result, after the first translation; undefined before. */
  private awaiting?: Set<string>;
  private reported = false;

  private readonly registries?: ReadonlySet<string>;

  constructor(private readonly opts: FetchWorkerOptions) {
    this.resolveEveryMs = opts.resolveEveryMs ?? 600_000;
    this.backoff = opts.backoff ?? { initialMs: 1000, maxMs: 300_000 };
    if (opts.registries) {
      this.registries = new Set(opts.registries.map((r) => r.toLowerCase()));
      opts.log?.('info', 'plugins are fetched only from the registries of --plugin-registries', {
        registries: [...this.registries],
      });
    } else {
      opts.log?.(
        'info',
        'plugins are fetched from any registry their PluginInstallation names (no --plugin-registries)',
      );
    }
  }

  /** A translation (a sink's accept): fetch what its requests ask for, stop what they no longer do. */
  accept(plan: PluginFetchPlan): void {
    if (this.stopped) return;
    const requests = plan.result.pluginFetches;
    const keys = this.translated ? plan.changes.pluginFetches : [...requests.keys()];
    for (const key of keys) {
      const request = requests.get(key);
      if (request) this.requested(key, request);
      else this.dropped(key);
    }
    if (this.translated) return;
    this.translated = true;
    // The first translation saw every PluginInstallation: what storage holds for others is stale.
    this.opts.storage.retainOnly?.(requests.keys());
    this.awaiting = new Set(
      [...this.jobs.values()].filter((j) => !j.emitted && !j.blocked && !j.unused).map((j) => j.key),
    );
    const timer = setTimeout(() => this.reportSynced(), this.opts.syncTimeoutMs ?? 10_000);
    timer.unref?.();
    this.settle();
  }

  /** A plugin has its first result; when none is left, report synced. */
  private settle(key?: string): void {
    if (!this.awaiting) return;
    if (key) this.awaiting.delete(key);
    if (this.awaiting.size === 0) this.reportSynced();
  }

  private reportSynced(): void {
    if (this.reported || this.stopped) return;
    this.reported = true;
    this.awaiting = undefined;
    // Not from inside the event that triggered it: a source listing synchronously would hand it
    // to a stream that has not subscribed to us yet.
    queueMicrotask(() => {
      if (!this.stopped) this.events.next(synced(PLUGINS_SOURCE));
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.scheduled) clearTimeout(this.scheduled);
    for (const j of this.jobs.values()) if (j.timer) clearTimeout(j.timer);
    this.events.complete();
  }

  private requested(key: string, request: PluginFetchRequest): void {
    // What the fetch depends on; the pull Secret by a digest, so its content is not kept twice.
    const inputs = JSON.stringify([
      request.unused ? 'unused' : '',
      request.image,
      request.type,
      request.generation,
      request.blocked ?? '',
      request.dockerConfig ? createHash('sha256').update(request.dockerConfig).digest('hex').slice(0, 16) : '',
      request.verify?.publicKeyPem ?? request.verify?.problem ?? '',
    ]);
    let job = this.jobs.get(key);
    if (job) job.request = request;
    if (job && job.inputs === inputs) return;
    if (!job) this.jobs.set(key, (job = { key, inputs, attempt: 0, running: false, rerun: false, request }));
    job.inputs = inputs;
    job.attempt = 0;
    if (job.timer) clearTimeout(job.timer);
    job.timer = undefined;
    job.unused = request.unused === true;
    if (job.unused) {
      this.releaseUnused(job);
      return;
    }
    // A spec that cannot be fetched waits for a change; the translator reports why.
    job.blocked = request.blocked !== undefined;
    if (job.blocked) return;
    this.awaiting?.add(key);
    const refusal = this.refusal(request);
    if (refusal) {
      // Nothing of it is served, not even what was fetched for an earlier spec; no retry: only a
      // change of the spec (or of the flag, with a restart) makes a difference.
      job.good = job.goodVerifiedWith = undefined;
      this.opts.onAttempt?.(refusal.reason);
      this.opts.log?.('warn', 'plugin refused: its registry is not in --plugin-registries', {
        plugin: key,
        image: request.image,
      });
      // After the translation that asked for it, like any other result.
      queueMicrotask(() => {
        if (!this.stopped && this.jobs.get(key) === job && job.inputs === inputs)
          this.emit(job, installationOf(request), refusal);
        this.retainContent();
      });
      return;
    }
    void this.run(job);
  }

  /** The result that refuses a plugin whose registry is not allowed; undefined when it is. */
  private refusal(request: PluginFetchRequest): Result | undefined {
    if (!this.registries) return undefined;
    let registry: string;
    try {
      registry = parseImageReference(request.image).registry;
    } catch {
      return undefined; // the translator blocks an image it cannot parse
    }
    if (this.registries.has(registry.toLowerCase())) return undefined;
    return {
      observedGeneration: request.generation ?? 0,
      image: request.image,
      fetched: false,
      reason: 'RefNotPermitted',
      message:
        `registry ${registry} is not one this controller fetches plugins from (its --plugin-registries: ` +
        `${[...this.registries].join(', ')}); nothing was requested from it`,
    };
  }

  private dropped(key: string): void {
    const job = this.jobs.get(key);
    if (!job) return;
    if (job.timer) clearTimeout(job.timer);
    this.jobs.delete(key);
    const { namespace, name } = job.request;
    this.opts.storage.forget?.(namespace, name);
    this.settle(key);
    if (job.emitted) this.events.next(remove(PLUGINS_SOURCE, 'PluginFetch', namespace, name));
    this.retainContent();
  }

  /**
   * Nothing uses the plugin: what is held of it goes (a fetch in flight finds its inputs changed and
   * is dropped), and its result is withdrawn, so no translation serves content no longer held.
   */
  private releaseUnused(job: Job): void {
    const { namespace, name } = job.request;
    const held = job.good?.sha256;
    job.good = job.goodVerifiedWith = undefined;
    // Used again: the content stored before is served at once, then checked against the registry.
    job.triedStored = false;
    this.opts.storage.release?.(namespace, name);
    this.settle(job.key);
    if (job.emitted) {
      job.emitted = undefined;
      this.events.next(remove(PLUGINS_SOURCE, 'PluginFetch', namespace, name));
    }
    this.retainContent();
    if (held) this.opts.log?.('info', 'plugin not used by anything: its content is released', { plugin: job.key });
  }

  /** Drops content no job serves or is fetching. */
  private retainContent(): void {
    const keep = new Set<string>();
    for (const j of this.jobs.values()) {
      if (j.good?.sha256) keep.add(j.good.sha256);
      if (j.inflight) keep.add(j.inflight);
    }
    this.opts.content.retain(keep);
  }

  private emit(job: Job, pi: PluginInstallation, result: Result): void {
    if (!job.emitted || !deepEqual(job.emitted, result)) {
      job.emitted = result;
      const obj: PluginFetch = {
        apiVersion: 'turnpike.dev/internal',
        kind: 'PluginFetch',
        metadata: { namespace: pi.metadata.namespace!, name: pi.metadata.name },
        status: result,
      };
      this.events.next(upsert(PLUGINS_SOURCE, obj));
    }
    // After the result is in the stream: `synced` may follow at once.
    this.settle(job.key);
  }

  private schedule(job: Job, ms: number): void {
    if (this.stopped) return;
    if (job.timer) clearTimeout(job.timer);
    job.timer = setTimeout(() => {
      job.timer = undefined;
      void this.run(job);
    }, ms);
    job.timer.unref?.();
  }

  private async slot(): Promise<void> {
    if (this.active < (this.opts.concurrency ?? 4)) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  /** Hands the slot to the next waiting fetch, if any. */
  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.active--;
  }

  private retryDelay(attempt: number): number {
    const base = Math.min(this.backoff.initialMs * 2 ** Math.max(0, attempt - 1), this.backoff.maxMs);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private async run(job: Job): Promise<void> {
    if (job.running) {
      job.rerun = true;
      return;
    }
    if (this.stopped || this.jobs.get(job.key) !== job) return;
    const pi = installationOf(job.request);
    job.running = true;
    const inputs = job.inputs;
    // Still the job of a live plugin, with the inputs this run started with?
    const live = () => !this.stopped && this.jobs.get(job.key) === job && job.inputs === inputs;
    try {
      if (!job.good && !job.triedStored) await this.serveStored(job, pi, live);
      await this.slot();
      const verifiedWith = job.request.verify?.publicKeyPem;
      let result: Result;
      try {
        result = await this.fetch(pi, job);
      } finally {
        this.release();
      }
      if (!live()) return;
      job.attempt = 0;
      job.good = result;
      job.goodVerifiedWith = verifiedWith;
      this.opts.onAttempt?.('Fetched');
      this.emit(job, pi, result);
      if (!parseImageReference(pi.spec.image).digest) this.schedule(job, this.resolveEveryMs);
    } catch (e) {
      if (!live()) return;
      this.failed(
        job,
        pi,
        e instanceof PluginFetchError ? e : new PluginFetchError('FetchFailed', (e as Error).message),
      );
    } finally {
      job.inflight = undefined;
      this.retainContent();
      job.running = false;
      if (job.rerun) {
        job.rerun = false;
        void this.run(job);
      }
    }
  }

  /**
   * A job's first run (e.g. after a restart): content stored before for this image is served at
   * once; the registry is checked after, as a refresh.
   */
  private async serveStored(job: Job, pi: PluginInstallation, live: () => boolean): Promise<void> {
    job.triedStored = true;
    // Stored bytes are checked against nothing a signature names: a signed plugin waits for a
    // fetch that verifies (anyone who can write the storage ConfigMap could have changed them).
    if (job.request.verify) return;
    const stored = await this.opts.storage.load(pi).catch(() => undefined);
    if (!stored || stored.image !== pi.spec.image || !live()) return;
    try {
      job.inflight = this.opts.content.put(stored.content);
    } catch {
      return; // over the store's bound: the fetch that follows says so
    }
    const where = stored.storage.configMap ? `ConfigMap ${stored.storage.configMap}` : 'storage';
    job.goodVerifiedWith = undefined;
    job.good = {
      observedGeneration: pi.metadata.generation ?? 0,
      image: pi.spec.image,
      fetched: true,
      reason: 'Fetched',
      message: `Serving the content stored before in ${where} (${stored.digest})`,
      digest: stored.digest,
      sha256: stored.sha256,
      size: stored.content.length,
      storage: stored.storage,
    };
    this.emit(job, pi, job.good);
  }

  /** A failed attempt: retried with backoff; content of the current spec already fetched keeps serving. */
  private failed(job: Job, pi: PluginInstallation, error: PluginFetchError): void {
    const generation = pi.metadata.generation ?? 0;
    job.attempt++;
    this.opts.onAttempt?.(error.reason);
    const delay = this.retryDelay(job.attempt);
    const retry = `retrying in ${Math.max(1, Math.round(delay / 1000))}s (attempt ${job.attempt})`;
    const good = job.good;
    if (good && good.image === pi.spec.image && good.observedGeneration === generation) {
      // A re-resolve or re-fetch (a new pull Secret) failed: keep serving what we have, and say so.
      this.opts.log?.('warn', 'plugin refresh failed; keeping the fetched content', {
        plugin: job.key,
        reason: error.reason,
        err: error.message,
        ...(error.detail ? { detail: error.detail } : {}),
      });
      this.emit(job, pi, {
        ...good,
        message: `${good.message}; refreshing it failed (${error.reason}): ${error.message}; ${retry}`,
      });
    } else {
      this.opts.log?.('warn', 'plugin fetch failed', {
        plugin: job.key,
        reason: error.reason,
        err: error.message,
        ...(error.detail ? { detail: error.detail } : {}),
      });
      this.emit(job, pi, {
        observedGeneration: generation,
        image: pi.spec.image,
        fetched: false,
        reason: error.reason,
        message: `${error.message}; ${retry}`,
      });
    }
    this.schedule(job, delay);
  }

  /** Checks the cosign signature of `digest` (tag `sha256-<hex>.sig` in the same repository). */
  private async verifySignature(
    pi: PluginInstallation,
    verify: NonNullable<PluginFetchRequest['verify']>,
    ref: ReturnType<typeof parseImageReference>,
    digest: string,
    creds: Parameters<OciClient['resolve']>[1],
  ): Promise<void> {
    const key = verify;
    if (!key.publicKeyPem) throw new PluginFetchError('SignatureInvalid', key.problem ?? 'spec.verify: no public key');
    let publicKey;
    try {
      publicKey = parsePublicKey(key.publicKeyPem);
    } catch (e) {
      throw new PluginFetchError(
        'SignatureInvalid',
        `spec.verify.publicKeyRef: not a PEM public key (${(e as Error).message})`,
      );
    }
    const tag = signatureTag(digest);
    let sig;
    try {
      sig = await this.opts.client.resolve({ registry: ref.registry, repository: ref.repository, tag }, creds);
    } catch (e) {
      if (e instanceof PluginFetchError && e.reason === 'NotFound')
        throw new PluginFetchError(
          'SignatureMissing',
          `${pi.spec.image}: no cosign signature for ${digest} (tag ${tag} not found)`,
        );
      throw e;
    }
    const layers = signatureLayers(sig.manifest);
    if (!layers.length)
      throw new PluginFetchError('SignatureMissing', `${pi.spec.image}: ${tag} holds no cosign signature layer`);
    const problems: string[] = [];
    for (const layer of layers) {
      const payload = await this.opts.client.blob(
        { registry: ref.registry, repository: ref.repository, tag },
        layer,
        creds,
      );
      const problem = signatureProblem(
        payload,
        layer.annotations![COSIGN_SIGNATURE_ANNOTATION]!,
        publicKey,
        digest,
        `${ref.registry}/${ref.repository}`,
      );
      if (!problem) return;
      problems.push(problem);
    }
    throw new PluginFetchError(
      'SignatureInvalid',
      `${pi.spec.image}: no signature of ${digest} verifies with the key in spec.verify.publicKeyRef (${[...new Set(problems)].join('; ')})`,
    );
  }

  /** One fetch: resolve the manifest; reuse content whose digest did not move; else download. */
  private async fetch(pi: PluginInstallation, job: Job): Promise<Result> {
    const ref = parseImageReference(pi.spec.image);
    const type = pi.spec.type as PluginType;
    const where = `${pi.spec.image}`;
    const { dockerConfig, verify } = job.request;
    let creds;
    try {
      creds = dockerConfig === undefined ? undefined : credentialsFor(dockerConfig, ref.registry);
    } catch (e) {
      throw new PluginFetchError('Unauthorized', `spec.pullSecretRef: ${(e as Error).message}`);
    }
    const resolved = await this.opts.client.resolve(ref, creds);
    if (verify) await this.verifySignature(pi, verify, ref, resolved.digest, creds);
    const base = { observedGeneration: pi.metadata.generation ?? 0, image: pi.spec.image };
    const fetched = (digest: string, sha256: string, size: number, storage: Result['storage']): Result => ({
      ...base,
      fetched: true,
      reason: 'Fetched',
      message: `Fetched ${digest} (${size} bytes)`,
      digest,
      sha256,
      size,
      ...(storage && Object.keys(storage).length ? { storage } : {}),
    });
    // Content this process fetched and verified with the same key may be served again for the
    // same digest; content stored elsewhere is reused only for unsigned plugins.
    const verifiedWith = verify?.publicKeyPem;
    const held =
      job.good?.digest === resolved.digest && job.good.sha256 && job.goodVerifiedWith === verifiedWith
        ? this.opts.content.get(job.good.sha256)
        : undefined;
    if (held) {
      // Same content: store it again (an idempotent apply), so a storage ConfigMap deleted by
      // hand comes back on the next re-resolve.
      const storage = await this.opts.storage.save(pi, {
        content: held,
        sha256: job.good!.sha256!,
        digest: resolved.digest,
      });
      return fetched(resolved.digest, job.good!.sha256!, held.length, storage);
    }
    const stored = verify ? undefined : await this.opts.storage.load(pi).catch(() => undefined);
    if (stored && stored.digest === resolved.digest) {
      job.inflight = this.opts.content.put(stored.content);
      return fetched(resolved.digest, stored.sha256, stored.content.length, stored.storage);
    }
    const layer = pluginLayer(resolved.manifest, type, `${where} (${resolved.digest})`);
    // A layer that is the file itself (not archived) declares its size and sha256: content that would
    // not fit the bound is refused before it is downloaded, not downloaded again at every retry.
    if (!layer.archived) {
      const { size, digest } = layer.layer;
      this.opts.content.ensureRoom(size, digest.startsWith('sha256:') ? digest.slice('sha256:'.length) : undefined);
    }
    const blob = await this.opts.client.blob(ref, layer.layer, creds);
    const content = await extractPlugin(blob, layer, type, this.opts.maxBytes, `${where} (${resolved.digest})`);
    if (type === 'lua' && content.length > CONFIGMAP_CONTENT_LIMIT) {
      throw new PluginFetchError(
        'TooLarge',
        `${where}: plugin.lua is ${content.length} bytes; Lua plugins are limited to ${CONFIGMAP_CONTENT_LIMIT} bytes (a ConfigMap)`,
      );
    }
    const sha256 = this.opts.content.put(content);
    job.inflight = sha256;
    const storage = await this.opts.storage.save(pi, { content, sha256, digest: resolved.digest });
    this.opts.log?.('info', 'plugin fetched', {
      plugin: `${pi.metadata.namespace}/${pi.metadata.name}`,
      digest: resolved.digest,
      sha256,
      size: content.length,
    });
    return fetched(resolved.digest, sha256, content.length, storage);
  }
}

/** The PluginInstallation a request is for, as the storage (its ConfigMap's owner) needs it. */
function installationOf(request: PluginFetchRequest): PluginInstallation {
  return {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'PluginInstallation',
    metadata: {
      namespace: request.namespace,
      name: request.name,
      generation: request.generation,
      ...(request.uid ? { uid: request.uid } : {}),
    },
    spec: { image: request.image, type: request.type as PluginType },
  };
}
