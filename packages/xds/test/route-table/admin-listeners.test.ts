// What the pod network reaches of a proxy's admin: the readiness port answers GET /ready and the stats
// port GET /stats/prometheus, each from the admin on loopback; every other path and method, and
// anything that only looks like those paths, is answered by the listener itself (404) and never
// reaches the admin (/quitquitquit, /config_dump with its keys, /drain_listeners, /healthcheck/fail).
import { describe, expect, it } from '@jest/globals';
import { PROXY_ADMIN_PORT, PROXY_DRAIN_PORT, PROXY_READINESS_PORT, PROXY_STATS_PORT } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import {
  ADMIN_CLUSTER,
  buildBootstrap,
  crossResourceProblems,
  envoyLoadProblems,
  envoyResourcesFor,
  type EnvoyResources,
} from '../../src/index.js';
import { endpointSlice, gateway, gatewayClass, http, httpRoute, service } from '../../../translator/test/builders.js';
import { routeHttp } from './envoy-router.js';

function bootstrapResources(stats = true): EnvoyResources {
  const b = buildBootstrap({ namespace: 'infra', name: 'gw', xdsHost: '10.0.0.1', xdsPort: 18000, stats });
  return {
    listeners: b.static_resources?.listeners ?? [],
    routes: [],
    clusters: b.static_resources?.clusters ?? [],
    endpoints: [],
    secrets: [],
  };
}

/** Where a request to the Pod ends: the admin path it reaches, or the status the listener answers with. */
function outcome(res: EnvoyResources, port: number, path: string, method = 'GET'): string | number {
  const o = routeHttp(res, { port, authority: `10.1.2.3:${port}`, path, method });
  if (o.kind === 'refused') return `refused: ${o.reason}`;
  if (o.targets) {
    expect(o.targets.map((t) => t.cluster)).toEqual([ADMIN_CLUSTER]);
    return `admin ${o.targets[0]!.request.method} ${o.targets[0]!.request.path}`;
  }
  return o.status!;
}

const ADMIN_PATHS = [
  '/quitquitquit',
  '/config_dump',
  '/config_dump?include_eds',
  '/drain_listeners?graceful',
  '/healthcheck/fail',
  '/healthcheck/ok',
  '/stats',
  '/logging?level=trace',
  '/runtime_modify?x=1',
  '/clusters',
  '/certs',
  '/server_info',
  '/',
];

// Paths a client may send hoping a prefix match or a normaliser would let them through.
const LOOKALIKES = (p: string) => [
  `${p}/`,
  `${p}/../config_dump`,
  `${p}%2F..%2Fquitquitquit`,
  `/${p}`,
  p.toUpperCase(),
  `${p}.json`,
  `${p};/quitquitquit`,
];

describe('the readiness and stats listeners of the bootstrap', () => {
  it('readiness: only GET (or HEAD) /ready reaches the admin, query string and all', () => {
    const res = bootstrapResources();
    expect(outcome(res, PROXY_READINESS_PORT, '/ready')).toBe('admin GET /ready');
    expect(outcome(res, PROXY_READINESS_PORT, '/ready', 'HEAD')).toBe('admin HEAD /ready');
    expect(outcome(res, PROXY_READINESS_PORT, '/ready?x=1')).toBe('admin GET /ready?x=1');
    for (const method of ['POST', 'PUT', 'DELETE'])
      expect(outcome(res, PROXY_READINESS_PORT, '/ready', method)).toBe(404);
    for (const path of [...ADMIN_PATHS, '/stats/prometheus', ...LOOKALIKES('/ready')])
      for (const method of ['GET', 'POST'])
        expect([path, method, outcome(res, PROXY_READINESS_PORT, path, method)]).toEqual([path, method, 404]);
  });

  it('stats: only GET (or HEAD) /stats/prometheus reaches the admin', () => {
    const res = bootstrapResources();
    expect(outcome(res, PROXY_STATS_PORT, '/stats/prometheus')).toBe('admin GET /stats/prometheus');
    expect(outcome(res, PROXY_STATS_PORT, '/stats/prometheus?usedonly')).toBe('admin GET /stats/prometheus?usedonly');
    expect(outcome(res, PROXY_STATS_PORT, '/stats/prometheus', 'POST')).toBe(404);
    for (const path of [...ADMIN_PATHS, '/ready', ...LOOKALIKES('/stats/prometheus')])
      for (const method of ['GET', 'POST'])
        expect([path, method, outcome(res, PROXY_STATS_PORT, path, method)]).toEqual([path, method, 404]);
  });

  it('the admin itself listens on loopback only, and with metrics off there is no stats listener', () => {
    const b = buildBootstrap({ namespace: 'infra', name: 'gw', xdsHost: '10.0.0.1', xdsPort: 18000 });
    expect(b.admin?.address?.socket_address).toEqual({ address: '127.0.0.1', port_value: PROXY_ADMIN_PORT });
    const admin = b.static_resources!.clusters!.find((c) => c.name === ADMIN_CLUSTER)!;
    expect(JSON.stringify(admin.load_assignment)).toContain(`"address":"127.0.0.1","port_value":${PROXY_ADMIN_PORT}`);
    const off = bootstrapResources(false);
    expect(outcome(off, PROXY_STATS_PORT, '/stats/prometheus')).toMatch(/^refused: no listener/);
    expect(outcome(off, PROXY_READINESS_PORT, '/ready')).toBe('admin GET /ready');
  });

  it('a Gateway listening on the ports the Pod holds for itself is moved off them: nothing binds twice', () => {
    const gw = gateway('gw', [
      http('a', PROXY_ADMIN_PORT),
      http('b', PROXY_READINESS_PORT),
      http('c', PROXY_STATS_PORT),
      http('d', PROXY_DRAIN_PORT),
    ]);
    const route = httpRoute('r', {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [{ backendRefs: [{ name: 'one', port: 8080 }] }],
    });
    const result = new Translator().translate(
      snapshotFromObjects([gatewayClass(), gw, route, service('one'), endpointSlice('one')]),
    );
    const served = envoyResourcesFor(
      result.xdsIR.gateways.get('infra/gw')!,
      () => undefined,
      undefined,
      result.xdsIR.endpoints,
    );
    const pod = bootstrapResources();
    const all: EnvoyResources = {
      listeners: [...pod.listeners, ...served.listeners],
      routes: served.routes,
      clusters: [...pod.clusters, ...served.clusters],
      endpoints: served.endpoints,
      secrets: served.secrets,
    };
    expect(served.listeners).toHaveLength(4);
    expect(crossResourceProblems(all)).toEqual([]);
    expect(envoyLoadProblems(pod)).toEqual([]);
    const bound = all.listeners.map((l) => l.address?.socket_address?.port_value);
    expect(new Set(bound).size).toBe(bound.length);
    for (const p of [PROXY_ADMIN_PORT, PROXY_READINESS_PORT, PROXY_STATS_PORT, PROXY_DRAIN_PORT])
      expect(served.listeners.map((l) => l.address?.socket_address?.port_value)).not.toContain(p);
  });
});
