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
    for (const l of (status as { listeners?: ListenerStatus[] }).listeners ?? []) {
      if (cond(l.conditions, 'Programmed')?.status === 'True') claimed.push(`${kind}/${ns}/${name}/${l.name}`);
    }
  }
  const served: string[] = [];
  for (const gw of r.xdsIR.gateways.values())
    for (const p of gw.ports) for (const l of p.listeners) served.push(l.name);
  return { claimed: claimed.sort(), served: [...new Set(served)].sort() };
}

describe('Programmed tells the truth', () => {
  it('after every step of a random history, the listeners said Programmed are exactly the listeners served', () => {
    fc.assert(
      fc.property(history, ([base, initial, ops]) => {
        let snapshot = startingSnapshot(base, initial);
        const t = new Translator();
        for (const o of [undefined, ...ops]) {
          if (o) snapshot = apply(snapshot, o);
          const r = t.translate(snapshot);
          const { claimed, served } = claimedAndServed(r);
          expect(claimed).toEqual(served);
          // A Gateway says Programmed=True only when it is accepted.
          for (const [key, status] of r.statuses) {
            if (!key.startsWith('Gateway/')) continue;
            const conds = (status as { conditions?: unknown }).conditions;
            if (cond(conds, 'Programmed')?.status === 'True')
              expect([key, cond(conds, 'Accepted')?.status]).toEqual([key, 'True']);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('a listener of a ListenerSet its Gateway does not accept is not Programmed (it is not served)', () => {
    const ls = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name: 'ls', namespace: 'infra', generation: 1 },
      spec: { parentRef: { name: 'gw' }, listeners: [http('extra', 8081)] },
    };
    const r = run([gatewayClass(), gateway('gw', [http()]), ls as never]);
    const l = (statusOf(r, 'ListenerSet', 'infra', 'ls').listeners as { name: string; conditions: unknown }[])[0]!;
    expect(cond(l.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'NotAllowed' });
    expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([80]);
  });
  it('listeners of a Gateway that serves nothing (unsupported address) are not Programmed', () => {
    const r = run([gatewayClass(), gateway('gw', [http()], { addresses: [{ type: 'NamedAddress', value: 'x' }] })]);
    expect(cond(listener(r, 'infra', 'gw', 'http').conditions, 'Programmed')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
    });
    expect(r.xdsIR.gateways.get('infra/gw')).toBeUndefined();
  });
  it('a Gateway whose listeners are all invalid is not accepted and not Programmed; its ListenerSets are ParentNotAccepted', () => {
    const ls = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name: 'ls', namespace: 'infra', generation: 1 },
      spec: { parentRef: { name: 'gw' }, listeners: [http('extra', 8081)] },
    };
    const r = run([
      gatewayClass(),
      gateway('gw', [{ name: 'bad', port: 80, protocol: 'SCTP' }], {
        allowedListeners: { namespaces: { from: 'All' } },
      }),
      ls as never,
    ]);
    const gw = statusOf(r, 'Gateway', 'infra', 'gw').conditions;
    expect(cond(gw, 'Accepted')).toMatchObject({ status: 'False', reason: 'ListenersNotValid' });
    expect(cond(gw, 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid' });
    const set = statusOf(r, 'ListenerSet', 'infra', 'ls').conditions;
    expect(cond(set, 'Accepted')).toMatchObject({ status: 'False', reason: 'ParentNotAccepted' });
    expect(cond(set, 'Accepted')!.message).toContain('infra/gw is not accepted');
    // The proxies and their address stay (fixing the typo must not give up a load balancer); nothing is served.
    expect(r.infraIR.gateways.get('infra/gw')).toBeDefined();
    expect(r.xdsIR.gateways.get('infra/gw')!.ports).toEqual([]);
  });
});
