// The data plane's word on a Gateway: from the proxies' ACKs, turnpike.dev/ProxiesInSync says whether
// every connected proxy runs the configuration served now, naming those that do not, and
// turnpike_config_latency_seconds measures each change from its first event to a proxy's ACK.
// The client here is a raw ADS client because it must hold its ACK back, which no real proxy does on purpose.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Condition, KubeObject } from '@turnpike/api';
import { synced, upsert, type EngineOutput, type SourceEvent } from '@turnpike/engine';
import { createMetrics } from '@turnpike/kube';
import { TYPE } from '@turnpike/xds';
import { Subject } from 'rxjs';
import { startController, type Controller } from '../src/controller.js';
import { startXds, type XdsServing } from '../src/xds-serving.js';
import { adsClient, reader, type Stream } from '../../xds/test/ads-client.js';

const GW = 'gateway.networking.k8s.io/v1';
const gateway = (ports: number[]): KubeObject =>
  ({
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'turnpike',
      listeners: ports.map((port) => ({ name: `http-${port}`, port, protocol: 'HTTP' })),
    },
  }) as KubeObject;
const CLASS = {
  apiVersion: GW,
  kind: 'GatewayClass',
  metadata: { name: 'turnpike' },
  spec: { controllerName: 'turnpike.dev/gateway-controller' },
} as KubeObject;
const QUIET_MS = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("ProxiesInSync and config latency from the proxies' ACKs", () => {
  const source = new Subject<SourceEvent>();
  const metrics = createMetrics();
  const latencies: number[] = [];
  let latest: Condition | undefined | null = null;
  const seen: string[] = [];
  let translations = 0;
  let xds: XdsServing;
  let controller: Controller;
  let port = 0;

  const inSync = () => latest;
  const until = async (check: (c: Condition | undefined | null) => boolean, ms = 5000) => {
    const end = Date.now() + ms;
    while (!check(inSync())) {
      if (Date.now() > end) throw new Error(`condition not reached; last: ${JSON.stringify(inSync())}`);
      await sleep(10);
    }
    return inSync();
  };

  beforeAll(async () => {
    xds = await startXds({
      address: '127.0.0.1:0',
      log: (m) => {
        const p = /serving xDS on .*:(\d+)$/.exec(m);
        if (p) port = Number(p[1]);
      },
      onConfigLatency: (g, s) => {
        latencies.push(s);
        metrics.configLatency.observe({ gateway: g }, s);
      },
    });
    controller = startController({
      sources: [source, xds.events],
      sourceNames: ['test'],
      sinks: [xds],
      quietMs: QUIET_MS,
      maxDelayMs: 200,
      onTranslation: (out: EngineOutput) => {
        const st = out.result.statuses.get('Gateway/infra/gw') as { conditions: Condition[] } | undefined;
        latest = st?.conditions.find((c) => c.type === 'turnpike.dev/ProxiesInSync');
        if (latest) seen.push(latest.status);
        translations++;
      },
      onError: (w, e) => {
        throw new Error(`${w}: ${e.message}`);
      },
    });
    source.next(upsert('test', CLASS));
    source.next(upsert('test', gateway([80])));
    source.next(synced('test'));
    await until((c) => c === undefined); // translated; no proxy yet, so no condition
  });
  afterAll(async () => controller.stop());

  it('a proxy is behind until it ACKs; a late ACK is measured; a second proxy that never ACKs is named', async () => {
    const a: Stream = adsClient(port).StreamAggregatedResources();
    const nextA = reader(a);
    a.write({ node: { id: 'proxy-a', cluster: 'infra/gw' }, type_url: TYPE.listener });
    const first = await nextA();
    const behind = await until((c) => c?.status === 'False');
    expect(behind).toMatchObject({
      reason: 'Behind',
      message: '1 of 1 connected proxies have not acknowledged the current configuration: proxy-a',
    });

    await sleep(600);
    a.write({
      node: { id: 'proxy-a', cluster: 'infra/gw' },
      type_url: TYPE.listener,
      version_info: first.version_info,
      response_nonce: first.nonce,
    });
    expect(await until((c) => c?.status === 'True')).toMatchObject({
      reason: 'InSync',
      message: 'All 1 connected proxies run the current configuration',
    });
    expect(latencies).toHaveLength(1);
    expect(latencies[0]).toBeGreaterThanOrEqual(0.6);

    // A change: measured from its event, through the holdoff and the push, to the (late) ACK.
    const changedAt = Date.now();
    source.next(upsert('test', gateway([80, 8080])));
    const pushed = await nextA();
    expect(await until((c) => c?.status === 'False')).toMatchObject({ reason: 'Behind' });
    await sleep(400);
    a.write({
      node: { id: 'proxy-a', cluster: 'infra/gw' },
      type_url: TYPE.listener,
      version_info: pushed.version_info,
      response_nonce: pushed.nonce,
    });
    await until((c) => c?.status === 'True');
    expect(latencies).toHaveLength(2);
    expect(latencies[1]).toBeGreaterThanOrEqual(0.4);
    expect(latencies[1]).toBeLessThanOrEqual((Date.now() - changedAt) / 1000 + 0.05);

    const b: Stream = adsClient(port).StreamAggregatedResources();
    const nextB = reader(b);
    b.write({ node: { id: 'proxy-b', cluster: 'infra/gw' }, type_url: TYPE.listener });
    await nextB();
    expect(await until((c) => c?.status === 'False')).toMatchObject({
      message: '1 of 2 connected proxies have not acknowledged the current configuration: proxy-b',
    });
    b.end();
    expect(await until((c) => c?.status === 'True')).toMatchObject({
      message: 'All 1 connected proxies run the current configuration',
    });

    // The metric: two observations for this Gateway, both above 0.25 s.
    const text = await metrics.registry.metrics();
    expect(text).toContain('turnpike_config_latency_seconds_count{gateway="infra/gw"} 2');
    expect(text).toContain('turnpike_config_latency_seconds_bucket{le="0.25",gateway="infra/gw"} 0');

    // No proxy left: the condition goes (nothing is known about the data plane).
    a.end();
    await until((c) => c === undefined);
  }, 20_000);

  it('a push acknowledged at once is not news: no Behind, no extra translation', async () => {
    const c: Stream = adsClient(port).StreamAggregatedResources();
    const next = reader(c);
    const node = { id: 'proxy-c', cluster: 'infra/gw' };
    c.write({ node, type_url: TYPE.listener });
    let r = await next();
    c.write({ node, type_url: TYPE.listener, version_info: r.version_info, response_nonce: r.nonce });
    await until((x) => x?.status === 'True');
    seen.length = 0;
    const before = translations;
    for (const ports of [
      [80, 81],
      [80, 82],
      [80, 83],
    ]) {
      source.next(upsert('test', gateway(ports)));
      r = await next();
      c.write({ node, type_url: TYPE.listener, version_info: r.version_info, response_nonce: r.nonce });
    }
    // Past the grace period: anything reported behind would have been by now.
    await sleep(1500);
    expect(seen.filter((x) => x === 'False')).toEqual([]);
    // One translation per change; none for the proxy's brief lag behind each push.
    expect(translations - before).toBe(3);
    c.end();
  }, 20_000);
});
