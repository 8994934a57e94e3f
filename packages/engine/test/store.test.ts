import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { applyEvents, EMPTY_SNAPSHOT, isRelevantChange, sanitize, snapshotObjects } from '../src/store.js';
import type { WatchEvent } from '../src/events.js';

let seq = 0;
const up = (o: KubeObject): WatchEvent => ({
  seq: ++seq,
  at: '2026-01-01T00:00:00.000Z',
  source: 't',
  type: 'upsert',
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
  object: o,
});
const del = (o: KubeObject): WatchEvent => ({
  seq: ++seq,
  at: '2026-01-01T00:00:00.000Z',
  source: 't',
  type: 'delete',
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
});

const route = (gen: number, status?: unknown, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: {
    name: 'r',
    namespace: 'apps',
    generation: gen,
    resourceVersion: String(gen * 10 + (status ? 1 : 0)),
    managedFields: [{ manager: 'kubectl' }],
    ...(labels ? { labels } : {}),
  },
  spec: { rules: [] },
  ...(status ? { status } : {}),
});

describe('store', () => {
  it('keys objects kind → namespace → name and drops managedFields', () => {
    const { snapshot, relevant } = applyEvents(EMPTY_SNAPSHOT, [up(route(1))]);
    expect(relevant).toBe(true);
    const stored = snapshot.get('HTTPRoute')?.get('apps')?.get('r');
    expect(stored?.metadata.managedFields).toBeUndefined();
    expect(stored?.metadata.name).toBe('r');
  });
  it('what the store holds is frozen through and through; sanitize alone freezes nothing', () => {
    const stored = applyEvents(EMPTY_SNAPSHOT, [up(route(1))])
      .snapshot.get('HTTPRoute')!
      .get('apps')!
      .get('r')!;
    expect(Object.isFrozen(stored)).toBe(true);
    expect(Object.isFrozen(stored.metadata)).toBe(true);
    expect(Object.isFrozen((stored.spec as { rules: unknown[] }).rules)).toBe(true);
    const copy = sanitize(route(1));
    expect(Object.isFrozen(copy) || Object.isFrozen(copy.spec)).toBe(false);
  });
  it('a status-only update of a kind whose status we write is stored but not relevant', () => {
    const s1 = applyEvents(EMPTY_SNAPSHOT, [up(route(1))]).snapshot;
    const r = applyEvents(s1, [up(route(1, { parents: [] }))]);
    expect(r.relevant).toBe(false);
    expect(r.snapshot.get('HTTPRoute')?.get('apps')?.get('r')?.status).toEqual({ parents: [] });
  });
  it('a label change is relevant even at the same generation', () => {
    const s1 = applyEvents(EMPTY_SNAPSHOT, [up(route(1))]).snapshot;
    expect(applyEvents(s1, [up(route(1, undefined, { a: 'b' }))]).relevant).toBe(true);
  });
  it('a Service status change is relevant (it carries the Gateway address)', () => {
    const svc = (ip?: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', namespace: 'a' },
      spec: {},
      ...(ip ? { status: { loadBalancer: { ingress: [{ ip }] } } } : {}),
    });
    expect(isRelevantChange(svc(), svc('1.2.3.4'))).toBe(true);
  });
  it('unchanged objects keep their identity across snapshots', () => {
    const other: KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', namespace: 'apps' },
      spec: {},
    };
    const s1 = applyEvents(EMPTY_SNAPSHOT, [up(route(1)), up(other)]).snapshot;
    const s2 = applyEvents(s1, [up(route(2))]).snapshot;
    expect(s2.get('Service')).toBe(s1.get('Service'));
    expect(s2.get('HTTPRoute')).not.toBe(s1.get('HTTPRoute'));
  });
  it('delete removes the object; deleting a missing object is not relevant', () => {
    const s1 = applyEvents(EMPTY_SNAPSHOT, [up(route(1))]).snapshot;
    const r = applyEvents(s1, [del(route(1))]);
    expect(snapshotObjects(r.snapshot)).toEqual([]);
    expect(applyEvents(r.snapshot, [del(route(1))]).relevant).toBe(false);
  });
});
