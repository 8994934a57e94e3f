// What a request gets where several rules could answer it, and where the proxy listens: the data-plane
// fixes to precedence, virtual hosts, backends and ports, each on the smallest manifest that showed it.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { envoyResourcesFor, type EnvoyResources } from '../../src/index.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  route,
  service,
  sr,
} from '../../../translator/test/builders.js';
import { routeHttp, routeUdp, type HttpOutcome } from './envoy-router.js';

const toGw = { name: 'gw', namespace: 'infra' };
const backends = ['one', 'two'].flatMap((s) => [service(s), endpointSlice(s)]);

function served(objects: KubeObject[]): { res: EnvoyResources; statuses: Map<string, unknown> } {
  const result = new Translator().translate(snapshotFromObjects([gatewayClass(), gateway('gw', [http()]), ...objects]));
  const res = envoyResourcesFor(
    result.xdsIR.gateways.get('infra/gw')!,
    () => undefined,
    undefined,
    result.xdsIR.endpoints,
  );
  return { res, statuses: new Map(result.statuses.sortedKeys().map((k) => [k, result.statuses.get(k)])) };
}

/** The clusters a request is sent to (an empty list when the proxy answers it itself). */
function clustersOf(outcome: HttpOutcome): string[] | number | undefined {
  if (outcome.kind !== 'http') return undefined;
  return outcome.targets ? outcome.targets.map((t) => t.cluster) : outcome.status;
}

const get = (res: EnvoyResources, path: string, headers: Record<string, string> = {}, authority = 'example.com') =>
  clustersOf(routeHttp(res, { port: 80, authority, path, headers }));

describe('match precedence, request by request', () => {
  it('header names differing only in case: the first entry is the match, the later one is ignored', () => {
    const { res } = served([
      ...backends,
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          {
            matches: [
              {
                headers: [
                  { name: 'Version', value: 'one' },
                  { name: 'version', value: 'two' },
                ],
              },
            ],
            backendRefs: [{ name: 'one', port: 8080 }],
          },
        ],
      }),
    ]);
    expect(get(res, '/', { version: 'one' })).toEqual(['apps/one/8080']);
    expect(get(res, '/', { version: 'two' })).toBe(404);
  });

  it('PathPrefix "/foo/" counts as "/foo": a tie on the path goes to the match with a header', () => {
    const { res } = served([
      ...backends,
      httpRoute('slash', {
        parentRefs: [toGw],
        rules: [
          { matches: [{ path: { type: 'PathPrefix', value: '/foo/' } }], backendRefs: [{ name: 'one', port: 8080 }] },
        ],
      }),
      httpRoute('header', {
        parentRefs: [toGw],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/foo' }, headers: [{ name: 'x', value: 'y' }] }],
            backendRefs: [{ name: 'two', port: 8080 }],
          },
        ],
      }),
    ]);
    expect(get(res, '/foo/bar', { x: 'y' })).toEqual(['apps/two/8080']);
    expect(get(res, '/foo/bar')).toEqual(['apps/one/8080']);
  });

  it('GRPCRoute: the most characters in a matching service outrank a method-only match', () => {
    const grpc = (name: string, method: Record<string, string>, backend: string) =>
      route('GRPCRoute', name, {
        parentRefs: [toGw],
        rules: [{ matches: [{ method }], backendRefs: [{ name: backend, port: 8080 }] }],
      });
    // The method-only route is the older one: only the match decides.
    const { res } = served([
      ...backends,
      grpc('a-method', { method: 'Get' }, 'one'),
      grpc('b-service', { service: 'pkg.Svc' }, 'two'),
    ]);
    const call = (path: string) =>
      clustersOf(
        routeHttp(res, {
          port: 80,
          authority: 'example.com',
          method: 'POST',
          path,
          headers: { 'content-type': 'application/grpc' },
        }),
      );
    expect(call('/pkg.Svc/Get')).toEqual(['apps/two/8080/h2']);
    expect(call('/other.Svc/Get')).toEqual(['apps/one/8080/h2']);
  });

  it('a route without hostnames serves the requests of a more specific host whose routes do not match them', () => {
    const { res } = served([
      ...backends,
      httpRoute('specific', {
        parentRefs: [toGw],
        hostnames: ['a.example.com'],
        rules: [
          { matches: [{ path: { type: 'PathPrefix', value: '/a' } }], backendRefs: [{ name: 'one', port: 8080 }] },
        ],
      }),
      httpRoute('any-host', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'two', port: 8080 }] }] }),
    ]);
    expect(get(res, '/a/x', {}, 'a.example.com')).toEqual(['apps/one/8080']);
    expect(get(res, '/b', {}, 'a.example.com')).toEqual(['apps/two/8080']);
    expect(get(res, '/a/x', {}, 'b.example.com')).toEqual(['apps/two/8080']);
  });
});

