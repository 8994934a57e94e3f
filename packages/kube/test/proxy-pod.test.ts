// A proxy Pod as production needs it: ready only with config, drained before it stops, scraped, placed
// where the ProxyConfig says, scaled by an HPA and guarded by a PDB — read from the objects applied.
import { describe, expect, it } from '@jest/globals';
import {
  durationMs,
  PROXY_ADMIN_PORT,
  PROXY_DRAIN_PORT,
  PROXY_READINESS_PORT,
  PROXY_STATS_PORT,
  type KubeObject,
} from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import { buildBootstrap } from '@turnpike/xds';
import { DEFAULT_DRAIN_IMAGE, durationText, infraObjects, type InfraContext } from '../src/index.js';

function cluster(spec: Record<string, unknown> | undefined, extra: KubeObject[] = []): KubeObject[] {
  return [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'turnpike' },
      spec: { controllerName: 'turnpike.dev/gateway-controller' },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra', uid: 'u1' },
      spec: {
        gatewayClassName: 'turnpike',
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
        ...(spec
          ? { infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } } }
          : {}),
      },
    },
    ...(spec
      ? [
          {
            apiVersion: 'turnpike.dev/v1alpha1',
            kind: 'ProxyConfig',
            metadata: { name: 'pc', namespace: 'infra' },
            spec,
          },
        ]
      : []),
    ...extra,
  ];
}

const bootstraps: { stats: boolean }[] = [];
const ctx: InfraContext = {
  bootstrap: (namespace, name, options) => {
    bootstraps.push(options);
    return JSON.stringify(buildBootstrap({ namespace, name, xdsHost: '10.0.0.1', xdsPort: 18000, ...options }));
  },
};

function objectsFor(spec: Record<string, unknown> | undefined, extra: KubeObject[] = []): Map<string, any> {
  const ir = translate(snapshotFromObjects(cluster(spec, extra))).infraIR.gateways.get('infra/gw')!;
  return new Map(infraObjects(ir, ctx).map((o) => [o.kind, o as any]));
}

const secondsOf = (d: string) => durationMs(d)! / 1000;
const argAfter = (args: string[], flag: string) => args[args.indexOf(flag) + 1]!;

