// The issue's end-to-end check for xDS: `turnpike run --dir` serves a GRPCRoute that splits
// 80/20 between two gRPC servers; real xDS clients (@grpc/grpc-js-xds) send 1 000 RPCs that land
// near 80/20; rewriting the manifest to 100/0 moves all traffic within 2 s, restarting nothing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { callMany, eventually, startEchoServer, xdsClient } from '../../xds/test/grpc-helpers.js';
import { start, tmp, waitFor } from './cli-helpers.js';

const manifest = (a: number, b: number, wa: number, wb: number) => `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tp}
spec: {controllerName: turnpike.dev/gateway-controller}
---
apiVersion: turnpike.dev/v1alpha1
kind: ProxyConfig
metadata: {name: proxyless, namespace: infra}
spec: {proxylessGRPC: true}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: tp
  infrastructure: {parametersRef: {group: turnpike.dev, kind: ProxyConfig, name: proxyless}}
  listeners: [{name: grpc, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: echo, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [echo.test]
  rules:
  - matches: [{method: {service: test.Echo}}]
    backendRefs: [{name: a, port: 50051, weight: ${wa}}, {name: b, port: 50051, weight: ${wb}}]
---
${['a', 'b']
  .map(
    (n, i) => `apiVersion: v1
kind: Service
metadata: {name: ${n}, namespace: apps}
spec: {ports: [{name: grpc, port: 50051, appProtocol: grpc}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${n}-1, namespace: apps, labels: {kubernetes.io/service-name: ${n}}}
addressType: IPv4
ports: [{name: grpc, port: ${i === 0 ? a : b}}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
`,
  )
  .join('---\n')}`;

describe('proxyless gRPC through turnpike run --dir', () => {
  const servers: { port: number; close: () => Promise<void> }[] = [];
  beforeAll(async () => {
    servers.push(await startEchoServer('a'), await startEchoServer('b'));
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('splits 1 000 RPCs near 80/20, then moves all traffic within 2 s of a manifest change', async () => {
    const dir = tmp();
    const file = join(dir, 'grpc.yaml');
    const [a, b] = [servers[0]!.port, servers[1]!.port];
    writeFileSync(file, manifest(a, b, 80, 20));
    const p = start(
      'run',
      '--dir',
      dir,
      '--xds-address',
      '127.0.0.1:0',
      '--plugin-address',
      '127.0.0.1:0',
      '--quiet-ms',
      '20',
      '--max-delay-ms',
      '100',
      '--poll',
      '200',
    );
    try {
      let adsPort = 0;
      await waitFor(() => {
        const m = /serving xDS on 127\.0\.0\.1:(\d+)/.exec(p.errors());
        if (m) adsPort = Number(m[1]);
        return adsPort > 0 && p.output().includes('GRPCRoute/apps/echo');
      }, 15_000);
      const client = xdsClient('echo.test', adsPort, 'infra/gw');
      try {
        await eventually(client.call, (r) => r === 'a' || r === 'b', 10_000);
        const counts = await callMany(client.call, 1000);
        const share = (counts.get('a') ?? 0) / 1000;
        expect((counts.get('a') ?? 0) + (counts.get('b') ?? 0)).toBe(1000);
        expect(share).toBeGreaterThan(0.74);
        expect(share).toBeLessThan(0.86);

        writeFileSync(file, manifest(a, b, 100, 0));
        const t0 = Date.now();
        await eventually(
          () => callMany(client.call, 50),
          (m) => m.get('a') === 50,
          2000,
        );
        expect(Date.now() - t0).toBeLessThan(2000);
        const after = await callMany(client.call, 200);
        expect(after.get('a')).toBe(200);
      } finally {
        client.close();
      }
    } finally {
      await p.stop();
    }
  }, 60_000);
});
