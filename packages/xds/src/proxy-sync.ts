// Whether each Gateway's connected proxies run the configuration we serve, from their ACKs: a stream is
// behind while a response sent to it is neither accepted nor rejected, or while its last rejection
// stands. Per Gateway the tracker reports how many proxies are connected and which are behind
// (when that changes), the plugins the configuration they all acknowledged runs, and, per proxy, how
// long a change took from its first event to the ACK.
//
// A proxy counts as behind only once it has been for `behindAfterMs` (or at once after a NACK): a
// push acknowledged within that is not news. Reporting every push's few milliseconds of "behind"
// would turn each endpoint change into two more translations and two Gateway status writes.
import { MAX_REPORTED_PROXIES, type ReportedProxy } from '@turnpike/api';
import type { ProxyStream } from './ads-server.js';

export interface GatewaySync {
  /** Proxies with an open stream for this Gateway. */
  connected: number;
  /** The node ids of those that do not run the current configuration, sorted. */
  behind: string[];
  /**
   * The plugins (`namespace/name@sha256`) referenced by the configuration every connected proxy
   * acknowledged; absent while none did since the last proxy connected.
   */
  plugins?: string[];
  /** Each proxy (its id, when it connected, whether it is behind, what it rejected): behind first, then by id, bounded. */
  proxies: ReportedProxy[];
}

export interface ProxySyncOptions {
  /** A Gateway's summary changed (connected 0: its last proxy left). */
  onChange: (gateway: string, sync: GatewaySync) => void;
  /** A proxy caught up: seconds from the first event of the change to its ACK. */
  onLatency?: (gateway: string, seconds: number) => void;
  now?: () => number;
  /** How long a proxy may take to ACK before it is reported behind (default 1000 ms). */
  behindAfterMs?: number;
}

export const DEFAULT_BEHIND_AFTER_MS = 1000;

interface StreamState {
  gateway: string;
  id: string;
  connectedAt: string;
  inSync: boolean;
  /** Its last response was rejected (behind at once): what it said. */
  rejected?: { typeUrl: string; version: string; message: string };
  /** It acknowledged a response: a stream that just opened runs nothing of ours yet. */
  acknowledged: boolean;
  /** Since when it is out of sync (epoch ms). */
  behindSince?: number;
  /** When the change it is catching up with began (epoch ms). */
  awaitingSince?: number;
}

export class ProxySyncTracker {
  private readonly streams = new Map<ProxyStream, StreamState>();
  /** Gateway → its streams' states. */
  private readonly byGateway = new Map<string, Set<StreamState>>();
  private readonly reported = new Map<string, string>();
  /** Per Gateway the plugins the configuration served now references, and those of the last one all acknowledged. */
  private readonly serving = new Map<string, string[]>();
  private readonly acked = new Map<string, string[]>();
  /** Per Gateway a pending look at streams that may have been behind too long by then. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** While a push is under way: when the events it carries began. */
  private pushSince?: number;
  private readonly now: () => number;
  private readonly behindAfterMs: number;

  constructor(private readonly opts: ProxySyncOptions) {
    this.now = opts.now ?? Date.now;
    this.behindAfterMs = opts.behindAfterMs ?? DEFAULT_BEHIND_AFTER_MS;
  }

  /** Brackets a cache update: streams that fall behind during it are catching up with events since `since`. */
  push(since: string, update: () => void, plugins?: ReadonlyMap<string, string[] | undefined>): void {
    const at = Date.parse(since);
    this.pushSince = Number.isNaN(at) ? this.now() : at;
    // Set before the update: the streams that fall behind during it are catching up with this.
    for (const [gateway, list] of plugins ?? []) {
      if (list?.length) this.serving.set(gateway, list);
      else this.serving.delete(gateway);
    }
    try {
      update();
    } finally {
      this.pushSince = undefined;
    }
    // A change that sent nothing new (all still in sync) is acknowledged as it stands.
    for (const gateway of plugins?.keys() ?? []) this.report(gateway);
  }

