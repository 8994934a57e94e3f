// Least privilege in fact. deploy/'s RBAC lets the controller write only in its own namespace, where
// it puts every proxy (checked by asking the API server's authorizer, as the controller's user, and
// by the other suites, which run under that RBAC and fail on a missing permission). The overlay
// deploy/overlays/gateway-namespace (its RBAC and its controller arguments, read from its files)
// runs each proxy beside its Gateway, owned by it.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { CONTROLLER_USER, waitFor, type Cluster } from '../harness/cluster.js';
import { cond, gateway, gatewayClass, ns } from '../harness/fixtures.js';
import { applyGatewayNamespaceRbac, gatewayNamespaceArgs, proxyObjectsOf } from '../harness/proxies.js';
import { clusterWithController } from '../harness/setup.js';

type Obj = KubeObject & { spec?: any; status?: any };

/** Whether the API server's authorizer lets the controller's user do `verb` on `resource`. */
async function allowed(c: Cluster, verb: string, group: string, resource: string, namespace: string) {
  const review = await c.admin.must<{ status: { allowed: boolean } }>(
    'POST',
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: CONTROLLER_USER,
        groups: ['system:serviceaccounts', 'system:serviceaccounts:turnpike-system', 'system:authenticated'],
        resourceAttributes: { verb, group, resource, namespace },
      },
    },
  );
  return review.status.allowed;
}

const WRITES: [string, string, string][] = [
  ['create', 'apps', 'deployments'],
  ['patch', '', 'services'],
  ['create', '', 'secrets'],
  ['delete', '', 'configmaps'],
  ['create', '', 'serviceaccounts'],
  ['delete', 'policy', 'poddisruptionbudgets'],
];

describe('proxy placement, default (deploy/)', () => {
  const env = clusterWithController(async (c) => {
    await c.apply(ns('edge'));
    await c.apply(gatewayClass('tp'));
  });

  it("security: deploy/'s RBAC lets the controller write proxy objects in its own namespace and nowhere else", async () => {
    for (const [verb, group, resource] of WRITES) {
      expect([verb, resource, await allowed(env.cluster, verb, group, resource, 'turnpike-system')]).toEqual([
        verb,
        resource,
        true,
      ]);
      expect([verb, resource, await allowed(env.cluster, verb, group, resource, 'edge')]).toEqual([
        verb,
        resource,
        false,
      ]);
    }
    // Reading stays cluster-wide (Gateways' certificates, routes' backends).
    expect(await allowed(env.cluster, 'list', '', 'secrets', 'edge')).toBe(true);
  });

  it('security: a Gateway gets its proxies in the controller namespace, and its address from their Service', async () => {
    const { cluster } = env;
    await cluster.apply(gateway('edge', 'web', 'tp'));
    const at = proxyObjectsOf('edge', 'web');
    const svc = await waitFor(
      'proxy Service',
      async () => (await cluster.get({ apiVersion: 'v1', kind: 'Service', metadata: at })) as Obj | undefined,
    );
    expect(svc.metadata.namespace).toBe('turnpike-system');
    const gw = await waitFor('Gateway address', async () => {
      const g = (await cluster.get(gateway('edge', 'web', 'tp'))) as Obj | undefined;
      return g?.status?.addresses?.length ? g : undefined;
    });
    expect(gw.status.addresses).toEqual([{ type: 'IPAddress', value: svc.spec.clusterIP, routability: 'Cluster' }]);
    expect(env.controller.out).not.toMatch(/forbidden/i);
  });
});

describe('proxy placement, deploy/overlays/gateway-namespace', () => {
  const env = clusterWithController(async (c) => {
    await applyGatewayNamespaceRbac(c);
    await c.apply(ns('edge'));
    await c.apply(gatewayClass('tp'));
  }, gatewayNamespaceArgs());

  it('security: with the overlay, the proxies run beside their Gateway, owned by it, and are pruned with it', async () => {
    const { cluster } = env;
    expect(gatewayNamespaceArgs()).toEqual(['--proxy-placement', 'gateway-namespace']);
    for (const [verb, group, resource] of WRITES)
      expect(await allowed(cluster, verb, group, resource, 'edge')).toBe(true);
    const created = await cluster.apply(gateway('edge', 'web', 'tp'));
    const at = proxyObjectsOf('edge', 'web', true);
    expect(at.namespace).toBe('edge');
    const dep = await waitFor(
      'proxy Deployment beside the Gateway',
      async () => (await cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: at })) as Obj | undefined,
    );
    expect(dep.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Gateway', name: 'web', uid: created.metadata.uid, controller: true }),
    ]);
    await waitFor('Gateway Programmed', async () => {
      const g = (await cluster.get(created)) as Obj | undefined;
      return cond(g?.status?.conditions, 'Programmed')?.status === 'True' ? true : undefined;
    });
    await cluster.delete(created);
    await waitFor('pruned', async () =>
      (await cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: at })) ? undefined : true,
    );
    expect(env.controller.out).not.toMatch(/forbidden/i);
  });
});
