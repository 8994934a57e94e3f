// XTelemetryPolicy provider headers (GEP-4768) become the OpenTelemetry tracer's gRPC initial metadata in
// every HTTP connection manager, and are often a collector's API key: a debug read (`turnpike proxy-config`,
// a real gRPC client here) is sent the Listeners with each value replaced by `<redacted>` (the keys kept),
// while a proxy of the Gateway is still sent the values it must send.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import {
  AdsServer,
  DEBUG_READ_METADATA,
  decodeMessage,
  encodeSnapshot,
  envoyResourcesFor,
  REDACTED,
  SnapshotCache,
  TYPE,
} from '../src/index.js';
import { adsClient, reader, type Stream } from './ads-client.js';

const GW = 'gateway.networking.k8s.io/v1';
const API_KEY = 'otlp-api-key-7f3c9a';
type Json = Record<string, any>;

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
    metadata: { name: 'gw', namespace: 'infra', generation: 1 },
    spec: { gatewayClassName: 'turnpike', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'otel', namespace: 'infra' },
    spec: { ports: [{ name: 'p', port: 4317, protocol: 'TCP' }] },
  },
  {
    apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
    kind: 'XTelemetryPolicy',
    metadata: { name: 'tp', namespace: 'infra', generation: 1 },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }],
      tracing: {
        mode: 'Enabled',
        provider: {
          backendRef: { name: 'otel', port: 4317 },
          headers: [
            { name: 'X-Api-Key', value: API_KEY },
            { name: 'X-Tenant', value: 'shop' },
          ],
        },
      },
    },
  },
];

let server: AdsServer | undefined;
const streams: Stream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.cancel();
  await server?.close();
  server = undefined;
});

async function serve(): Promise<number> {
  const result = translate(snapshotFromObjects(objects));
  const lookup = (kind: string, ns: string, n: string) =>
    objects.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === n);
  const resources = envoyResourcesFor(
    result.xdsIR.gateways.get('infra/gw')!,
    lookup,
    undefined,
    result.xdsIR.endpoints,
  );
  const cache = new SnapshotCache();
  cache.setAll(new Map([['infra/gw', encodeSnapshot(resources)]]));
  server = new AdsServer({ cache });
  return server.listen('127.0.0.1:0');
}

/** The tracer metadata of every connection manager of the Listeners a stream of `node` is sent. */
async function tracerMetadata(port: number, node: object): Promise<{ key: string; value: string }[][]> {
  const stream: Stream = adsClient(port).StreamAggregatedResources();
  streams.push(stream);
  const next = reader(stream);
  stream.write({ node, type_url: TYPE.listener, resource_names: [] });
  const response = await next();
  const out: { key: string; value: string }[][] = [];
  for (const r of response.resources ?? []) {
    const listener = decodeMessage('envoy.config.listener.v3.Listener', r.value) as Json;
    for (const chain of listener.filter_chains ?? [])
      for (const f of chain.filters ?? [])
        if (String(f.typed_config?.['@type']).endsWith('HttpConnectionManager'))
          out.push(f.typed_config.tracing.provider.typed_config.grpc_service.initial_metadata);
  }
  return out;
}

describe('tracer metadata in debug reads', () => {
  it('security: a debug read is sent the export headers with their values redacted; a proxy gets the values', async () => {
    const port = await serve();
    const debug = await tracerMetadata(port, {
      id: 'proxy-config',
      cluster: 'infra/gw',
      metadata: { fields: { [DEBUG_READ_METADATA]: { boolValue: true } } },
    });
    expect(debug.length).toBeGreaterThan(0);
    for (const metadata of debug)
      expect(metadata).toEqual([
        { key: 'x-api-key', value: REDACTED },
        { key: 'x-tenant', value: REDACTED },
      ]);
    expect(JSON.stringify(debug)).not.toContain(API_KEY);

    const proxy = await tracerMetadata(port, { id: 'envoy', cluster: 'infra/gw' });
    expect(proxy.length).toBe(debug.length);
    for (const metadata of proxy)
      expect(metadata).toEqual([
        { key: 'x-api-key', value: API_KEY },
        { key: 'x-tenant', value: 'shop' },
      ]);
  });
});
