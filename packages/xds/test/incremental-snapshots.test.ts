// The snapshot builder and the ADS server work in proportion to a change: an endpoint change
// re-encodes one EDS resource and is pushed alone, over state of the world and delta alike.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { EndpointIR, GatewayIR, XdsIR } from '@turnpike/api';
import {
  AdsServer,
  decodeMessage,
  encodeMessage,
  envoyResourcesFor,
  SnapshotCache,
  TYPE,
  XdsSnapshotBuilder,
} from '../src/index.js';
import { RouteConfigurationEncoder } from '../src/route-encoding.js';
import { adsClient, reader, type Stream } from './ads-client.js';

function gatewayIR(name: string, clusters: string[]): GatewayIR {
  return {
    name,
    namespace: 'infra',
    secrets: [],
    clusters: clusters.map((n) => ({
      name: `apps/${n}/80`,
      service: { namespace: 'apps', name: n, port: 80 },
      protocol: 'http',
    })),
    ports: [
      {
        name: 'tcp-80',
        port: 80,
        listenPort: 10080,
        transport: 'tcp',
        listeners: [
          {
            name: `Gateway/infra/${name}/http`,
            protocol: 'HTTP',
            virtualHosts: [
              {
                name: 'v',
                domains: ['*'],
                routes: [
                  {
                    name: 'r',
                    source: { kind: 'HTTPRoute', namespace: 'apps', name: 'r', rule: 0, match: 0 },
                    match: { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] },
                    backends: clusters.map((n) => ({ cluster: `apps/${n}/80`, weight: 1 })),
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
const eps = (...ips: string[]): EndpointIR[] => ips.map((address) => ({ address, port: 8080, ready: true }));
const xdsIR = (gateways: [string, GatewayIR][], endpoints: [string, EndpointIR[]][]): XdsIR => ({
  gateways: new Map(gateways),
  endpoints: new Map(endpoints),
});
const none = () => undefined;

describe('incremental xDS snapshots', () => {
  it('an endpoint change rebuilds the EDS resource of that cluster in the nodes that use it, and nothing else', () => {
    const gw1 = gatewayIR('gw1', ['a', 'b']);
    const gw2 = gatewayIR('gw2', ['c']);
    const builder = new XdsSnapshotBuilder();
    const first = builder.build(
      xdsIR(
        [
          ['infra/gw1', gw1],
          ['infra/gw2', gw2],
        ],
        [
          ['apps/a/80', eps('10.0.0.1')],
          ['apps/b/80', eps('10.0.0.2')],
          ['apps/c/80', eps('10.0.0.3')],
        ],
      ),
      none,
    );
    const changed = builder.update(
      xdsIR(
        [
          ['infra/gw1', gw1],
          ['infra/gw2', gw2],
        ],
        [
          ['apps/a/80', eps('10.0.0.1', '10.0.0.9')],
          ['apps/b/80', eps('10.0.0.2')],
          ['apps/c/80', eps('10.0.0.3')],
        ],
      ),
      { gateways: [], endpoints: ['apps/a/80'] },
      none,
    );
    expect([...changed.keys()]).toEqual(['infra/gw1']);
    const before = first.get('infra/gw1')!;
    const after = changed.get('infra/gw1')!;
    for (const t of [TYPE.listener, TYPE.route, TYPE.cluster, TYPE.secret]) expect(after.get(t)).toBe(before.get(t));
    expect(after.get(TYPE.endpoint)!.version).not.toBe(before.get(TYPE.endpoint)!.version);
    expect(after.get(TYPE.endpoint)!.resources.get('apps/b/80')).toBe(
      before.get(TYPE.endpoint)!.resources.get('apps/b/80'),
    );
    expect(after.get(TYPE.endpoint)!.resources.get('apps/a/80')!.version).not.toBe(
      before.get(TYPE.endpoint)!.resources.get('apps/a/80')!.version,
    );
  });

  it('a RouteConfiguration spliced from memoised Route bytes decodes to the message encoded whole', () => {
    const gw = gatewayIR('gw1', ['a', 'b', 'c']);
    const vh = gw.ports[0]!.listeners[0]!.virtualHosts![0]!;
    vh.routes.push({
      ...vh.routes[0]!,
      name: 'r2',
      match: {
        path: { type: 'Exact', value: '/x' },
        headers: [{ name: 'h', type: 'Exact', value: 'v' }],
        queryParams: [],
      },
      filters: { requestHeaders: { set: [{ name: 'a', value: 'b' }], add: [], remove: ['c'] } },
    });
    gw.ports[0]!.listeners[0]!.virtualHosts!.push({
      name: 'v2',
      domains: ['b.test'],
      routes: [{ ...vh.routes[0]!, name: 'r3', directResponse: { status: 500 } }],
    });
    const [rc] = envoyResourcesFor(gw, none).routes;
    const encoder = new RouteConfigurationEncoder();
    const whole = decodeMessage(
      'envoy.config.route.v3.RouteConfiguration',
      encodeMessage('envoy.config.route.v3.RouteConfiguration', rc!),
    );
    expect(decodeMessage('envoy.config.route.v3.RouteConfiguration', encoder.encode(rc!))).toEqual(whole);
    expect((whole.virtual_hosts as unknown[]).length).toBe(2);
    expect(encoder.encode(rc!).equals(encoder.encode(rc!))).toBe(true);
  });

  it('a Gateway whose IR and endpoints change in the same translation serves the new endpoints', () => {
    const builder = new XdsSnapshotBuilder();
    const gw = gatewayIR('gw1', ['a']);
    builder.build(xdsIR([['infra/gw1', gw]], [['apps/a/80', eps('10.0.0.1')]]), none);
    const moved = { ...gw, ports: [] }; // a new IR object, same cluster objects
    const out = builder.update(
      xdsIR([['infra/gw1', moved]], [['apps/a/80', eps('10.0.0.2')]]),
      { gateways: ['infra/gw1'], endpoints: ['apps/a/80'] },
      none,
    );
    const cla = out.get('infra/gw1')!.get(TYPE.endpoint)!.resources.get('apps/a/80')!;
    expect(cla.any.value.toString('latin1')).toContain('10.0.0.2');
  });

  it('a Gateway that goes away is removed; one whose IR is the same object is left alone', () => {
    const gw1 = gatewayIR('gw1', ['a']);
    const builder = new XdsSnapshotBuilder();
    builder.build(xdsIR([['infra/gw1', gw1]], []), none);
    expect(builder.update(xdsIR([['infra/gw1', gw1]], []), { gateways: ['infra/gw1'], endpoints: [] }, none).size).toBe(
      0,
    );
    const gone = builder.update(xdsIR([], []), { gateways: ['infra/gw1'], endpoints: [] }, none);
    expect([...gone]).toEqual([['infra/gw1', undefined]]);
  });

  describe('over ADS', () => {
    const cache = new SnapshotCache();
    const builder = new XdsSnapshotBuilder();
    const gw = gatewayIR('gw1', ['a', 'b']);
    let ads: AdsServer;
    let port: number;
    const serve = (endpoints: [string, EndpointIR[]][], changedEndpoints: string[], gateways: string[] = []) =>
      cache.update(
        builder.update(xdsIR([['infra/gw1', gw]], endpoints), { gateways, endpoints: changedEndpoints }, none),
      );
    beforeAll(async () => {
      ads = new AdsServer({ cache });
      port = await ads.listen('127.0.0.1:0');
      serve(
        [
          ['apps/a/80', eps('10.0.0.1')],
          ['apps/b/80', eps('10.0.0.2')],
        ],
        [],
        ['infra/gw1'],
      );
    });
    afterAll(async () => ads.close());
    const node = { id: 'test', cluster: 'infra/gw1' };

    it('state of the world: an endpoint change sends that one ClusterLoadAssignment; a request sends all it names', async () => {
      const stream: Stream = adsClient(port).StreamAggregatedResources();
      const next = reader(stream);
      stream.write({ node, type_url: TYPE.endpoint, resource_names: ['apps/a/80', 'apps/b/80'] });
      const all = await next();
      expect(all.resources).toHaveLength(2);
      stream.write({
        node,
        type_url: TYPE.endpoint,
        resource_names: ['apps/a/80', 'apps/b/80'],
        version_info: all.version_info,
        response_nonce: all.nonce,
      });
      serve(
        [
          ['apps/a/80', eps('10.0.0.1', '10.0.0.7')],
          ['apps/b/80', eps('10.0.0.2')],
        ],
        ['apps/a/80'],
      );
      const one = await next();
      expect(one.resources).toHaveLength(1);
      expect(one.resources[0].value.toString('latin1')).toContain('10.0.0.7');
      expect(one.version_info).not.toBe(all.version_info);
      stream.end();
    });

    it('delta: an endpoint change sends that one resource', async () => {
      const stream: Stream = adsClient(port).DeltaAggregatedResources();
      const next = reader(stream);
      stream.write({ node, type_url: TYPE.endpoint, resource_names_subscribe: ['apps/a/80', 'apps/b/80'] });
      const all = await next();
      expect(all.resources.map((r: { name: string }) => r.name).sort()).toEqual(['apps/a/80', 'apps/b/80']);
      stream.write({ node, type_url: TYPE.endpoint, response_nonce: all.nonce });
      serve(
        [
          ['apps/a/80', eps('10.0.0.1', '10.0.0.7')],
          ['apps/b/80', eps('10.0.0.2', '10.0.0.8')],
        ],
        ['apps/b/80'],
      );
      const one = await next();
      expect(one.resources.map((r: { name: string }) => r.name)).toEqual(['apps/b/80']);
      expect(one.removed_resources ?? []).toEqual([]);
      stream.end();
    });
  });
});
