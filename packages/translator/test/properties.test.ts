// Properties: malformed objects never make translate throw; output never depends on input order;
// listener isolation leaves each host of a port to one listener.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import fc from 'fast-check';
import { snapshotFromObjects, translate } from '../src/index.js';
import { endpointSlice, gateway, gatewayClass, http, httpRoute, referenceGrant, service } from './builders.js';

const RUNS = Number(process.env.FC_RUNS ?? 500);

const kinds = [
  'GatewayClass',
  'Gateway',
  'ListenerSet',
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
  'BackendTLSPolicy',
  'ReferenceGrant',
  'Service',
  'EndpointSlice',
  'Secret',
  'Namespace',
  'ConfigMap',
  'ProxyConfig',
  'PluginInstallation',
];

/** Anything at all in spec/status/top-level fields, with a valid identity. */
const malformed = fc
  .record({
    kind: fc.constantFrom(...kinds),
    name: fc.constantFrom('a', 'b', 'gw', 'turnpike', 'svc'),
    namespace: fc.constantFrom('infra', 'apps', undefined),
    spec: fc.anything({ maxDepth: 4 }),
    extra: fc.dictionary(fc.constantFrom('data', 'type', 'endpoints', 'ports', 'status'), fc.anything({ maxDepth: 3 })),
  })
  .map(
    ({ kind, name, namespace, spec, extra }) =>
      ({
        apiVersion: 'v1',
        kind,
        metadata: { name, ...(namespace ? { namespace } : {}) },
        spec,
        ...extra,
      }) as KubeObject,
  );

/** Plausible but often inconsistent Gateway API objects. */
const plausible = fc.oneof(
  fc.constant(gatewayClass()),
  fc
    .record({
      port: fc.constantFrom(80, 443, 8080),
      proto: fc.constantFrom('HTTP', 'HTTPS', 'TCP', 'TLS', 'UDP', 'BOGUS'),
      host: fc.option(fc.constantFrom('a.test', '*.test', '10.0.0.1'), { nil: undefined }),
    })
    .map(({ port, proto, host }) =>
      gateway('gw', [{ ...http('l', port), protocol: proto, ...(host ? { hostname: host } : {}) }]),
    ),
  fc
    .record({
      section: fc.option(fc.constantFrom('l', 'x'), { nil: undefined }),
      svc: fc.constantFrom('svc', 'missing'),
      path: fc.constantFrom('/', '/a', '(', 'x'),
      type: fc.constantFrom('Exact', 'PathPrefix', 'RegularExpression', 'Weird'),
      name: fc.constantFrom('r1', 'r2'),
    })
    .map(({ section, svc, path, type, name }) =>
      httpRoute(name, {
        parentRefs: [{ name: 'gw', namespace: 'infra', ...(section ? { sectionName: section } : {}) }],
        rules: [{ matches: [{ path: { type, value: path } }], backendRefs: [{ name: svc, port: 8080 }] }],
      }),
    ),
  fc.constant(service('svc')),
  fc.constant(endpointSlice('svc')),
  fc.constant(
    referenceGrant(
      'g',
      'apps',
      [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'other' }],
      [{ group: '', kind: 'Service' }],
    ),
  ),
);

function dedupe(objs: KubeObject[]): KubeObject[] {
  const m = new Map<string, KubeObject>();
  for (const o of objs) m.set(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
  return [...m.values()];
}

describe('translator properties', () => {
  it('random and malformed objects never make translate throw', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(malformed, plausible), { maxLength: 12 }), (objs) => {
        const r = translate(snapshotFromObjects(objs));
        expect(typeof r.statuses).toBe('object');
        JSON.stringify(r);
      }),
      { numRuns: RUNS },
    );
  });
  it('the output is the same whatever order the objects are given in', () => {
    fc.assert(
      fc.property(
        fc.array(plausible, { minLength: 1, maxLength: 10 }).chain((objs) => {
          const unique = dedupe(objs);
          return fc.tuple(
            fc.constant(unique),
            fc.shuffledSubarray(unique, { minLength: unique.length, maxLength: unique.length }),
          );
        }),
        ([a, b]) => {
          expect(JSON.stringify(translate(snapshotFromObjects(b)))).toBe(
            JSON.stringify(translate(snapshotFromObjects(a))),
          );
        },
      ),
      { numRuns: Math.min(RUNS, 300) },
    );
  });
  it('GatewayHTTPListenerIsolation: no two listeners of a port serve the same host', () => {
    const hostname = fc.option(fc.constantFrom('a.test', '*.test', 'b.a.test', '*.a.test', 'c.test'), {
      nil: undefined,
    });
    const listeners = fc.uniqueArray(fc.record({ name: fc.constantFrom('l1', 'l2', 'l3', 'l4'), hostname }), {
      minLength: 2,
      maxLength: 4,
      selector: (l) => l.name,
    });
    const routeHostnames = fc.array(fc.constantFrom('a.test', 'b.a.test', 'x.a.test', 'c.test', '*.test', '*.a.test'), {
      maxLength: 3,
    });
    fc.assert(
      fc.property(listeners, fc.array(routeHostnames, { minLength: 1, maxLength: 4 }), (specs, routes) => {
        const objects = [
          gatewayClass(),
          service('svc'),
          gateway(
            'gw',
            specs.map((l) => ({ ...http(l.name, 80), ...(l.hostname ? { hostname: l.hostname } : {}) })),
          ),
          ...routes.map((hostnames, i) =>
            httpRoute(`r${i}`, {
              parentRefs: [{ name: 'gw', namespace: 'infra' }],
              hostnames,
              rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
            }),
          ),
        ];
        const ir = translate(snapshotFromObjects(objects)).xdsIR.gateways.get('infra/gw');
        expect(ir).toBeDefined();
        for (const port of ir!.ports) {
          const servedBy = new Map<string, string>();
          for (const listener of port.listeners)
            for (const virtualHost of listener.virtualHosts ?? [])
              for (const domain of virtualHost.domains) {
                expect([domain, servedBy.get(domain)]).toEqual([domain, undefined]);
                servedBy.set(domain, listener.name);
              }
        }
      }),
      { numRuns: Math.min(RUNS, 300) },
    );
  });
});
