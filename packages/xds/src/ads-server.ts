// The ADS server: state of the world and delta, on @grpc/grpc-js. Each node is served the
// snapshot of its Gateway (node.cluster = "<namespace>/<name>"). Versions are content hashes.
// A stale nonce is ignored; a NACK (error_detail) keeps the last ACKed config in force, is not
// answered with the same version again, and is logged, counted and reported to `onNack`.
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { createServer, type Server as NetServer } from 'node:net';
import { gatewayOfCertificate } from './identity/spiffe.js';
import { authorizeStream } from './identity/stream-authorization.js';
import { encodeJsonMessage } from './message-encoder.js';
import { messageType } from './proto-root.js';
import { LogRateLimit } from './log-rate-limit.js';
import { forDebugRead } from './secret-redaction.js';
import type { EncodedResource, NodeSnapshot, SnapshotCache } from './snapshot-cache.js';
import {
  ConnectionGate,
  DEFAULT_STREAM_LIMITS,
  gatewayStreamShare,
  Subscriptions,
  type StreamLimits,
} from './stream-limits.js';
import { SEND_ORDER, WILDCARD_TYPES, type TypeUrl } from './type-urls.js';

export * from './stream-limits.js';

export interface NackReport {
  node: string;
  typeUrl: string;
  version: string;
  message: string;
  at: string;
}

/** How the server authenticates proxies. Absent: plaintext, every node.cluster is served (loopback use). */
export interface AdsTlsOptions {
  credentials: grpc.ServerCredentials;
  /** Require a client certificate naming the Gateway in this trust domain (mTLS). */
  trustDomain?: string;
}

export interface StreamRefusal {
  node: string;
  reason: string;
  message: string;
  peer: string;
}

/** One open ADS stream, as `turnpike proxy-status` shows it. */
export interface ProxyStream {
  node: string;
  id: string;
  protocol: 'sotw' | 'delta';
  peer: string;
  connectedAt: string;
  /** Type URL → the version the proxy last accepted (delta: the snapshot version it acknowledged). */
  acked: Record<string, string>;
  /** Type URL → a version sent and neither accepted nor rejected yet: the proxy is behind while any is. */
  pending: Record<string, string>;
  /** The last configuration it rejected, if the rejection still stands. */
  rejected?: { typeUrl: string; version: string; message: string; at: string };
  /** A debug read, not a proxy (DEBUG_READ_METADATA): sent Secrets without their keys, counted nowhere. */
  debug?: boolean;
}

export interface AdsServerOptions {
  cache: SnapshotCache;
  tls?: AdsTlsOptions;
  onRefuse?: (r: StreamRefusal) => void;
  onNack?: (n: NackReport) => void;
  onAck?: (node: string, typeUrl: string, version: string) => void;
  onConnect?: (node: string, connected: number) => void;
  /** A stream (a proxy's or a debug read) began watching a node's snapshot. */
  onWatch?: (node: string) => void;
  /** After a stream connected, was sent a configuration, answered one, or closed. */
  onStreamChange?: (stream: ProxyStream, closed: boolean) => void;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  limits?: Partial<StreamLimits>;
}

interface Node {
  id?: string;
  cluster?: string;
  // A google.protobuf.Struct: proto-loader gives its Value fields camelCased whatever keepCase says.
  metadata?: { fields?: Record<string, { boolValue?: boolean }> };
}

/**
 * Node metadata that marks a stream as a debug read (`turnpike proxy-config`): served like a proxy
 * of its Gateway, but not one: it is left out of the proxies' sync accounting and the connected count,
 * so reading what a Gateway is served never changes its status. It is sent every Secret without its
 * secret material (secret-redaction.ts), whoever asks, and is listed in `proxies()` (`/debug/proxies`)
 * with `debug: true`, its peer and node, so an operator sees who reads.
 */
export const DEBUG_READ_METADATA = 'turnpike.dev/debug-read';

