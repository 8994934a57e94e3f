// A rotated certificate reaches the proxies: the Gateway IR carries each Secret's sha256, so the
// rotation changes the output and the xDS sink pushes a new SDS version, over SotW and delta.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { synced, upsert, type SourceEvent } from '@turnpike/engine';
import { TYPE } from '@turnpike/xds';
import { Subject } from 'rxjs';
import { startController, type Controller } from '../src/controller.js';
import { startXds, type XdsServing } from '../src/xds-serving.js';
import { adsClient, reader, resourceText, type Stream } from '../../xds/test/ads-client.js';
import {
  EXAMPLE_COM_CERT,
  EXAMPLE_COM_KEY,
  OTHER_TEST_CERT,
  OTHER_TEST_KEY,
} from '../../translator/test/tls-fixtures.js';

const GW = 'gateway.networking.k8s.io/v1';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (crt: string, key: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cert', namespace: 'infra' },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(crt), 'tls.key': b64(key) },
  }) as KubeObject;
const OBJECTS: KubeObject[] = [
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
      listeners: [
        {
          name: 'https',
          port: 443,
          protocol: 'HTTPS',
          hostname: '*.example.com',
          tls: { certificateRefs: [{ name: 'cert' }] },
        },
      ],
    },
  },
  secret(EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
] as KubeObject[];
const QUIET_MS = 50;
const node = { id: 'test', cluster: 'infra/gw' };

describe('certificate rotation', () => {
  const source = new Subject<SourceEvent>();
  let xds: XdsServing;
  let controller: Controller;
  let port = 0;
  beforeAll(async () => {
    xds = await startXds({
      address: '127.0.0.1:0',
      log: (m) => {
        const p = /serving xDS on .*:(\d+)$/.exec(m);
        if (p) port = Number(p[1]);
      },
    });
    controller = startController({
      sources: [source],
      sourceNames: ['test'],
      sinks: [xds],
      quietMs: QUIET_MS,
      maxDelayMs: 200,
      onError: (w, e) => {
        throw new Error(`${w}: ${e.message}`);
      },
    });
    for (const o of OBJECTS) source.next(upsert('test', o));
    source.next(synced('test'));
  });
  afterAll(async () => controller.stop());

  it('a rotated Secret reaches a state-of-the-world and a delta client within a second of the holdoff', async () => {
    const sotw: Stream = adsClient(port).StreamAggregatedResources();
    const nextSotw = reader(sotw);
    sotw.write({ node, type_url: TYPE.secret, resource_names: ['infra/cert'] });
    const first = await nextSotw();
    expect(resourceText(first)).toContain(EXAMPLE_COM_CERT.slice(40, 80));
    sotw.write({
      node,
      type_url: TYPE.secret,
      resource_names: ['infra/cert'],
      version_info: first.version_info,
      response_nonce: first.nonce,
    });

    const delta: Stream = adsClient(port).DeltaAggregatedResources();
    const nextDelta = reader(delta);
    delta.write({ node, type_url: TYPE.secret, resource_names_subscribe: ['infra/cert'] });
    const firstDelta = await nextDelta();
    delta.write({ node, type_url: TYPE.secret, response_nonce: firstDelta.nonce });

    const rotated = Date.now();
    source.next(upsert('test', secret(OTHER_TEST_CERT, OTHER_TEST_KEY)));
    const [s, d] = await Promise.all([nextSotw(QUIET_MS + 1000), nextDelta(QUIET_MS + 1000)]);
    expect(Date.now() - rotated).toBeLessThan(QUIET_MS + 1000);
    expect(s.version_info).not.toBe(first.version_info);
    expect(resourceText(s)).toContain(OTHER_TEST_CERT.slice(40, 80));
    expect(d.resources.map((r: { name: string }) => r.name)).toEqual(['infra/cert']);
    expect(resourceText(d)).toContain(OTHER_TEST_CERT.slice(40, 80));
    sotw.end();
    delta.end();
  });
});
