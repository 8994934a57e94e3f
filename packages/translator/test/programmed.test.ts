// Programmed tells the truth: a listener says Programmed=True exactly when its configuration is
// in the xDS IR served to its Gateway's proxies, and a Gateway that is not accepted is not programmed.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Translator, type TranslateResult } from '../src/index.js';
import { apply, history, startingSnapshot } from './histories.js';
import { cond, gateway, gatewayClass, http, listener, run, statusOf } from './builders.js';

const RUNS = Number(process.env.FC_RUNS ?? 250);

type ListenerStatus = { name: string; conditions: { type: string; status: string }[] };

/** Listener IR names claimed Programmed=True by statuses, and those served in the xDS IR. */
function claimedAndServed(r: TranslateResult): { claimed: string[]; served: string[] } {
  const claimed: string[] = [];
  for (const [key, status] of r.statuses) {
    const [kind, ns, name] = key.split('/') as [string, string, string];
    if (kind !== 'Gateway' && kind !== 'ListenerSet') continue;
    for (const l of ((status as { listeners?: ListenerStatus[] }).listeners ?? [])) {
      if (cond(l.conditions, 'Programmed')?.status === 'True') claimed.push(`${kind}/${ns}/${name}/${l.name}`);
    }
  }
  const served: string[] = [];
  for (const gw of r.xdsIR.gateways.values()) for (const p of gw.ports) for (const l of p.listeners) served.push(l.name);
  return { claimed: claimed.sort(), served: [...new Set(served)].sort() };
}

describe('Programmed tells the truth', () => {
  it('after every step of a random history, the listeners said Programmed are exactly the listeners served', () => {
    fc.assert(fc.property(history, ([base, initial, ops]) => {
      let snapshot = startingSnapshot(base, initial);
      const t = new Translator();
      for (const o of [undefined, ...ops]) {
        if (o) snapshot = apply(snapshot, o);
        const { claimed, served } = claimedAndServed(t.translate(snapshot));
        expect(claimed).toEqual(served);
      }
    }), { numRuns: RUNS });
  });

  it('a listener of a ListenerSet its Gateway does not accept is not Programmed (it is not served)', () => {
    const ls = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'ListenerSet', metadata: { name: 'ls', namespace: 'infra', generation: 1 },
      spec: { parentRef: { name: 'gw' }, listeners: [http('extra', 8081)] } };
    const r = run([gatewayClass(), gateway('gw', [http()]), ls as never]);
    const l = (statusOf(r, 'ListenerSet', 'infra', 'ls').listeners as { name: string; conditions: unknown }[])[0]!;
    expect(cond(l.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'NotAllowed' });
    expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([80]);
  });
  it('listeners of a Gateway that serves nothing (unsupported address) are not Programmed', () => {
    const r = run([gatewayClass(), gateway('gw', [http()], { addresses: [{ type: 'NamedAddress', value: 'x' }] })]);
    expect(cond(listener(r, 'infra', 'gw', 'http').conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(r.xdsIR.gateways.get('infra/gw')).toBeUndefined();
  });
});
