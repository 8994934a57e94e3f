import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { gateway, gatewayClass, http, httpRoute, namespace, run, service, sr, statusOf } from './builders.js';

function listenerSet(name: string, ns: string, listeners: Record<string, unknown>[], created?: string): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: { name, namespace: ns, generation: 1, ...(created ? { creationTimestamp: created } : {}) },
    spec: { parentRef: { name: 'gw', namespace: 'infra' }, listeners },
  };
}

describe('ListenerSet (GEP-1713)', () => {
  it('is NotAllowed when the Gateway has no allowedListeners', () => {
    const r = run([gatewayClass(), gateway('gw', [http()]), listenerSet('ls', 'infra', [http('extra', 8081)])]);
    const s = statusOf(r, 'ListenerSet', 'infra', 'ls');
    expect(sr(s.conditions, 'Accepted')).toBe('False/NotAllowed');
    expect(sr(s.conditions, 'Programmed')).toBe('False/NotAllowed');
    expect(statusOf(r, 'Gateway', 'infra', 'gw').attachedListenerSets ?? 0).toBe(0);
  });
  it('from Same accepts sets in the Gateway namespace only', () => {
    const gw = gateway('gw', [http()], { allowedListeners: { namespaces: { from: 'Same' } } });
    const r = run([
      gatewayClass(),
      gw,
      listenerSet('same', 'infra', [http('a', 8081)]),
      listenerSet('away', 'apps', [http('b', 8082)]),
    ]);
    expect(sr(statusOf(r, 'ListenerSet', 'infra', 'same').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(statusOf(r, 'ListenerSet', 'apps', 'away').conditions, 'Accepted')).toBe('False/NotAllowed');
    expect(statusOf(r, 'Gateway', 'infra', 'gw').attachedListenerSets).toBe(1);
  });
  it('from Selector follows namespace labels', () => {
    const gw = gateway('gw', [http()], {
      allowedListeners: { namespaces: { from: 'Selector', selector: { matchLabels: { xls: 'yes' } } } },
    });
    const r = run([
      gatewayClass(),
      gw,
      namespace('team', { xls: 'yes' }),
      namespace('other'),
      listenerSet('a', 'team', [http('a', 8081)]),
      listenerSet('b', 'other', [http('b', 8082)]),
    ]);
    expect(sr(statusOf(r, 'ListenerSet', 'team', 'a').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(statusOf(r, 'ListenerSet', 'other', 'b').conditions, 'Accepted')).toBe('False/NotAllowed');
  });
  it('the Gateway listener wins a conflict; the older set wins over the newer', () => {
    const gw = gateway('gw', [http('core', 8080, { hostname: 'x.test' })], {
      allowedListeners: { namespaces: { from: 'All' } },
    });
    const r = run([
      gatewayClass(),
      gw,
      listenerSet('newer', 'infra', [http('dup', 9090)], '2026-02-01T00:00:00Z'),
      listenerSet(
        'older',
        'infra',
        [http('dup', 9090), http('clash', 8080, { hostname: 'x.test' })],
        '2026-01-01T00:00:00Z',
      ),
    ]);
    const older = statusOf(r, 'ListenerSet', 'infra', 'older');
    const dupOld = older.listeners.find((l: { name: string }) => l.name === 'dup');
    const clash = older.listeners.find((l: { name: string }) => l.name === 'clash');
    expect(sr(dupOld.conditions, 'Conflicted')).toBe('False/NoConflicts');
    expect(sr(clash.conditions, 'Conflicted')).toBe('True/HostnameConflict');
    expect(sr(clash.conditions, 'Accepted')).toBe('False/HostnameConflict');
    expect(sr(clash.conditions, 'Programmed')).toBe('False/HostnameConflict');
    expect(sr(older.conditions, 'Accepted')).toBe('True/ListenersNotValid');
    const newer = statusOf(r, 'ListenerSet', 'infra', 'newer');
    expect(sr(newer.listeners[0].conditions, 'Conflicted')).toBe('True/HostnameConflict');
    expect(sr(newer.conditions, 'Accepted')).toBe('False/ListenersNotValid');
    // Two listeners of one name in two objects are named with their object, not "dup" and "dup".
    expect(newer.listeners[0].conditions.find((c: { type: string }) => c.type === 'Conflicted').message).toBe(
      'port 9090: listeners "dup" of ListenerSet infra/older and "dup" of ListenerSet infra/newer have no hostname (both take any host)',
    );
    expect(clash.conditions.find((c: { type: string }) => c.type === 'Conflicted').message).toBe(
      'port 8080: listeners "core" of Gateway infra/gw and "clash" of ListenerSet infra/older have the same hostname "x.test"',
    );
  });
  it('a listener that loses to the Gateway does not take its own set down (ListenerSetProtocolConflict)', () => {
    const gw = gateway('gw', [http('core', 80, { hostname: 'core.test' })], {
      allowedListeners: { namespaces: { from: 'Same' } },
    });
    const r = run([
      gatewayClass(),
      gw,
      listenerSet('ls', 'infra', [
        http('a', 80, { hostname: 'a.test' }),
        { name: 'tcp', port: 80, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } },
        http('b', 80, { hostname: 'b.test' }),
      ]),
    ]);
    const s = statusOf(r, 'ListenerSet', 'infra', 'ls');
    const byName = (n: string) => s.listeners.find((l: { name: string }) => l.name === n);
    expect(sr(byName('tcp').conditions, 'Accepted')).toBe('False/ProtocolConflict');
    expect(sr(byName('a').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(byName('b').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(s.conditions, 'Accepted')).toBe('True/ListenersNotValid');
  });
  it('a route attached to a ListenerSet is counted there, not on the Gateway', () => {
    const gw = gateway('gw', [http()], { allowedListeners: { namespaces: { from: 'All' } } });
    const r = run([
      gatewayClass(),
      gw,
      service('svc'),
      listenerSet('ls', 'infra', [http('extra', 8081)]),
      httpRoute('r', {
        parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'ls', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ]);
    expect(statusOf(r, 'ListenerSet', 'infra', 'ls').listeners[0].attachedRoutes).toBe(1);
    expect(statusOf(r, 'Gateway', 'infra', 'gw').listeners[0].attachedRoutes).toBe(0);
    expect(statusOf(r, 'HTTPRoute', 'apps', 'r').parents[0].parentRef.kind).toBe('ListenerSet');
    expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([80, 8081]);
  });
});
