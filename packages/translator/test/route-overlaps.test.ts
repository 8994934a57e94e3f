// RouteRulesOverlap (route-overlaps.ts): another route claims the same match on a host.
import { describe, expect, it } from '@jest/globals';
import { Translator, snapshotFromObjects } from '../src/index.js';
import { cond, endpointSlice, gateway, gatewayClass, http, httpRoute, parent, run, service } from './builders.js';
import { exact, rule, toGw } from './route-fixtures.js';

describe('RouteRulesOverlap', () => {
  const older = { creationTimestamp: '2026-01-01T00:00:00Z' };
  const newer = { creationTimestamp: '2026-02-01T00:00:00Z' };
  const objects = [
    gatewayClass(),
    gateway('gw', [http()]),
    service('a'),
    endpointSlice('a'),
    service('b'),
    endpointSlice('b'),
    httpRoute(
      'first',
      { parentRefs: [toGw()], rules: [rule('a', [exact('/same'), exact('/only-first')])] },
      'apps',
      older,
    ),
    httpRoute('second', { parentRefs: [toGw()], rules: [rule('b', [exact('/same')])] }, 'apps', newer),
  ];

  it('is True on both routes that claim the same match on one host, naming the other and who wins', () => {
    const r = run(objects);
    const first = cond(parent(r, 'HTTPRoute', 'apps', 'first').conditions, 'RouteRulesOverlap');
    const second = cond(parent(r, 'HTTPRoute', 'apps', 'second').conditions, 'RouteRulesOverlap');
    expect(first).toMatchObject({ status: 'True', reason: 'RouteRulesOverlap' });
    expect(second).toMatchObject({ status: 'True', reason: 'RouteRulesOverlap' });
    expect(second!.message).toContain(
      'HTTPRoute/apps/first spec.rules[0].matches[0] has the same match and takes precedence',
    );
    expect(first!.message).toContain(
      'HTTPRoute/apps/second spec.rules[0].matches[0] has the same match and gets no traffic',
    );
    // The older route keeps the traffic.
    const vh = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.virtualHosts![0]!;
    expect(vh.routes.filter((x) => x.match.path.value === '/same')[0]!.source.name).toBe('first');
  });

  it('clears when the other route changes its match, on a translation that only touched the other route', () => {
    const t = new Translator();
    t.translate(snapshotFromObjects(objects));
    const fixed = objects.map((o) =>
      o.metadata.name === 'second'
        ? httpRoute('second', { parentRefs: [toGw()], rules: [rule('b', [exact('/elsewhere')])] }, 'apps', newer)
        : o,
    );
    const { result, changes } = t.translateWithChanges(snapshotFromObjects(fixed));
    expect(cond(parent(result, 'HTTPRoute', 'apps', 'first').conditions, 'RouteRulesOverlap')).toBeUndefined();
    expect(changes.statuses).toEqual(expect.arrayContaining(['HTTPRoute/apps/first', 'HTTPRoute/apps/second']));
  });

  it('does not count different hosts or header matches in a different order as different', () => {
    const hdr = (names: string[]) => [
      { path: { type: 'PathPrefix', value: '/' }, headers: names.map((name) => ({ name, value: 'x' })) },
    ];
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('a'),
      endpointSlice('a'),
      httpRoute(
        'x',
        {
          parentRefs: [toGw()],
          hostnames: ['x.example.com'],
          rules: [rule('a', [exact('/p')]), rule('a', hdr(['h1', 'h2']))],
        },
        'apps',
        older,
      ),
      httpRoute(
        'y',
        { parentRefs: [toGw()], hostnames: ['y.example.com'], rules: [rule('a', [exact('/p')])] },
        'apps',
        newer,
      ),
      httpRoute(
        'z',
        { parentRefs: [toGw()], hostnames: ['x.example.com'], rules: [rule('a', hdr(['h2', 'h1']))] },
        'apps',
        newer,
      ),
    ]);
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'y').conditions, 'RouteRulesOverlap')).toBeUndefined();
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'z').conditions, 'RouteRulesOverlap')?.status).toBe('True');
  });
});
