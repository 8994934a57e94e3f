// Bounds on what callers may hold of the ADS server, with a real gRPC client: streams in all and
// per Gateway, streams that never name their Gateway, subscriptions and their bytes per stream and
// per Gateway, and connections that never name one. Each refusal is counted.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { experimental } from '@grpc/grpc-js';
import {
  AdsServer,
  createAuthority,
  DEBUG_READ_METADATA,
  encodeResource,
  gatewayIdentity,
  issueCertificate,
  MemoryCertificateProvider,
  SnapshotCache,
  TYPE,
  typeSnapshot,
  type StreamRefusal,
} from '../src/index.js';
import {
  adsClient,
  openListenerStream,
  reader,
  type ClientTls,
  type FirstResponse,
  type Stream,
} from './ads-client.js';

let server: AdsServer | undefined;
const streams: Stream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.cancel();
  await server?.close();
  server = undefined;
});

async function serve(limits: ConstructorParameters<typeof AdsServer>[0]['limits']) {
  const refused: StreamRefusal[] = [];
  server = new AdsServer({ cache: new SnapshotCache(), limits, onRefuse: (r) => refused.push(r) });
  const port = await server.listen('127.0.0.1:0');
  return { port, refused };
}

function open(port: number): { stream: Stream; ended: Promise<{ code: number; details: string }> } {
  const stream: Stream = adsClient(port).StreamAggregatedResources();
  streams.push(stream);
  const ended = new Promise<{ code: number; details: string }>((resolve) =>
    stream.on('error', (e: { code: number; details: string }) => resolve({ code: e.code, details: e.details })),
  );
  return { stream, ended };
}

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
};

