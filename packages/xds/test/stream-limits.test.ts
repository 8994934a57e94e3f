// Bounds on what callers may hold of the ADS server, with a real gRPC client: streams in all,
// streams that never name their Gateway, and subscriptions per stream. Each refusal is counted.
import { afterEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { AdsServer, DEBUG_READ_METADATA, SnapshotCache, TYPE, type StreamRefusal } from '../src/index.js';
import { adsClient, reader, type Stream } from './ads-client.js';

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
  it('a stream marked as a debug read is served, and left out of sync accounting, the connected count and the proxy list', async () => {
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
    expect(server.proxies()).toEqual([]);
    expect(changes).toEqual([]);
    // The same without the mark is a proxy: counted, listed, and its changes reported.
    await ask();
    await until(() => changes.length > 0);
    expect(server.connectedProxies).toBe(1);
    expect(server.proxies().map((p) => p.node)).toEqual(['a/gw']);
    expect(changes.every((c) => !c.debug)).toBe(true);
  });
});
