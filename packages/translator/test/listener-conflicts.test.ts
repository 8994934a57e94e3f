// OverlappingTLSConfig (listener-conflicts.ts) for overlapping hostnames and certificates.
import { describe, expect, it } from '@jest/globals';
import { cond, gateway, gatewayClass, http, listener, run } from './builders.js';

describe('OverlappingTLSConfig for overlapping hostnames', () => {
  const https = (name: string, hostname?: string, port = 443) => ({
    name,
    port,
    protocol: 'HTTPS',
    ...(hostname ? { hostname } : {}),
    tls: { certificateRefs: [{ name: 'cert' }] },
    allowedRoutes: { namespaces: { from: 'All' } },
  });
  it('a wildcard and a hostname it covers on one port: both listeners say OverlappingHostnames', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [
        https('wild', '*.example.com'),
        https('one', 'a.example.com'),
        https('other', 'b.test'),
        https('elsewhere', 'c.example.com', 8443),
      ]),
    ]);
    for (const l of ['wild', 'one']) {
      const c = cond(listener(r, 'infra', 'gw', l).conditions, 'OverlappingTLSConfig');
      expect(c).toMatchObject({ status: 'True', reason: 'OverlappingHostnames' });
      expect(c!.message).toContain('"wild" (*.example.com) and "one" (a.example.com) overlap');
    }
    expect(cond(listener(r, 'infra', 'gw', 'other').conditions, 'OverlappingTLSConfig')).toBeUndefined();
    expect(cond(listener(r, 'infra', 'gw', 'elsewhere').conditions, 'OverlappingTLSConfig')).toBeUndefined();
  });
  it('a listener without hostname (the catch-all) does not overlap; HTTP listeners never do', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [https('any'), https('one', 'a.example.com'), http('plain', 443, { hostname: '*.example.com' })]),
    ]);
    expect(cond(listener(r, 'infra', 'gw', 'any').conditions, 'OverlappingTLSConfig')).toBeUndefined();
  });
});
