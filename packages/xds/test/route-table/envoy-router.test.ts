// The route-table check's own Envoy semantics, on hand-written resources, and the data-plane fixes
// it found, each on the smallest manifest that showed it.
import { describe, expect, it } from '@jest/globals';
import type { HTTPRouteIR } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import type { Route } from '../../src/envoy-types.js';
import { buildRoute, envoyResourcesFor, validateResources } from '../../src/index.js';
import { endpointSlice, gateway, gatewayClass, route, service } from '../../../translator/test/builders.js';
import { redirectLocation, routeTcp, rewrittenPath, selectFilterChain, selectVirtualHost } from './envoy-router.js';

const ir = (over: Partial<HTTPRouteIR>): HTTPRouteIR => ({
  name: 'r',
  source: { kind: 'HTTPRoute', namespace: 'ns', name: 'r', rule: 0 },
  match: { path: { type: 'PathPrefix', value: '/strip' }, headers: [], queryParams: [] },
  backends: [{ cluster: 'ns/svc/80', weight: 1 }],
  ...over,
});

describe('Envoy semantics of the route-table check', () => {
  it('domains: exact, then the longest suffix wildcard, then *', () => {
    const rc = {
      virtual_hosts: [
        { name: 'any', domains: ['*'] },
        { name: 'wide', domains: ['*.example.com'] },
        { name: 'narrow', domains: ['*.a.example.com'] },
        { name: 'exact', domains: ['x.a.example.com'] },
      ],
    };
    expect(selectVirtualHost(rc, 'X.A.example.com')?.name).toBe('exact');
    expect(selectVirtualHost(rc, 'y.a.example.com')?.name).toBe('narrow');
    expect(selectVirtualHost(rc, 'b.example.com')?.name).toBe('wide');
    expect(selectVirtualHost(rc, 'example.com')?.name).toBe('any');
  });

  it('filter chains: exact server name, then wildcards from the most specific, then none; no SNI only the last', () => {
    const listener = {
      filter_chains: [
        { name: 'none' },
        { name: 'wild', filter_chain_match: { server_names: ['*.example.com'] } },
        { name: 'exact', filter_chain_match: { server_names: ['a.b.example.com'] } },
      ],
    };
    expect(selectFilterChain(listener, 'a.b.example.com')?.name).toBe('exact');
    expect(selectFilterChain(listener, 'c.b.example.com')?.name).toBe('wild');
    expect(selectFilterChain(listener, 'other.org')?.name).toBe('none');
    expect(selectFilterChain(listener, undefined)?.name).toBe('none');
  });

  it('prefix_rewrite swaps the matched prefix literally: after path_separated_prefix it leaves //', () => {
    const route: Route = { match: { path_separated_prefix: '/strip' } };
    expect(rewrittenPath(route, { prefix_rewrite: '/' }, '/strip/three?q=1')).toBe('//three?q=1');
  });

  it('redirects: host_redirect drops the request port, port_redirect replaces it, the old default port goes with a new scheme', () => {
    const at = (redirect: Route['redirect'], host: string, scheme: 'http' | 'https' = 'http') =>
      redirectLocation({ match: { prefix: '/' }, redirect }, scheme, host, '/p?x=1');
    expect(at({ host_redirect: 'example.org' }, 'a.com:8080')).toBe('http://example.org/p?x=1');
    expect(at({ port_redirect: 9090 }, 'a.com:8080')).toBe('http://a.com:9090/p?x=1');
    expect(at({ scheme_redirect: 'https' }, 'a.com:80')).toBe('https://a.com/p?x=1');
    expect(at({ scheme_redirect: 'https' }, 'a.com:8080')).toBe('https://a.com:8080/p?x=1');
  });
});