  /** The ADS server's onStreamChange. */
  streamChanged(stream: ProxyStream, closed: boolean): void {
    if (!stream.node) return;
    const inSync = !closed && Object.keys(stream.pending).length === 0 && !stream.rejected;
    let st = this.streams.get(stream);
    if (!st) {
      st = {
        gateway: stream.node,
        id: stream.id || stream.peer,
        connectedAt: stream.connectedAt,
        inSync: true,
        acknowledged: false,
      };
      this.streams.set(stream, st);
      let mine = this.byGateway.get(st.gateway);
      if (!mine) this.byGateway.set(st.gateway, (mine = new Set()));
      mine.add(st);
    }
    if (Object.keys(stream.acked).length > 0) st.acknowledged = true;
    const r = stream.rejected;
    if (r) st.rejected = { typeUrl: r.typeUrl, version: r.version, message: r.message.slice(0, 500) };
    else delete st.rejected;
    if (closed) {
      this.streams.delete(stream);
      const mine = this.byGateway.get(st.gateway);
      mine?.delete(st);
      if (mine?.size === 0) this.byGateway.delete(st.gateway);
    } else if (st.inSync && !inSync) {
      st.awaitingSince = this.pushSince ?? this.now();
      st.behindSince = this.now();
      this.lookAgain(st.gateway);
    } else if (!st.inSync && inSync && st.awaitingSince !== undefined) {
      this.opts.onLatency?.(st.gateway, Math.max(0, this.now() - st.awaitingSince) / 1000);
      st.awaitingSince = undefined;
    }
    if (inSync) st.behindSince = undefined;
    st.inSync = inSync;
    this.report(st.gateway);
  }

  summary(gateway: string): GatewaySync {
    const mine = [...(this.byGateway.get(gateway) ?? [])];
    const now = this.now();
    const isBehind = (s: StreamState) =>
      !s.inSync && (s.rejected !== undefined || now - (s.behindSince ?? now) >= this.behindAfterMs);
    const behind = mine
      .filter(isBehind)
      .map((s) => s.id)
      .sort();
    if (mine.length === 0) this.acked.delete(gateway);
    else if (mine.every((s) => s.inSync && s.acknowledged)) this.acked.set(gateway, this.serving.get(gateway) ?? []);
    const plugins = this.acked.get(gateway);
    const proxies = mine
      .map((s) => ({ s, behind: isBehind(s) }))
      .sort((a, b) => Number(b.behind) - Number(a.behind) || (a.s.id < b.s.id ? -1 : a.s.id > b.s.id ? 1 : 0))
      .slice(0, MAX_REPORTED_PROXIES)
      .map(({ s, behind }): ReportedProxy => ({
        id: s.id,
        connectedAt: s.connectedAt,
        ...(behind ? { behind: true as const } : {}),
        ...(s.rejected ? { rejected: s.rejected } : {}),
      }));
    return { connected: mine.length, behind, ...(plugins ? { plugins } : {}), proxies };
  }

  /** Reports again once a stream that fell behind now would count as behind. */
  private lookAgain(gateway: string): void {
    if (this.timers.has(gateway)) return;
    const timer = setTimeout(() => {
      this.timers.delete(gateway);
      this.report(gateway);
      // Streams that fell behind later than the first one are looked at again in turn.
      const now = this.now();
      if (
        [...(this.byGateway.get(gateway) ?? [])].some(
          (s) => !s.inSync && now - (s.behindSince ?? now) < this.behindAfterMs,
        )
      )
        this.lookAgain(gateway);
    }, this.behindAfterMs + 1);
    timer.unref();
    this.timers.set(gateway, timer);
  }

  private report(gateway: string): void {
    const sync = this.summary(gateway);
    const text = JSON.stringify(sync);
    if (this.reported.get(gateway) === text) return;
    if (sync.connected === 0 && !this.reported.has(gateway)) return;
    if (sync.connected === 0) this.reported.delete(gateway);
    else this.reported.set(gateway, text);
    this.opts.onChange(gateway, sync);
  }
}
