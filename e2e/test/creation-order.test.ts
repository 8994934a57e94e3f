// Creation order never matters: a GatewayClass, Gateway, HTTPRoute and backend Service created
// in all 24 orders (in their own namespaces, with their own class) converge to the same statuses.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { waitFor } from '../harness/cluster.js';
import { clusterWithController } from '../harness/setup.js';
import {
  cond,
  gateway,
  gatewayClass,
  httpRoute,
  ns,
  ourParents,
  referenceGrant,
  service,
} from '../harness/fixtures.js';

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

/** A status with everything that names the scenario or the moment taken out (each Gateway's
 * Service has its own cluster IP). */
function normalize(status: unknown, i: number): unknown {
  return JSON.parse(
    JSON.stringify(status ?? null, (k, v) =>
      k === 'lastTransitionTime' || k === 'message'
        ? undefined
        : k === 'addresses'
          ? (v as { type: string; value: string }[]).map((a) => ({
              type: a.type,
              value: /^10\.96\.\d+\.\d+$/.test(a.value) ? 'SERVICE-IP' : a.value,
            }))
          : typeof v === 'string'
            ? v.replaceAll(`order-${i}`, 'NS').replaceAll(`tp-${i}`, 'CLASS')
            : v,
    ),
  );
}

describe('creation order (ReferenceGrant in half of them)', () => {
  const env = clusterWithController();

  it('all 24 orders of GatewayClass, Gateway, HTTPRoute and Service converge to the same statuses', async () => {
    const { cluster } = env;
    const orders = permutations(['class', 'gateway', 'route', 'service']);
    expect(orders).toHaveLength(24);
    // In every other order the backend lives in another namespace, reachable through a
    // ReferenceGrant created in the same step as the Service.
    const crossNs = (i: number) => i % 2 === 0;
    const backendNs = (i: number) => (crossNs(i) ? `order-${i}-data` : `order-${i}`);
    const objects = (i: number): Record<string, KubeObject> => ({
      class: gatewayClass(`tp-${i}`),
      gateway: gateway(`order-${i}`, 'gw', `tp-${i}`),
      route: httpRoute(
        `order-${i}`,
        'web',
        [{ name: 'gw' }],
        [{ name: 'web', port: 8080, ...(crossNs(i) ? { namespace: backendNs(i) } : {}) }],
      ),
      service: service(backendNs(i), 'web'),
    });
    for (let i = 0; i < 24; i++) {
      await cluster.apply(ns(`order-${i}`));
      if (crossNs(i)) await cluster.apply(ns(backendNs(i)));
    }
    // Step through the orders together, one object of each per step, with time for the
    // controller to translate the intermediate states.
    for (let step = 0; step < 4; step++) {
      await Promise.all(
        orders.map(async (order, i) => {
          await cluster.apply(objects(i)[order[step]!]!);
          if (order[step] === 'service' && crossNs(i))
            await cluster.apply(referenceGrant(backendNs(i), 'allow-routes', `order-${i}`));
        }),
      );
      await new Promise((r) => setTimeout(r, 400));
    }
    const results = await Promise.all(
      orders.map((_, i) =>
        waitFor(
          `order ${i} converged`,
          async () => {
            const route = await cluster.get(objects(i).route!);
            const gw = await cluster.get(objects(i).gateway!);
            const p = ourParents(route)[0];
            if (cond(p?.conditions, 'ResolvedRefs')?.status !== 'True') return undefined;
            if (cond((gw?.status as { conditions?: unknown })?.conditions, 'Programmed')?.status !== 'True')
              return undefined;
            if ((gw?.status as { listeners?: { attachedRoutes: number }[] })?.listeners?.[0]?.attachedRoutes !== 1)
              return undefined;
            if (!(gw?.status as { addresses?: unknown[] })?.addresses?.length) return undefined;
            const gc = await cluster.get(objects(i).class!);
            return {
              route: normalize(route?.status, i),
              gateway: normalize(gw?.status, i),
              class: normalize(gc?.status, i),
            };
          },
          90_000,
        ),
      ),
    );
    for (const r of results) expect(r).toEqual(results[0]);
    expect(results[0]!.route).toMatchObject({
      parents: [
        {
          parentRef: { name: 'gw' },
          conditions: expect.arrayContaining([expect.objectContaining({ type: 'Accepted', status: 'True' })]),
        },
      ],
    });
  }, 180_000);
});
