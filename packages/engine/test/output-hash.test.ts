// The hash the engine keeps from each translation's changes equals the hash of the whole output
// computed from scratch (what `replay --verify` recomputes), and it moves with any change.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { OutputHasher, outputHash } from '../src/output-hash.js';

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
});
