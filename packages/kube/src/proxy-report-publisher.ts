// This replica's ProxyReport: what the proxies connected to it said, written to the API server in
// the controller's namespace for every replica to read (the leader writes statuses from all of them).
//
// Written when it changes, at most once per `minIntervalMs` (changes in between are coalesced into
// the next write), and renewed every third of the lease so that readers can tell it is alive: a
// replica killed without a goodbye stops renewing and its report expires (proxy-report-liveness.ts).
// On a graceful stop the report is deleted. A failed write is retried; the last content wins.
import { PROXY_REPORT_KIND, proxyReportObject, TURNPIKE_API_VERSION, type ReportedGateway } from '@turnpike/api';
import { KubeApiError, type KubeClient } from './client.js';
import { DEFAULT_REPORT_LEASE_MS } from './proxy-report-liveness.js';

export const PROXY_REPORT_FIELD_MANAGER = 'turnpike-proxy-report';
export const DEFAULT_REPORT_INTERVAL_MS = 250;
const RETRY_MS = 1000;

export interface ProxyReportPublisherOptions {
  client: KubeClient;
  namespace: string;
  /** This replica's name (its Pod name): the object's name. */
  replica: string;
  leaseDurationMs?: number;
  minIntervalMs?: number;
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Each write's outcome (turnpike_proxy_report_writes_total). */
  onWrite?: (ok: boolean) => void;
  now?: () => number;
}

export class ProxyReportPublisher {
  private readonly gateways = new Map<string, ReportedGateway>();
  /** The Gateways as last written (text); undefined: nothing written yet. */
  private written?: string;
  private lastWriteAt = -Infinity;
  private timer?: NodeJS.Timeout;
  private renewTimer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private renewDue = false;
  private stopped = false;
  private readonly leaseMs: number;
  private readonly intervalMs: number;
  private readonly now: () => number;
  readonly stats = { writes: 0, failures: 0 };

  constructor(private readonly o: ProxyReportPublisherOptions) {
    this.leaseMs = o.leaseDurationMs ?? DEFAULT_REPORT_LEASE_MS;
    this.intervalMs = o.minIntervalMs ?? DEFAULT_REPORT_INTERVAL_MS;
    this.now = o.now ?? Date.now;
  }

  private get path(): string {
    const name = encodeURIComponent(this.o.replica);
    return `/apis/${TURNPIKE_API_VERSION}/namespaces/${this.o.namespace}/proxyreports/${name}`;
  }

  /** Writes the (empty) report now and renews it every third of the lease. */
  start(): void {
    this.renewDue = true;
    this.schedule();
    this.renewTimer = setInterval(
      () => {
        this.renewDue = true;
        this.schedule();
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    this.renewTimer.unref();
  }

  /** One Gateway's entry changed (undefined: gone). */
  set(gateway: string, entry: ReportedGateway | undefined): void {
    if (entry) this.gateways.set(gateway, entry);
    else if (!this.gateways.delete(gateway)) return;
    this.schedule();
  }

  /** Stops writing and deletes the report: this replica's proxies are no longer its to report. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    await this.writing;
    try {
      await this.o.client.must('DELETE', this.path);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 404))
        this.o.log?.('warn', 'cannot delete the proxy report', { err: (e as Error).message });
    }
  }

  private content(): string {
    return JSON.stringify([...this.gateways.keys()].sort().map((k) => this.gateways.get(k)));
  }

  private schedule(delay?: number): void {
    if (this.stopped || this.timer || this.writing) return;
    const wait = delay ?? Math.max(0, this.lastWriteAt + this.intervalMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.flush().finally(() => {
        this.writing = undefined;
        // What changed while it was written goes in the next write.
        if (this.renewDue || this.content() !== this.written) this.schedule();
      });
    }, wait);
    this.timer.unref();
  }

  private async flush(): Promise<void> {
    const content = this.content();
    if (!this.renewDue && content === this.written) return;
    const renew = this.renewDue;
    this.renewDue = false;
    const now = this.now();
    const report = proxyReportObject(
      this.o.namespace,
      this.o.replica,
      this.gateways.values(),
      new Date(now).toISOString(),
      Math.round(this.leaseMs / 1000),
    );
    this.lastWriteAt = now;
    try {
      await this.o.client.must(
        'PATCH',
        `${this.path}?fieldManager=${PROXY_REPORT_FIELD_MANAGER}&force=true`,
        { ...report, apiVersion: TURNPIKE_API_VERSION, kind: PROXY_REPORT_KIND },
        'application/apply-patch+yaml',
      );
      // The interval counts from the answer, so the API server never sees two writes closer than it.
      this.lastWriteAt = this.now();
      this.written = content;
      this.stats.writes++;
      this.o.onWrite?.(true);
    } catch (e) {
      this.stats.failures++;
      this.o.onWrite?.(false);
      this.o.log?.('warn', 'cannot write the proxy report; retrying', { err: (e as Error).message });
      this.renewDue ||= renew;
      this.lastWriteAt = now + RETRY_MS - this.intervalMs;
    }
  }
}