describe('backends a rule keeps', () => {
  it('a mirror to a missing Service is dropped: the rule still serves its backend, ResolvedRefs says why', () => {
    const { res, statuses } = served([
      ...backends,
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          {
            filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'gone', port: 8080 } } }],
            backendRefs: [{ name: 'one', port: 8080 }],
          },
        ],
      }),
    ]);
    const outcome = routeHttp(res, { port: 80, authority: 'example.com', path: '/' });
    expect(clustersOf(outcome)).toEqual(['apps/one/8080']);
    expect(outcome.kind === 'http' && outcome.mirrors).toEqual([]);
    const parents = (statuses.get('HTTPRoute/apps/r') as { parents: { conditions: unknown }[] }).parents;
    expect(sr(parents[0]!.conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
  });

  it('an HTTPRoute and a GRPCRoute to one Service port get two clusters: HTTP/1.1 for one, HTTP/2 for the other', () => {
    const { res } = served([
      ...backends,
      httpRoute('web', {
        parentRefs: [toGw],
        hostnames: ['web.example.com'],
        rules: [{ backendRefs: [{ name: 'one', port: 8080 }] }],
      }),
      route('GRPCRoute', 'rpc', {
        parentRefs: [toGw],
        hostnames: ['rpc.example.com'],
        rules: [{ backendRefs: [{ name: 'one', port: 8080 }] }],
      }),
    ]);
    const webCluster = get(res, '/', {}, 'web.example.com') as string[];
    const rpcCluster = get(res, '/pkg.Svc/Get', {}, 'rpc.example.com') as string[];
    const cluster = (name: string) => res.clusters.find((c) => c.name === name)!;
    expect(cluster(webCluster[0]!).http2_protocol_options).toBeUndefined();
    expect(cluster(rpcCluster[0]!).http2_protocol_options).toEqual({});
  });
});

describe('where the proxy listens', () => {
  it('ports 80 and 10080, and 19000 (admin) each get a listen port of their own, the same in the Service', () => {
    const listeners = [80, 10080, 19000, 10081].map((port) => http(`p${port}`, port));
    const result = new Translator().translate(
      snapshotFromObjects([
        gatewayClass(),
        gateway('gw', listeners),
        ...backends,
        httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'one', port: 8080 }] }] }),
      ]),
    );
    const res = envoyResourcesFor(result.xdsIR.gateways.get('infra/gw')!, () => undefined);
    const listenPorts = res.listeners.map((l) => l.address!.socket_address!.port_value);
    expect(new Set(listenPorts).size).toBe(4);
    expect(listenPorts).not.toContain(19000);
    // The Service sends each Gateway port to the listener built for it.
    const infra = result.infraIR.gateways.get('infra/gw')!;
    for (const p of infra.ports) {
      const listener = res.listeners.find((l) => l.name === `tcp-${p.port}`)!;
      expect(listener.address!.socket_address!.port_value).toBe(p.containerPort);
    }
    expect(infra.ports.map((p) => [p.port, p.containerPort])).toEqual([
      [80, 10082],
      [10080, 10080],
      [10081, 10081],
      // 19001 to 19003 are the Pod's too (readiness, stats, the drain helper).
      [19000, 19004],
    ]);
    for (const port of [80, 10080, 19000])
      expect(clustersOf(routeHttp(res, { port, authority: 'example.com', path: '/' }))).toEqual(['apps/one/8080']);
  });
});

