// A small delta xDS client of our own against the ADS server: subscribe, unsubscribe, removals
// and reconnect with initial_resource_versions; plus state-of-the-world basics (nonces, wildcard).
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { GatewayIR } from '@turnpike/api';
import { AdsServer, encodeSnapshot, envoyResourcesFor, SnapshotCache, TYPE } from '../src/index.js';
import { adsClient, reader, type Stream } from './ads-client.js';
import { eventually } from './grpc-helpers.js';

function ir(clusters: string[]): GatewayIR {
  return {
    name: 'gw',
    namespace: 'infra',
    secrets: [],
    ports: [],
    clusters: clusters.map((n) => ({ name: n, service: { namespace: 'apps', name: n, port: 80 }, protocol: 'http' })),
  };
}

const node = { id: 'test', cluster: 'infra/gw' };

describe('delta xDS', () => {
  const cache = new SnapshotCache();
  let ads: AdsServer;
  let port: number;
  beforeAll(async () => {
    ads = new AdsServer({ cache });
    port = await ads.listen('127.0.0.1:0');
    cache.setAll(new Map([['infra/gw', encodeSnapshot(envoyResourcesFor(ir(['a', 'b']), () => undefined))]]));
  });
  afterAll(async () => ads.close());

  it('sends subscribed resources, then only what changed, removals, and nothing the client already has on reconnect', async () => {
    const client = adsClient(port);
    const stream: Stream = client.DeltaAggregatedResources();
    const next = reader(stream);
    stream.write({ node, type_url: TYPE.cluster, resource_names_subscribe: ['*'] });
    const first = await next();
    expect(first.resources.map((r: any) => r.name).sort()).toEqual(['a', 'b']);
    const versions = Object.fromEntries(first.resources.map((r: any) => [r.name, r.version]));
    stream.write({ node, type_url: TYPE.cluster, response_nonce: first.nonce });

    // b goes away, c arrives: only c is sent, b is listed as removed.
    cache.setAll(new Map([['infra/gw', encodeSnapshot(envoyResourcesFor(ir(['a', 'c']), () => undefined))]]));
    const second = await next();
    expect(second.resources.map((r: any) => r.name)).toEqual(['c']);
    expect(second.removed_resources).toEqual(['b']);
    stream.write({ node, type_url: TYPE.cluster, response_nonce: second.nonce });

    // Explicit subscription on a named type, then unsubscribe.
    stream.write({ node, type_url: TYPE.endpoint, resource_names_subscribe: ['a'] });
    const eds = await next();
    expect(eds.type_url).toBe(TYPE.endpoint);
    expect(eds.resources.map((r: any) => r.name)).toEqual(['a']);
    stream.write({ node, type_url: TYPE.endpoint, response_nonce: eds.nonce, resource_names_unsubscribe: ['a'] });
    stream.end();

    // Reconnect knowing a (current) and b (gone): only c is sent, b is removed, a is not resent.
    const again: Stream = adsClient(port).DeltaAggregatedResources();
    const next2 = reader(again);
    again.write({
      node,
      type_url: TYPE.cluster,
      resource_names_subscribe: ['*'],
      initial_resource_versions: { a: versions.a, b: versions.b },
    });
    const resumed = await next2();
    expect(resumed.resources.map((r: any) => r.name)).toEqual(['c']);
    expect(resumed.removed_resources).toEqual(['b']);
    again.end();
  });

  it('state of the world: wildcard CDS, versions are content hashes, a stale nonce gets no answer', async () => {
    const stream: Stream = adsClient(port).StreamAggregatedResources();
    const next = reader(stream);
    stream.write({ node, type_url: TYPE.cluster, resource_names: [] });
    const r1 = await next();
    expect(r1.resources).toHaveLength(2);
    expect(r1.version_info).toMatch(/^[0-9a-f]{16}$/);
    stream.write({ node, type_url: TYPE.cluster, version_info: r1.version_info, response_nonce: r1.nonce });
    stream.write({
      node,
      type_url: TYPE.cluster,
      version_info: 'x',
      response_nonce: 'not-the-last-nonce',
      resource_names: ['a'],
    });
    await expect(next(500)).rejects.toThrow('no response');
    expect(ads.connectedProxies).toBeGreaterThanOrEqual(1);
    stream.end();
  });

  it('delta: a NACK is reported and kept on the stream until an ACK of a newer version, which is reported too', async () => {
    const acks: { node: string; version: string }[] = [];
    const nacks: string[] = [];
    const reporting = new AdsServer({
      cache,
      onAck: (gateway, _type, version) => acks.push({ node: gateway, version }),
      onNack: (n) => nacks.push(n.version),
    });
    const reportingPort = await reporting.listen('127.0.0.1:0');
    try {
      const stream: Stream = adsClient(reportingPort).DeltaAggregatedResources();
      const next = reader(stream);
      stream.write({ node, type_url: TYPE.cluster, resource_names_subscribe: ['*'] });
      const first = await next();
      stream.write({ node, type_url: TYPE.cluster, response_nonce: first.nonce, error_detail: { message: 'bad' } });
      await eventually(
        async () => reporting.proxies()[0]?.rejected?.message,
        (message) => message === 'bad',
      );
      expect(nacks).toEqual([first.system_version_info]);

      cache.setAll(new Map([['infra/gw', encodeSnapshot(envoyResourcesFor(ir(['a', 'd']), () => undefined))]]));
      const second = await next();
      expect(second.system_version_info).not.toBe(first.system_version_info);
      stream.write({ node, type_url: TYPE.cluster, response_nonce: second.nonce });
      await eventually(
        async () => acks.length,
        (count) => count > 0,
      );
      expect(acks).toEqual([{ node: 'infra/gw', version: second.system_version_info }]);
      const [proxy] = reporting.proxies();
      expect(proxy?.rejected).toBeUndefined();
      expect(proxy?.acked[TYPE.cluster]).toBe(second.system_version_info);
      expect(proxy?.pending).toEqual({});
      stream.end();
    } finally {
      await reporting.close();
    }
  });

  it('a stream without node.cluster is refused', async () => {
    const stream: Stream = adsClient(port).StreamAggregatedResources();
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('error', () => undefined);
    stream.write({ node: { id: 'x' }, type_url: TYPE.cluster });
    expect((await status).code).not.toBe(grpc.status.OK);
  });
});
