import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '../src/index.js';
import { gateway, gatewayClass, http, httpRoute, service } from './builders.js';

describe('memoisation by object identity', () => {
  const common = [gatewayClass(), gateway('gw', [http()]), service('svc')];
  const routes = Array.from({ length: 20 }, (_, i) =>
    httpRoute(`r${i}`, {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [{ matches: [{ path: { value: `/p${i}` } }], backendRefs: [{ name: 'svc', port: 8080 }] }],
    }),
  );

  it('re-translating after one route changes gives the same output as a fresh translation', () => {
    const t = new Translator();
    t.translate(snapshotFromObjects([...common, ...routes]));
    const changed: KubeObject = httpRoute('r3', {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [{ backendRefs: [{ name: 'missing', port: 8080 }] }],
    });
    const next = [...common, ...routes.map((r) => (r.metadata.name === 'r3' ? changed : r))];
    const incremental = t.translate(snapshotFromObjects(next));
    const fresh = new Translator().translate(snapshotFromObjects(next));
    expect(JSON.stringify(incremental)).toBe(JSON.stringify(fresh));
    expect(
      (incremental.statuses.get('HTTPRoute/apps/r3') as any).parents[0].conditions.find(
        (c: any) => c.type === 'ResolvedRefs',
      ).status,
    ).toBe('False');
  });
  it('a change to a non-route kind invalidates memoised routes', () => {
    const t = new Translator();
    const first = t.translate(snapshotFromObjects([...common, ...routes]));
    expect(
      (first.statuses.get('HTTPRoute/apps/r0') as any).parents[0].conditions.find((c: any) => c.type === 'ResolvedRefs')
        .status,
    ).toBe('True');
    const without = t.translate(snapshotFromObjects([gatewayClass(), gateway('gw', [http()]), ...routes]));
    expect(
      (without.statuses.get('HTTPRoute/apps/r0') as any).parents[0].conditions.find(
        (c: any) => c.type === 'ResolvedRefs',
      ).status,
    ).toBe('False');
  });
});
