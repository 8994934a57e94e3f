// Infra: per Gateway the Deployment, Service, ServiceAccount and ConfigMap with the right
// labels and tags annotation, in the controller's namespace (deploy/'s Role allows writes there
// only); changed when the ProxyConfig changes; pruned when the Gateway goes; Gateway
// status.addresses from the Service.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { Cluster, waitFor } from '../harness/cluster.js';
import { clusterWithController } from '../harness/setup.js';
import { cond, gatewayClass, ns } from '../harness/fixtures.js';
import { proxyObjectsOf } from '../harness/proxies.js';

const PROXIES = proxyObjectsOf('edge', 'public');
const at = (base: string, plural: string) => `${base}/namespaces/${PROXIES.namespace}/${plural}/${PROXIES.name}`;

const get = (c: Cluster, path: string) => c.admin.request<KubeObject & { spec: any }>('GET', path);

describe('proxy infrastructure', () => {
  const env = clusterWithController(async (c) => {
    await c.apply(ns('edge'));
    await c.apply(gatewayClass('tp'));
  });

  it('creates, updates and prunes the objects of a Gateway, and publishes its address', async () => {
    const { cluster } = env;
    const pc: KubeObject = {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyConfig',
      metadata: { name: 'proxy', namespace: 'edge' },
      spec: { replicas: 2, tags: { team: 'shop', tier: 'edge' }, service: { type: 'ClusterIP' } },
    };
    await cluster.apply(pc);
    const gw: KubeObject = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'public', namespace: 'edge' },
      spec: {
        gatewayClassName: 'tp',
        infrastructure: {
          labels: { 'example.com/team': 'shop' },
          annotations: { 'example.com/owner': 'ops' },
          parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'proxy' },
        },
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP' },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
      },
    };
    await cluster.apply(gw);
    const deploy = await waitFor('Deployment', async () => {
      const r = await get(cluster, at('/apis/apps/v1', 'deployments'));
      return r.status === 200 ? r.body : undefined;
    });
    expect(PROXIES.namespace).toBe('turnpike-system');
    expect(deploy.metadata.labels).toMatchObject({
      'gateway.networking.k8s.io/gateway-name': 'public',
      'turnpike.dev/gateway-namespace': 'edge',
      'example.com/team': 'shop',
    });
    // An owner reference cannot cross namespaces: the applier prunes instead.
    expect(deploy.metadata.ownerReferences).toBeUndefined();
    expect(deploy.spec.replicas).toBe(2);
    const podAnnotations = deploy.spec.template.metadata.annotations;
    expect(JSON.parse(podAnnotations['turnpike.dev/tags'])).toEqual({ team: 'shop', tier: 'edge' });
    expect(podAnnotations['turnpike.dev/config-hash']).toMatch(/^[0-9a-f]{16}$/);
    // The applier writes the Service after the Deployment: wait for it too.
    const svc = await waitFor('Service', async () => {
      const r = await get(cluster, at('/api/v1', 'services'));
      return r.status === 200 ? r.body : undefined;
    });
    expect(svc.spec.ports.map((p: any) => `${p.protocol}/${p.port}->${p.targetPort}`)).toEqual([
      'UDP/53->10053',
      'TCP/80->10080',
    ]);
    expect(svc.metadata.annotations?.['example.com/owner']).toBe('ops');
    for (const path of [
      at('/api/v1', 'serviceaccounts'),
      at('/api/v1', 'configmaps'),
      at('/apis/policy/v1', 'poddisruptionbudgets'),
    ]) {
      // (The PodDisruptionBudget is written last.)
      const body = await waitFor(path, async () => {
        const r = await get(cluster, path);
        return r.status === 200 ? r.body : undefined;
      });
      expect(body.metadata.labels?.['gateway.networking.k8s.io/gateway-name']).toBe('public');
    }
    const cm = (await get(cluster, at('/api/v1', 'configmaps'))).body as KubeObject & {
      data: Record<string, string>;
    };
    const bootstrap = JSON.parse(cm.data['envoy.json']!);
    expect(bootstrap.node.cluster).toBe('edge/public');

    // status.addresses from the Service's cluster IP.
    const addresses = await waitFor('Gateway address', async () => {
      const g = await cluster.get(gw);
      const a = (g?.status as { addresses?: { type: string; value: string }[] })?.addresses;
      return a?.length ? a : undefined;
    });
    // A ClusterIP is reported as one (GEP-5093: "MUST report `Cluster` in status when it provides the
    // `Cluster` guarantee").
    expect(addresses).toEqual([{ type: 'IPAddress', value: svc.spec.clusterIP, routability: 'Cluster' }]);

    // A ProxyConfig change reaches the Deployment.
    await cluster.apply({ ...pc, spec: { ...(pc.spec as object), replicas: 3 } });
    await waitFor('replicas 3', async () =>
      (await get(cluster, at('/apis/apps/v1', 'deployments'))).body.spec.replicas === 3 ? true : undefined,
    );

    // The Gateway goes: its objects are pruned (no garbage collector runs here; the applier prunes).
    await cluster.delete(gw);
    await waitFor(
      'pruned',
      async () => {
        const codes = await Promise.all(
          [
            at('/apis/apps/v1', 'deployments'),
            at('/api/v1', 'services'),
            at('/api/v1', 'configmaps'),
            at('/api/v1', 'serviceaccounts'),
          ].map(async (p) => (await get(cluster, p)).status),
        );
        return codes.every((c) => c === 404) ? true : undefined;
      },
      30_000,
    );
  }, 180_000);

  // GEP-5093 on the v1.7.0 experimental CRD: the API server admits spec.addresses[].routability and keeps
  // the status.addresses[].routability we write; the Service's type in the cluster follows what is asked.
  it('address routability: a Cluster address is the ClusterIP of a ClusterIP Service; entries judged one by one', async () => {
    const { cluster } = env;
    const proxies = proxyObjectsOf('edge', 'internal');
    const svcPath = `/api/v1/namespaces/${proxies.namespace}/services/${proxies.name}`;
    const gw = (addresses: Record<string, unknown>[]): KubeObject => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'internal', namespace: 'edge' },
      spec: { gatewayClassName: 'tp', addresses, listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
    });
    type Status = { addresses?: { type: string; value: string; routability?: string }[]; conditions?: unknown };
    const statusWhen = (what: string, ok: (s: Status, generation: number) => boolean) =>
      waitFor(what, async () => {
        const g = await cluster.get(gw([]));
        const s = (g?.status ?? {}) as Status;
        return g && ok(s, g.metadata.generation!) ? s : undefined;
      });
    const assignedIs = (s: Status, generation: number, reason: string) => {
      const c = cond(s.conditions, 'AddressesAssigned');
      return c?.reason === reason && c.observedGeneration === generation;
    };
    const serviceOfType = (type: string) =>
      waitFor(`Service of type ${type}`, async () => {
        const r = await get(cluster, svcPath);
        return r.status === 200 && r.body.spec.type === type ? r.body : undefined;
      });

    // Every entry asks for Cluster: no load balancer, the ClusterIP answers.
    await cluster.apply(gw([{ type: 'IPAddress', routability: 'Cluster' }]));
    const internal = await serviceOfType('ClusterIP');
    const clusterIP = internal.spec.clusterIP as string;
    const assigned = await statusWhen('AddressesAssigned', (s, g) => assignedIs(s, g, 'AddressesAssigned'));
    expect(assigned.addresses).toEqual([{ type: 'IPAddress', value: clusterIP, routability: 'Cluster' }]);
    expect(cond(assigned.conditions, 'AddressesAssigned')?.status).toBe('True');
    expect(cond(assigned.conditions, 'Programmed')?.status).toBe('True');

    // "leave that entry unsatisfied and report it": a scope we do not offer is named, the Cluster one kept.
    await cluster.apply(gw([{ routability: 'Cluster' }, { routability: 'example.com/vpc' }]));
    const partial = await statusWhen('PartiallyAssigned', (s, g) => assignedIs(s, g, 'PartiallyAssigned'));
    expect(cond(partial.conditions, 'AddressesAssigned')?.message).toContain(
      'spec.addresses[1]: routability "example.com/vpc" is an implementation-specific scope',
    );
    expect(cond(partial.conditions, 'Programmed')?.status).toBe('True');
    expect(partial.addresses).toEqual([{ type: 'IPAddress', value: clusterIP, routability: 'Cluster' }]);
    // Not every entry asks for Cluster now: the Service is a LoadBalancer again, with the same ClusterIP.
    expect((await serviceOfType('LoadBalancer')).spec.clusterIP).toBe(clusterIP);

    // None can be satisfied: not Programmed, and no address left in status from before.
    await cluster.apply(gw([{ routability: 'example.com/vpc' }]));
    const none = await statusWhen('NotAssigned', (s, g) => assignedIs(s, g, 'NotAssigned'));
    expect(cond(none.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'AddressNotAssigned' });
    expect(none.addresses).toBeUndefined();

    // Back to Cluster only: the LoadBalancer Service (node ports allocated) turns into a ClusterIP one in place.
    await cluster.apply(gw([{ routability: 'Cluster' }]));
    expect((await serviceOfType('ClusterIP')).spec.clusterIP).toBe(clusterIP);
    const again = await statusWhen('assigned again', (s, g) => assignedIs(s, g, 'AddressesAssigned'));
    expect(again.addresses).toEqual([{ type: 'IPAddress', value: clusterIP, routability: 'Cluster' }]);
    await cluster.delete(gw([]));
  }, 180_000);
});
