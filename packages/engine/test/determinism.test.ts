// Any permutation of the same upsert events, with redundant intermediate updates that end in
// the same state, gives byte-identical translation output.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { Translator } from '@turnpike/translator';
import fc from 'fast-check';
import type { WatchEvent } from '../src/events.js';
import { outputHash } from '../src/output-hash.js';
import { applyEvents, EMPTY_SNAPSHOT } from '../src/store.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const GW = 'gateway.networking.k8s.io/v1';

const objects = fc
  .record({
    gwPorts: fc.uniqueArray(fc.constantFrom(80, 443, 8080, 9000), { minLength: 1, maxLength: 3 }),
    routes: fc.uniqueArray(
      fc.record({
        name: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
        path: fc.constantFrom('/', '/a', '/a/b'),
        svc: fc.constantFrom('s1', 's2', 'gone'),
        host: fc.option(fc.constantFrom('a.test', '*.test'), { nil: undefined }),
        created: fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'),
      }),
      { selector: (r) => r.name, maxLength: 4 },
    ),
    services: fc.subarray(['s1', 's2']),
    grant: fc.boolean(),
  })
  .map(({ gwPorts, routes, services, grant }) => {
    const out: KubeObject[] = [
      {
        apiVersion: GW,
        kind: 'GatewayClass',
        metadata: { name: 'tp', generation: 1 },
        spec: { controllerName: 'turnpike.dev/gateway-controller' },
      },
      {
        apiVersion: GW,
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'infra', generation: 1 },
        spec: {
          gatewayClassName: 'tp',
          listeners: gwPorts.map((p) => ({
            name: `l${p}`,
            port: p,
            protocol: 'HTTP',
            allowedRoutes: { namespaces: { from: 'All' } },
          })),
        },
      },
    ];
    for (const s of services)
      out.push({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: s, namespace: 'data' },
        spec: { ports: [{ port: 8080, protocol: 'TCP' }] },
      });
    if (grant)
      out.push({
        apiVersion: 'gateway.networking.k8s.io/v1beta1',
        kind: 'ReferenceGrant',
        metadata: { name: 'g', namespace: 'data' },
        spec: {
          from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }],
          to: [{ group: '', kind: 'Service' }],
        },
      });
    for (const r of routes)
      out.push({
        apiVersion: GW,
        kind: 'HTTPRoute',
        metadata: { name: r.name, namespace: 'apps', generation: 1, creationTimestamp: r.created },
        spec: {
          parentRefs: [{ name: 'gw', namespace: 'infra' }],
          ...(r.host ? { hostnames: [r.host] } : {}),
          rules: [
            { matches: [{ path: { value: r.path } }], backendRefs: [{ name: r.svc, namespace: 'data', port: 8080 }] },
          ],
        },
      });
    return out;
  });

function event(seq: number, o: KubeObject): WatchEvent {
  return {
    seq,
    at: '2026-01-01T00:00:00.000Z',
    source: 'test',
    type: 'upsert',
    kind: o.kind,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    name: o.metadata.name,
    object: o,
  };
}

/** An earlier, different version of an object (a redundant intermediate update). */
function stale(o: KubeObject): KubeObject {
  return { ...o, metadata: { ...o.metadata, labels: { stale: 'yes' } }, spec: { stale: true } };
}

function hashOf(events: WatchEvent[], oneByOne: boolean): string {
  let snapshot = EMPTY_SNAPSHOT;
  if (oneByOne) for (const e of events) snapshot = applyEvents(snapshot, [e]).snapshot;
  else snapshot = applyEvents(snapshot, events).snapshot;
  return outputHash(new Translator().translate(snapshot));
}

describe('order independence', () => {
  it('every permutation of the upserts, with redundant intermediate updates, gives the same output', () => {
    fc.assert(
      fc.property(
        objects.chain((objs) =>
          fc.tuple(
            fc.constant(objs),
            fc.shuffledSubarray(objs, { minLength: objs.length, maxLength: objs.length }),
            fc.subarray(objs),
            fc.boolean(),
          ),
        ),
        ([objs, shuffled, redundant, oneByOne]) => {
          const reference = hashOf(
            objs.map((o, i) => event(i + 1, o)),
            false,
          );
          // Stale versions first for some objects, then every final version in a random order.
          const events = [...redundant.map(stale), ...shuffled].map((o, i) => event(i + 1, o));
          expect(hashOf(events, oneByOne)).toBe(reference);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