function isDebugRead(n: Node | undefined): boolean {
  return n?.metadata?.fields?.[DEBUG_READ_METADATA]?.boolValue === true;
}
interface DiscoveryRequest {
  version_info?: string;
  node?: Node;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { message?: string } | null;
}
/** What a request of either protocol subscribes to. */
interface SubscriptionRequest {
  type_url?: string;
  resource_names?: string[];
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
}
interface DeltaRequest {
  node?: Node;
  type_url?: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce?: string;
  error_detail?: { message?: string } | null;
}

interface SotwTypeState {
  wildcard: boolean;
  lastNonce?: string;
  sentVersion?: string;
  ackedVersion?: string;
  nackedVersion?: string;
  /** The subscription's generation when it was last sent (names changed since: send again). */
  sentNames?: number;
  names: number;
  /** RDS and EDS: the version of each resource last sent (these types are incremental even in SotW). */
  sent: Map<string, string>;
}
interface DeltaTypeState {
  wildcard: boolean;
  known: Map<string, string>;
  lastNonce?: string;
  nackedVersions: Map<string, string>;
}

function newStreamRecord(protocol: ProxyStream['protocol']): ProxyStream {
  return { node: '', id: '', protocol, peer: '', connectedAt: '', acked: {}, pending: {} };
}

/** A Gateway key (namespace/name) is at most 63 + 1 + 253 characters. */
const MAX_NODE_CLUSTER = 317;
/** What a stream's text is kept to: node ids, versions it acknowledges, the messages of its NACKs. */
const MAX_NODE_ID = 1024;
const MAX_VERSION = 64;
const MAX_NACK_MESSAGE = 4096;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** A stream as the limits count it. */
interface Hold {
  /** The Gateway it counts against: its certificate's, or (plaintext) the one it named. */
  gateway?: string;
  bytes: number;
  /** Order of arrival: the newest of a Gateway is the one preempted. */
  seq: number;
  end: (reason: string, message: string) => void;
}

function refuse(
  call: grpc.ServerDuplexStream<unknown, unknown>,
  code = grpc.status.INVALID_ARGUMENT,
  details = 'node.cluster must name the Gateway as <namespace>/<name>',
): void {
  call.emit('error', { code, details });
}

/** The ADS methods: both streams both ways (ads.proto; a test holds this to the proto). */
export const ADS_METHODS = [
  { name: 'StreamAggregatedResources', request: 'DiscoveryRequest', response: 'DiscoveryResponse' },
  { name: 'DeltaAggregatedResources', request: 'DeltaDiscoveryRequest', response: 'DeltaDiscoveryResponse' },
] as const;
const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';

/**
 * The ADS service, its messages read and written through the Envoy protos loaded for encoding
 * resources: what @grpc/proto-loader would give (requests as `toObject` with these options, responses
 * as `fromObject` then `encode` would write them, by the one-pass encoder), without loading the protos
 * a second time (0.14 s of every start). The types are looked up at the first message, so the protos
 * still load while the sources list or read, not before the server starts.
 */
export function loadAdsService(): grpc.ServiceDefinition {
  const read = { longs: String, enums: String, defaults: false, oneofs: true };
  const definition: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const method of ADS_METHODS) {
    const request = () => messageType(`envoy.service.discovery.v3.${method.request}`);
    const response = () => messageType(`envoy.service.discovery.v3.${method.response}`);
    definition[method.name] = {
      path: `/${ADS_SERVICE}/${method.name}`,
      requestStream: true,
      responseStream: true,
      requestSerialize: (value: object) => encodeJsonMessage(request(), value),
      requestDeserialize: (bytes: Buffer) => request().toObject(request().decode(bytes), read) as object,
      responseSerialize: (value: object) => encodeJsonMessage(response(), value),
      responseDeserialize: (bytes: Buffer) => response().toObject(response().decode(bytes), read) as object,
      originalName: method.name.charAt(0).toLowerCase() + method.name.slice(1),
    };
  }
  return definition;
}

