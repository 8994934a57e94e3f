// The serving path's last check: a resource Envoy would refuse is withheld at the smallest unit
// (a route, a filter chain, a listener), the rest of the port is sent, and what was withheld is
// reported naming the object and field that made it.
import { describe, expect, it } from '@jest/globals';
import type { GatewayIR, HTTPRouteIR, XdsIR } from '@turnpike/api';
import type { Listener } from '../src/envoy-types.js';
import {
  buildResources,
  envoyLoadProblems,
  screenResources,
  validateResources,
  XdsSnapshotBuilder,
  type EnvoyResources,
  type WithheldResource,
} from '../src/index.js';
import { routeHttp } from './route-table/envoy-router.js';

const rule = (name: string, path: HTTPRouteIR['match']['path'], rule = 0): HTTPRouteIR => ({
  name: `httproute/apps/${name}/rule/${rule}/match/0`,
  source: { kind: 'HTTPRoute', namespace: 'apps', name, rule, match: 0 },
  match: { path, headers: [], queryParams: [] },
  backends: [{ cluster: 'apps/web/8080', weight: 1 }],
});

/** A Gateway whose port 80 holds a good route and one with a regex RE2 refuses (`a(?=b)`, a lookahead). */
function gatewayIR(): GatewayIR {
  return {
    name: 'gw',
    namespace: 'infra',
    secrets: [],
    clusters: [{ name: 'apps/web/8080', service: { namespace: 'apps', name: 'web', port: 8080 }, protocol: 'http' }],
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
                domains: ['*'],
                routes: [
                  rule('bad', { type: 'RegularExpression', value: '/a(?=b)' }),
                  rule('good', { type: 'PathPrefix', value: '/' }),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

const xdsIR = (gw: GatewayIR): XdsIR => ({
  gateways: new Map([['infra/gw', gw]]),
  endpoints: new Map([['apps/web/8080', [{ address: '10.0.0.1', port: 8080, ready: true }]]]),
});

describe('resource screen', () => {
  it('a route Envoy would refuse is withheld; the rest of its port is served, and the report names the route', () => {
    const reports: [string, WithheldResource[]][] = [];
    const builder = new XdsSnapshotBuilder({ onWithheld: (gw, w) => reports.push([gw, w]) });
    const snapshots = builder.build(xdsIR(gatewayIR()), () => undefined);
    expect(snapshots.get('infra/gw')).toBeDefined();
    expect(reports).toHaveLength(1);
    const [gateway, withheld] = reports[0]!;
    expect(gateway).toBe('infra/gw');
    expect(withheld).toHaveLength(1);
    expect(withheld[0]).toMatchObject({
      resource: 'RouteConfiguration tcp-80',
      field: 'virtual_hosts[0].routes[0]',
      source: 'HTTPRoute apps/bad spec.rules[0].matches[0]',
      object: 'HTTPRoute/apps/bad',
    });
    expect(withheld[0]!.message).toMatch(/RE2 cannot compile "\/a\(\?=b\)"/);
    // Fixed: the report clears.
    const fixed = gatewayIR();
    fixed.ports[0]!.listeners[0]!.virtualHosts![0]!.routes.shift();
    builder.update(xdsIR(fixed), { gateways: ['infra/gw'], endpoints: [] }, () => undefined);
    expect(reports[1]).toEqual(['infra/gw', []]);
  });

  it('what is left passes every rule, and a request to the port still gets the good route', () => {
    const raw = buildResources(
      gatewayIR(),
      () => undefined,
      undefined,
      () => [{ address: '10.0.0.1', port: 8080, ready: true }],
    );
    expect(envoyLoadProblems(raw)).not.toEqual([]);
    const { resources } = screenResources(raw);
    expect(validateResources(resources)).toEqual([]);
    expect(envoyLoadProblems(resources)).toEqual([]);
    const outcome = routeHttp(resources, { port: 80, authority: 'example.com', path: '/a' });
    expect(outcome.kind === 'http' && outcome.targets?.map((t) => t.cluster)).toEqual(['apps/web/8080']);
  });

  it('a second listener on a taken address, and a filter chain naming a Secret that is not sent, are withheld', () => {
    const at = (name: string): Listener => ({
      name,
      address: { socket_address: { address: '0.0.0.0', port_value: 10443, protocol: 'TCP' } },
      filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: tcp() }] }],
    });
    const withSecret: Listener = {
      ...at('tls-one'),
      filter_chains: [
        {
          name: 'needs-secret',
          filter_chain_match: { server_names: ['a.example.com'] },
          filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: tcp() }],
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
              common_tls_context: {
                tls_certificate_sds_secret_configs: [{ name: 'infra/gone', sds_config: { ads: {} } }],
              },
            } as never,
          },
        },
        { name: 'plain', filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: tcp() }] },
      ],
    };
    const res: EnvoyResources = {
      listeners: [withSecret, at('tls-two')],
      routes: [],
      clusters: [],
      endpoints: [],
      secrets: [],
    };
    const { resources, withheld } = screenResources(res);
    expect(resources.listeners.map((l) => [l.name, (l.filter_chains ?? []).map((c) => c.name)])).toEqual([
      ['tls-one', ['plain']],
    ]);
    expect(withheld.map((w) => `${w.resource} ${w.field}`)).toEqual([
      'Listener tls-two address',
      'Listener tls-one filter_chains[0].transport_socket',
    ]);
  });
});

function tcp() {
  return {
    '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
    stat_prefix: 's',
    cluster: 'c',
  } as never;
}
