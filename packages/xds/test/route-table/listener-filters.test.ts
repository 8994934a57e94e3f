// Pre-routing listener filters (GEP-5224) through the route-table check: translated Gateways whose
// listeners list an ExternalAuth or an ExtensionRef plugin, their Envoy resources (PGV and load rules), and
// requests through Envoy's ext_authz, Lua and Wasm filters as envoy-ext-authz.ts and
// envoy-plugin-filters.ts model them.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import {
  envoyLoadProblems,
  envoyResourcesFor,
  validateResources,
  type EnvoyResources,
  type PluginLookup,
} from '../../src/index.js';
import { HOST_GUARD_RECORD } from '../../src/host-guard.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  referenceGrant,
  route,
  service,
} from '../../../translator/test/builders.js';
import type { AuthzCheck, AuthzService } from './envoy-ext-authz.js';
import type { PluginBehaviour } from './envoy-plugin-filters.js';
import { routeHttp, type HttpOutcome } from './envoy-router.js';

function envoyOf(objects: KubeObject[], plugins?: PluginLookup): EnvoyResources {
  const snapshot = snapshotFromObjects(objects);
  const result = new Translator().translate(snapshot);
  const lookup = (kind: string, ns: string, name: string) =>
    snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
  const res = envoyResourcesFor(result.xdsIR.gateways.get('infra/gw')!, lookup, plugins, result.xdsIR.endpoints);
  expect(validateResources(res)).toEqual([]);
  expect(envoyLoadProblems(res)).toEqual([]);
  return res;
}

const externalAuth = (protocol: 'HTTP' | 'GRPC', extra: Record<string, unknown> = {}) => ({
  requests: [
    {
      type: 'ExternalAuth',
      externalAuth: { protocol, backendRef: { name: 'auth', namespace: 'apps', port: 9000 }, ...extra },
    },
  ],
});
const httpAuth = externalAuth('HTTP', {
  http: { path: '/check', allowedHeaders: ['X-Token'], allowedResponseHeaders: ['x-user', 'host'] },
});

const grant = referenceGrant(
  'gw-to-auth',
  'apps',
  [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
  [{ group: '', kind: 'Service' }],
);
const authService = (endpoints = true) => [
  service('auth', 'apps', [{ name: 'http', port: 9000, protocol: 'TCP' }]),
  ...(endpoints ? [endpointSlice('auth', 'apps', ['10.1.0.9'], 9000)] : []),
];
const backends = ['web', 'alice'].flatMap((n) => [service(n), endpointSlice(n)]);

/** A route on listener `section`: x-user: alice goes to alice, the rest to web. */
const routeOn = (name: string, section: string) =>
  route('HTTPRoute', name, {
    parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: section }],
    rules: [
      {
        matches: [{ headers: [{ name: 'x-user', value: 'alice' }] }],
        backendRefs: [{ name: 'alice', port: 8080 }],
      },
      { backendRefs: [{ name: 'web', port: 8080 }] },
    ],
  });

/** Gateway: listener `a` (a.example, guarded by `filters`) and `b` (b.example, none), one HTTP port. */
function sharedPort(filters: unknown, endpoints = true): EnvoyResources {
  return envoyOf([
    gatewayClass(),
    gateway('gw', [http('a', 80, { hostname: 'a.example', filters }), http('b', 80, { hostname: 'b.example' })]),
    grant,
    ...authService(endpoints),
    ...backends,
    routeOn('ra', 'a'),
    routeOn('rb', 'b'),
  ]);
}

const served = (o: HttpOutcome) => (o.kind === 'http' ? o.targets?.map((t) => t.cluster) : undefined);
const upstreamHeader = (o: HttpOutcome, name: string) =>
  o.kind === 'http' ? o.targets?.[0]?.request.headers.get(name)?.[0] : undefined;
const never: AuthzService = (c) => {
  throw new Error(`no check expected, got one to ${c.cluster}`);
};

