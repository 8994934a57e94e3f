// Which ProxyReports are live: a report whose renewTime has not changed for its lease duration, as
// this process's clock measures it, belongs to a replica that is gone (killed with no goodbye), and is
// removed from the engine's view even though the object is still in the API server. Like leader
// election, expiry is judged by when WE last saw the renew time change, so the replicas' clocks need
// not agree; only at first sight (a report listed after a restart) is its renewTime compared with our
// clock, so that a report dead for long is not given a whole lease more.
//
// Only a change of what the translator reads (the Gateways) goes on to the engine: a renewal alone
// is not an event, so heartbeats never cause a translation or an event-log entry.
import { remove, type SourceEvent } from '@turnpike/engine';
import type { ProxyReport } from '@turnpike/api';

export const DEFAULT_REPORT_LEASE_MS = 15_000;

export interface ProxyReportLivenessOptions {
  emit: (e: SourceEvent) => void;
  /** A live report expired: its replica is gone (the leader deletes the object). */
  onExpired?: (namespace: string, name: string) => void;
  /** How many reports are live, whenever that changes. */
  onLive?: (count: number) => void;
  now?: () => number;
}

interface Seen {
  source: string;
  namespace: string;
  name: string;
  renewTime: string;
  /** When we saw renewTime change (our clock). */
  seenAt: number;
  leaseMs: number;
  /** What the engine was last told (the Gateways, as text); undefined: nothing, or a removal. */
  told?: string;
  timer?: NodeJS.Timeout;
}

export class ProxyReportLiveness {
  private readonly seen = new Map<string, Seen>();
  private readonly now: () => number;
  private liveCount = 0;

  constructor(private readonly o: ProxyReportLivenessOptions) {
    this.now = o.now ?? Date.now;
  }

  /** A ProxyReport event from its reflector (upsert or delete); anything else passes through. */
  accept(e: SourceEvent): void {
    this.take(e);
    this.countLive();
  }

  private countLive(): void {
    let n = 0;
    for (const s of this.seen.values()) if (s.told !== undefined) n++;
    if (n === this.liveCount) return;
    this.liveCount = n;
    this.o.onLive?.(n);
  }

  private take(e: SourceEvent): void {
    if (e.kind !== 'ProxyReport' || (e.type !== 'upsert' && e.type !== 'delete')) return this.o.emit(e);
    const key = `${e.namespace ?? ''}/${e.name ?? ''}`;
    const prev = this.seen.get(key);
    if (e.type === 'delete') {
      if (prev?.timer) clearTimeout(prev.timer);
      this.seen.delete(key);
      if (prev?.told !== undefined) this.o.emit(e);
      return;
    }
    const report = e.object as ProxyReport;
    const renewTime = String(report.spec?.renewTime ?? '');
    const lease = Number(report.spec?.leaseDurationSeconds) * 1000;
    const leaseMs = Number.isFinite(lease) && lease >= 1000 ? lease : DEFAULT_REPORT_LEASE_MS;
    const now = this.now();
    let seenAt: number;
    if (prev && prev.renewTime === renewTime) seenAt = prev.seenAt;
    else if (prev) seenAt = now;
    else {
      const wall = Date.parse(renewTime);
      seenAt = Number.isFinite(wall) && now - wall >= leaseMs ? now - leaseMs : now;
    }
    const s: Seen = {
      source: e.source,
      namespace: e.namespace ?? '',
      name: e.name ?? '',
      renewTime,
      seenAt,
      leaseMs,
      ...(prev?.told !== undefined ? { told: prev.told } : {}),
    };
    if (prev?.timer) clearTimeout(prev.timer);
    this.seen.set(key, s);
    if (now - seenAt >= leaseMs) return this.expire(key, s);
    const content = JSON.stringify(report.spec?.gateways ?? []);
    if (s.told !== content) {
      s.told = content;
      this.o.emit(e);
    }
    s.timer = setTimeout(() => this.check(key), seenAt + leaseMs - now + 1);
    s.timer.unref();
  }

  /** The reports counted as live now (`namespace/name`), for tests and debugging. */
  live(): string[] {
    return [...this.seen.entries()].filter(([, s]) => s.told !== undefined).map(([k]) => k);
  }

  stop(): void {
    for (const s of this.seen.values()) if (s.timer) clearTimeout(s.timer);
  }

  private check(key: string): void {
    const s = this.seen.get(key);
    if (!s) return;
    s.timer = undefined;
    const left = s.seenAt + s.leaseMs - this.now();
    if (left > 0) {
      s.timer = setTimeout(() => this.check(key), left + 1);
      s.timer.unref();
      return;
    }
    this.expire(key, s);
  }

  /** Gone: the engine forgets it (if it was told of it), and the leader may delete the object. */
  private expire(_key: string, s: Seen): void {
    if (s.told !== undefined) this.o.emit(remove(s.source, 'ProxyReport', s.namespace, s.name));
    s.told = undefined;
    this.o.onExpired?.(s.namespace, s.name);
    this.countLive();
  }
}