export class AdsServer {
  private readonly limits: StreamLimits;
  private readonly server: grpc.Server;
  /** Streams open now, identified or not. */
  private open = 0;
  private connected = 0;
  readonly stats = { pushes: 0, nacks: 0, acks: 0, refused: 0 };
  private readonly refusalLog = new LogRateLimit();
  private readonly listeners = new Set<() => void>();
  private readonly streams = new Set<ProxyStream>();
  /** The debug reads open now (listed by `proxies()`, counted nowhere). */
  private readonly debugReads = new Set<ProxyStream>();
  /**
   * Per node the streams to wake when its snapshot changes: one cache listener for them all, so an
   * update costs what its nodes have, not a call per open stream.
   */
  private readonly wakers = new Map<string, Set<() => void>>();
  private cacheListener?: (nodes: string[]) => void;
  /** Per Gateway, its streams and the bytes they hold. */
  private readonly holds = new Map<string, { streams: Set<Hold>; bytes: number }>();
  private seq = 0;
  private readonly gate: ConnectionGate;
  private readonly listening: NetServer[] = [];

  /** The open streams, by Gateway then id: the proxies' and the debug reads' (`debug: true`). */
  proxies(): ProxyStream[] {
    return [...this.streams, ...this.debugReads]
      .map((p) => ({ ...p, acked: { ...p.acked }, pending: { ...p.pending } }))
      .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  constructor(private readonly opts: AdsServerOptions) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...opts.limits };
    this.server = new grpc.Server({
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_concurrent_streams': this.limits.maxStreamsPerConnection,
      'grpc.max_receive_message_length': this.limits.maxRequestBytes,
      // grpc-js keeps channelz records of every call and connection unless told not to; nothing reads
      // them here (no channelz service is served), and each of a thousand proxies' streams paid for it.
      'grpc.enable_channelz': 0,
    });
    this.server.addService(loadAdsService(), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, unknown>) => this.sotw(call),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<DeltaRequest, unknown>) => this.delta(call),
    });
    this.gate = new ConnectionGate(this.limits, (r) => this.refused({ node: '', ...r }, 'closed an ADS connection'));
  }

  /** Connections open now, and of them those whose streams have not named a Gateway. */
  get connections(): { open: number; pending: number } {
    return this.gate.counts;
  }

  get connectedProxies(): number {
    return this.connected;
  }

  /** Does some stream (a proxy's or a debug read) watch this node's snapshot now? */
  watched(node: string): boolean {
    return this.wakers.has(node);
  }

  /**
   * Listens at `host:port` (`[v6]:port`). The connections are accepted here and handed to grpc-js,
   * so that those that never name a Gateway are counted and closed (ConnectionGate).
   */
  listen(address: string): Promise<number> {
    const m = /^\[([^\]]*)\]:(\d+)$/.exec(address) ?? /^([^:]*):(\d+)$/.exec(address);
    if (!m) return Promise.reject(new Error(`${address}: not host:port`));
    const injector = this.server.createConnectionInjector(
      this.opts.tls?.credentials ?? grpc.ServerCredentials.createInsecure(),
    );
    const server = createServer((socket) => {
      this.gate.accept(socket);
      injector.injectConnection(socket);
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(Number(m[2]), m[1], () => {
        server.off('error', reject);
        this.listening.push(server);
        resolve((server.address() as { port: number }).port);
      });
    });
  }

  /** Ends every stream, then stops; streams a client keeps open are cut after a second. */
  async close(): Promise<void> {
    for (const server of this.listening.splice(0)) server.close();
    for (const l of [...this.listeners]) l();
    if (this.cacheListener) this.opts.cache.off('update', this.cacheListener);
    this.cacheListener = undefined;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, 1000);
      this.server.tryShutdown(() => {
        clearTimeout(t);
        resolve();
      });
    });
    this.gate.closeAll();
  }

  private log(msg: string, fields?: Record<string, unknown>): void {
    this.opts.log?.(msg, fields);
  }

  /** A response went out: the proxy is behind on this type until it answers. */
  private sent(record: ProxyStream, typeUrl: string, version: string): void {
    this.stats.pushes++;
    // A debug read's answers are not tracked: it is never behind.
    if (record.debug) return;
    record.pending[typeUrl] = version;
    this.opts.onStreamChange?.(record, false);
  }

  private acknowledged(record: ProxyStream, typeUrl: string, version: string): void {
    if (record.debug) return;
    this.stats.acks++;
    this.opts.onAck?.(record.node, typeUrl, version);
    record.acked[typeUrl] = version;
    if (record.rejected?.typeUrl === typeUrl) delete record.rejected;
    delete record.pending[typeUrl];
    this.opts.onStreamChange?.(record, false);
  }

  /** A NACK: the proxy keeps its last accepted configuration; the rejection is logged and reported. */
  private rejected(record: ProxyStream, typeUrl: string, version: string, message: string): void {
    if (record.debug) return;
    this.stats.nacks++;
    const report: NackReport = { node: record.node, typeUrl, version, message, at: new Date().toISOString() };
    this.log('proxy rejected configuration (NACK)', { ...report });
    this.opts.onNack?.(report);
    record.rejected = { typeUrl, version, message, at: report.at };
    delete record.pending[typeUrl];
    this.opts.onStreamChange?.(record, false);
  }

  private track(
    node: string,
    onUpdate: () => void,
    call: grpc.ServerDuplexStream<unknown, unknown>,
    stream: ProxyStream,
  ): void {
    // A debug read is served updates like a proxy, and counted nowhere.
    const proxy = !stream.debug;
    if (proxy) {
      this.connected++;
      this.streams.add(stream);
      this.opts.onConnect?.(node, this.connected);
    } else this.debugReads.add(stream);
    if (!this.cacheListener) {
      this.cacheListener = (nodes: string[]) => {
        for (const n of nodes) for (const wake of [...(this.wakers.get(n) ?? [])]) wake();
      };
      this.opts.cache.on('update', this.cacheListener);
    }
    let wakers = this.wakers.get(node);
    if (!wakers) this.wakers.set(node, (wakers = new Set()));
    const handler = () => onUpdate();
    wakers.add(handler);
    this.opts.onWatch?.(node);
    let done = false;
    const cleanup = () => {
      if (done) return;
      done = true;
      const mine = this.wakers.get(node);
      mine?.delete(handler);
      if (mine?.size === 0) this.wakers.delete(node);
      this.listeners.delete(end);
      if (!proxy) {
        this.debugReads.delete(stream);
        return;
      }
      this.connected--;
      this.streams.delete(stream);
      this.opts.onConnect?.(node, this.connected);
      this.opts.onStreamChange?.(stream, true);
    };
    const end = () => {
      cleanup();
      call.end();
    };
    this.listeners.add(end);
    call.on('end', () => {
      cleanup();
      call.end();
    });
    call.on('error', cleanup);
    call.on('close', cleanup);
    call.on('cancelled', cleanup);
  }

  /** Logs and counts a refusal (turnpike_xds_refused_streams_total, by reason). */
  private refused(refusal: StreamRefusal, what = 'refused an ADS stream'): void {
    this.stats.refused++;
    // Counted always, logged within a rate per reason (a flood of refusals is one attacker's lever on the log).
    const line = this.refusalLog.take(refusal.reason);
    if (line) this.log(what, { ...refusal, ...(line.suppressed ? { suppressedSinceLastLine: line.suppressed } : {}) });
    this.opts.onRefuse?.(refusal);
  }

  /** Ends a stream for a reason the metrics count (turnpike_xds_refused_streams_total). */
  private refuseCounted(
    call: grpc.ServerDuplexStream<unknown, unknown>,
    code: grpc.status,
    node: string,
    reason: string,
    message: string,
  ): void {
    this.refused({ node, reason, message, peer: call.getPeer() });
    refuse(call, code, message);
  }

  /** With client certificates required: the Gateway the stream's certificate names, if it names one. */
  private certificateGateway(call: grpc.ServerDuplexStream<unknown, unknown>): string | undefined {
    const trustDomain = this.opts.tls?.trustDomain;
    const peer = trustDomain ? call.getAuthContext().sslPeerCertificate : undefined;
    return peer?.raw ? gatewayOfCertificate(peer.subjectaltname, trustDomain!) : undefined;
  }

  /** Why `gateway` may not open one more stream, if it may not: it holds its share. */
  private overShare(gateway: string): string | undefined {
    const gateways = this.opts.cache.size;
    const { most } = gatewayStreamShare(this.limits, gateways);
    const held = this.holds.get(gateway)?.streams.size ?? 0;
    if (held < most) return undefined;
    return `Gateway ${gateway} holds ${held} streams, its share of ${this.limits.maxStreams} with ${gateways} Gateway(s)`;
  }

  /**
   * The server is full: if `gateway` holds less than its fair share, the newest stream of the Gateway
   * furthest over its own is ended to make room. True if one was.
   */
  private preemptFor(gateway: string): boolean {
    const { fair } = gatewayStreamShare(this.limits, this.opts.cache.size);
    if ((this.holds.get(gateway)?.streams.size ?? 0) >= fair) return false;
    let victim: [string, Set<Hold>] | undefined;
    for (const [g, h] of this.holds)
      if (g !== gateway && h.streams.size > Math.max(fair, victim?.[1].size ?? 0)) victim = [g, h.streams];
    if (!victim) return false;
    let newest: Hold | undefined;
    for (const s of victim[1]) if (!newest || s.seq > newest.seq) newest = s;
    newest!.end(
      'preempted',
      `ended to make room for Gateway ${gateway}: the server is full and Gateway ${victim[0]} holds ` +
        `${victim[1].size} streams, over its fair share of ${fair}`,
    );
    return true;
  }

  private hold(hold: Hold, gateway: string): void {
    let h = this.holds.get(gateway);
    if (!h) this.holds.set(gateway, (h = { streams: new Set(), bytes: 0 }));
    h.streams.add(hold);
    h.bytes += hold.bytes;
    hold.gateway = gateway;
  }

  private release(hold: Hold): void {
    const h = hold.gateway ? this.holds.get(hold.gateway) : undefined;
    if (!h?.streams.delete(hold)) return;
    h.bytes -= hold.bytes;
    if (h.streams.size === 0) this.holds.delete(hold.gateway!);
  }

  /** The Gateway a stream serves (node.cluster), tracked for updates; '' refuses the stream. */
  private identify<Req>(
    n: Node | undefined,
    record: ProxyStream,
    hold: Hold,
    onUpdate: () => void,
    anyCall: grpc.ServerDuplexStream<Req, unknown>,
  ): string {
    const call = anyCall as unknown as grpc.ServerDuplexStream<unknown, unknown>;
    const protocol = record.protocol;
    const node = n?.cluster ?? '';
    if (!node) {
      refuse(call);
      return '';
    }
    if (node.length > MAX_NODE_CLUSTER) {
      const message = `node.cluster must name the Gateway as <namespace>/<name>, at most ${MAX_NODE_CLUSTER} characters`;
      this.refuseCounted(call, grpc.status.INVALID_ARGUMENT, '', 'unidentified', message);
      return '';
    }
    const trustDomain = this.opts.tls?.trustDomain;
    if (trustDomain) {
      const verdict = authorizeStream(call.getAuthContext().sslPeerCertificate, node, trustDomain);
      if (!verdict.ok) {
        this.refuseCounted(call, grpc.status.PERMISSION_DENIED, node, verdict.reason, verdict.message);
        return '';
      }
    }
    // Without certificates, the Gateway named is the one the stream counts against from now on.
    if (!hold.gateway) {
      const over = this.overShare(node);
      if (over) {
        this.refuseCounted(call, grpc.status.RESOURCE_EXHAUSTED, node, 'gateway-streams', over);
        return '';
      }
      this.hold(hold, node);
    }
    this.gate.identified(call.getPeer());
    Object.assign(record, {
      node,
      id: clip(n?.id ?? '', MAX_NODE_ID),
      protocol,
      peer: call.getPeer(),
      connectedAt: new Date().toISOString(),
      ...(isDebugRead(n) ? { debug: true } : {}),
    });
    this.track(node, onUpdate, call, record);
    if (record.debug) {
      this.log(`debug read connected (${protocol})`, { node, id: record.id, peer: record.peer });
      return node;
    }
    this.log(`proxy connected (${protocol})`, { node, id: record.id });
    this.opts.onStreamChange?.(record, false);
    return node;
  }

  /**
   * One ADS stream, either protocol: the first request names the Gateway (or the stream is refused);
   * after that every request goes to `receive`, and every cache update for that Gateway to `send`.
   * `receive` changes `subscriptions` as the request asks, then asks `admit` whether the stream may
   * hold them (if not, the stream is ended).
   */
  private serve<Req extends SubscriptionRequest & { node?: Node }>(
    call: grpc.ServerDuplexStream<Req, unknown>,
    protocol: ProxyStream['protocol'],
    protocolHandlers: (
      record: ProxyStream,
      subscriptions: Subscriptions,
      admit: () => boolean,
    ) => {
      send: (typeUrl: string, force: boolean) => void;
      receive: (req: Req) => void;
    },
  ): void {
    const anyCall = call as unknown as grpc.ServerDuplexStream<unknown, unknown>;
    const record = newStreamRecord(protocol);
    // With client certificates, the stream counts against its certificate's Gateway from the start.
    const gateway = this.certificateGateway(anyCall);
    const over = gateway && this.overShare(gateway);
    if (over) {
      this.refuseCounted(anyCall, grpc.status.RESOURCE_EXHAUSTED, gateway, 'gateway-streams', over);
      return;
    }
    if (this.open >= this.limits.maxStreams && !(gateway && this.preemptFor(gateway))) {
      this.refuseCounted(
        anyCall,
        grpc.status.RESOURCE_EXHAUSTED,
        '',
        'too-many-streams',
        `the server holds ${this.limits.maxStreams} streams, its limit`,
      );
      return;
    }
    this.open++;
    let closed = false;
    const hold: Hold = {
      bytes: 0,
      seq: ++this.seq,
      end: (reason, message) => {
        if (!closed) this.refuseCounted(anyCall, grpc.status.RESOURCE_EXHAUSTED, hold.gateway ?? '', reason, message);
      },
    };
    if (gateway) this.hold(hold, gateway);
    // A stream that never names its Gateway holds a slot and memory for nothing.
    const unidentified = setTimeout(() => {
      if (record.node || closed) return;
      const within = `${this.limits.identifyWithinMs / 1000}s`;
      this.refuseCounted(
        anyCall,
        grpc.status.DEADLINE_EXCEEDED,
        '',
        'unidentified',
        `no node.cluster within ${within}`,
      );
    }, this.limits.identifyWithinMs);
    unidentified.unref();
    const close = () => {
      if (closed) return;
      closed = true;
      this.open--;
      this.release(hold);
      if (record.node) this.gate.released(record.peer);
      clearTimeout(unidentified);
      subscriptions.clear();
    };
    const subscriptions = new Subscriptions();
    for (const event of ['end', 'error', 'close', 'cancelled']) call.on(event, close);
    const admit = () => {
      if (closed) return false;
      const over = this.overSubscribed(record, hold, subscriptions);
      if (over) hold.end(over.reason, over.message);
      return !over;
    };
    const { send, receive } = protocolHandlers(record, subscriptions, admit);
    const pushAll = () => {
      for (const typeUrl of SEND_ORDER) send(typeUrl, false);
    };
    call.on('data', (req: Req) => {
      if (closed) return;
      if (!record.node && !this.identify(req.node, record, hold, pushAll, call)) return;
      subscriptions.of(req.type_url ?? '');
      if (admit()) receive(req);
    });
  }

  /**
   * Counts what a stream holds (its subscriptions as they stand, its node's id and cluster) into its
   * Gateway's; says why when the stream, or its Gateway, would hold more than the limits.
   */
  private overSubscribed(
    record: ProxyStream,
    hold: Hold,
    subscriptions: Subscriptions,
  ): { reason: string; message: string } | undefined {
    const bytes = subscriptions.bytes + record.node.length + record.id.length;
    const mine = hold.gateway ? this.holds.get(hold.gateway) : undefined;
    if (mine) mine.bytes += bytes - hold.bytes;
    hold.bytes = bytes;
    const l = this.limits;
    const many = 'too-many-subscriptions';
    if (subscriptions.types > l.maxTypesPerStream) {
      const message = `a stream may subscribe to ${l.maxTypesPerStream} type URLs; this one asked for ${subscriptions.types}`;
      return { reason: many, message };
    }
    if (subscriptions.names > l.maxNamesPerStream) {
      const message = `a stream may subscribe to ${l.maxNamesPerStream} resource names; this one asked for ${subscriptions.names}`;
      return { reason: many, message };
    }
    if (bytes > l.maxBytesPerStream)
      return {
        reason: 'stream-bytes',
        message: `a stream may hold ${l.maxBytesPerStream} bytes of resource names; this one asked for ${bytes}`,
      };
    if (mine && mine.bytes > l.maxBytesPerGateway)
      return {
        reason: 'gateway-bytes',
        message:
          `the streams of Gateway ${hold.gateway} may hold ${l.maxBytesPerGateway} bytes of resource names ` +
          `together; they asked for ${mine.bytes}`,
      };
    return undefined;
  }

  private sotw(call: grpc.ServerDuplexStream<DiscoveryRequest, unknown>): void {
    this.serve(call, 'sotw', (record, subscriptions, admit) => {
      const types = new Map<string, SotwTypeState>();
      const send = (typeUrl: string, force: boolean) => {
        const st = types.get(typeUrl);
        const snap: NodeSnapshot | undefined = this.opts.cache.get(record.node);
        if (!st) return;
        const ts = snap?.get(typeUrl as TypeUrl);
        const version = ts?.version ?? 'empty';
        const subscribed = subscriptions.of(typeUrl);
        const names = st.wildcard ? -1 : st.names;
        if (!force && version === st.sentVersion && names === st.sentNames) return;
        // The version the client rejected is not sent again; a newer one will be.
        if (version === st.nackedVersion && names === st.sentNames) return;
        // LDS and CDS responses hold the whole state; RDS and EDS responses only what changed, since
        // the client keeps the resources a response leaves out (one endpoint change, one resource sent).
        const incremental = !st.wildcard && !WILDCARD_TYPES.has(typeUrl);
        const resources: EncodedResource[] = [];
        for (const r of ts?.resources.values() ?? []) {
          if (!st.wildcard && !subscribed.has(r.name)) continue;
          if (incremental && !force && st.sent.get(r.name) === r.version) continue;
          resources.push(r);
        }
        if (incremental && !force && resources.length === 0) {
          st.sentVersion = version;
          st.sentNames = names;
          return;
        }
        for (const r of resources) st.sent.set(r.name, r.version);
        const nonce = randomUUID();
        st.lastNonce = nonce;
        st.sentVersion = version;
        st.sentNames = names;
        const anys = resources.map((r) => (record.debug ? forDebugRead(r) : r.any));
        call.write({ version_info: version, resources: anys, type_url: typeUrl, nonce });
        this.sent(record, typeUrl, version);
      };
      const receive = (req: DiscoveryRequest) => {
        const typeUrl = req.type_url ?? '';
        let st = types.get(typeUrl);
        if (!st) {
          st = { names: 0, wildcard: false, sent: new Map() };
          types.set(typeUrl, st);
        }
        if (req.response_nonce) {
          if (req.response_nonce !== st.lastNonce) return; // stale: a newer response is in flight
          if (req.error_detail) {
            st.nackedVersion = st.sentVersion;
            const message = clip(req.error_detail.message ?? '', MAX_NACK_MESSAGE);
            this.rejected(record, typeUrl, st.sentVersion ?? '', message);
          } else {
            st.ackedVersion = clip(req.version_info ?? '', MAX_VERSION);
            st.nackedVersion = undefined;
            this.acknowledged(record, typeUrl, st.ackedVersion);
          }
        }
        const names = req.resource_names ?? [];
        if (subscriptions.replace(typeUrl, names)) st.names++;
        if (!admit()) return;
        st.wildcard = (names.length === 0 && WILDCARD_TYPES.has(typeUrl)) || names.includes('*');
        // A resource the client no longer asks for is forgotten: asked for again, it is sent again.
        const subscribed = subscriptions.of(typeUrl);
        for (const n of [...st.sent.keys()]) if (!subscribed.has(n)) st.sent.delete(n);
        send(typeUrl, !req.response_nonce);
      };
      return { send, receive };
    });
  }

  private delta(call: grpc.ServerDuplexStream<DeltaRequest, unknown>): void {
    this.serve(call, 'delta', (record, subscriptions, admit) => {
      const types = new Map<string, DeltaTypeState>();
      const send = (typeUrl: string, force: boolean) => {
        const st = types.get(typeUrl);
        if (!st) return;
        const ts = this.opts.cache.get(record.node)?.get(typeUrl as TypeUrl);
        const resources: { name: string; version: string; resource: { type_url: string; value: Buffer } }[] = [];
        const removed: string[] = [];
        const current = new Map<string, EncodedResource>();
        const subscribed = subscriptions.of(typeUrl);
        for (const r of ts?.resources.values() ?? []) if (st.wildcard || subscribed.has(r.name)) current.set(r.name, r);
        for (const [name, r] of current) {
          if (st.known.get(name) === r.version) continue;
          if (st.nackedVersions.get(name) === r.version) continue;
          resources.push({ name, version: r.version, resource: record.debug ? forDebugRead(r) : r.any });
        }
        for (const name of st.known.keys()) if (!current.has(name)) removed.push(name);
        if (!resources.length && !removed.length && !force) return;
        for (const r of resources) st.known.set(r.name, r.version);
        for (const n of removed) st.known.delete(n);
        const nonce = randomUUID();
        st.lastNonce = nonce;
        const version = ts?.version ?? 'empty';
        call.write({ system_version_info: version, resources, removed_resources: removed, type_url: typeUrl, nonce });
        this.sent(record, typeUrl, version);
      };
      const receive = (req: DeltaRequest) => {
        const node = record.node;
        const typeUrl = req.type_url ?? '';
        let st = types.get(typeUrl);
        const first = !st;
        if (!st) {
          st = {
            wildcard: false,
            known: new Map(Object.entries(req.initial_resource_versions ?? {})),
            nackedVersions: new Map(),
          };
          types.set(typeUrl, st);
        }
        if (req.response_nonce && req.response_nonce === st.lastNonce && req.error_detail) {
          // What we just sent was rejected: remember those versions so they are not resent.
          const ts = this.opts.cache.get(node)?.get(typeUrl as TypeUrl);
          for (const [name, v] of st.known) if (ts?.resources.get(name)?.version === v) st.nackedVersions.set(name, v);
          this.rejected(record, typeUrl, ts?.version ?? '', clip(req.error_detail.message ?? '', MAX_NACK_MESSAGE));
        } else if (req.response_nonce && req.response_nonce === st.lastNonce) {
          // Delta ACKs carry no version: the one acknowledged is the one last sent.
          const version = record.pending[typeUrl] ?? this.opts.cache.get(node)?.get(typeUrl as TypeUrl)?.version ?? '';
          this.acknowledged(record, typeUrl, version);
        }
        // The names as they stand: subscribing adds, unsubscribing removes ('*' is the wildcard).
        const sub = req.resource_names_subscribe ?? [];
        const unsub = req.resource_names_unsubscribe ?? [];
        subscriptions.change(typeUrl, sub, unsub);
        if (!admit()) return;
        if (first && sub.length === 0 && WILDCARD_TYPES.has(typeUrl)) st.wildcard = true;
        if (sub.includes('*')) st.wildcard = true;
        if (unsub.includes('*')) st.wildcard = false;
        for (const n of unsub) st.known.delete(n);
        send(typeUrl, first);
      };
      return { send, receive };
    });
  }
}
