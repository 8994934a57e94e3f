// The offline PGV checker: every Envoy resource we emit validates and encodes, for the project's
// own example, for random histories of every kind, and for random strings in every field a user
// writes; resources that break Envoy's rules are caught, naming the field.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { loadManifests } from '@turnpike/engine';
import { snapshotFromObjects, translate, Translator, type Snapshot } from '@turnpike/translator';
import fc from 'fast-check';
import {
  bootstrapSdsFiles,
  buildBootstrap,
  decodeMessage,
  encodeMessage,
  envoyLoadProblems,
  envoyResourcesFor,
  validateMessage,
  validateResources,
} from '../src/index.js';
import { apply, BASE, history, startingSnapshot } from '../../translator/test/histories.js';

const RUNS = Number(process.env.FC_RUNS ?? 250);
const quickstart = resolve(dirname(fileURLToPath(import.meta.url)), '../../../examples/quickstart');

/**
 * Every problem of every resource the translation of `snapshot` gives (field rules, and the rules
 * Envoy enforces on load), and that they encode.
 */
function problems(snapshot: Snapshot, translator = new Translator()): string[] {
  const result = translator.translate(snapshot);
  const lookup = (kind: string, ns: string, name: string) =>
    snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
  const out: string[] = [];
  for (const [key, gw] of result.xdsIR.gateways) {
    const res = envoyResourcesFor(gw, lookup, undefined, result.xdsIR.endpoints);
    for (const e of validateResources(res)) out.push(`${key}: ${e}`);
    for (const p of envoyLoadProblems(res)) out.push(`${key}: ${p.resource} ${p.field}: ${p.message}`);
    for (const l of res.listeners) encodeMessage('envoy.config.listener.v3.Listener', l);
    for (const r of res.routes) encodeMessage('envoy.config.route.v3.RouteConfiguration', r);
    for (const c of res.clusters) encodeMessage('envoy.config.cluster.v3.Cluster', c);
    for (const e of res.endpoints) encodeMessage('envoy.config.endpoint.v3.ClusterLoadAssignment', e);
  }
  return out;
}

