// The rules Envoy enforces on load, beyond PGV: each is caught on the smallest resource set that
// breaks it, naming the resource and the field.
import { describe, expect, it } from '@jest/globals';
import type { Listener, Route, RouteConfiguration } from '../src/envoy-types.js';
import { envoyLoadProblems, type LoadableResources } from '../src/index.js';

const none: LoadableResources = { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] };
const at = (port: number, name = `tcp-${port}`): Listener => ({
  name,
  address: { socket_address: { address: '0.0.0.0', port_value: port, protocol: 'TCP' } },
});
const rc = (name: string, virtual_hosts: RouteConfiguration['virtual_hosts']): RouteConfiguration => ({
  name,
  virtual_hosts,
});
const oneRoute = (route: Route) => rc('r', [{ name: 'v', domains: ['*'], routes: [route] }]);
const found = (res: Partial<LoadableResources>) =>
  envoyLoadProblems({ ...none, ...res }).map((p) => `${p.resource} ${p.field}: ${p.message}`);

describe('Envoy load rules', () => {
  it('two listeners on one address: the second is named', () => {
    expect(found({ listeners: [at(10080, 'tcp-80'), at(10080)] })).toEqual([
      'Listener tcp-10080 address: TCP 0.0.0.0:10080 is taken by Listener tcp-80',
    ]);
  });

  it('filter chains answering one server name, or two without server names, are refused', () => {
    const listener: Listener = {
      ...at(443),
      filter_chains: [
        { name: 'a', filter_chain_match: { server_names: ['x.example.com', 'y.example.com'] } },
        { name: 'b', filter_chain_match: { server_names: ['y.example.com'] } },
        { name: 'c' },
        { name: 'd', filter_chain_match: {} },
      ],
    };
    expect(found({ listeners: [listener] })).toEqual([
      'Listener tcp-443 filter_chains[1].filter_chain_match: matches what filter_chains[0] (a) matches (server name "y.example.com")',
      'Listener tcp-443 filter_chains[3].filter_chain_match: matches what filter_chains[2] (c) matches (server name "")',
    ]);
  });

  it('an ALPN protocol over 255 bytes (Envoy: "Invalid ALPN protocol string"); h2 and http/1.1 pass', () => {
    const chain = (name: string, alpn: string[]) => ({
      name,
      filter_chain_match: { server_names: [`${name}.example.com`] },
      transport_socket: {
        name: 'envoy.transport_sockets.tls',
        typed_config: { common_tls_context: { alpn_protocols: alpn } } as never,
      },
    });
    const listener: Listener = {
      ...at(443),
      filter_chains: [chain('a', ['h2', 'http/1.1']), chain('b', ['x'.repeat(256)])],
    };
    expect(found({ listeners: [listener] })).toEqual([
      `Listener tcp-443 filter_chains[1].transport_socket: Invalid ALPN protocol string: "${'x'.repeat(32)}…" is over 255 bytes`,
    ]);
  });

  it('a domain in two virtual hosts of one route configuration', () => {
    const routes = [
      rc('r', [
        { name: 'a', domains: ['a.example.com'] },
        { name: 'b', domains: ['b.example.com', 'A.example.com'] },
      ]),
    ];
    expect(found({ routes })).toEqual([
      `RouteConfiguration r virtual_hosts[1].domains[1]: "A.example.com" is virtual_hosts[0]'s too`,
    ]);
  });

  it('a regular expression RE2 cannot compile, wherever it sits in a route', () => {
    const problems = found({
      routes: [oneRoute({ match: { safe_regex: { regex: '/a(?=b)' } }, route: { cluster: 'c' } })],
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^RouteConfiguration r virtual_hosts\[0\]\.routes\[0\]\.match\.safe_regex: RE2 cannot compile/,
    );
  });

  it('a regular expression whose RE2 program is over 100 instructions (re2.max_program_size.error_level)', () => {
    const big = '/[^/]+/' + 'x'.repeat(100); // 115 instructions
    const route: Route = {
      match: { safe_regex: { regex: '/api/v[0-9]+/users/[a-z0-9-]+' } }, // 23: accepted
      route: { cluster: 'c', regex_rewrite: { pattern: { regex: big }, substitution: '/' } },
    };
    expect(found({ routes: [oneRoute(route)] })).toEqual([
      `RouteConfiguration r virtual_hosts[0].routes[0].route.regex_rewrite.pattern: regex '${big}' RE2 program size of 115 > max program size of 100`,
    ]);
    // What is not known here is refused too: it could be larger.
    const unicode: Route = { match: { safe_regex: { regex: '\\pL' } }, route: { cluster: 'c' } };
    expect(found({ routes: [oneRoute(unicode)] })).toEqual([
      'RouteConfiguration r virtual_hosts[0].routes[0].match.safe_regex: "\\pL": its RE2 program size is not known here: \\p{L} needs Unicode tables',
    ]);
  });

  it('two path rewrites, weights that sum to 0, and a Host header mutation', () => {
    const route: Route = {
      match: { prefix: '/' },
      route: {
        prefix_rewrite: '/x',
        regex_rewrite: { pattern: { regex: '^/' }, substitution: '/' },
        weighted_clusters: { clusters: [{ name: 'a', weight: { value: 0 } }] },
      },
      request_headers_to_add: [{ header: { key: 'Host', value: 'x' } }],
    };
    expect(found({ routes: [oneRoute(route)] })).toEqual([
      'RouteConfiguration r virtual_hosts[0].routes[0].route: more than one of prefix_rewrite, regex_rewrite, path_rewrite_policy',
      'RouteConfiguration r virtual_hosts[0].routes[0].route.weighted_clusters: the weights sum to 0; Envoy needs 1 to 4294967295',
      'RouteConfiguration r virtual_hosts[0].routes[0].request_headers_to_add: header "Host" may not be modified',
    ]);
  });

  it('a listener naming a route configuration or a Secret that is not sent would wait for it', () => {
    const listener: Listener = {
      ...at(443),
      filter_chains: [
        {
          filters: [
            {
              name: 'envoy.filters.network.http_connection_manager',
              typed_config: { rds: { route_config_name: 'gone' } } as never,
            },
          ],
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              common_tls_context: { tls_certificate_sds_secret_configs: [{ name: 'ns/cert' }] },
            } as never,
          },
        },
      ],
    };
    expect(found({ listeners: [listener] })).toEqual([
      'Listener tcp-443 filter_chains[0]: names RouteConfiguration gone, which is not sent',
      'Listener tcp-443 filter_chains[0].transport_socket: names Secret ns/cert, which is not sent',
    ]);
  });

  it('two resources of one type with one name', () => {
    expect(found({ clusters: [{ name: 'c' }, { name: 'c' }] })).toEqual([
      'Cluster c name: 2 resources of this type have this name',
    ]);
  });
});