describe('the proxy Pod', () => {
  it('is ready only while Envoy says LIVE, and its probes, preStop hooks and grace period agree with the drain', () => {
    for (const shutdown of [undefined, { drainTimeout: '2m', minDrainDuration: '30s' }, { drainTimeout: '5s' }]) {
      const objs = objectsFor(shutdown ? { shutdown } : undefined);
      const pod = objs.get('Deployment').spec.template.spec;
      const [envoy, drain] = pod.containers;
      expect(envoy.name).toBe('envoy');
      expect(envoy.readinessProbe.httpGet).toEqual({ path: '/ready', port: PROXY_READINESS_PORT });
      expect(envoy.startupProbe.httpGet).toEqual({ path: '/ready', port: PROXY_READINESS_PORT });
      // Liveness must not read /ready: a draining proxy answers 503 there and would be killed mid-drain.
      expect(envoy.livenessProbe.httpGet).toBeUndefined();
      expect(envoy.livenessProbe.tcpSocket).toEqual({ port: PROXY_READINESS_PORT });
      expect(envoy.ports).toContainEqual({ name: 'readiness', containerPort: PROXY_READINESS_PORT, protocol: 'TCP' });
      // Envoy's hook waits on the drain container, which alone may start a drain (from loopback).
      expect(envoy.lifecycle.preStop).toEqual({ httpGet: { path: '/wait', port: PROXY_DRAIN_PORT } });
      expect(drain.name).toBe('drain');
      expect(drain.image).toBe(DEFAULT_DRAIN_IMAGE);
      expect(drain.args.slice(0, 2)).toEqual(['proxy-drain', 'serve']);
      expect(argAfter(drain.args, '--admin-port')).toBe(String(PROXY_ADMIN_PORT));
      expect(argAfter(drain.args, '--port')).toBe(String(PROXY_DRAIN_PORT));
      expect(drain.ports).toEqual([{ name: 'drain', containerPort: PROXY_DRAIN_PORT, protocol: 'TCP' }]);
      expect(drain.lifecycle.preStop.exec.command.slice(-4)).toEqual([
        'proxy-drain',
        'start',
        '--port',
        `${PROXY_DRAIN_PORT}`,
      ]);
      const timeout = secondsOf(argAfter(drain.args, '--drain-timeout'));
      const minimum = secondsOf(argAfter(drain.args, '--min-drain-duration'));
      // grace > drain timeout ≥ Envoy's drain time ≥ minimum drain.
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(timeout);
      expect(Number(argAfter(envoy.args, '--drain-time-s'))).toBeGreaterThanOrEqual(timeout);
      expect(timeout).toBeGreaterThanOrEqual(minimum);
      expect(minimum).toBeGreaterThan(0);
      if (shutdown?.drainTimeout === '2m') expect([timeout, minimum]).toEqual([120, 30]);
      // The minimum is never above the timeout it must fit in.
      if (shutdown?.drainTimeout === '5s') expect([timeout, minimum]).toEqual([5, 5]);
      if (!shutdown) expect([timeout, minimum]).toEqual([60, 10]);
      for (const c of pod.containers)
        expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    }
  });

  it('serves /stats/prometheus on a named port with scrape annotations and a PodMonitor, unless turned off', () => {
    bootstraps.length = 0;
    let objs = objectsFor(undefined);
    let template = objs.get('Deployment').spec.template;
    expect(template.spec.containers[0].ports).toContainEqual({
      name: 'metrics',
      containerPort: PROXY_STATS_PORT,
      protocol: 'TCP',
    });
    expect(template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(PROXY_STATS_PORT),
      'prometheus.io/path': '/stats/prometheus',
    });
    expect(objs.get('PodMonitor').spec).toEqual({
      selector: { matchLabels: objs.get('Deployment').spec.selector.matchLabels },
      podMetricsEndpoints: [{ port: 'metrics', path: '/stats/prometheus' }],
    });
    expect(
      JSON.parse(objs.get('ConfigMap').data['envoy.json']).static_resources.listeners.map((l: any) => l.name),
    ).toEqual(['turnpike-readiness', 'turnpike-stats']);
    objs = objectsFor({ metrics: { podMonitor: false } });
    expect(objs.has('PodMonitor')).toBe(false);
    expect(objs.get('Deployment').spec.template.metadata.annotations['prometheus.io/scrape']).toBe('true');
    objs = objectsFor({ metrics: { enabled: false } });
    template = objs.get('Deployment').spec.template;
    expect(objs.has('PodMonitor')).toBe(false);
    expect(template.metadata.annotations['prometheus.io/scrape']).toBeUndefined();
    expect(template.spec.containers[0].ports.map((p: any) => p.name)).not.toContain('metrics');
    expect(
      JSON.parse(objs.get('ConfigMap').data['envoy.json']).static_resources.listeners.map((l: any) => l.name),
    ).toEqual(['turnpike-readiness']);
    expect(bootstraps).toEqual([{ stats: true }, { stats: true }, { stats: false }]);
  });

  it("sizes the overload manager's heap from the Envoy container's memory limit (the held template's while held)", () => {
    const heapOf = (objs: Map<string, any>) => {
      const overload = JSON.parse(objs.get('ConfigMap').data['envoy.json']).overload_manager;
      expect(overload.actions.map((a: any) => [a.name, a.triggers[0].threshold.value])).toEqual([
        ['envoy.overload_actions.shrink_heap', 0.95],
        ['envoy.overload_actions.stop_accepting_requests', 0.98],
      ]);
      return Number(overload.resource_monitors[0].typed_config.max_heap_size_bytes);
    };
    expect(heapOf(objectsFor(undefined))).toBe(2 * 1024 ** 3);
    expect(heapOf(objectsFor({ resources: { requests: { memory: '256Mi' } } }))).toBe(2 * 1024 ** 3);
    expect(heapOf(objectsFor({ resources: { limits: { memory: '1Gi' } } }))).toBe(Math.floor(0.8 * 1024 ** 3));
    expect(heapOf(objectsFor({ resources: { limits: { memory: '500M' } } }))).toBe(400_000_000);
    const ir = translate(
      snapshotFromObjects(cluster({ resources: { limits: { memory: '1Gi' } } })),
    ).infraIR.gateways.get('infra/gw')!;
    const held = {
      ...ir,
      held: {
        by: 'ProxyConfig infra/pc',
        template: { spec: { containers: [{ name: 'envoy', resources: { limits: { memory: '512Mi' } } }] } },
        pending: ['resources'],
      },
    };
    const objs = new Map(infraObjects(held, ctx).map((o) => [o.kind, o as any]));
    expect(heapOf(objs)).toBe(Math.floor(0.8 * 512 * 1024 ** 2));
  });

  it('writes drain bounds as Gateway API durations (five digits a unit at most), whatever their size', () => {
    for (const ms of [0, 1, 999, 1000, 60_000, 90_000, 123_456, 3_600_000, 86_399_999]) {
      const text = durationText(ms);
      expect([ms, /^([0-9]{1,5}(h|m|s|ms)){1,4}$/.test(text), durationMs(text)]).toEqual([ms, true, ms]);
    }
    expect(durationText(123_456)).toBe('2m3s456ms');
  });

  it('runs where ProxyConfig.spec.pod places it; a spread constraint without a selector selects its own Pods', () => {
    const pod = {
      nodeSelector: { 'node-role/edge': 'true' },
      tolerations: [{ key: 'edge', operator: 'Exists', effect: 'NoSchedule' }],
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
        {
          maxSkew: 2,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { a: 'b' } },
        },
      ],
      priorityClassName: 'edge-critical',
    };
    const objs = objectsFor({ pod });
    const spec = objs.get('Deployment').spec.template.spec;
    const selector = objs.get('Deployment').spec.selector.matchLabels;
    expect(spec.nodeSelector).toEqual(pod.nodeSelector);
    expect(spec.tolerations).toEqual(pod.tolerations);
    expect(spec.affinity).toEqual(pod.affinity);
    expect(spec.priorityClassName).toBe('edge-critical');
    expect(spec.topologySpreadConstraints).toEqual([
      { ...pod.topologySpreadConstraints[0], labelSelector: { matchLabels: selector } },
      pod.topologySpreadConstraints[1],
    ]);
    const plain = objectsFor(undefined).get('Deployment').spec.template.spec;
    for (const f of ['nodeSelector', 'tolerations', 'affinity', 'topologySpreadConstraints', 'priorityClassName'])
      expect(plain[f]).toBeUndefined();
  });

  it('with autoscaling, an HPA owns the replica count; the PDB takes minAvailable or maxUnavailable', () => {
    let objs = objectsFor({ replicas: 3 });
    expect(objs.get('Deployment').spec.replicas).toBe(3);
    expect(objs.has('HorizontalPodAutoscaler')).toBe(false);
    expect(objs.get('PodDisruptionBudget').spec).toMatchObject({ maxUnavailable: 1 });
    objs = objectsFor({
      replicas: 3,
      autoscaling: { minReplicas: 2, maxReplicas: 10 },
      disruptionBudget: { minAvailable: '50%' },
    });
    expect('replicas' in objs.get('Deployment').spec).toBe(false);
    expect(objs.get('HorizontalPodAutoscaler')).toMatchObject({
      apiVersion: 'autoscaling/v2',
      metadata: { name: objs.get('Deployment').metadata.name, namespace: objs.get('Deployment').metadata.namespace },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: objs.get('Deployment').metadata.name },
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        ],
      },
    });
    const pdb = objs.get('PodDisruptionBudget').spec;
    expect(pdb).toEqual({
      minAvailable: '50%',
      selector: { matchLabels: objs.get('Deployment').spec.selector.matchLabels },
    });
    objs = objectsFor({ autoscaling: { maxReplicas: 4, targetMemoryUtilizationPercentage: 70 } });
    expect(objs.get('HorizontalPodAutoscaler').spec).toMatchObject({
      minReplicas: 1,
      maxReplicas: 4,
      metrics: [{ resource: { name: 'memory', target: { averageUtilization: 70 } } }],
    });
  });

  it('under a rollout hold, scheduling and drain changes wait with the template and are named', () => {
    const first = translate(snapshotFromObjects(cluster({}))).infraIR.gateways.get('infra/gw')!;
    const live = infraObjects(first, ctx).find((o) => o.kind === 'Deployment')!;
    const held = cluster(
      { rollout: { hold: true }, pod: { nodeSelector: { edge: 'true' } }, shutdown: { drainTimeout: '90s' } },
      [{ ...live, metadata: { ...live.metadata, generation: 1 }, status: { observedGeneration: 1 } } as KubeObject],
    );
    const ir = translate(snapshotFromObjects(held)).infraIR.gateways.get('infra/gw')!;
    expect(ir.held?.pending).toEqual(['nodeSelector', 'shutdown']);
    const dep = infraObjects(ir, ctx).find((o) => o.kind === 'Deployment') as any;
    expect(dep.spec.template).toEqual((live as any).spec.template);
  });
});