describe('data-plane fixes found by the route-table check', () => {
  it('ReplacePrefixMatch keeps one slash: /strip → / turns /strip/three into /three and /strip into /', () => {
    const route = buildRoute(ir({ filters: { rewrite: { path: { type: 'ReplacePrefixMatch', value: '/' } } } }));
    expect(rewrittenPath(route, route.route!, '/strip/three?a=b')).toBe('/three?a=b');
    expect(rewrittenPath(route, route.route!, '/strip')).toBe('/');
    const trailing = buildRoute(
      ir({
        match: { path: { type: 'PathPrefix', value: '/trail/' }, headers: [], queryParams: [] },
        filters: { rewrite: { path: { type: 'ReplacePrefixMatch', value: '/xyz/' } } },
      }),
    );
    expect(rewrittenPath(trailing, trailing.route!, '/trail/bar')).toBe('/xyz/bar');
    const empty = buildRoute(ir({ filters: { rewrite: { path: { type: 'ReplacePrefixMatch', value: '' } } } }));
    expect(rewrittenPath(empty, empty.route!, '/strip/three')).toBe('/three');
  });

  it('a redirect without port or scheme keeps the listener port; https names 443 by leaving it out', () => {
    const redirect = (red: HTTPRouteIR['redirect'], listener: { port: number; protocol: string }) => {
      const route = buildRoute(ir({ backends: undefined, redirect: red }), listener);
      return redirectLocation(route, listener.protocol === 'HTTPS' ? 'https' : 'http', 'a.com:8080', '/p');
    };
    expect(redirect({ statusCode: 302, hostname: 'example.org' }, { port: 8080, protocol: 'HTTP' })).toBe(
      'http://example.org:8080/p',
    );
    expect(redirect({ statusCode: 302, hostname: 'example.org' }, { port: 80, protocol: 'HTTP' })).toBe(
      'http://example.org/p',
    );
    expect(redirect({ statusCode: 302, scheme: 'https' }, { port: 8080, protocol: 'HTTP' })).toMatch(
      /^https:\/\/a\.com(:443)?\/p$/,
    );
  });

  it('a retry backoff of 0s is sent as 1 ms, which Envoy accepts', () => {
    const route = buildRoute(ir({ retry: { codes: [500], attempts: 2, backoff: '0s' } }));
    expect(route.route!.retry_policy!.retry_back_off!.base_interval).toEqual({ seconds: '0', nanos: 1_000_000 });
    const res = {
      listeners: [],
      clusters: [],
      endpoints: [],
      secrets: [],
      routes: [{ name: 'rc', virtual_hosts: [{ name: 'v', domains: ['*'], routes: [route] }] }],
    };
    expect(validateResources(res)).toEqual([]);
  });

  it('backendRequest alone disables the 15 s route timeout', () => {
    const route = buildRoute(ir({ timeouts: { backendRequest: '20s' } }));
    expect(route.route!.timeout).toEqual({ seconds: '0', nanos: 0 });
    expect(route.route!.retry_policy!.per_try_timeout).toEqual({ seconds: '20', nanos: 0 });
  });
});

describe('TLS routes sharing a server name', () => {
  it('the older TLSRoute keeps the name, the newer says it lost it; no two chains share a match, so Envoy accepts the listener', () => {
    const tlsRoute = (name: string, backend: string, created: string) => {
      const r = route('TLSRoute', name, {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        hostnames: ['app.example.com'],
        rules: [{ backendRefs: [{ name: backend, port: 8443 }] }],
      });
      r.metadata.creationTimestamp = created;
      return r;
    };
    const older = tlsRoute('older', 'one', '2026-01-01T00:00:00Z');
    const newer = tlsRoute('newer', 'two', '2026-02-01T00:00:00Z');
    const objects = [
      gatewayClass(),
      gateway('gw', [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ]),
      ...['one', 'two'].flatMap((s) => [
        service(s, 'apps', [{ name: 'tls', port: 8443, protocol: 'TCP' }]),
        endpointSlice(s),
      ]),
      newer,
      older,
    ];
    const snapshot = snapshotFromObjects(objects);
    const result = new Translator().translate(snapshot);
    const res = envoyResourcesFor(
      result.xdsIR.gateways.get('infra/gw')!,
      () => undefined,
      undefined,
      result.xdsIR.endpoints,
    );
    const names = res.listeners[0]!.filter_chains!.map((c) => JSON.stringify(c.filter_chain_match?.server_names ?? []));
    expect(new Set(names).size).toBe(names.length);
    const outcome = routeTcp(res, 443, 'app.example.com');
    expect(outcome.kind === 'tcp' && outcome.targets.map((t) => t.cluster)).toEqual(['apps/one/8443/tcp']);
    // The route that lost the name says so, naming the one that has it.
    const overlap = (name: string) =>
      (
        result.statuses.get(`TLSRoute/apps/${name}`) as { parents: { conditions: Record<string, string>[] }[] }
      ).parents[0]!.conditions.find((c) => c.type === 'RouteRulesOverlap');
    expect(overlap('newer')?.message).toContain('TLSRoute/apps/older is older and takes them');
    expect(overlap('older')?.message).toContain('TLSRoute/apps/newer also names it');
  });
});
