// Whether a status write would change anything but lastTransitionTime: the status writer skips it then.
import { describe, expect, it } from '@jest/globals';
import { mergeStatus, sameButTransitionTimes } from '../src/status/status-merge.js';

const condition = (type: string, status: string, at: string, reason = 'Accepted') => ({
  type,
  status,
  reason,
  message: '',
  observedGeneration: 1,
  lastTransitionTime: at,
});

describe('sameButTransitionTimes', () => {
  it('ignores lastTransitionTime at any depth and undefined members, and nothing else', () => {
    const held = { parents: [{ parentRef: { name: 'gw' }, conditions: [condition('Accepted', 'True', 't1')] }] };
    const again = {
      parents: [{ parentRef: { name: 'gw', port: undefined }, conditions: [condition('Accepted', 'True', 't2')] }],
    };
    expect(sameButTransitionTimes(held, again)).toBe(true);
    const flipped = { parents: [{ parentRef: { name: 'gw' }, conditions: [condition('Accepted', 'False', 't1')] }] };
    expect(sameButTransitionTimes(held, flipped)).toBe(false);
    const reason = {
      parents: [{ parentRef: { name: 'gw' }, conditions: [condition('Accepted', 'True', 't1', 'Other')] }],
    };
    expect(sameButTransitionTimes(held, reason)).toBe(false);
    const more = { parents: [...held.parents, { parentRef: { name: 'other' }, conditions: [] }] };
    expect(sameButTransitionTimes(held, more)).toBe(false);
    // A member only one side has counts, unless it is lastTransitionTime.
    expect(sameButTransitionTimes({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameButTransitionTimes({ a: 1 }, { a: 1, lastTransitionTime: 'x' })).toBe(true);
    expect(sameButTransitionTimes([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(sameButTransitionTimes(null, {})).toBe(false);
  });

  it('a status merged again later with the same content is the same; with new content it is not', () => {
    const ours = { conditions: [condition('Accepted', 'True', 'ignored')] };
    const first = mergeStatus('Gateway', undefined, ours, 'turnpike.dev/gateway-controller', '2026-01-01T00:00:00Z');
    const later = mergeStatus('Gateway', first, ours, 'turnpike.dev/gateway-controller', '2026-06-01T00:00:00Z');
    expect(sameButTransitionTimes(later, first)).toBe(true);
    const changed = { conditions: [condition('Accepted', 'False', 'ignored', 'Invalid')] };
    const next = mergeStatus('Gateway', first, changed, 'turnpike.dev/gateway-controller', '2026-06-01T00:00:00Z');
    expect(sameButTransitionTimes(next, first)).toBe(false);
  });
});

describe('mergeStatus keeps what other controllers wrote', () => {
  const ctrl = 'turnpike.dev/gateway-controller';
  const foreign = { ...condition('example.com/Seeded', 'True', '2026-01-01T00:00:00Z', 'Seeded'), message: 'theirs' };
  const listenerStatus = (conditions: unknown[]) => ({
    name: 'http',
    supportedKinds: [],
    attachedRoutes: 0,
    conditions,
  });

  it('a foreign condition on a Gateway and on a listener survives our next write, unchanged (GatewayPreserveForeignConditions)', () => {
    const existing = {
      conditions: [condition('Accepted', 'True', 't0'), foreign],
      listeners: [listenerStatus([condition('Accepted', 'True', 't0'), foreign])],
    };
    const ours = {
      conditions: [{ ...condition('Accepted', 'True', 'x'), observedGeneration: 2 }],
      listeners: [listenerStatus([{ ...condition('Accepted', 'True', 'x'), observedGeneration: 2 }])],
    };
    const merged = mergeStatus('Gateway', existing, ours, ctrl, '2026-06-01T00:00:00Z') as any;
    expect(merged.conditions).toContainEqual(foreign);
    expect(merged.listeners[0].conditions).toContainEqual(foreign);
    expect(merged.listeners[0].conditions.find((c: { type: string }) => c.type === 'Accepted').observedGeneration).toBe(
      2,
    );
  });

  it('a stale condition of a type we set is ours to remove, on a listener too', () => {
    const existing = { listeners: [listenerStatus([condition('Conflicted', 'True', 't0', 'HostnameConflict')])] };
    const ours = { listeners: [listenerStatus([condition('Accepted', 'True', 'x')])] };
    const merged = mergeStatus('Gateway', existing, ours, ctrl, 'now') as any;
    expect(merged.listeners[0].conditions.map((c: { type: string }) => c.type)).toEqual(['Accepted']);
  });
});

describe("mergeStatus and a Gateway's addresses (GEP-5093)", () => {
  const ctrl = 'turnpike.dev/gateway-controller';
  const written = {
    addresses: [{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }],
    conditions: [condition('AddressesAssigned', 'True', 't0', 'AddressesAssigned')],
  };

  it('"MUST NOT contain an address that does not match a spec entry": no address now removes those written before', () => {
    const merged = mergeStatus('Gateway', written, { conditions: [] }, ctrl, 'now');
    expect(merged.addresses).toBeUndefined();
    // AddressesAssigned is ours: one we no longer set goes too.
    expect(merged.conditions).toEqual([]);
  });

  it('the addresses we write replace the old ones', () => {
    const ours = { addresses: [{ type: 'IPAddress', value: '203.0.113.10', routability: '' }], conditions: [] };
    expect(mergeStatus('Gateway', written, ours, ctrl, 'now').addresses).toEqual(ours.addresses);
  });
});