describe('ADS stream limits', () => {
  it('security: beyond the server-wide limit a stream is refused (RESOURCE_EXHAUSTED), and counted', async () => {
    const { port, refused } = await serve({ maxStreams: 2, identifyWithinMs: 60_000 });
    const first = open(port);
    const second = open(port);
    // Both are open once each has sent something the server read.
    for (const s of [first, second]) s.stream.write({ node: { cluster: 'a/gw' }, type_url: TYPE.listener });
    await Promise.all([reader(first.stream)(), reader(second.stream)()]);
    const third = open(port);
    third.stream.write({ node: { cluster: 'a/gw' }, type_url: TYPE.listener });
    expect(await third.ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    expect(refused.map((r) => r.reason)).toEqual(['too-many-streams']);
  });

  it('security: a flood of refused streams is counted whole but logged within a rate per reason', async () => {
    const refused: StreamRefusal[] = [];
    const lines: Record<string, unknown>[] = [];
    server = new AdsServer({
      cache: new SnapshotCache(),
      limits: { maxStreams: 1, identifyWithinMs: 60_000 },
      onRefuse: (r) => refused.push(r),
      log: (msg, fields) => {
        if (msg.startsWith('refused')) lines.push(fields ?? {});
      },
    });
    const port = await server.listen('127.0.0.1:0');
    const held = open(port);
    held.stream.write({ node: { cluster: 'a/gw' }, type_url: TYPE.listener });
    await reader(held.stream)();
    const flood = Array.from({ length: 30 }, () => open(port));
    for (const f of flood) f.stream.write({ node: { cluster: 'a/gw' }, type_url: TYPE.listener });
    await Promise.all(flood.map((f) => f.ended));
    expect(refused).toHaveLength(30);
    // The default bucket: 10 lines at once, then 10 a minute; the rest are counted, not written.
    expect(lines.length).toBeGreaterThanOrEqual(10);
    expect(lines.length).toBeLessThan(15);
    expect(lines.every((l) => l.reason === 'too-many-streams')).toBe(true);
  }, 60_000);

  it('security: a stream that does not name its Gateway in time is ended (DEADLINE_EXCEEDED), and counted', async () => {
    const { port, refused } = await serve({ identifyWithinMs: 200 });
    // Opened, and nothing sent on it.
    const silent = open(port);
    const ended = await silent.ended;
    expect(ended).toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    await until(() => refused.length > 0);
    expect(refused[0]).toMatchObject({ reason: 'unidentified', message: 'no node.cluster within 0.2s' });
  });

  it('security: a stream asking for more type URLs or names than its limit is ended, and counted', async () => {
    const { port, refused } = await serve({ maxTypesPerStream: 3, maxNamesPerStream: 5 });
    const greedy = open(port);
    const next = reader(greedy.stream);
    greedy.stream.write({ node: { cluster: 'a/gw' }, type_url: TYPE.listener });
    await next();
    greedy.stream.write({ type_url: TYPE.cluster, resource_names: ['a', 'b', 'c', 'd', 'e', 'f'] });
    expect(await greedy.ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    const types = open(port);
    for (const t of ['t1', 't2', 't3', 't4'])
      types.stream.write({ node: { cluster: 'a/gw' }, type_url: `type.googleapis.com/${t}` });
    expect(await types.ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    await until(() => refused.length >= 2);
    expect(refused.map((r) => r.message)).toEqual([
      'a stream may subscribe to 5 resource names; this one asked for 6',
      'a stream may subscribe to 3 type URLs; this one asked for 4',
    ]);
  });
});

describe('debug reads', () => {
  it('a stream marked as a debug read is served, left out of sync accounting and the connected count, and listed as such', async () => {
    const changes: { node: string; debug?: boolean }[] = [];
    const cache = new SnapshotCache();
    server = new AdsServer({ cache, onStreamChange: (s) => changes.push({ node: s.node, debug: s.debug }) });
    const port = await server.listen('127.0.0.1:0');
    const ask = async (metadata?: Record<string, unknown>) => {
      const { stream } = open(port);
      const next = reader(stream);
      stream.write({ node: { id: 'x', cluster: 'a/gw', ...(metadata ? { metadata } : {}) }, type_url: TYPE.listener });
      const first = await next();
      stream.write({
        node: { cluster: 'a/gw' },
        type_url: TYPE.listener,
        version_info: first.version_info,
        response_nonce: first.nonce,
      });
      return first;
    };
    const debugFirst = await ask({ fields: { [DEBUG_READ_METADATA]: { boolValue: true } } });
    expect(debugFirst.type_url).toBe(TYPE.listener);
    expect(server.connectedProxies).toBe(0);
    expect(server.proxies().map((p) => [p.node, p.debug])).toEqual([['a/gw', true]]);
    expect(changes).toEqual([]);
    // The same without the mark is a proxy: counted, listed, and its changes reported.
    await ask();
    await until(() => changes.length > 0);
    expect(server.connectedProxies).toBe(1);
    expect(
      server
        .proxies()
        .filter((p) => !p.debug)
        .map((p) => p.node),
    ).toEqual(['a/gw']);
    expect(changes.every((c) => !c.debug)).toBe(true);
  });
});

// The bounds that keep one Gateway's identity from taking the server: bytes, a share of the streams,
// subscriptions counted as they stand, and connections that never name a Gateway.
const TD = 'turnpike.test';
const SERVER_NAME = 'turnpike.turnpike-system.svc';
const DAY = 86_400_000;
const EDS = TYPE.endpoint;

/** An mTLS server (client certificates naming Gateways) and a way to make those certificates. */
async function serveTls(limits: ConstructorParameters<typeof AdsServer>[0]['limits'], gateways: string[]) {
  const ca = await createAuthority('test CA', DAY);
  const serving = await issueCertificate(ca, {
    commonName: SERVER_NAME,
    dnsNames: [SERVER_NAME],
    usage: 'server',
    validityMs: DAY,
  });
  const provider = new MemoryCertificateProvider();
  provider.setCA(ca.certPem);
  provider.setIdentity(serving.certPem, serving.keyPem);
  const cache = new SnapshotCache();
  cache.setAll(new Map(gateways.map((g) => [g, new Map()])));
  const refused: StreamRefusal[] = [];
  server = new AdsServer({
    cache,
    tls: {
      credentials: experimental.createCertificateProviderServerCredentials(provider, provider, true),
      trustDomain: TD,
    },
    limits,
    onRefuse: (r) => refused.push(r),
  });
  const port = await server.listen('127.0.0.1:0');
  const certs = new Map<string, ClientTls>();
  const tlsOf = async (gateway: string): Promise<ClientTls> => {
    if (!certs.has(gateway)) {
      const [ns, name] = gateway.split('/') as [string, string];
      const c = await issueCertificate(ca, {
        commonName: gateway,
        uris: [gatewayIdentity(TD, ns, name)],
        usage: 'client',
        validityMs: DAY,
      });
      certs.set(gateway, { ca: ca.certPem, cert: c.certPem, key: c.keyPem, serverName: SERVER_NAME });
    }
    return certs.get(gateway)!;
  };
  return { port, refused, cache, tlsOf };
}

/** Opens a SotW stream as `gateway`; once served, kept for cancelling after the test. */
async function listenerStream(port: number, tls: ClientTls | undefined, gateway: string): Promise<FirstResponse> {
  const r = await openListenerStream(port, tls, gateway, 10_000);
  if (r.ok) streams.push(r.stream);
  return r;
}

/** A delta stream as `gateway`, with its responses and how it ended. */
function deltaStream(port: number, gateway: string) {
  const stream: Stream = adsClient(port).DeltaAggregatedResources();
  streams.push(stream);
  const node = { id: 'test', cluster: gateway };
  const ended = new Promise<{ code: number; details: string }>((resolve) =>
    stream.on('error', (e: { code: number; details: string }) => resolve({ code: e.code, details: e.details })),
  );
  return { stream, node, ended, next: reader(stream) };
}

const name40k = (i: number) => `${i}-${'x'.repeat(40_000)}`;

describe('ADS bounds per Gateway', () => {
  it("security: a stream whose names exceed the byte bound is refused (RESOURCE_EXHAUSTED), and one Gateway's streams together too, while another Gateway's stream is served", async () => {
    const { port, refused } = await serve({ maxBytesPerStream: 200_000, maxBytesPerGateway: 300_000 });
    const other = await listenerStream(port, undefined, 't/b');
    expect(other.ok).toBe(true);
    // Three names of 40 kB: 120 kB, within the bound; three more: 240 kB, beyond it.
    const big = deltaStream(port, 't/a');
    big.stream.write({ node: big.node, type_url: EDS, resource_names_subscribe: [0, 1, 2].map(name40k) });
    await big.next();
    big.stream.write({ type_url: EDS, resource_names_subscribe: [3, 4, 5].map(name40k) });
    expect(await big.ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    await until(() => refused.length > 0);
    expect(refused[0]).toMatchObject({ node: 't/a', reason: 'stream-bytes' });
    expect(refused[0]!.message).toMatch(
      /^a stream may hold 200000 bytes of resource names; this one asked for 24\d{4}$/,
    );
    // Two streams of 160 kB each: each within the bound, together beyond the Gateway's.
    const first = deltaStream(port, 't/a');
    first.stream.write({ node: first.node, type_url: EDS, resource_names_subscribe: [0, 1, 2, 3].map(name40k) });
    await first.next();
    const second = deltaStream(port, 't/a');
    second.stream.write({ node: second.node, type_url: EDS, resource_names_subscribe: [4, 5, 6, 7].map(name40k) });
    expect(await second.ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    await until(() => refused.length > 1);
    expect(refused[1]).toMatchObject({ node: 't/a', reason: 'gateway-bytes' });
    // The first stream of t/a is still served, and so is t/b, old stream and new.
    first.stream.write({ type_url: TYPE.listener });
    expect((await first.next()).type_url).toBe(TYPE.listener);
    if (!other.ok) throw new Error('unreachable');
    other.stream.write({ node: { cluster: 't/b' }, type_url: TYPE.cluster });
    expect((await other.next()).type_url).toBe(TYPE.cluster);
    expect((await listenerStream(port, undefined, 't/b')).ok).toBe(true);
    expect(refused).toHaveLength(2);
  });

  it('security: a delta stream that subscribes and unsubscribes many times stays open: names are counted as they stand', async () => {
    const { port, refused } = await serve({ maxNamesPerStream: 10 });
    const churn = deltaStream(port, 't/a');
    churn.stream.write({ node: churn.node, type_url: EDS, resource_names_subscribe: ['r0-0'] });
    await churn.next();
    // 30 rounds of five names in, five out: 150 subscriptions, never more than ten at once.
    let previous = ['r0-0'];
    for (let round = 1; round <= 30; round++) {
      const names = [0, 1, 2, 3, 4].map((i) => `r${round}-${i}`);
      churn.stream.write({ type_url: EDS, resource_names_subscribe: names });
      churn.stream.write({ type_url: EDS, resource_names_unsubscribe: previous });
      previous = names;
    }
    // A new type is answered at once: the server has read every request before it, and kept the stream.
    churn.stream.write({ type_url: TYPE.listener });
    expect((await churn.next()).type_url).toBe(TYPE.listener);
    expect(refused).toEqual([]);
    // Five names stand: six more are eleven, beyond the bound.
    churn.stream.write({ type_url: EDS, resource_names_subscribe: ['x1', 'x2', 'x3', 'x4', 'x5', 'x6'] });
    expect(await churn.ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    await until(() => refused.length > 0);
    expect(refused[0]!.message).toBe('a stream may subscribe to 10 resource names; this one asked for 11');
  });

  it('security: one Gateway cannot take more than its share of the streams; while the server is full, a Gateway under its fair share takes the newest stream of the one furthest over', async () => {
    // Four Gateways, eight streams: each may hold 8 × 2 / 4 = 4, and is sure of 8 / 4 = 2.
    const gateways = ['t/a', 't/b', 't/c', 't/d'];
    const { port, refused, tlsOf } = await serveTls(
      { maxStreams: 8, minStreamsPerGateway: 1, gatewayShare: 2 },
      gateways,
    );
    const a: FirstResponse[] = [];
    for (let i = 0; i < 4; i++) a.push(await listenerStream(port, await tlsOf('t/a'), 't/a'));
    expect(a.map((r) => r.ok)).toEqual([true, true, true, true]);
    const fifth = await listenerStream(port, await tlsOf('t/a'), 't/a');
    expect(fifth).toMatchObject({ ok: false, code: grpc.status.RESOURCE_EXHAUSTED });
    expect(refused.at(-1)).toMatchObject({ node: 't/a', reason: 'gateway-streams' });
    expect(refused.at(-1)!.message).toBe('Gateway t/a holds 4 streams, its share of 8 with 4 Gateway(s)');
    for (let i = 0; i < 4; i++) expect((await listenerStream(port, await tlsOf('t/b'), 't/b')).ok).toBe(true);
    // Full. t/c holds nothing: t/a's newest stream makes room for it.
    const preempted = a[3]!.ok ? a[3]!.stream : undefined;
    const ended = new Promise<{ code: number }>((resolve) => preempted!.on('error', resolve));
    expect((await listenerStream(port, await tlsOf('t/c'), 't/c')).ok).toBe(true);
    expect(await ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    expect(refused.at(-1)).toMatchObject({ node: 't/a', reason: 'preempted' });
    // t/a, at three, is over its fair share of two: it takes nothing back.
    expect(await listenerStream(port, await tlsOf('t/a'), 't/a')).toMatchObject({ ok: false });
    expect(refused.at(-1)).toMatchObject({ reason: 'too-many-streams' });
    expect(refused.map((r) => r.reason)).toEqual(['gateway-streams', 'preempted', 'too-many-streams']);
  });

  it('security: silent connections beyond the cap are closed, oldest first, and the rest after the deadline (TLS handshake never begun); a real client still connects', async () => {
    const { port, refused, cache, tlsOf } = await serveTls({ maxPendingConnections: 3, pendingConnectionMs: 2000 }, [
      't/a',
      't/b',
    ]);
    // A proxy that named its Gateway: its connection is not pending, and outlives the deadline.
    const proxy = await listenerStream(port, await tlsOf('t/a'), 't/a');
    if (!proxy.ok) throw new Error(`refused: ${proxy.details}`);
    proxy.stream.write({
      node: { cluster: 't/a' },
      type_url: TYPE.listener,
      version_info: proxy.first.version_info,
      response_nonce: proxy.first.nonce,
    });
    // Connected, never a byte sent; each noted when the server closes it.
    const silent: Socket[] = [];
    const gone = new Set<number>();
    for (let i = 0; i < 5; i++)
      silent.push(
        await new Promise<Socket>((resolve) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.on('error', () => undefined);
          s.on('close', () => gone.add(i));
          s.resume();
        }),
      );
    const closed = () => [...gone].sort();
    // Three may be pending: the fourth and fifth closed the two oldest.
    await until(() => refused.length === 2 && closed().length === 2);
    expect(closed()).toEqual([0, 1]);
    expect(refused.map((r) => r.reason)).toEqual(['too-many-pending-connections', 'too-many-pending-connections']);
    expect(refused[0]!.message).toBe(
      'the oldest of 3 connections that had not named a Gateway, closed to make room for a new one',
    );
    // A proxy connecting now, the room full of silent connections, closes the oldest of them and is served.
    expect((await listenerStream(port, await tlsOf('t/b'), 't/b')).ok).toBe(true);
    expect(refused.map((r) => r.reason)).toEqual(Array(3).fill('too-many-pending-connections'));
    // The last two, when the deadline passes.
    await until(() => refused.length === 5 && closed().length === 5);
    expect(refused.slice(3).map((r) => r.reason)).toEqual(['idle-connection', 'idle-connection']);
    expect(refused[3]!.message).toBe('no stream named its Gateway within 2s');
    await until(() => server!.connections.open === 2);
    expect(server!.connections).toEqual({ open: 2, pending: 0 });
    // The first proxy's stream is still served.
    const listener = encodeResource(TYPE.listener, 'l', { name: 'l' });
    cache.update(new Map([['t/a', new Map([[TYPE.listener, typeSnapshot([listener])]])]]));
    expect((await proxy.next()).resources).toHaveLength(1);
  });
});
