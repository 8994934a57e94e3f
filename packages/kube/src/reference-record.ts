// The record of referenced Secrets and ConfigMaps (api/secret-data.ts, ReferenceRecord), written by the
// leader into the ConfigMap `turnpike-references` of the controller's namespace. The live tools
// (`analyze|explain|diff --kubeconfig`) read it instead of the Secrets: the ClusterRole turnpike-viewer
// may get this one ConfigMap and no Secret. It is derived from the snapshot (translator's
// referenceRecordEntries) when one of the kinds it depends on changed, and written when what it says
// changed, at most once per `minIntervalMs`; a failed write is retried, the last content wins.
import type { RecordedReference, ReferenceRecord } from '@turnpike/api';
import { referenceRecordEntries, type Snapshot } from '@turnpike/translator';
import type { KubeClient } from './client.js';

export const REFERENCE_RECORD_NAME = 'turnpike-references';
export const REFERENCE_RECORD_KEY = 'references.json';
export const REFERENCE_RECORD_FIELD_MANAGER = 'turnpike-references';
/** Below a ConfigMap's 1 MiB, with room for its metadata. */
export const REFERENCE_RECORD_MAX_BYTES = 900 * 1024;
const RETRY_MS = [1000, 2000, 5000, 10_000, 30_000];

/** The kinds the record is derived from: another snapshot with the same stores of these says the same. */
const INPUT_KINDS = [
  'GatewayClass',
  'Gateway',
  'ListenerSet',
  'BackendTLSPolicy',
  'PluginInstallation',
  'ReferenceGrant',
  'Secret',
  'ConfigMap',
];

export interface ReferenceRecordOptions {
  client: KubeClient;
  /** The controller's namespace. */
  namespace: string;
  controllerName?: string;
  minIntervalMs?: number;
  maxBytes?: number;
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}

/** The record's JSON for these entries, cut to `maxBytes` (the rest counted as omitted). */
export function referenceRecordText(entries: RecordedReference[], updated: string, maxBytes: number): string {
  const text = (kept: RecordedReference[]) => {
    const record: ReferenceRecord = {
      updated,
      references: kept,
      ...(kept.length < entries.length ? { omitted: entries.length - kept.length } : {}),
    };
    return JSON.stringify(record);
  };
  const all = text(entries);
  if (Buffer.byteLength(all) <= maxBytes) return all;
  // The longest prefix that fits (the entries are sorted, so which are left out is stable).
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (Buffer.byteLength(text(entries.slice(0, mid))) <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  return text(entries.slice(0, lo));
}

export class ReferenceRecordPublisher {
  private inputs: unknown[] = [];
  /** The entries as derived last (JSON), and as last written. */
  private desired?: string;
  private entries: RecordedReference[] = [];
  private written?: string;
  private lastWriteAt = -Infinity;
  private timer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private failures = 0;
  private omittedWarned = 0;
  private stopped = false;
  private readonly now: () => number;
  readonly stats = { writes: 0, failures: 0 };

  constructor(private readonly o: ReferenceRecordOptions) {
    this.now = o.now ?? Date.now;
  }

  /** A translation's snapshot (leader only). `rewrite`: write even if unchanged (a new leader). */
  update(snapshot: Snapshot, rewrite = false): void {
    if (this.stopped) return;
    if (rewrite) this.written = undefined;
    const inputs = INPUT_KINDS.map((k) => snapshot.get(k));
    if (this.desired === undefined || inputs.some((s, i) => s !== this.inputs[i])) {
      this.inputs = inputs;
      this.entries = referenceRecordEntries(snapshot, this.o.controllerName);
      this.desired = JSON.stringify(this.entries);
    }
    // After a failure the retry (with backoff) writes whatever is newest then.
    if (this.desired !== this.written && !this.retryTimer) this.schedule();
  }

  /** A write is due, under way or waiting to be retried. */
  get pending(): boolean {
    return !!(this.timer || this.writing || this.retryTimer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.writing;
  }

  private schedule(delay?: number): void {
    if (this.stopped || this.timer || this.writing) return;
    const wait = delay ?? Math.max(0, this.lastWriteAt + (this.o.minIntervalMs ?? 250) - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.flush().finally(() => {
        this.writing = undefined;
        if (this.desired !== this.written && !this.retryTimer) this.schedule();
      });
    }, wait);
    this.timer.unref();
  }

  private async flush(): Promise<void> {
    const desired = this.desired;
    if (desired === undefined || desired === this.written) return;
    const text = referenceRecordText(
      this.entries,
      new Date(this.now()).toISOString(),
      this.o.maxBytes ?? REFERENCE_RECORD_MAX_BYTES,
    );
    const omitted = (JSON.parse(text) as ReferenceRecord).omitted ?? 0;
    if (omitted !== this.omittedWarned) {
      this.omittedWarned = omitted;
      if (omitted)
        this.o.log?.('warn', 'the record of referenced Secrets is full: the live tools cannot judge the rest', {
          configMap: `${this.o.namespace}/${REFERENCE_RECORD_NAME}`,
          omitted,
        });
    }
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: REFERENCE_RECORD_NAME,
        namespace: this.o.namespace,
        // The controller's own: never input (the kube source's ConfigMap selector), never pruned.
        labels: { 'app.kubernetes.io/managed-by': 'turnpike' },
      },
      data: { [REFERENCE_RECORD_KEY]: text },
    };
    this.lastWriteAt = this.now();
    try {
      await this.o.client.must(
        'PATCH',
        `/api/v1/namespaces/${this.o.namespace}/configmaps/${REFERENCE_RECORD_NAME}` +
          `?fieldManager=${REFERENCE_RECORD_FIELD_MANAGER}&force=true`,
        cm,
        'application/apply-patch+yaml',
      );
      this.written = desired;
      this.failures = 0;
      this.stats.writes++;
    } catch (e) {
      this.stats.failures++;
      const wait = RETRY_MS[Math.min(this.failures++, RETRY_MS.length - 1)]!;
      this.o.log?.('warn', 'cannot write the record of referenced Secrets; retrying', {
        configMap: `${this.o.namespace}/${REFERENCE_RECORD_NAME}`,
        err: (e as Error).message,
        retryInMs: wait,
      });
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.schedule(0);
      }, wait);
      this.retryTimer.unref();
    }
  }
}
