// Proxy Pods as production runs them, against a real API server: the HPA, PDB and PodMonitor a
// ProxyConfig asks for are applied and pruned with the Gateway, the Deployment's replica count is left
// to the autoscaler through every later apply, and what `translate --to objects` prints is what the
// controller applied.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { Cluster, waitFor } from '../harness/cluster.js';
import { clusterWithController } from '../harness/setup.js';
import { gatewayClass, ns } from '../harness/fixtures.js';
import { proxyObjectsOf } from '../harness/proxies.js';

type Obj = KubeObject & { spec?: any; status?: any };
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const XDS_PUBLIC = 'turnpike.turnpike-system.svc:18000';
const DRAIN_IMAGE = 'example.test/turnpike:e2e';
const PROXIES = proxyObjectsOf('edge', 'public');
const at = (base: string, plural: string) => `${base}/namespaces/${PROXIES.namespace}/${plural}/${PROXIES.name}`;
const PATHS = {
  deployment: at('/apis/apps/v1', 'deployments'),
  hpa: at('/apis/autoscaling/v2', 'horizontalpodautoscalers'),
  pdb: at('/apis/policy/v1', 'poddisruptionbudgets'),
  podMonitor: at('/apis/monitoring.coreos.com/v1', 'podmonitors'),
};

/** The Prometheus Operator's PodMonitor kind, as far as a test needs it served (not the Operator's own schema). */
const PODMONITOR_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'podmonitors.monitoring.coreos.com' },
  spec: {
    group: 'monitoring.coreos.com',
    names: { kind: 'PodMonitor', listKind: 'PodMonitorList', plural: 'podmonitors', singular: 'podmonitor' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
} as KubeObject;

const proxyConfig = (spec: Record<string, unknown>): Obj => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ProxyConfig',
  metadata: { name: 'proxy', namespace: 'edge' },
  spec,
});
const gateway: Obj = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'public', namespace: 'edge' },
  spec: {
    gatewayClassName: 'tp',
    infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'proxy' } },
    listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
  },
};
const SPEC = {
  service: { type: 'ClusterIP' },
  autoscaling: { minReplicas: 2, maxReplicas: 6, targetCPUUtilizationPercentage: 70 },
  disruptionBudget: { minAvailable: 1 },
  shutdown: { drainTimeout: '45s', minDrainDuration: '5s' },
  pod: {
    nodeSelector: { 'example.com/edge': 'true' },
    tolerations: [{ key: 'edge', operator: 'Exists', effect: 'NoSchedule' }],
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
    ],
    priorityClassName: 'system-cluster-critical',
  },
};

const get = async (c: Cluster, path: string): Promise<Obj | undefined> => {
  const r = await c.admin.request<Obj>('GET', path);
  return r.status === 200 ? r.body : undefined;
};

