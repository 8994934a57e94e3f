// Session persistence on an XBackend EndpointSelector (GEP-1619 as the v1.7.0 XBackend CRD has it): the
// rule's route carries it for Envoy's stateful session; what Envoy cannot honour is refused by field.
import { describe, expect, it } from '@jest/globals';
import { slimPod, type KubeObject } from '@turnpike/api';
import { gateway, gatewayClass, http, irRoutes, parent, route, run, sr, xbackend } from '../builders.js';

const X = 'gateway.networking.x-k8s.io';

const sticky = (name: string, sessionPersistence: Record<string, unknown>, app = name) =>
  xbackend(name, {
    type: 'EndpointSelector',
    port: { number: 8080 },
    endpointSelector: { matchLabels: { app } },
    sessionPersistence,
  });

const pod = (name: string, ip: string, app: string): KubeObject =>
  slimPod({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'apps', labels: { app } },
    status: { phase: 'Running', podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
  });

const ref = (name: string, weight?: number) => ({
  group: X,
  kind: 'XBackend',
  name,
  ...(weight !== undefined ? { weight } : {}),
});
const toX = (refs: Record<string, unknown>[], kind = 'HTTPRoute') =>
  route(kind, 'r', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: refs }] });

const base = () => [gatewayClass(), gateway('gw', [http()]), pod('a1', '10.2.0.1', 'a'), pod('b1', '10.2.0.2', 'b')];
const resolved = (objects: KubeObject[]) => {
  const r = run([...base(), ...objects]);
  const c = parent(r, 'HTTPRoute', 'apps', 'r').conditions.find((x: { type: string }) => x.type === 'ResolvedRefs');
  return { r, status: `${c.status}/${c.reason}`, message: c.message as string };
};

describe('XBackend sessionPersistence (GEP-1619)', () => {
  it('Cookie, lifetimeType Session (the default): a session cookie (ttl 0) named as asked, path "/"', () => {
    const { r, status } = resolved([sticky('a', { type: 'Cookie', cookie: { name: 'sid' } }), toX([ref('a')])]);
    expect(status).toBe('True/ResolvedRefs');
    expect(irRoutes(r)[0].sessionPersistence).toEqual({ type: 'Cookie', name: 'sid', path: '/', ttlSeconds: 0 });
  });

  it("Cookie, lifetimeType Permanent: absoluteTimeout is the cookie's ttl; a name is generated per XBackend", () => {
    const sp = { type: 'Cookie', absoluteTimeout: '1h30m', cookie: { lifetimeType: 'Permanent', path: '/app' } };
    const { r } = resolved([sticky('a', sp), toX([ref('a')])]);
    expect(irRoutes(r)[0].sessionPersistence).toEqual({
      type: 'Cookie',
      name: 'turnpike-session.apps.a',
      path: '/app',
      ttlSeconds: 5400,
    });
  });

  it('Header: the header named', () => {
    const { r } = resolved([sticky('a', { type: 'Header', header: { name: 'x-session' } }), toX([ref('a')])]);
    expect(irRoutes(r)[0].sessionPersistence).toEqual({ type: 'Header', name: 'x-session' });
  });

  it('refused by field, what Envoy cannot honour: absoluteTimeout on a session cookie or a header, idleTimeout', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'Cookie', absoluteTimeout: '1h', cookie: { name: 's' } }, 'spec.sessionPersistence.absoluteTimeout'],
      [{ type: 'Header', absoluteTimeout: '1h', header: { name: 'x' } }, 'spec.sessionPersistence.absoluteTimeout'],
      [{ type: 'Cookie', idleTimeout: '10m', cookie: { name: 's' } }, 'spec.sessionPersistence.idleTimeout'],
      [
        { type: 'Cookie', absoluteTimeout: '1500ms', cookie: { lifetimeType: 'Permanent' } },
        'spec.sessionPersistence.absoluteTimeout',
      ],
    ];
    for (const [sp, field] of cases) {
      const { r, status, message } = resolved([sticky('a', sp), toX([ref('a')])]);
      expect(status).toBe('False/UnsupportedValue');
      expect(message).toContain(field);
      expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
      const xb = r.statuses.get('XBackend/apps/a') as { ancestors: { conditions: { status: string }[] }[] };
      expect(xb.ancestors[0]!.conditions[0]!.status).toBe('False');
    }
  });

  it('a weighted split of two XBackends with one session config: one route keeps it', () => {
    const sp = { type: 'Cookie', cookie: { name: 'sid' } };
    const { r, status } = resolved([sticky('a', sp), sticky('b', sp), toX([ref('a', 1), ref('b', 1)])]);
    expect(status).toBe('True/ResolvedRefs');
    expect(irRoutes(r)[0].backends?.map((b) => b.cluster)).toEqual(['apps/XBackend/a', 'apps/XBackend/b']);
    expect(irRoutes(r)[0].sessionPersistence).toMatchObject({ name: 'sid' });
  });

  it('two session configs in one rule: the later backend is refused (Envoy keeps one per route), its share 500', () => {
    const { r, status, message } = resolved([
      sticky('a', { type: 'Cookie', cookie: { name: 'one' } }),
      sticky('b', { type: 'Cookie', cookie: { name: 'two' } }),
      toX([ref('a', 1), ref('b', 1)]),
    ]);
    expect(status).toBe('False/UnsupportedValue');
    expect(message).toContain('XBackend apps/b spec.sessionPersistence differs from that of XBackend apps/a');
    expect(irRoutes(r)[0].backends).toEqual([{ cluster: 'apps/XBackend/a', weight: 1 }]);
    expect(irRoutes(r)[0].invalidWeight).toBe(1);
    expect(irRoutes(r)[0].sessionPersistence).toMatchObject({ name: 'one' });
  });

  it('a rule without persistent backends has none; under a TCPRoute it is refused', () => {
    const plain = xbackend('p', {
      type: 'EndpointSelector',
      port: { number: 8080 },
      endpointSelector: { matchLabels: { app: 'a' } },
    });
    expect(irRoutes(resolved([plain, toX([ref('p')])]).r)[0].sessionPersistence).toBeUndefined();
    const listeners = [{ name: 'tcp', port: 5432, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }];
    const r = run([
      gatewayClass(),
      gateway('gw', listeners),
      sticky('a', { type: 'Cookie', cookie: { name: 's' } }),
      toX([ref('a')], 'TCPRoute'),
    ]);
    expect(sr(parent(r, 'TCPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/UnsupportedValue');
  });
});
