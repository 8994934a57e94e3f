// Installed needs the proxies' word: a plugin a route runs is Installed only once every connected
// proxy acknowledged the configuration that runs its digest. The ADS server, sync tracker and
// engine are the real ones; the client is a raw ADS client so that it can hold its ACK back.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Condition, KubeObject } from '@turnpike/api';
import { synced, upsert, type EngineOutput, type SourceEvent } from '@turnpike/engine';
import { TYPE } from '@turnpike/xds';
import { Subject } from 'rxjs';
import { startController, type Controller } from '../src/controller.js';
import { startXds, type XdsServing } from '../src/xds-serving.js';
import { adsClient, reader, resourceText, type Stream } from '../../xds/test/ads-client.js';

const GW = 'gateway.networking.k8s.io/v1';
const SHA1 = '1'.repeat(64);
const SHA2 = '2'.repeat(64);
const objects: KubeObject[] = [
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'turnpike' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'turnpike',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
    },
  },
  {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'ProxyConfig',
    metadata: { name: 'pc', namespace: 'infra', generation: 1 },
    spec: { plugins: [{ name: 'hello' }] },
  },
  {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'PluginInstallation',
    metadata: { name: 'hello', namespace: 'infra', generation: 1 },
    spec: { image: 'registry.example.com/hello:v1', type: 'lua' },
  },
  {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name: 'r', namespace: 'infra', generation: 1 },
    spec: {
      parentRefs: [{ name: 'gw' }],
      rules: [
        {
          filters: [
            {
              type: 'ExtensionRef',
              extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'hello' },
            },
          ],
        },
      ],
    },
  },
] as KubeObject[];
/** The fetch worker's result: content served to the proxies inline (no Pod mounts it, as in run --dir). */
const fetched = (sha256: string): KubeObject =>
  ({
    apiVersion: 'turnpike.dev/internal',
    kind: 'PluginFetch',
    metadata: { name: 'hello', namespace: 'infra' },
    status: {
      observedGeneration: 1,
      image: 'registry.example.com/hello:v1',
      fetched: true,
      reason: 'Fetched',
      message: 'ok',
      sha256,
      size: 10,
    },
  }) as KubeObject;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a plugin is Installed once the proxies acknowledged the configuration that runs it', () => {
  const source = new Subject<SourceEvent>();
  let installed: Condition | undefined;
  let xds: XdsServing;
  let controller: Controller;
  let port = 0;
  const until = async (check: (c: Condition | undefined) => boolean, what: string) => {
    const end = Date.now() + 10_000;
    while (!check(installed)) {
      if (Date.now() > end) throw new Error(`${what} not reached; last: ${JSON.stringify(installed)}`);
      await sleep(10);
    }
    return installed!;
  };

  beforeAll(async () => {
    xds = await startXds({
      address: '127.0.0.1:0',
      log: (m) => {
        const p = /serving xDS on .*:(\d+)$/.exec(m);
        if (p) port = Number(p[1]);
      },
      plugins: (sha) => Buffer.from(`-- ${sha}\nfunction envoy_on_request(h) end`),
    });
    controller = startController({
      sources: [source, xds.events],
      sourceNames: ['test'],
      sinks: [xds],
      quietMs: 20,
      maxDelayMs: 200,
      onTranslation: (out: EngineOutput) => {
        const st = out.result.statuses.get('ProxyConfig/infra/pc') as
          { plugins: { conditions: Condition[] }[] } | undefined;
        installed = st?.plugins[0]?.conditions.find((c) => c.type === 'Installed');
      },
      onError: (w, e) => {
        throw new Error(`${w}: ${e.message}`);
      },
    });
    for (const o of [...objects, fetched(SHA1)]) source.next(upsert('test', o));
    source.next(synced('test'));
  });
  afterAll(async () => controller.stop());

  it('Pending until the ACK, again when new content is pushed, Installed after each ACK', async () => {
    expect(
      await until((c) => !!c?.message.includes('no proxy of Gateway infra/gw is connected'), 'Pending'),
    ).toMatchObject({ status: 'False', reason: 'Pending' });
    const stream: Stream = adsClient(port).StreamAggregatedResources();
    const next = reader(stream);
    const node = { id: 'proxy-a', cluster: 'infra/gw' };
    stream.write({ node, type_url: TYPE.listener });
    const first = await next();
    expect(resourceText(first)).toContain('turnpike.plugin/infra/hello');
    // Received but not acknowledged: not installed.
    await until((c) => !!c?.message.includes('waiting for the proxies of Gateway infra/gw'), 'waiting for the ACK');
    stream.write({ node, type_url: TYPE.listener, version_info: first.version_info, response_nonce: first.nonce });
    expect(await until((c) => c?.status === 'True', 'Installed')).toMatchObject({
      reason: 'Installed',
      message: `sha256 ${SHA1.slice(0, 12)} runs in the proxies of 1 Gateway(s)`,
    });

    // New content: pushed, and not installed until that push is acknowledged.
    source.next(upsert('test', fetched(SHA2)));
    const pushed = await next();
    expect(pushed.version_info).not.toBe(first.version_info);
    const waiting = await until((c) => c?.status === 'False', 'Pending after the push');
    expect(waiting.message).toContain('waiting for the proxies of Gateway infra/gw');
    stream.write({ node, type_url: TYPE.listener, version_info: pushed.version_info, response_nonce: pushed.nonce });
    expect((await until((c) => c?.status === 'True', 'Installed again')).message).toContain(SHA2.slice(0, 12));
    stream.end();
  }, 30_000);
});