describe('listener filters through the route-table check (GEP-5224)', () => {
  it('a request the auth service denies gets its status, and no route runs (short-circuit)', () => {
    const res = sharedPort(httpAuth);
    const checks: AuthzCheck[] = [];
    const o = routeHttp(res, {
      port: 80,
      authority: 'a.example',
      path: '/p?q=1',
      headers: { authorization: 'Bearer x', 'x-token': 't', 'x-other': 'o' },
      authz: (c) => (checks.push(c), { status: 401 }),
    });
    expect(o).toMatchObject({ kind: 'http', status: 401 });
    expect(served(o)).toBeUndefined();
    expect(checks).toHaveLength(1);
    // HTTPAuthConfig.path is a prefix; Host, Authorization and the allowed headers are sent, no others.
    expect(checks[0]).toMatchObject({ protocol: 'HTTP', cluster: 'apps/auth/9000', path: '/check/p?q=1' });
    expect(Object.keys(checks[0]!.headers).sort()).toEqual(['authorization', 'host', 'x-token']);
  });

  it(
    'an allowed request reaches the route with the allowed headers added, routed on them ("Implementations MUST ' +
      'evaluate route matching exactly once after the last ListenerFilter has run"); Host is never changed',
    () => {
      const res = sharedPort(httpAuth);
      const o = routeHttp(res, {
        port: 80,
        authority: 'a.example',
        path: '/',
        authz: () => ({ status: 200, headers: { 'x-user': 'alice', 'x-secret': 's', host: 'b.example' } }),
      });
      expect(served(o)).toEqual(['apps/alice/8080']);
      expect(upstreamHeader(o, 'x-user')).toBe('alice');
      expect(upstreamHeader(o, 'x-secret')).toBeUndefined();
      expect(o.kind === 'http' && o.targets?.[0]?.request.host).toBe('a.example');
    },
  );

  it("per virtual host: the listener without filters never calls the other listener's auth service", () => {
    const res = sharedPort(httpAuth);
    const o = routeHttp(res, {
      port: 80,
      authority: 'b.example',
      path: '/',
      headers: { 'x-user': 'alice' },
      authz: never,
    });
    expect(served(o)).toEqual(['apps/alice/8080']);
    expect(o.kind === 'http' && o.authz).toBeFalsy();
  });

  it('fails closed: an HTTP auth service without endpoints answers 503, a gRPC one 403; never the route', () => {
    const viaHttp = routeHttp(sharedPort(httpAuth, false), {
      port: 80,
      authority: 'a.example',
      path: '/',
      authz: never,
    });
    expect(viaHttp).toMatchObject({ status: 503 });
    expect(served(viaHttp)).toBeUndefined();
    const viaGrpc = routeHttp(sharedPort(externalAuth('GRPC'), false), {
      port: 80,
      authority: 'a.example',
      path: '/',
      authz: never,
    });
    expect(viaGrpc).toMatchObject({ status: 403 });
    expect(served(viaGrpc)).toBeUndefined();
  });

  it('gRPC: every header is sent without allowedHeaders, and an OK answer lets the request through', () => {
    const checks: AuthzCheck[] = [];
    const o = routeHttp(sharedPort(externalAuth('GRPC')), {
      port: 80,
      authority: 'a.example',
      path: '/x',
      headers: { 'x-a': '1', 'x-b': '2' },
      authz: (c) => (checks.push(c), { status: 200 }),
    });
    expect(served(o)).toEqual(['apps/web/8080']);
    expect(checks[0]).toMatchObject({ protocol: 'GRPC', cluster: 'apps/auth/9000/h2', path: '/x' });
    expect(Object.keys(checks[0]!.headers).sort()).toEqual(['host', 'x-a', 'x-b']);
  });

  describe('an ExtensionRef plugin', () => {
    const SHA = '1'.repeat(64);
    const TAGGER = 'function envoy_on_request(h) --[[ the test says what it does ]] end\n';
    const pluginObjects: KubeObject[] = [
      {
        apiVersion: 'turnpike.dev/v1alpha1',
        kind: 'PluginInstallation',
        metadata: { name: 'tagger', namespace: 'infra', generation: 1 },
        spec: { image: 'registry.example.com/team/tagger:v1', type: 'lua' },
      },
      {
        apiVersion: 'turnpike.dev/internal',
        kind: 'PluginFetch',
        metadata: { name: 'tagger', namespace: 'infra' },
        status: {
          observedGeneration: 1,
          image: 'registry.example.com/team/tagger:v1',
          fetched: true,
          reason: 'Fetched',
          message: 'Fetched',
          digest: 'sha256:1234',
          sha256: SHA,
          size: TAGGER.length,
          storage: { configMap: 'turnpike-plugin-tagger' },
        },
      },
    ];
    const tagger = {
      requests: [
        { type: 'ExtensionRef', extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'tagger' } },
      ],
    };
    const content: PluginLookup = (sha) => (sha === SHA ? Buffer.from(TAGGER) : undefined);
    /** Listener `a` (a.example) runs the plugin; `b` (b.example) runs nothing; one HTTP port. */
    const withPlugin = (plugins: PluginLookup = content) =>
      envoyOf(
        [
          gatewayClass(),
          gateway('gw', [
            http('a', 80, { hostname: 'a.example', filters: tagger }),
            http('b', 80, { hostname: 'b.example' }),
          ]),
          ...pluginObjects,
          ...backends,
          routeOn('ra', 'a'),
          routeOn('rb', 'b'),
        ],
        plugins,
      );
    const does = (behaviour: PluginBehaviour) => ({ [TAGGER]: behaviour });
    const addsAlice: PluginBehaviour = (r) => void r.headers.set('x-user', ['alice']);

    it(
      'a header the plugin sets is routed on ("Implementations MUST evaluate route matching exactly once after ' +
        'the last ListenerFilter has run")',
      () => {
        const o = routeHttp(withPlugin(), { port: 80, authority: 'a.example', path: '/', plugins: does(addsAlice) });
        expect(served(o)).toEqual(['apps/alice/8080']);
        expect(upstreamHeader(o, 'x-user')).toBe('alice');
        expect(o.kind === 'http' && o.plugins).toEqual([
          HOST_GUARD_RECORD,
          'turnpike.listener-filter/Gateway/infra/gw/a/0',
          'turnpike.listener-filter/Gateway/infra/gw/a/0/host-guard',
        ]);
      },
    );

    it(
      'a plugin that changes Host does not re-select the listener: the request stays on its virtual host and ' +
        'reaches the backend with the Host it came with; without the Host guard it would have moved',
      () => {
        const toB: PluginBehaviour = (r) => {
          r.authority = 'b.example';
          r.headers.set('x-user', ['alice']);
        };
        const res = withPlugin();
        const o = routeHttp(res, { port: 80, authority: 'a.example', path: '/', plugins: does(toB) });
        expect(o).toMatchObject({ virtualHost: 'a.example' });
        expect(o.kind === 'http' && o.route).toContain('httproute/apps/ra/');
        expect(o.kind === 'http' && o.targets?.[0]?.request.host).toBe('a.example');
        // The same resources without the guard's filters: Envoy would route the changed Host.
        const hcm = res.listeners[0]!.filter_chains![0]!.filters![0]!.typed_config as unknown as {
          http_filters: { name: string }[];
        };
        hcm.http_filters = hcm.http_filters.filter((f) => !f.name.endsWith('host-guard'));
        const unguarded = routeHttp(res, { port: 80, authority: 'a.example', path: '/', plugins: does(toB) });
        expect(unguarded).toMatchObject({ virtualHost: 'b.example' });
      },
    );

    it("the other listener of the port never runs the plugin, and a plugin's answer ends the request", () => {
      const never: PluginBehaviour = () => {
        throw new Error('the plugin ran on listener b');
      };
      const onB = routeHttp(withPlugin(), { port: 80, authority: 'b.example', path: '/', plugins: does(never) });
      expect(served(onB)).toEqual(['apps/web/8080']);
      expect(onB.kind === 'http' && onB.plugins).toEqual([
        HOST_GUARD_RECORD,
        'turnpike.listener-filter/Gateway/infra/gw/a/0/host-guard',
      ]);
      const denied = routeHttp(withPlugin(), {
        port: 80,
        authority: 'a.example',
        path: '/',
        plugins: does(() => ({ respond: 403 })),
      });
      expect(denied).toMatchObject({ status: 403 });
      expect(served(denied)).toBeUndefined();
    });

    it('content the proxy cannot be given fails closed: 500, never the route', () => {
      const o = routeHttp(
        withPlugin(() => undefined),
        { port: 80, authority: 'a.example', path: '/' },
      );
      expect(o).toMatchObject({ status: 500 });
      expect(served(o)).toBeUndefined();
    });

    it(
      "a request a listener plugin moves to a route with other plugins than the first route's is answered 500, " +
        'never served without them (Envoy set up the plugins of the route it chose first)',
      () => {
        const AUDIT_SHA = '2'.repeat(64);
        const AUDIT = 'function envoy_on_request(h) --[[ audit ]] end\n';
        const audit: KubeObject[] = pluginObjects.map((o) => ({
          ...o,
          metadata: { ...o.metadata, name: 'audit', namespace: 'apps' },
          ...(o.kind === 'PluginFetch'
            ? { status: { ...(o.status as object), image: 'registry.example.com/team/audit:v1', sha256: AUDIT_SHA } }
            : { spec: { ...(o.spec as object), image: 'registry.example.com/team/audit:v1' } }),
        }));
        // alice's rule runs the audit plugin; the rest goes to web without it.
        const audited = route('HTTPRoute', 'ra', {
          parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'a' }],
          rules: [
            {
              matches: [{ headers: [{ name: 'x-user', value: 'alice' }] }],
              filters: [
                {
                  type: 'ExtensionRef',
                  extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'audit' },
                },
              ],
              backendRefs: [{ name: 'alice', port: 8080 }],
            },
            { backendRefs: [{ name: 'web', port: 8080 }] },
          ],
        });
        const res = envoyOf(
          [
            gatewayClass(),
            gateway('gw', [http('a', 80, { hostname: 'a.example', filters: tagger })]),
            ...pluginObjects,
            ...audit,
            ...backends,
            audited,
          ],
          (sha) => (sha === SHA ? Buffer.from(TAGGER) : sha === AUDIT_SHA ? Buffer.from(AUDIT) : undefined),
        );
        const audits: string[] = [];
        const plugins = { ...does(addsAlice), [AUDIT]: () => void audits.push('audit') };
        // First chosen: web's rule (no plugin); the tagger moves the request to alice's, which audits.
        const moved = routeHttp(res, { port: 80, authority: 'a.example', path: '/', plugins });
        expect(moved).toMatchObject({ status: 500 });
        expect(served(moved)).toBeUndefined();
        // Chosen as alice's from the start: audited, and served.
        const direct = routeHttp(res, {
          port: 80,
          authority: 'a.example',
          path: '/',
          headers: { 'x-user': 'alice' },
          plugins,
        });
        expect(served(direct)).toEqual(['apps/alice/8080']);
        expect(audits).toEqual(['audit']);
        // Without the check, the moved request would have reached alice unaudited.
        const hcm = res.listeners[0]!.filter_chains![0]!.filters![0]!.typed_config as unknown as {
          http_filters: { name: string }[];
        };
        hcm.http_filters = hcm.http_filters.filter((f) => !f.name.includes('/route-plugins/'));
        const unchecked = routeHttp(res, { port: 80, authority: 'a.example', path: '/', plugins });
        expect(served(unchecked)).toEqual(['apps/alice/8080']);
        expect(audits).toEqual(['audit']);
      },
    );
  });
});