describe('proxy Pods', () => {
  const env = clusterWithController(
    async (c) => {
      await c.apply(ns('edge'));
      await c.apply(gatewayClass('tp'));
      await c.apply(PODMONITOR_CRD);
      await waitFor('PodMonitor served', async () =>
        (await c.admin.request('GET', '/apis/monitoring.coreos.com/v1/podmonitors')).status === 200 ? true : undefined,
      );
    },
    ['--xds-public-address', XDS_PUBLIC, '--proxy-drain-image', DRAIN_IMAGE],
  );
  const dir = mkdtempSync(join(tmpdir(), 'tp-proxy-pods-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('applies the HPA, PDB and PodMonitor; the replica count stays the HPA’s; all are pruned with the Gateway', async () => {
    const { cluster } = env;
    await cluster.apply(proxyConfig(SPEC));
    await cluster.apply(gateway);
    const [deployment, hpa, pdb, monitor] = await Promise.all(
      [PATHS.deployment, PATHS.hpa, PATHS.pdb, PATHS.podMonitor].map((p) =>
        waitFor(p, async () => get(cluster, p), 60_000),
      ),
    );
    expect(hpa!.spec).toMatchObject({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: PROXIES.name },
      minReplicas: 2,
      maxReplicas: 6,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
    });
    expect(pdb!.spec.minAvailable).toBe(1);
    expect(pdb!.spec.maxUnavailable).toBeUndefined();
    expect(monitor!.spec).toEqual({
      selector: { matchLabels: deployment!.spec.selector.matchLabels },
      podMetricsEndpoints: [{ port: 'metrics', path: '/stats/prometheus' }],
    });
    const pod = deployment!.spec.template.spec;
    expect(pod.nodeSelector).toEqual(SPEC.pod.nodeSelector);
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.terminationGracePeriodSeconds).toBe(60);
    expect(pod.containers.map((c: { name: string; image: string }) => [c.name, c.image])).toEqual([
      ['envoy', expect.any(String)],
      ['drain', DRAIN_IMAGE],
    ]);

    // The autoscaler scales through the scale subresource, under its own field manager…
    const scale = await cluster.admin.must<Obj>('GET', `${PATHS.deployment}/scale`);
    await cluster.admin.must('PUT', `${PATHS.deployment}/scale?fieldManager=hpa-e2e`, {
      ...scale,
      spec: { replicas: 4 },
    });
    // …and a later apply of ours (a ProxyConfig change rolls the template) leaves its count alone.
    await cluster.apply(proxyConfig({ ...SPEC, tags: { team: 'edge' } }));
    const rolled = await waitFor('the template carries the new tags', async () => {
      const d = await get(cluster, PATHS.deployment);
      return d?.spec.template.metadata.annotations['turnpike.dev/tags'] === '{"team":"edge"}' ? d : undefined;
    });
    expect(rolled.spec.replicas).toBe(4);

    // The budget changes in place; autoscaling off hands the replica count back and removes the HPA.
    await cluster.apply(
      proxyConfig({ ...SPEC, autoscaling: undefined, replicas: 3, disruptionBudget: { maxUnavailable: '25%' } }),
    );
    await waitFor('HPA pruned, replicas ours again', async () => {
      const d = await get(cluster, PATHS.deployment);
      return !(await get(cluster, PATHS.hpa)) && d?.spec.replicas === 3 ? true : undefined;
    });
    const budget = await waitFor('PDB maxUnavailable', async () => {
      const b = await get(cluster, PATHS.pdb);
      return b?.spec.maxUnavailable === '25%' ? b : undefined;
    });
    expect(budget.spec.minAvailable).toBeUndefined();

    await cluster.delete(gateway);
    await waitFor(
      'pruned',
      async () => {
        const left = await Promise.all([PATHS.deployment, PATHS.pdb, PATHS.podMonitor].map((p) => get(cluster, p)));
        return left.every((o) => !o) ? true : undefined;
      },
      60_000,
    );
  }, 180_000);

  it('`translate --to objects` prints the objects the controller applied', async () => {
    const { cluster } = env;
    const pc = proxyConfig({ ...SPEC, metrics: { podMonitor: true } });
    await cluster.apply(pc);
    await cluster.apply(gateway);
    const live = await Promise.all(
      [PATHS.deployment, PATHS.hpa, PATHS.pdb, PATHS.podMonitor].map((p) =>
        waitFor(p, async () => get(cluster, p), 60_000),
      ),
    );
    const file = join(dir, 'edge.yaml');
    writeFileSync(
      file,
      [ns('edge'), gatewayClass('tp'), pc, gateway].map((o) => JSON.stringify(o)).join('\n---\n') + '\n',
    );
    const printed = JSON.parse(
      execFileSync(
        process.execPath,
        [
          join(ROOT, 'packages/cli/dist/main.js'),
          'translate',
          '-f',
          file,
          '--to',
          'objects',
          '--xds-public-address',
          XDS_PUBLIC,
          '--proxy-drain-image',
          DRAIN_IMAGE,
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    ) as { objects: Obj[] };
    const byKind = new Map(printed.objects.map((o) => [o.kind, o]));
    expect([...byKind.keys()].sort()).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'PodDisruptionBudget',
        'PodMonitor',
        'Service',
        'ServiceAccount',
      ].sort(),
    );
    // What was printed is in what was applied, field for field (the API server adds its defaults).
    const [deployment, hpa, pdb, monitor] = live as Obj[];
    expect(deployment!.spec.template).toMatchObject(byKind.get('Deployment')!.spec.template);
    expect(deployment!.metadata).toMatchObject({ name: PROXIES.name, namespace: PROXIES.namespace });
    expect(hpa!.spec).toMatchObject(byKind.get('HorizontalPodAutoscaler')!.spec);
    expect(pdb!.spec).toMatchObject(byKind.get('PodDisruptionBudget')!.spec);
    expect(monitor!.spec).toEqual(byKind.get('PodMonitor')!.spec);
    const cm = await get(cluster, at('/api/v1', 'configmaps'));
    expect((cm as any).data).toEqual((byKind.get('ConfigMap') as any).data);
  }, 120_000);
});
