// Against a real kube-apiserver, with the controller under deploy/'s RBAC: ReferenceGrants
// grant and revoke, status hygiene (observedGeneration, other controllers' entries untouched,
// our stale entries removed, no writes in steady state), and bad input on one object only.
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

describe('statuses in a real cluster', () => {
  const env = clusterWithController(async (c) => {
    for (const n of ['infra', 'apps', 'data', 'hygiene', 'bad']) await c.apply(ns(n));
    await c.apply(gatewayClass('tp'));
    await c.apply(gateway('infra', 'gw', 'tp'));
  });
  const routeResolved = async (route: KubeObject) =>
    cond(ourParents(await env.cluster.get(route))[0]?.conditions, 'ResolvedRefs');

  it('a ReferenceGrant added resolves a cross-namespace backend; deleting it revokes access', async () => {
    const { cluster } = env;
    await cluster.apply(service('data', 'db'));
    const route = httpRoute(
      'apps',
      'to-db',
      [{ name: 'gw', namespace: 'infra' }],
      [{ name: 'db', namespace: 'data', port: 8080 }],
    );
    await cluster.apply(route);
    expect(
      (
        await waitFor('RefNotPermitted', async () => {
          const c = await routeResolved(route);
          return c?.reason === 'RefNotPermitted' ? c : undefined;
        })
      ).status,
    ).toBe('False');
    const grant = referenceGrant('data', 'allow-apps', 'apps');
    await cluster.apply(grant);
    expect(
      (
        await waitFor('ResolvedRefs True', async () => {
          const c = await routeResolved(route);
          return c?.status === 'True' ? c : undefined;
        })
      ).reason,
    ).toBe('ResolvedRefs');
    await cluster.delete(grant);
    expect(
      (
        await waitFor('revoked', async () => {
          const c = await routeResolved(route);
          return c?.reason === 'RefNotPermitted' ? c : undefined;
        })
      ).status,
    ).toBe('False');
  }, 120_000);

  it('status hygiene: observedGeneration everywhere, foreign entries kept, stale entries removed, no writes at rest', async () => {
    const { cluster, controller } = env;
    await cluster.apply(service('hygiene', 'web'));
    const route = httpRoute('hygiene', 'web', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]);
    const created = await cluster.apply(route);
    // Another controller's entry, written before ours exists.
    const foreign = {
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'elsewhere', namespace: 'infra' },
      controllerName: 'example.com/other',
      conditions: [
        {
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
          message: 'theirs',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          observedGeneration: 1,
        },
      ],
    };
    await cluster.admin.must('PUT', `/apis/gateway.networking.k8s.io/v1/namespaces/hygiene/httproutes/web/status`, {
      ...created,
      status: { parents: [foreign] },
    });
    const withOurs = await waitFor('our entry', async () => {
      const o = await cluster.get(route);
      return ourParents(o).length ? o : undefined;
    });
    const parents = (withOurs.status as { parents: { controllerName: string }[] }).parents;
    expect(parents.filter((p) => p.controllerName === 'example.com/other')).toEqual([foreign]);

    // Bump the generation: every condition we own follows it.
    const gen2 = await cluster.apply({
      ...route,
      spec: {
        ...(route.spec as object),
        rules: [{ matches: [{ path: { value: '/v2' } }], backendRefs: [{ name: 'web', port: 8080 }] }],
      },
    });
    expect(gen2.metadata.generation).toBe(2);
    await waitFor('observedGeneration 2', async () => {
      const o = await cluster.get(route);
      return ourParents(o)[0]?.conditions.every((c) => c.observedGeneration === 2) ? true : undefined;
    });
    const gw = await cluster.get(gateway('infra', 'gw', 'tp'));
    const gwStatus = gw?.status as {
      conditions: { observedGeneration?: number }[];
      listeners: { conditions: { observedGeneration?: number }[] }[];
    };
    for (const c of [...gwStatus.conditions, ...gwStatus.listeners.flatMap((l) => l.conditions)])
      expect(c.observedGeneration).toBe(gw?.metadata.generation);

    // parentRefs change: our entry for the old parent goes, the foreign one stays.
    await cluster.apply(gateway('infra', 'gw2', 'tp'));
    await cluster.apply({
      ...route,
      spec: { ...(route.spec as object), parentRefs: [{ name: 'gw2', namespace: 'infra' }] },
    });
    const moved = await waitFor('entry moved to gw2', async () => {
      const o = await cluster.get(route);
      const ours = ourParents(o);
      return ours.length === 1 && ours[0]!.parentRef.name === 'gw2' ? o : undefined;
    });
    expect(
      (moved.status as { parents: { controllerName: string }[] }).parents.filter(
        (p) => p.controllerName === 'example.com/other',
      ),
    ).toEqual([foreign]);

    // Steady state: no status writes for 30 s.
    await new Promise((r) => setTimeout(r, 2000));
    const before = await controller.metric('turnpike_status_writes_total');
    await new Promise((r) => setTimeout(r, 30_000));
    expect(await controller.metric('turnpike_status_writes_total')).toBe(before);
  }, 180_000);

  it('bad input the CRD validation lets through gets a clear condition; other objects are unaffected', async () => {
    const { cluster } = env;
    await cluster.apply(service('bad', 'web'));
    const badRegex = httpRoute('bad', 'regex', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]);
    (badRegex.spec as { rules: { matches?: unknown[] }[] }).rules[0]!.matches = [
      { path: { type: 'RegularExpression', value: '([a-z' } },
    ];
    const badFilter = httpRoute('bad', 'filter', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]);
    (badFilter.spec as { rules: { filters?: unknown[] }[] }).rules[0]!.filters = [
      { type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Unknown', name: 'x' } },
    ];
    const good = httpRoute('bad', 'good', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]);
    const garbage: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'garbage', namespace: 'infra' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from('not a cert').toString('base64'),
        'tls.key': Buffer.from('nope').toString('base64'),
      },
    };
    const tlsGw = {
      ...gateway('infra', 'tls', 'tp'),
      spec: {
        gatewayClassName: 'tp',
        listeners: [
          {
            name: 'https',
            port: 443,
            protocol: 'HTTPS',
            tls: { mode: 'Terminate', certificateRefs: [{ name: 'garbage' }] },
          },
        ],
      },
    };
    for (const o of [badRegex, badFilter, good, garbage, tlsGw]) await cluster.apply(o);
    const accepted = await waitFor(
      'regex route status',
      async () =>
        cond(ourParents(await cluster.get(badRegex))[0]?.conditions, 'Accepted') as
          { status: string; reason: string; message?: string } | undefined,
    );
    expect(accepted).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(accepted.message).toContain('spec.rules[0].matches[0].path.value');
    const filter = await waitFor(
      'filter route status',
      async () =>
        cond(ourParents(await cluster.get(badFilter))[0]?.conditions, 'ResolvedRefs') as
          { status: string; reason: string } | undefined,
    );
    expect(filter).toMatchObject({ status: 'False', reason: 'InvalidKind' });
    const listener = await waitFor('tls listener status', async () => {
      const g = await cluster.get(tlsGw);
      return cond((g?.status as { listeners?: { conditions: unknown }[] })?.listeners?.[0]?.conditions, 'ResolvedRefs');
    });
    expect(listener).toMatchObject({ status: 'False', reason: 'InvalidCertificateRef' });
    // Written in its own time (statuses go out as each translation finishes): wait for it, then look.
    const goodAccepted = await waitFor('good route status', async () =>
      cond(ourParents(await cluster.get(good))[0]?.conditions, 'Accepted'),
    );
    expect(goodAccepted?.status).toBe('True');
  }, 120_000);
});