describe('redirect Location and the default port', () => {
  // HTTPRequestRedirectFilter.port: "Implementations SHOULD NOT add the port number in the 'Location'
  // header in the following cases: A Location header that will use HTTP ... _and_ use port 80. A Location
  // header that will use HTTPS ... _and_ use port 443."
  const redirecting = (port: number, requestRedirect: Record<string, unknown>) => {
    const result = new Translator().translate(
      snapshotFromObjects([
        gatewayClass(),
        gateway('gw', [http('web', port)]),
        httpRoute('r', { parentRefs: [toGw], rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect }] }] }),
      ]),
    );
    const res = envoyResourcesFor(result.xdsIR.gateways.get('infra/gw')!, () => undefined);
    return (authority: string, path = '/old?q=1') => {
      const outcome = routeHttp(res, { port, authority, path });
      return outcome.kind === 'http' ? outcome.location : outcome.reason;
    };
  };
  const newPath = { path: { type: 'ReplaceFullPath', replaceFullPath: '/new' } };

  it('a path-only redirect on port 80 writes no :80: "If redirect scheme is empty, the redirect port MUST be the Gateway Listener port", and not written', () => {
    const at = redirecting(80, newPath);
    expect(at('example.com')).toBe('http://example.com/new?q=1');
  });

  it('a scheme-only redirect to https from port 80 writes no :443, and drops the :80 a client wrote', () => {
    const at = redirecting(80, { scheme: 'https' });
    expect(at('example.com')).toBe('https://example.com/old?q=1');
    expect(at('example.com:80')).toBe('https://example.com/old?q=1');
  });

  it('on a listener of another port the Location carries the port the spec asks for', () => {
    expect(redirecting(8080, newPath)('example.com:8080')).toBe('http://example.com:8080/new?q=1');
    // "If redirect scheme is not-empty, the redirect port MUST be the well-known port associated with the
    // redirect scheme": only port_redirect replaces the client's :8080, and Envoy writes it as given.
    expect(redirecting(8080, { scheme: 'https' })('example.com:8080')).toBe('https://example.com:443/old?q=1');
    expect(redirecting(80, { port: 8443 })('example.com')).toBe('http://example.com:8443/old?q=1');
  });
});

describe('listeners that serve part of what they were asked for', () => {
  it('allowedRoutes.kinds naming an unknown kind beside HTTPRoute: the HTTPRoute is served, ResolvedRefs names the rest', () => {
    const listener = http('http', 80, {
      allowedRoutes: {
        namespaces: { from: 'All' },
        kinds: [{ kind: 'HTTPRoute' }, { group: 'example.com', kind: 'Widget' }],
      },
    });
    const result = new Translator().translate(
      snapshotFromObjects([
        gatewayClass(),
        gateway('gw', [listener]),
        ...backends,
        httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'one', port: 8080 }] }] }),
      ]),
    );
    const res = envoyResourcesFor(
      result.xdsIR.gateways.get('infra/gw')!,
      () => undefined,
      undefined,
      result.xdsIR.endpoints,
    );
    expect(clustersOf(routeHttp(res, { port: 80, authority: 'example.com', path: '/' }))).toEqual(['apps/one/8080']);
    const status = result.statuses.get('Gateway/infra/gw') as { listeners: Record<string, any>[] };
    const http80 = status.listeners[0]!;
    expect(sr(http80.conditions, 'ResolvedRefs')).toBe('False/InvalidRouteKinds');
    expect(http80.supportedKinds).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
    expect(http80.attachedRoutes).toBe(1);
  });
});

describe('UDPRoute weights', () => {
  const udpService = (name: string) => service(name, 'apps', [{ name: 'dns', port: 53, protocol: 'UDP' }]);
  const udpSlice = (name: string, ready: boolean) => {
    const slice = endpointSlice(name, 'apps', ['10.2.0.1'], 53, 'dns');
    (slice as any).ports[0].protocol = 'UDP';
    (slice as any).endpoints[0].conditions.ready = ready;
    return slice;
  };
  const shares = (bReady: boolean) => {
    const result = new Translator().translate(
      snapshotFromObjects([
        gatewayClass(),
        gateway('gw', [{ name: 'udp', port: 5300, protocol: 'UDP', allowedRoutes: { namespaces: { from: 'All' } } }]),
        udpService('a'),
        udpService('b'),
        udpSlice('a', true),
        udpSlice('b', bReady),
        route('UDPRoute', 'dns', {
          parentRefs: [toGw],
          rules: [
            {
              backendRefs: [
                { name: 'a', port: 53, weight: 70 },
                { name: 'b', port: 53, weight: 30 },
              ],
            },
          ],
        }),
      ]),
    );
    const res = envoyResourcesFor(
      result.xdsIR.gateways.get('infra/gw')!,
      () => undefined,
      undefined,
      result.xdsIR.endpoints,
    );
    const targets = routeUdp(res, 5300)!;
    const total = targets.reduce((s, t) => s + t.weight, 0);
    return Object.fromEntries(targets.map((t) => [t.cluster, t.weight / total]));
  };

  it('udp_proxy names one cluster, split 70/30 by locality weights over the two Services', () => {
    expect(shares(true)).toEqual({ 'apps/a/53/udp': 0.7, 'apps/b/53/udp': 0.3 });
  });

  it('a backend without a ready endpoint gets no datagrams; the other takes them all', () => {
    expect(shares(false)).toEqual({ 'apps/a/53/udp': 1, 'apps/b/53/udp': 0 });
  });
});
