// Route attachment (routes/attachment.ts): parentRefs, sectionName and port, hostnames, allowedRoutes.
import { describe, expect, it } from '@jest/globals';
import {
  gateway,
  gatewayClass,
  httpRoute,
  irRoutes,
  listener,
  parent,
  route,
  run,
  service,
  sr,
  statusOf,
} from '../builders.js';
import { backend, base, toGw } from '../route-fixtures.js';

describe('route attachment', () => {
  it('a sectionName no listener has is NoMatchingParent', () => {
    const r = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'nope' })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingParent');
  });
  it('a port no listener uses is NoMatchingParent; a matching port attaches to that listener only', () => {
    const bad = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw({ port: 81 })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(sr(parent(bad, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingParent');
    const good = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw({ port: 8080 })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(listener(good, 'infra', 'gw', 'other').attachedRoutes).toBe(1);
    expect(listener(good, 'infra', 'gw', 'http').attachedRoutes).toBe(0);
  });
  it('sectionName and port must both match', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'http', port: 8080 })],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingParent');
  });
  it('hostnames that intersect no listener are NoMatchingListenerHostname', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'http' })],
        hostnames: ['x.other.org'],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingListenerHostname');
    expect(listener(r, 'infra', 'gw', 'http').attachedRoutes).toBe(0);
  });
  it('the route serves the intersected hostname on a wildcard listener', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'http' })],
        hostnames: ['a.example.com', 'b.other.org'],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(irRoutes(r).map((x) => x.domain)).toEqual(['a.example.com']);
  });
  it('a listener of the Same namespace refuses routes from others: NotAllowedByListeners', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [{ name: 'http', port: 80, protocol: 'HTTP' }]),
      service('svc'),
      httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [backend()] }] }),
    ]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
    expect(p.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
      'does not allow routes from namespace apps',
    );
  });
  it('a route kind the listener does not allow is NotAllowedByListeners', () => {
    const r = run([
      ...base(),
      route('TCPRoute', 't', { parentRefs: [toGw({ sectionName: 'http' })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(sr(parent(r, 'TCPRoute', 'apps', 't').conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
  });
  it('parents that are not ours get no status entry', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw(), { name: 'foreign', namespace: 'infra' }],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(statusOf(r, 'HTTPRoute', 'apps', 'r').parents).toHaveLength(1);
    expect(statusOf(r, 'HTTPRoute', 'apps', 'r').parents[0].parentRef).toEqual(toGw());
    expect(statusOf(r, 'HTTPRoute', 'apps', 'r').parents[0].controllerName).toBe('turnpike.dev/gateway-controller');
  });
});
