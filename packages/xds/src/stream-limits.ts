// What one caller may hold of the ADS server (docs/security.md, "Bounds on callers"), and the books
// that keep count: the names each stream subscribes to as they stand (what they cost in bytes), each
// Gateway's share of the streams, and the connections that have not yet named a Gateway.
import type { Socket } from 'node:net';

/** What one caller may hold of the server; a stream or connection beyond them is ended and counted as refused. */
export interface StreamLimits {
  /** Open streams in all, identified or not. */
  maxStreams: number;
  /** Streams one HTTP/2 connection may carry at once. */
  maxStreamsPerConnection: number;
  /** A stream that has not named its Gateway (node.cluster) by then is ended. */
  identifyWithinMs: number;
  /** Type URLs one stream may subscribe to. */
  maxTypesPerStream: number;
  /** Resource names one stream may subscribe to, over all its types. */
  maxNamesPerStream: number;
  /**
   * Bytes one stream may hold: the names it subscribes to (each counted NAME_OVERHEAD_BYTES more than
   * its length), its type URLs and its node's id and cluster.
   */
  maxBytesPerStream: number;
  /** The same, for all the streams of one Gateway together. */
  maxBytesPerGateway: number;
  /**
   * One Gateway may hold at most max(minStreamsPerGateway, maxStreams × gatewayShare / Gateways) streams;
   * while the server is full, one holding fewer than max(minStreamsPerGateway, maxStreams / Gateways)
   * takes the newest stream of the Gateway furthest over that fair share.
   */
  minStreamsPerGateway: number;
  gatewayShare: number;
  /**
   * Connections whose streams have not named a Gateway yet (TLS and HTTP/2 handshakes included); a
   * new one beyond them closes the oldest.
   */
  maxPendingConnections: number;
  /** Such a connection is closed after this. */
  pendingConnectionMs: number;
  /** The largest request message read. */
  maxRequestBytes: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxStreams: 10_000,
  maxStreamsPerConnection: 100,
  identifyWithinMs: 10_000,
  maxTypesPerStream: 16,
  // A Gateway's EDS asks for one name per cluster: room for large ones.
  maxNamesPerStream: 100_000,
  // 100 000 names of 100 characters fit.
  maxBytesPerStream: 16 * 1024 * 1024,
  maxBytesPerGateway: 64 * 1024 * 1024,
  minStreamsPerGateway: 100,
  gatewayShare: 2,
  maxPendingConnections: 1_000,
  pendingConnectionMs: 10_000,
  maxRequestBytes: 4 * 1024 * 1024,
};

/** What a name costs beyond its characters: its entry in a Set, the string's header. */
export const NAME_OVERHEAD_BYTES = 64;
const cost = (name: string) => name.length + NAME_OVERHEAD_BYTES;

/** How many streams one Gateway may hold, of `gateways` (at least one). */
export function gatewayStreamShare(limits: StreamLimits, gateways: number): { fair: number; most: number } {
  const n = Math.max(1, gateways);
  return {
    fair: Math.max(limits.minStreamsPerGateway, Math.floor(limits.maxStreams / n)),
    most: Math.max(limits.minStreamsPerGateway, Math.floor((limits.maxStreams * limits.gatewayShare) / n)),
  };
}

/**
 * The names one stream subscribes to, per type URL, as they stand: a state-of-the-world request
 * replaces its type's names, a delta request adds what it subscribes and removes what it
 * unsubscribes ('*' is a wildcard, not a name). `bytes` is what they cost, type URLs included.
 */
export class Subscriptions {
  private readonly byType = new Map<string, Set<string>>();
  names = 0;
  bytes = 0;

  get types(): number {
    return this.byType.size;
  }

  /** A type's names (the set itself: read it, do not change it). */
  of(typeUrl: string): ReadonlySet<string> {
    return this.set(typeUrl);
  }

  private set(typeUrl: string): Set<string> {
    let set = this.byType.get(typeUrl);
    if (!set) {
      this.byType.set(typeUrl, (set = new Set()));
      this.bytes += typeUrl.length;
    }
    return set;
  }

  private add(set: Set<string>, name: string): void {
    if (name === '*' || set.has(name)) return;
    set.add(name);
    this.names++;
    this.bytes += cost(name);
  }

  private remove(set: Set<string>, name: string): void {
    if (!set.delete(name)) return;
    this.names--;
    this.bytes -= cost(name);
  }

