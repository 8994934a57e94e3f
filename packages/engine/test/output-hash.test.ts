// The hash the engine keeps from each translation's changes equals the hash of the whole output
// computed from scratch (what `replay --verify` recomputes), and it moves with any change.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { OutputHashSequence, OutputHasher, outputHash } from '../src/output-hash.js';

const GW = 'gateway.networking.k8s.io/v1';
const base: KubeObject[] = [
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'tp' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'tp',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'svc', namespace: 'apps' },
    spec: { ports: [{ name: 'http', port: 8080 }] },
  },
] as KubeObject[];
const route = (name: string, path: string) =>
  ({
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'apps' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [{ matches: [{ path: { value: path } }], backendRefs: [{ name: 'svc', port: 8080 }] }],
    },
  }) as KubeObject;
const slice = (ips: string[]) =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'svc-1', namespace: 'apps', labels: { 'kubernetes.io/service-name': 'svc' } },
    ports: [{ name: 'http', port: 8080 }],
    endpoints: ips.map((a) => ({ addresses: [a] })),
  }) as KubeObject;

/** Each step translated and queued in a sequence, unread; with its hash worked out from scratch. */
function queued(steps: KubeObject[][]) {
  const t = new Translator();
  const sequence = new OutputHashSequence();
  const expected: string[] = [];
  const hashed = steps.map((objects) => {
    const { result, changes } = t.translateWithChanges(snapshotFromObjects(objects));
    expected.push(outputHash(result));
    return sequence.add(result, changes);
  });
  return { sequence, hashed, expected };
}

describe('output hash', () => {
  it('kept incrementally, it equals the hash from scratch after every step, and changes with the output', () => {
    const steps: KubeObject[][] = [
      [...base, route('a', '/a'), slice(['10.0.0.1'])],
      [...base, route('a', '/a'), route('b', '/b'), slice(['10.0.0.1'])],
      [...base, route('a', '/a'), route('b', '/b'), slice(['10.0.0.1', '10.0.0.2'])],
      [...base, route('b', '/b'), slice(['10.0.0.2'])],
      [...base, route('b', '/b'), slice(['10.0.0.2'])],
    ];
    const t = new Translator();
    const hasher = new OutputHasher();
    const hashes: string[] = [];
    for (const objects of steps) {
      const { result, changes } = t.translateWithChanges(snapshotFromObjects(objects));
      const kept = hasher.update(result, changes);
      expect(kept).toBe(outputHash(result));
      expect(kept).toBe(outputHash(new Translator().translate(snapshotFromObjects(objects))));
      hashes.push(kept);
    }
    expect(new Set(hashes.slice(0, 4)).size).toBe(4);
    expect(hashes[4]).toBe(hashes[3]);
  });

  it('read late, out of order, a sequence of outputs has the same hashes as kept at once', () => {
    const steps: KubeObject[][] = [
      [...base, route('a', '/a'), slice(['10.0.0.1'])],
      [...base, route('a', '/a'), route('b', '/b'), slice(['10.0.0.1'])],
      [...base, route('a', '/a'), route('b', '/b'), slice(['10.0.0.1'])],
      [...base, route('b', '/b'), slice(['10.0.0.2'])],
    ];
    const { sequence, hashed, expected } = queued(steps);
    expect(sequence.size).toBe(4);
    // The last read first: the ones before it are worked out on the way, each with its own hash.
    expect(hashed[3]!.hash()).toBe(expected[3]);
    expect(sequence.size).toBe(0);
    expect(hashed.map((h) => h.hash())).toEqual(expected);
    expect(hashed.map((h) => h.changed())).toEqual([true, true, false, true]);
  });

  it('worked out in slices of an entry, the hashes are the same and each settles in order', async () => {
    const steps: KubeObject[][] = [
      [...base, route('a', '/a'), slice(['10.0.0.1'])],
      [...base, route('a', '/a'), route('b', '/b'), slice(['10.0.0.1'])],
      [...base, route('b', '/b'), slice(['10.0.0.2'])],
    ];
    const { sequence, hashed, expected } = queued(steps);
    const settledOrder: number[] = [];
    const settled = hashed.map((h, i) => h.settled().then((hash) => (settledOrder.push(i), hash)));
    // A deadline already past: each call does one entry of one output, then stops.
    let slices = 0;
    while (sequence.work(0)) slices++;
    const entries = hashed.length;
    expect(slices).toBeGreaterThan(entries);
    expect(await Promise.all(settled)).toEqual(expected);
    expect(settledOrder).toEqual([0, 1, 2]);
    // Once worked out, a late reader gets it at once.
    expect(await hashed[1]!.settled()).toBe(expected[1]);
    expect(hashed.map((h) => h.hash())).toEqual(expected);
  });

  it('an output that changed no entry is known unchanged without hashing anything', () => {
    const t = new Translator();
    const sequence = new OutputHashSequence();
    const first = t.translateWithChanges(snapshotFromObjects([...base, route('a', '/a')]));
    sequence.add(first.result, first.changes);
    const again = t.translateWithChanges(snapshotFromObjects([...base, route('a', '/a')]));
    expect(Object.values(again.changes).every((keys) => keys.length === 0)).toBe(true);
    const untouchable = new Proxy(again.result, {
      get: () => {
        throw new Error('the output was read');
      },
    });
    const entry = sequence.add(untouchable, again.changes);
    expect(entry.changed()).toBe(false);
    expect(sequence.size).toBe(2);
    // After a failed translation the hashing starts over: that output counts as changed until hashed.
    const restarted = sequence.add(first.result, first.changes, true);
    expect(() => restarted.changed()).toThrow('the output was read');
  });
});
