// A tenant's EndpointSlice listing the proxy's own loopback ports (its admin on 127.0.0.1:19000, the
// drain helper on 19003) or its node's link-local addresses: those endpoints are left out, with a warning
// naming the slice, so the proxy never connects to itself.
import { describe, expect, it } from '@jest/globals';
import { PROXY_ADMIN_PORT, PROXY_DRAIN_PORT, type KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '../src/index.js';
import { unroutableAddress } from '../src/stages/endpoint-addresses.js';
import { endpointSlice, gateway, gatewayClass, http, httpRoute, run, service } from './builders.js';

const world = (slice: KubeObject) => [
  gatewayClass(),
  gateway('gw', [http()]),
  service('svc'),
  slice,
  httpRoute('r', {
    parentRefs: [{ name: 'gw', namespace: 'infra' }],
    rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
  }),
];
const endpointsOf = (r: ReturnType<typeof run>) => [...r.xdsIR.endpoints.values()].flat().map((e) => e.address);

describe('endpoint addresses no backend has', () => {
  it("the proxy's admin and drain ports on loopback are never an endpoint; the slice is named in a warning", () => {
    const r = run(
      world(endpointSlice('svc', 'apps', ['10.1.0.1', '127.0.0.1', '::1', '169.254.169.254'], PROXY_ADMIN_PORT)),
    );
    expect(endpointsOf(r)).toEqual(['10.1.0.1']);
    expect(r.diagnostics).toEqual([
      {
        level: 'warning',
        object: 'EndpointSlice/apps/svc-abc',
        message:
          'endpoint address(es) left out, the proxy never connects there: 127.0.0.1 (loopback), ::1 (loopback), ' +
          '169.254.169.254 (link-local); they would reach the proxy itself (its admin on 127.0.0.1) or its node, ' +
          'not a backend',
      },
    ]);
  });

  it('a slice of loopback endpoints only leaves the backend without endpoints; fixing the slice clears the warning', () => {
    const t = new Translator();
    const bad = t.translate(snapshotFromObjects(world(endpointSlice('svc', 'apps', ['127.0.0.2'], PROXY_DRAIN_PORT))));
    expect(endpointsOf(bad)).toEqual([]);
    expect(bad.diagnostics.map((d) => d.object)).toEqual(['EndpointSlice/apps/svc-abc']);
    const fixed = t.translate(snapshotFromObjects(world(endpointSlice('svc', 'apps', ['10.1.0.9']))));
    expect(endpointsOf(fixed)).toEqual(['10.1.0.9']);
    expect(fixed.diagnostics).toEqual([]);
  });

  it('run --dir keeps loopback backends (its proxy runs beside them), never the rest', () => {
    const t = new Translator({ loopbackEndpoints: true });
    const r = t.translate(snapshotFromObjects(world(endpointSlice('svc', 'apps', ['127.0.0.1', '169.254.169.254']))));
    expect(endpointsOf(r)).toEqual(['127.0.0.1']);
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      expect.stringContaining('left out, the proxy never connects there: 169.254.169.254 (link-local)'),
    ]);
  });

  it('which addresses: loopback, link-local, unspecified, multicast, reserved, IPv4 inside IPv6, and non-IPs', () => {
    const verdicts = Object.fromEntries(
      [
        '127.0.0.1',
        '127.255.0.9',
        '0.0.0.0',
        '169.254.169.254',
        '224.0.0.1',
        '255.255.255.255',
        '::',
        '::1',
        'fe80::1',
        'febf::1',
        'ff02::1',
        '::ffff:127.0.0.1',
        '::ffff:7f00:1',
        '::127.0.0.1',
        'localhost',
        'fe80::1%eth0',
        '127.1',
        '10.0.0.1',
        '192.168.1.1',
        '100.64.0.1',
        'fd00::1',
        '2001:db8::1',
        '::ffff:10.0.0.1',
        'fec0::1',
      ].map((a) => [a, unroutableAddress(a) ?? 'a backend']),
    );
    expect(verdicts).toEqual({
      '127.0.0.1': 'loopback',
      '127.255.0.9': 'loopback',
      '0.0.0.0': 'unspecified ("this network", 0.0.0.0/8)',
      '169.254.169.254': 'link-local',
      '224.0.0.1': 'multicast',
      '255.255.255.255': 'reserved or broadcast',
      '::': 'unspecified',
      '::1': 'loopback',
      'fe80::1': 'link-local',
      'febf::1': 'link-local',
      'ff02::1': 'multicast',
      '::ffff:127.0.0.1': 'loopback',
      '::ffff:7f00:1': 'loopback',
      '::127.0.0.1': 'IPv4-compatible (deprecated)',
      localhost: 'not an IP address',
      'fe80::1%eth0': 'not an IP address',
      '127.1': 'not an IP address',
      '10.0.0.1': 'a backend',
      '192.168.1.1': 'a backend',
      '100.64.0.1': 'a backend',
      'fd00::1': 'a backend',
      '2001:db8::1': 'a backend',
      '::ffff:10.0.0.1': 'a backend',
      'fec0::1': 'a backend',
    });
  });
});
