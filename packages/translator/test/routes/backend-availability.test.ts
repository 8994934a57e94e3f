// BackendsAvailable (routes/backend-availability.ts): a backend with no ready endpoint.
import { describe, expect, it } from '@jest/globals';
import { Translator, snapshotFromObjects } from '../../src/index.js';
import { cond, endpointSlice, gateway, gatewayClass, http, httpRoute, parent, run, service } from '../builders.js';
import { exact, rule, toGw } from '../route-fixtures.js';

describe('BackendsAvailable', () => {
  it('is False with EndpointsNotFound, naming the Service, when a backend has no ready endpoint', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('up'),
      endpointSlice('up'),
      service('down'),
      httpRoute('r', { parentRefs: [toGw()], rules: [rule('up'), rule('down', [exact('/down')])] }),
    ]);
    const c = cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable');
    expect(c).toMatchObject({ status: 'False', reason: 'EndpointsNotFound' });
    expect(c!.message).toContain('apps/down:8080');
    expect(c!.message).not.toContain('apps/up');
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')?.status).toBe('True');
  });

  it('counts a mirror backend, and turns True as soon as the endpoints arrive', () => {
    const objects = [
      gatewayClass(),
      gateway('gw', [http()]),
      service('up'),
      endpointSlice('up'),
      service('shadow'),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [
          rule('up', undefined, {
            filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 8080 } } }],
          }),
        ],
      }),
    ];
    const t = new Translator();
    const before = t.translate(snapshotFromObjects(objects));
    expect(cond(parent(before, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toMatchObject({
      status: 'False',
      reason: 'EndpointsNotFound',
    });
    const after = t.translateWithChanges(snapshotFromObjects([...objects, endpointSlice('shadow')]));
    expect(cond(parent(after.result, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toMatchObject({
      status: 'True',
      reason: 'BackendsAvailable',
    });
    expect(after.changes.statuses).toContain('HTTPRoute/apps/r');
  });

  it('is absent on a route with no backend to wait for (a redirect)', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }] }],
      }),
    ]);
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'BackendsAvailable')).toBeUndefined();
  });
});