/** Strings a user might write, or an attacker: empty, spaces, control characters, unicode, regex syntax. */
const anyText = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', ' ', '/', '*', '*.a', 'a\r\nb', '\u0000', '(', '[a-', '..', '/a/../b', 'é', ':path', 'a b'),
);

/** Header and parameter names: often valid (so that the values get exercised), sometimes anything. */
const anyName = fc.oneof(fc.constantFrom('x-a', 'X-Trace-Id', 'x_b'), anyText);
/** Paths and hostnames: often plausible, sometimes anything. */
const anyPath = fc.oneof(
  fc.constantFrom('/', '/a', '/a/b'),
  anyText.map((t) => `/${t}`),
  anyText,
);

describe('PGV validation of emitted resources', () => {
  it('every resource of the quickstart example validates and encodes', () => {
    const objects = loadManifests([quickstart]).objects;
    const snapshot = snapshotFromObjects(objects);
    expect(translate(snapshot).xdsIR.gateways.size).toBeGreaterThan(0);
    expect(problems(snapshot)).toEqual([]);
  });

  it('every resource after every step of a random history validates and encodes', () => {
    fc.assert(
      fc.property(history, ([base, initial, ops]) => {
        let snapshot = startingSnapshot(base, initial);
        const translator = new Translator();
        expect(problems(snapshot, translator)).toEqual([]);
        for (const o of ops) {
          snapshot = apply(snapshot, o);
          expect(problems(snapshot, translator)).toEqual([]);
        }
      }),
      { numRuns: Math.min(RUNS, 100) },
    );
  });

  it('random strings in every field a user writes never produce a resource Envoy would reject', () => {
    const GW = 'gateway.networking.k8s.io/v1';
    fc.assert(
      fc.property(
        fc.record({
          listenerHost: fc.oneof(fc.constant('*.example.com'), anyText),
          routeHost: fc.oneof(fc.constant('a.example.com'), anyText),
          path: anyPath,
          pathType: fc.constantFrom('Exact', 'PathPrefix', 'RegularExpression'),
          header: anyName,
          headerValue: anyText,
          query: anyName,
          setName: anyName,
          setValue: anyText,
          remove: anyName,
          redirectHost: fc.oneof(fc.constant('b.example.com'), anyText),
          redirectPath: anyPath,
          rewriteHost: fc.oneof(fc.constant('c.example.com'), anyText),
          rewritePrefix: anyPath,
          timeout: fc.oneof(fc.constant('10s'), anyText),
          method: fc.oneof(fc.constant('GET'), anyText),
        }),
        (f) => {
          const objects = [
            ...BASE.filter((o) => o.kind !== 'HTTPRoute' && o.kind !== 'GRPCRoute'),
            {
              apiVersion: GW,
              kind: 'Gateway',
              metadata: { name: 'fuzz', namespace: 'infra' },
              spec: {
                gatewayClassName: 'turnpike',
                listeners: [
                  {
                    name: 'http',
                    port: 80,
                    protocol: 'HTTP',
                    hostname: f.listenerHost,
                    allowedRoutes: { namespaces: { from: 'All' } },
                  },
                  { name: 'any', port: 8080, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
                ],
              },
            },
            {
              apiVersion: GW,
              kind: 'HTTPRoute',
              metadata: { name: 'fuzz', namespace: 'apps' },
              spec: {
                parentRefs: [{ name: 'fuzz', namespace: 'infra' }],
                hostnames: [f.routeHost],
                rules: [
                  {
                    matches: [
                      {
                        path: { type: f.pathType, value: f.path },
                        headers: [{ name: f.header, value: f.headerValue }],
                        queryParams: [{ name: f.query, value: f.headerValue }],
                        method: f.method,
                      },
                    ],
                    filters: [
                      {
                        type: 'RequestHeaderModifier',
                        requestHeaderModifier: { set: [{ name: f.setName, value: f.setValue }], remove: [f.remove] },
                      },
                      {
                        type: 'ResponseHeaderModifier',
                        responseHeaderModifier: { add: [{ name: f.setName, value: f.setValue }] },
                      },
                    ],
                    backendRefs: [{ name: 'svc1', port: 8080 }],
                    timeouts: { request: f.timeout },
                  },
                  {
                    filters: [
                      {
                        type: 'RequestRedirect',
                        requestRedirect: {
                          hostname: f.redirectHost,
                          path: { type: 'ReplaceFullPath', replaceFullPath: f.redirectPath },
                        },
                      },
                    ],
                  },
                  {
                    matches: [{ path: { type: 'PathPrefix', value: '/rw' } }],
                    filters: [
                      {
                        type: 'URLRewrite',
                        urlRewrite: {
                          hostname: f.rewriteHost,
                          path: { type: 'ReplacePrefixMatch', replacePrefixMatch: f.rewritePrefix },
                        },
                      },
                    ],
                    backendRefs: [{ name: 'svc1', port: 8080 }],
                  },
                ],
              },
            },
          ] as KubeObject[];
          expect(problems(snapshotFromObjects(objects))).toEqual([]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('catches an empty domain list, an unnamed filter, a zero connect timeout and unknown fields', () => {
    expect(validateMessage('envoy.config.route.v3.VirtualHost', { name: 'v', domains: [] })).toContain(
      'envoy.config.route.v3.VirtualHost.domains: must have at least 1 item(s)',
    );
    expect(validateMessage('envoy.config.listener.v3.Filter', { name: '' }).join()).toMatch(
      /name: must have at least 1 character/,
    );
    expect(
      validateMessage('envoy.config.cluster.v3.Cluster', {
        name: 'c',
        connect_timeout: { seconds: '0', nanos: 0 },
      }).join(),
    ).toMatch(/connect_timeout: must be a positive duration/);
    expect(validateMessage('envoy.config.route.v3.Route', { match: { prefix: '/' }, bogus: 1 }).join()).toMatch(
      /bogus: no such field/,
    );
    expect(validateMessage('envoy.config.route.v3.Route', { match: {} }).join()).toMatch(
      /one of prefix, path, safe_regex/,
    );
  });

  it('names the list entry at fault, and checks patterns', () => {
    const vh = {
      name: 'v',
      domains: ['a'],
      routes: [
        { match: { prefix: '/' }, route: { cluster: 'c' } },
        { match: {}, direct_response: { status: 200 } },
        { match: { path_separated_prefix: '/a?b' }, direct_response: { status: 200 } },
      ],
    };
    expect(validateMessage('envoy.config.route.v3.VirtualHost', vh, 'vh')).toEqual([
      'vh.routes[1].match: one of prefix, path, safe_regex, connect_matcher, path_separated_prefix, path_match_policy is required',
      'vh.routes[2].match.path_separated_prefix: "/a?b" does not match ^[^?#]+[^?#/]$',
    ]);
  });

  it('looks inside Any: a bad field of an HTTP connection manager is found', () => {
    const l = {
      name: 'l',
      address: { socket_address: { address: '0.0.0.0', port_value: 80 } },
      filter_chains: [
        {
          filters: [
            {
              name: 'hcm',
              typed_config: {
                '@type':
                  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                stat_prefix: '',
                http_filters: [],
              },
            },
          ],
        },
      ],
    };
    expect(validateMessage('envoy.config.listener.v3.Listener', l).join()).toMatch(
      /<HttpConnectionManager>\.stat_prefix: must have at least 1 character/,
    );
  });

  it('encodes and decodes a resource without losing fields', () => {
    const c = {
      name: 'apps/web/8080',
      type: 'EDS',
      eds_cluster_config: { service_name: 'apps/web/8080', eds_config: { ads: {}, resource_api_version: 'V3' } },
      connect_timeout: { seconds: '5' },
    };
    const back = decodeMessage('envoy.config.cluster.v3.Cluster', encodeMessage('envoy.config.cluster.v3.Cluster', c));
    expect(back).toMatchObject({ name: 'apps/web/8080', type: 'EDS', connect_timeout: { seconds: '5' } });
    expect((back.eds_cluster_config as { service_name: string }).service_name).toBe('apps/web/8080');
  });

  it('the bootstrap validates and names the node after the Gateway', () => {
    const b = buildBootstrap({
      namespace: 'infra',
      name: 'gw',
      xdsHost: 'turnpike.turnpike-system.svc',
      xdsPort: 18000,
    });
    expect(validateMessage('envoy.config.bootstrap.v3.Bootstrap', b)).toEqual([]);
    expect(b.node).toEqual({ id: 'infra/gw', cluster: 'infra/gw' });
    expect(b.admin?.address?.socket_address?.address).toBe('127.0.0.1');
    expect(b.static_resources?.clusters?.[0]?.type).toBe('STRICT_DNS');
  });

  it('the bootstrap validates and encodes with every option: TLS or not, stats or not, node id, admin port', () => {
    const tls = { certDir: '/etc/turnpike/xds', sdsDir: '/etc/envoy', serverName: 'turnpike.turnpike-system.svc' };
    for (const withTls of [false, true])
      for (const stats of [true, false])
        for (const extra of [{}, { nodeId: 'proxy-1', adminPort: 19_100 }]) {
          const b = buildBootstrap({
            namespace: 'infra',
            name: 'gw',
            xdsHost: withTls ? 'turnpike.turnpike-system.svc' : '10.0.0.7',
            xdsPort: 18000,
            stats,
            ...(withTls ? { tls } : {}),
            ...extra,
          });
          const where = JSON.stringify({ withTls, stats, extra });
          expect([where, validateMessage('envoy.config.bootstrap.v3.Bootstrap', b)]).toEqual([where, []]);
          const listeners = b.static_resources!.listeners!;
          expect(listeners.map((l) => l.name)).toEqual(['turnpike-readiness', ...(stats ? ['turnpike-stats'] : [])]);
          const loadable = {
            listeners,
            routes: [],
            clusters: b.static_resources!.clusters!,
            endpoints: [],
            secrets: [],
          };
          expect([where, envoyLoadProblems(loadable)]).toEqual([where, []]);
          const back = decodeMessage(
            'envoy.config.bootstrap.v3.Bootstrap',
            encodeMessage('envoy.config.bootstrap.v3.Bootstrap', b),
          ) as Record<string, any>;
          expect(back.static_resources.listeners).toHaveLength(listeners.length);
          // A proxy without config is never LIVE: no bound on the first CDS and LDS fetch.
          for (const source of [back.dynamic_resources.cds_config, back.dynamic_resources.lds_config])
            expect(source.initial_fetch_timeout).toEqual({ seconds: '0', nanos: 0 });
          const admin = back.static_resources.clusters.find((c: any) => c.name === 'turnpike-admin');
          expect(admin.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toMatchObject({
            address: '127.0.0.1',
            port_value: 'adminPort' in extra ? extra.adminPort : 19_000,
          });
        }
  });

  it('the bootstrap with mTLS validates, encodes, and takes its certificates from SDS files that exist in the ConfigMap', () => {
    const tls = { certDir: '/etc/turnpike/xds', sdsDir: '/etc/envoy', serverName: 'turnpike.turnpike-system.svc' };
    const b = buildBootstrap({
      namespace: 'infra',
      name: 'gw',
      xdsHost: 'turnpike.turnpike-system.svc',
      xdsPort: 18000,
      tls,
    });
    expect(validateMessage('envoy.config.bootstrap.v3.Bootstrap', b)).toEqual([]);
    const back = decodeMessage(
      'envoy.config.bootstrap.v3.Bootstrap',
      encodeMessage('envoy.config.bootstrap.v3.Bootstrap', b),
    ) as Record<string, any>;
    const socket = back.static_resources.clusters[0].transport_socket;
    expect(socket.name).toBe('envoy.transport_sockets.tls');
    const files = bootstrapSdsFiles(tls);
    const ctx = JSON.stringify(b.static_resources!.clusters![0]!.transport_socket);
    for (const f of Object.keys(files)) expect(ctx).toContain(`/etc/envoy/${f}`);
    expect(ctx).toContain('"exact":"turnpike.turnpike-system.svc"');
    expect(ctx).toContain('"h2"');
    // Each SDS file is a valid Secret resource naming files in the certificate directory.
    for (const content of Object.values(files)) {
      const res = JSON.parse(content).resources[0];
      const { '@type': _t, ...secret } = res;
      expect(validateMessage('envoy.extensions.transport_sockets.tls.v3.Secret', secret)).toEqual([]);
      expect(content).toContain('/etc/turnpike/xds/');
    }
  });
});
