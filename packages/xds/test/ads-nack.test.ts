// A real xDS client (@grpc/grpc-js-xds) against our ADS server: it routes by what we serve,
// and a resource it rejects leaves the previous config serving while the NACK is reported.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { GatewayIR } from '@turnpike/api';
import { AdsServer, encodeSnapshot, envoyResourcesFor, SnapshotCache, type NackReport } from '../src/index.js';
import { callMany, eventually, startEchoServer, xdsClient } from './grpc-helpers.js';

const endpointsOf = (ports: { a: number; b: number }) =>
  new Map([
    ['apps/a/8080', [{ address: '127.0.0.1', port: ports.a, ready: true }]],
    ['apps/b/8080', [{ address: '127.0.0.1', port: ports.b, ready: true }]],
  ]);

function gatewayIR(weights: [number, number]): GatewayIR {
  const cluster = (n: string) => ({
    name: `apps/${n}/8080`,
    service: { namespace: 'apps', name: n, port: 8080 },
    protocol: 'h2' as const,
  });
  return {
    name: 'gw',
    namespace: 'infra',
    secrets: [],
    proxyless: true,
    clusters: [cluster('a'), cluster('b')],
    ports: [
      {
        name: 'tcp-80',
        port: 80,
        listenPort: 10080,
        transport: 'tcp',
        listeners: [
          {
            name: 'Gateway/infra/gw/http',
            protocol: 'HTTP',
            virtualHosts: [
              {
                name: 'v',
                domains: ['echo.test'],
                routes: [
                  {
                    name: 'grpcroute/apps/echo/rule/0/match/0',
                    source: { kind: 'GRPCRoute', namespace: 'apps', name: 'echo', rule: 0, match: 0 },
                    match: { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] },
                    backends: [
                      { cluster: 'apps/a/8080', weight: weights[0] },
                      { cluster: 'apps/b/8080', weight: weights[1] },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

describe('ADS server with a real xDS client', () => {
  const servers: { port: number; close: () => Promise<void> }[] = [];
  let ads: AdsServer;
  let adsPort: number;
  const cache = new SnapshotCache();
  const nacks: NackReport[] = [];

  beforeAll(async () => {
    servers.push(await startEchoServer('a'), await startEchoServer('b'));
    ads = new AdsServer({ cache, onNack: (n) => nacks.push(n) });
    adsPort = await ads.listen('127.0.0.1:0');
  });
  afterAll(async () => {
    await ads.close();
    for (const s of servers) await s.close();
  });

  it('a rejected Cluster leaves the previous config serving, and the NACK is reported', async () => {
    const ports = { a: servers[0]!.port, b: servers[1]!.port };
    const good = envoyResourcesFor(gatewayIR([100, 0]), () => undefined, undefined, endpointsOf(ports));
    cache.setAll(new Map([['infra/gw', encodeSnapshot(good)]]));
    const client = xdsClient('echo.test', adsPort, 'infra/gw');
    try {
      const first = await eventually(
        () => callMany(client.call, 20),
        (m) => m.get('a') === 20,
      );
      expect(first.get('a')).toBe(20);
      // A version the client cannot accept: an lb_policy gRPC does not implement, and the
      // route moved entirely to b. The client must NACK and keep routing to a.
      const bad = envoyResourcesFor(gatewayIR([0, 100]), () => undefined, undefined, endpointsOf(ports));
      for (const c of bad.clusters) c.lb_policy = 'RANDOM';
      cache.setAll(new Map([['infra/gw', encodeSnapshot(bad)]]));
      await eventually(
        async () => nacks.length,
        (n) => n > 0,
      );
      expect(nacks[0]).toMatchObject({
        node: 'infra/gw',
        typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      });
      expect(nacks[0]!.message.length).toBeGreaterThan(0);
      expect(ads.stats.nacks).toBeGreaterThan(0);
      // The client still serves every RPC with what it accepted.
      const after = await callMany(client.call, 20);
      expect([...after.values()].reduce((x, y) => x + y, 0)).toBe(20);
    } finally {
      client.close();
    }
  }, 30_000);
});
