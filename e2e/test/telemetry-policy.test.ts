// XTelemetryPolicy (GEP-4768) against a real kube-apiserver with the v1.7.0 experimental CRDs and the
// controller under deploy/'s RBAC: the CRD admits a policy (and refuses an Enabled one without a
// provider), and the controller writes each policy's ancestors: the older one Accepted with its provider
// resolved, the younger one Accepted=False/Conflicted with its missing provider ResolvedRefs=False.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { waitFor } from '../harness/cluster.js';
import { clusterWithController } from '../harness/setup.js';
import { cond, gateway, gatewayClass, ns, service } from '../harness/fixtures.js';

const X = 'gateway.networking.x-k8s.io';
const CONTROLLER = 'turnpike.dev/gateway-controller';

const policy = (name: string, tracing: Record<string, unknown>): KubeObject => ({
  apiVersion: `${X}/v1alpha1`,
  kind: 'XTelemetryPolicy',
  metadata: { name, namespace: 'infra' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }], tracing },
});
const enabled = (provider: string) => ({
  mode: 'Enabled',
  provider: { backendRef: { name: provider, port: 8080 } },
  samplingRate: { numerator: 10, denominator: 100 },
  serviceName: 'edge',
  attributes: [{ name: 'env', sourceType: 'Literal', literalValue: 'e2e' }],
});

type Ancestor = { ancestorRef: Record<string, unknown>; controllerName: string; conditions: unknown };

describe('XTelemetryPolicy in a real cluster', () => {
  const env = clusterWithController(async (c) => {
    await c.apply(ns('infra'));
    await c.apply(gatewayClass('tp'));
    await c.apply(gateway('infra', 'gw', 'tp'));
    await c.apply(service('infra', 'otel'));
  });

  const ours = (o: KubeObject | undefined): Ancestor[] =>
    ((o?.status as { ancestors?: Ancestor[] } | undefined)?.ancestors ?? []).filter(
      (a) => a.controllerName === CONTROLLER,
    );

  it('the CRD admits it; the oldest is Accepted with its provider resolved, the other Conflicted', async () => {
    const { cluster } = env;
    // The CRD's rule: "provider is required when mode is Enabled, and must be empty otherwise".
    const refused = await cluster.dryRunCreate(policy('no-provider', { mode: 'Enabled' }));
    expect(refused.accepted).toBe(false);
    expect(refused.message).toContain('provider is required when mode is Enabled');

    const old = policy('old', enabled('otel'));
    await cluster.apply(old);
    const first = await waitFor('old policy ancestors', async () => {
      const list = ours(await cluster.get(old));
      return list.length && cond(list[0]!.conditions, 'ResolvedRefs') ? list : undefined;
    });
    expect(first.map((a) => a.ancestorRef)).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' },
    ]);
    expect(cond(first[0]!.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(cond(first[0]!.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });

    // Younger, or created in the same second and after it by {namespace}/{name}: either way `old` wins.
    const young = policy('young', enabled('nope'));
    await cluster.apply(young);
    const second = await waitFor('young policy Conflicted', async () => {
      const list = ours(await cluster.get(young));
      return cond(list[0]?.conditions, 'Accepted')?.reason === 'Conflicted' ? list : undefined;
    });
    // GEP-4768: "For any TelemetryPolicy that does not take precedence, the controller MUST set the
    // `Accepted` condition on the policy status to `status: False` with Reason `Conflicted`."
    expect(cond(second[0]!.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'Conflicted' });
    expect(cond(second[0]!.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    expect(cond(ours(await cluster.get(old))[0]!.conditions, 'Accepted')).toMatchObject({ status: 'True' });
  });
});