  /** State of the world: the type's names become these; true if they changed. */
  replace(typeUrl: string, names: readonly string[]): boolean {
    const set = this.set(typeUrl);
    const next = new Set(names);
    next.delete('*');
    if (next.size === set.size && [...next].every((n) => set.has(n))) return false;
    for (const n of [...set]) if (!next.has(n)) this.remove(set, n);
    for (const n of next) this.add(set, n);
    return true;
  }

  /** Forgets every name (the stream ended: whatever still holds the stream need not hold them). */
  clear(): void {
    this.byType.clear();
    this.names = 0;
    this.bytes = 0;
  }

  /** Delta: subscribe, then unsubscribe. */
  change(typeUrl: string, subscribe: readonly string[], unsubscribe: readonly string[]): void {
    const set = this.set(typeUrl);
    for (const n of subscribe) this.add(set, n);
    for (const n of unsubscribe) this.remove(set, n);
  }
}

export interface ConnectionRefusal {
  peer: string;
  reason: 'too-many-pending-connections' | 'idle-connection';
  message: string;
}

interface Connection {
  socket: Socket;
  /** Its streams that named their Gateway and are open. */
  identified: number;
  timer?: NodeJS.Timeout;
}

/**
 * The connections the server accepted, by peer (`address:port`, as grpc-js gives a call's peer). One
 * is pending until a stream on it names its Gateway, and again once no such stream is open; a slow TLS
 * or HTTP/2 handshake is pending too. One pending for `pendingConnectionMs` is closed. At most
 * `maxPendingConnections` are: a new one closes the oldest, which has had the longest to name its
 * Gateway (a proxy does within milliseconds), so that silent connections can neither pile up nor, by
 * filling the room, keep a proxy out.
 */
export class ConnectionGate {
  private readonly connections = new Map<string, Connection>();
  /** The pending ones, oldest first. */
  private readonly pending = new Map<string, Connection>();

  constructor(
    private readonly limits: Pick<StreamLimits, 'maxPendingConnections' | 'pendingConnectionMs'>,
    private readonly onRefuse: (r: ConnectionRefusal) => void,
  ) {}

  /** Connections open now, and of them those pending. */
  get counts(): { open: number; pending: number } {
    return { open: this.connections.size, pending: this.pending.size };
  }

  /** A new connection. */
  accept(socket: Socket): void {
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    // Its errors are the TLS or HTTP/2 layer's to report; a reset before them is nothing to us.
    socket.on('error', () => undefined);
    const max = Math.max(1, this.limits.maxPendingConnections);
    for (const [oldest, conn] of this.pending) {
      if (this.pending.size < max) break;
      this.close(
        oldest,
        conn,
        'too-many-pending-connections',
        `the oldest of ${max} connections that had not named a Gateway, closed to make room for a new one`,
      );
    }
    const conn: Connection = { socket, identified: 0 };
    this.connections.set(peer, conn);
    this.wait(peer, conn);
    socket.once('close', () => this.forget(peer, conn));
  }

  /** A stream of this peer's connection named its Gateway. */
  identified(peer: string): void {
    const conn = this.connections.get(peer);
    if (!conn || conn.identified++ > 0) return;
    this.pending.delete(peer);
    clearTimeout(conn.timer);
  }

  /** A stream that had named its Gateway ended. */
  released(peer: string): void {
    const conn = this.connections.get(peer);
    if (!conn || conn.identified === 0 || --conn.identified > 0) return;
    this.wait(peer, conn);
  }

  /** Closes every connection (the server stops). */
  closeAll(): void {
    for (const [peer, conn] of [...this.connections]) {
      this.forget(peer, conn);
      conn.socket.destroy();
    }
  }

  private wait(peer: string, conn: Connection): void {
    this.pending.set(peer, conn);
    conn.timer = setTimeout(() => {
      if (this.pending.get(peer) !== conn) return;
      const within = `${this.limits.pendingConnectionMs / 1000}s`;
      this.close(peer, conn, 'idle-connection', `no stream named its Gateway within ${within}`);
    }, this.limits.pendingConnectionMs);
    conn.timer.unref();
  }

  private close(peer: string, conn: Connection, reason: ConnectionRefusal['reason'], message: string): void {
    this.forget(peer, conn);
    conn.socket.destroy();
    this.onRefuse({ peer, reason, message });
  }

  private forget(peer: string, conn: Connection): void {
    if (this.connections.get(peer) !== conn) return;
    this.connections.delete(peer);
    this.pending.delete(peer);
    clearTimeout(conn.timer);
  }
}
