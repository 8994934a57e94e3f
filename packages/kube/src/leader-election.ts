// Leader election on a coordination.k8s.io Lease with client-go's semantics: lease 15 s, renew
// deadline 10 s, retry every 2 s; expiry is judged by when WE last saw the renew time change
// (clock-skew safe); optimistic concurrency through resourceVersion (409 = lost the race).
// Only the writers (status, infra) need leadership; every replica serves xDS.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { KubeApiError, type KubeClient } from './client.js';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** MicroTime as the API server wants it: six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  readonly identity: string;
  private leading = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private observed?: { renewTime?: string; holder?: string; at: number };
  private lastRenew = 0;

  constructor(private readonly o: LeaderElectionOptions) {
    this.identity = o.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.o.namespace}/leases/${this.o.name}`;
  }

  start(): void {
    void this.tick();
  }

  private schedule(): void {
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.o.retryPeriodMs ?? 2000);
  }

  private setLeading(v: boolean): void {
    if (v === this.leading) return;
    this.leading = v;
    this.o.log?.('info', v ? 'became the leader' : 'lost leadership', {
      identity: this.identity,
      lease: `${this.o.namespace}/${this.o.name}`,
    });
    if (v) this.o.onStartedLeading();
    else this.o.onStoppedLeading();
  }

  private async tick(): Promise<void> {
    try {
      await this.tryAcquireOrRenew();
    } catch (e) {
      this.o.log?.('warn', `leader election: ${(e as Error).message}`);
    }
    // A leader that could not renew within the deadline steps down.
    if (this.leading && this.now() - this.lastRenew > (this.o.renewDeadlineMs ?? 10_000)) this.setLeading(false);
    this.schedule();
  }

  private spec(acquire: boolean, transitions: number, prev?: Lease['spec']): Lease['spec'] {
    const now = microTime(this.now());
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.round((this.o.leaseDurationMs ?? 15_000) / 1000),
      acquireTime: acquire ? now : (prev?.acquireTime ?? now),
      renewTime: now,
      leaseTransitions: transitions,
    };
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const r = await this.o.client.request<Lease>('GET', this.path);
    if (r.status === 404) {
      const created = await this.o.client.request(
        'POST',
        `/apis/coordination.k8s.io/v1/namespaces/${this.o.namespace}/leases`,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: this.spec(true, 0),
        },
      );
      if (created.status === 201) {
        this.lastRenew = this.now();
        this.setLeading(true);
      }
      return;
    }
    if (r.status !== 200) throw new KubeApiError(r.status, '', `GET lease: ${r.status} ${r.text.slice(0, 200)}`);
    const lease = r.body;
    const holder = lease.spec.holderIdentity ?? '';
    if (!this.observed || this.observed.renewTime !== lease.spec.renewTime || this.observed.holder !== holder) {
      this.observed = { holder, at: this.now(), ...(lease.spec.renewTime ? { renewTime: lease.spec.renewTime } : {}) };
    }
    const durationMs = (lease.spec.leaseDurationSeconds ?? 15) * 1000;
    const mine = holder === this.identity;
    const expired = !holder || this.now() - this.observed.at > durationMs;
    if (!mine && !expired) {
      this.setLeading(false);
      return;
    }
    const transitions = (lease.spec.leaseTransitions ?? 0) + (mine ? 0 : 1);
    const put = await this.o.client.request('PUT', this.path, {
      ...lease,
      spec: this.spec(!mine, transitions, lease.spec),
    });
    if (put.status === 200) {
      this.lastRenew = this.now();
      this.setLeading(true);
    } else if (put.status === 409) {
      // Someone else renewed or took it first.
      if (!mine) this.setLeading(false);
    } else {
      throw new KubeApiError(put.status, '', `update lease: ${put.status} ${put.text.slice(0, 200)}`);
    }
  }

  /** Stops; a leader releases the lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.leading) return;
    try {
      const r = await this.o.client.request<Lease>('GET', this.path);
      if (r.status === 200 && r.body.spec.holderIdentity === this.identity) {
        await this.o.client.request('PUT', this.path, {
          ...r.body,
          spec: { ...r.body.spec, holderIdentity: '', leaseDurationSeconds: 1 },
        });
      }
    } catch {
      // best effort
    }
    this.setLeading(false);
  }
}
