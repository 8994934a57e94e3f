// Whether each Gateway's connected proxies run the configuration we serve, from their ACKs: a stream is
// behind while a response sent to it is neither accepted nor rejected, or while its last rejection
// stands. Per Gateway the tracker reports how many proxies are connected and which are behind
// (when that changes), and, per proxy, how long a change took from its first event to the ACK.
import type { ProxyStream } from './ads-server.js';

export interface GatewaySync {
  /** Proxies with an open stream for this Gateway. */
  connected: number;
  /** The node ids of those that do not run the current configuration, sorted. */
  behind: string[];
}

export interface ProxySyncOptions {
  /** A Gateway's summary changed (connected 0: its last proxy left). */
  onChange: (gateway: string, sync: GatewaySync) => void;
  /** A proxy caught up: seconds from the first event of the change to its ACK. */
  onLatency?: (gateway: string, seconds: number) => void;
  now?: () => number;
}

interface StreamState {
  gateway: string;
  id: string;
  inSync: boolean;
  /** When the change it is catching up with began (epoch ms). */
  awaitingSince?: number;
}

export class ProxySyncTracker {
  private readonly streams = new Map<ProxyStream, StreamState>();
  private readonly reported = new Map<string, string>();
  /** While a push is under way: when the events it carries began. */
  private pushSince?: number;
  private readonly now: () => number;

  constructor(private readonly opts: ProxySyncOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Brackets a cache update: streams that fall behind during it are catching up with events since `since`. */
  push(since: string, update: () => void): void {
    const at = Date.parse(since);
    this.pushSince = Number.isNaN(at) ? this.now() : at;
    try {
      update();
    } finally {
      this.pushSince = undefined;
    }
  }

  /** The ADS server's onStreamChange. */
  streamChanged(stream: ProxyStream, closed: boolean): void {
    if (!stream.node) return;
    const inSync = !closed && Object.keys(stream.pending).length === 0 && !stream.rejected;
    let st = this.streams.get(stream);
    if (!st) {
      st = { gateway: stream.node, id: stream.id || stream.peer, inSync: true };
      this.streams.set(stream, st);
    }
    if (closed) this.streams.delete(stream);
    else if (st.inSync && !inSync) st.awaitingSince = this.pushSince ?? this.now();
    else if (!st.inSync && inSync && st.awaitingSince !== undefined) {
      this.opts.onLatency?.(st.gateway, Math.max(0, this.now() - st.awaitingSince) / 1000);
      st.awaitingSince = undefined;
    }
    st.inSync = inSync;
    this.report(st.gateway);
  }

  summary(gateway: string): GatewaySync {
    const mine = [...this.streams.values()].filter((s) => s.gateway === gateway);
    return {
      connected: mine.length,
      behind: mine
        .filter((s) => !s.inSync)
        .map((s) => s.id)
        .sort(),
    };
  }

  private report(gateway: string): void {
    const sync = this.summary(gateway);
    const text = JSON.stringify(sync);
    if (this.reported.get(gateway) === text) return;
    if (sync.connected === 0) this.reported.delete(gateway);
    else this.reported.set(gateway, text);
    this.opts.onChange(gateway, sync);
  }
}
