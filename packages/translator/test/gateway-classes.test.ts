// GatewayClass (gateway-classes.ts): acceptance, parametersRef, supported features.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { TURNPIKE_API_VERSION } from '@turnpike/api';
import { SUPPORTED_FEATURES, Translator, snapshotFromObjects } from '../src/index.js';
import { gateway, gatewayClass, http, run, sr, statusOf } from './builders.js';

describe('GatewayClass', () => {
  it('a class with our controllerName is Accepted and lists its supported features, sorted', () => {
    const r = run([gatewayClass()]);
    const s = statusOf(r, 'GatewayClass', undefined, 'turnpike');
    expect(sr(s.conditions, 'Accepted')).toBe('True/Accepted');
    expect(s.conditions[0].observedGeneration).toBe(1);
    const names = s.supportedFeatures.map((f: { name: string }) => f.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(SUPPORTED_FEATURES);
  });
  it('a class of another controller gets no status from us', () => {
    const r = run([{ ...gatewayClass('other'), spec: { controllerName: 'example.com/other' } }]);
    expect(r.statuses.get('GatewayClass//other')).toBeUndefined();
  });
  it('parametersRef to a missing ProxyConfig is InvalidParameters', () => {
    const r = run([
      gatewayClass('turnpike', {
        parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'nope', namespace: 'infra' },
      }),
    ]);
    const c = statusOf(r, 'GatewayClass', undefined, 'turnpike').conditions;
    expect(sr(c, 'Accepted')).toBe('False/InvalidParameters');
    expect(c[0].message).toContain('ProxyConfig infra/nope not found');
  });
  it('parametersRef of the wrong kind or without namespace is InvalidParameters', () => {
    const wrongKind = run([
      gatewayClass('turnpike', { parametersRef: { group: '', kind: 'ConfigMap', name: 'x', namespace: 'infra' } }),
    ]);
    expect(sr(statusOf(wrongKind, 'GatewayClass', undefined, 'turnpike').conditions, 'Accepted')).toBe(
      'False/InvalidParameters',
    );
    const noNs = run([
      gatewayClass('turnpike', { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'x' } }),
    ]);
    expect(statusOf(noNs, 'GatewayClass', undefined, 'turnpike').conditions[0].message).toMatch(
      /namespace must be set/,
    );
  });
  it('parametersRef to an existing ProxyConfig is accepted and feeds the infra IR', () => {
    const pc = {
      apiVersion: TURNPIKE_API_VERSION,
      kind: 'ProxyConfig',
      metadata: { name: 'pc', namespace: 'infra' },
      spec: { replicas: 3 },
    };
    const r = run([
      gatewayClass('turnpike', {
        parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc', namespace: 'infra' },
      }),
      pc,
      gateway('gw', [http()]),
    ]);
    expect(sr(statusOf(r, 'GatewayClass', undefined, 'turnpike').conditions, 'Accepted')).toBe('True/Accepted');
    expect(r.infraIR.gateways.get('infra/gw')?.replicas).toBe(3);
  });
});

/** v1.7.0 features not claimed yet; the experimental ones wait for their implementation (docs/features.md). */
const UNCLAIMED: string[] = [];

// GEP-5075: ClusterTrustBundle is advertised only where the cluster serves the API, as the kube source says.
describe('ClusterTrustBundle in supportedFeatures', () => {
  const served = (isServed: boolean) => ({
    apiVersion: 'turnpike.dev/internal',
    kind: 'ServedAPI',
    metadata: { name: 'clustertrustbundles.certificates.k8s.io' },
    status: isServed ? { served: true, version: 'v1beta1' } : { served: false },
  });
  const features = (r: ReturnType<typeof run>): string[] =>
    statusOf(r, 'GatewayClass', undefined, 'turnpike').supportedFeatures.map((f: { name: string }) => f.name);

  it('is claimed when the cluster serves the API, and when nothing says it does not (files)', () => {
    expect(SUPPORTED_FEATURES).toContain('ClusterTrustBundle');
    expect(features(run([gatewayClass(), served(true)]))).toEqual(SUPPORTED_FEATURES);
    expect(features(run([gatewayClass()]))).toEqual(SUPPORTED_FEATURES);
  });

  it('is left out, and only it, when the cluster does not serve the API', () => {
    expect(features(run([gatewayClass(), served(false)]))).toEqual(
      SUPPORTED_FEATURES.filter((f) => f !== 'ClusterTrustBundle'),
    );
  });

  it('incrementally: the class status follows the fact as a fresh translation does', () => {
    const t = new Translator();
    const seen: boolean[] = [];
    for (const fact of [[], [served(false)], [served(true)], [served(false)]]) {
      const snapshot = snapshotFromObjects([gatewayClass(), gateway('gw', [http()]), ...fact]);
      const result = t.translate(snapshot);
      expect(JSON.stringify(result)).toBe(JSON.stringify(new Translator().translate(snapshot)));
      seen.push(features(result).includes('ClusterTrustBundle'));
    }
    expect(seen).toEqual([true, false, true, false]);
  });
});

describe('claimed features', () => {
  // The feature names of Gateway API v1.7.0 (pkg/features), name → channel.
  const upstream = JSON.parse(
    readFileSync(join(import.meta.dirname, 'fixtures/gateway-api-v1.7.0-features.json'), 'utf8'),
  ).features as Record<string, string>;

  it('GatewayAddressRoutabilityCluster "MUST only be claimed with `GatewayAddressRoutability`" (GEP-5093)', () => {
    expect(SUPPORTED_FEATURES).toEqual(
      expect.arrayContaining(['GatewayAddressRoutability', 'GatewayAddressRoutabilityCluster']),
    );
  });

  it('every claimed feature is a v1.7.0 name (no removed name, no mesh feature)', () => {
    expect(SUPPORTED_FEATURES.filter((f) => !(f in upstream))).toEqual([]);
    expect(SUPPORTED_FEATURES.filter((f) => f.startsWith('Mesh'))).toEqual([]);
  });

  it('the v1.7.0 features not claimed are exactly these (each with its reason in docs/features.md)', () => {
    const unclaimed = Object.keys(upstream)
      .filter((f) => !f.startsWith('Mesh') && !SUPPORTED_FEATURES.includes(f))
      .sort();
    expect(unclaimed).toEqual(UNCLAIMED);
  });
});
