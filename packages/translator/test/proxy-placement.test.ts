// Where a Gateway's proxy objects go (proxy-placement.ts): beside the Gateway, or all in one namespace,
// and under a name no other Gateway can get.
import { describe, expect, it } from '@jest/globals';
import { generatedName, proxyPlacement, Translator } from '../src/index.js';
import { snapshotFromObjects } from '../src/snapshot.js';
import { gateway, gatewayClass, http, service, statusOf } from './builders.js';

describe('proxy placement', () => {
  it('security: Gateways whose `<name>-<class>` or `<namespace>-<name>` read the same get different names', () => {
    // The old scheme gave gateway "a-b" of class "c" and gateway "a" of class "b-c" one name.
    const pairs: [string, string][][] = [
      [
        ['ns', 'a-b'],
        ['ns', 'a'],
      ],
      [
        ['a-b', 'c'],
        ['a', 'b-c'],
      ],
      [
        ['team', 'x'.repeat(60)],
        ['team', `${'x'.repeat(59)}y`],
      ],
    ];
    for (const shared of [undefined, 'turnpike-system'])
      for (const [[ns1, gw1], [ns2, gw2]] of pairs) {
        const one = proxyPlacement(ns1!, gw1!, shared);
        const two = proxyPlacement(ns2!, gw2!, shared);
        expect(`${one.namespace}/${one.name}`).not.toBe(`${two.namespace}/${two.name}`);
      }
  });

  it('names are DNS labels of at most 63 characters that keep the readable part', () => {
    for (const [ns, gw, shared] of [
      ['infra', 'gw', undefined],
      ['infra', 'gw', 'turnpike-system'],
      ['n'.repeat(63), 'g'.repeat(253), 'turnpike-system'],
      ['infra', `a${'-'.repeat(60)}b`, undefined],
    ] as const) {
      const name = generatedName(ns, gw, shared);
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name).toMatch(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
    }
    expect(generatedName('infra', 'gw')).toMatch(/^gw-[a-z2-7]{13}$/);
    expect(generatedName('infra', 'gw', 'turnpike-system')).toMatch(/^infra-gw-[a-z2-7]{13}$/);
  });

  it('with a proxy namespace, the infra IR goes there, labelled with the Gateway, and the address is read there', () => {
    const name = generatedName('infra', 'gw', 'turnpike-system');
    const svc = { ...service(name, 'turnpike-system'), spec: { clusterIP: '10.96.0.11', ports: [] } };
    // A Service of that name beside the Gateway is not ours and must not give the address.
    const decoy = { ...service(name, 'infra'), spec: { clusterIP: '10.96.0.99', ports: [] } };
    const r = new Translator({ proxyNamespace: 'turnpike-system' }).translate(
      snapshotFromObjects([gatewayClass(), gateway('gw', [http()]), svc, decoy]),
    );
    const infra = r.infraIR.gateways.get('infra/gw')!;
    expect({ namespace: infra.namespace, name: infra.name }).toEqual({ namespace: 'turnpike-system', name });
    expect(infra.labels).toMatchObject({
      'gateway.networking.k8s.io/gateway-name': 'gw',
      'turnpike.dev/gateway-namespace': 'infra',
    });
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toEqual([
      { type: 'IPAddress', value: '10.96.0.11', routability: 'Cluster' },
    ]);
  });

  it('without one, everything stays beside the Gateway', () => {
    const r = new Translator().translate(snapshotFromObjects([gatewayClass(), gateway('gw', [http()])]));
    const infra = r.infraIR.gateways.get('infra/gw')!;
    expect({ namespace: infra.namespace, name: infra.name }).toEqual({
      namespace: 'infra',
      name: generatedName('infra', 'gw'),
    });
  });
});
