// The infra IR: per Gateway, the proxy Deployment and Service to run, named and placed as
// proxy-placement.ts says; labels carry the Gateway's name and namespace and spec.infrastructure
// labels; annotations carry spec.infrastructure annotations.
import {
  durationMs,
  PROXY_READINESS_PORT,
  PROXY_STATS_PORT,
  GATEWAY_NAME_LABEL,
  GATEWAY_NAMESPACE_LABEL,
  MANAGED_BY_LABEL,
  proxyPortKey,
  type ProxyConfig,
} from '@turnpike/api';
import { gatewayListenPorts } from '../gateways/listen-ports.js';
import { proxyServiceType, requestedLoadBalancerIP } from '../gateways/static-addresses.js';
import type { GatewayModel } from '../model.js';
import { mergedListeners } from '../gateways/gateways.js';
import { listenerProgrammable } from '../gateways/listener-validity.js';
import { transport } from '../gateways/listener-protocols.js';
import type { InstalledPlugin } from '../plugins/plugins.js';
import { proxyPlacement } from './proxy-placement.js';
import { PLUGINS_ANNOTATION, type PodTemplate, type TemplateWants } from '../plugins/proxy-rollout.js';

export const DEFAULT_PROXY_IMAGE = 'envoyproxy/envoy:distroless-v1.36.2';
export const GATEWAY_CLASS_LABEL = 'gateway.networking.k8s.io/gateway-class-name';
export { GATEWAY_NAME_LABEL, GATEWAY_NAMESPACE_LABEL, MANAGED_BY_LABEL };
export const TAGS_ANNOTATION = 'turnpike.dev/tags';

export interface InfraPortIR {
  name: string;
  protocol: 'TCP' | 'UDP';
  port: number;
  containerPort: number;
}

export interface GatewayInfraIR {
  gateway: { namespace: string; name: string; uid?: string };
  /** Name of every generated object. */
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ports: InfraPortIR[];
  replicas: number;
  image: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  service: {
    type: 'ClusterIP' | 'LoadBalancer' | 'NodePort';
    annotations: Record<string, string>;
    addresses: string[];
  };
  pod: { labels: Record<string, string>; annotations: Record<string, string> };
  tags: Record<string, string>;
  /** Plugins the ProxyConfig installs; those with a mountPath are mounted from a copy of their ConfigMap. */
  plugins: InstalledPlugin[];
  /** Where the Pods may run (ProxyConfig.spec.pod), as given. */
  scheduling: ProxyScheduling;
  /** A HorizontalPodAutoscaler owns the Deployment's replica count. */
  autoscaling?: { minReplicas: number; maxReplicas: number; cpuPercent?: number; memoryPercent?: number };
  /** The PodDisruptionBudget: exactly one of the two. */
  disruptionBudget: { minAvailable?: number | string; maxUnavailable?: number | string };
  /** The drain before a Pod stops (turnpike proxy-drain). */
  shutdown: { drainTimeoutMs: number; minDrainMs: number };
  /** The stats listener (/stats/prometheus) and, where served, a PodMonitor. */
  metrics: { enabled: boolean; podMonitor: boolean };
  /** ProxyConfig.spec.rollout.progressDeadlineSeconds, for the Deployment. */
  progressDeadlineSeconds?: number;
  /**
   * The rollout is held: the Deployment keeps this pod template (the one it has) and the plugin
   * copies it mounts; `pending` names what would change.
   */
  held?: { by: string; template: PodTemplate; pending: string[] };
}

export interface ProxyScheduling {
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  affinity?: Record<string, unknown>;
  topologySpreadConstraints?: Record<string, unknown>[];
  priorityClassName?: string;
}

type ProxyConfigPod = NonNullable<ProxyConfig['spec']['pod']>;

export const DEFAULT_DRAIN_TIMEOUT_MS = 60_000;
export const DEFAULT_MIN_DRAIN_MS = 10_000;
/** Without a target, the HPA keeps CPU at 80% of the request. */
export const DEFAULT_HPA_CPU_PERCENT = 80;

export interface InfraIR {
  gateways: ReadonlyMap<string, GatewayInfraIR>;
}

function sorted(o: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(o ?? {}).sort()) out[k] = (o as Record<string, string>)[k] as string;
  return out;
}

export function buildGatewayInfra(
  g: GatewayModel,
  plugins: GatewayInfraIR['plugins'],
  proxyNamespace: string | undefined,
): GatewayInfraIR {
  const gw = g.object;
  const { namespace, name } = proxyPlacement(gw.metadata.namespace ?? '', gw.metadata.name, proxyNamespace);
  const pc = g.proxyConfig?.spec ?? {};
  const infra = gw.spec.infrastructure ?? {};
  const labels = sorted({
    ...infra.labels,
    [GATEWAY_NAME_LABEL]: gw.metadata.name.length <= 63 ? gw.metadata.name : name,
    [GATEWAY_NAMESPACE_LABEL]: gw.metadata.namespace ?? '',
    [GATEWAY_CLASS_LABEL]: gw.spec.gatewayClassName,
    [MANAGED_BY_LABEL]: 'turnpike',
  });
  const ports = new Map<string, InfraPortIR>();
  const listenPorts = gatewayListenPorts(g);
  for (const l of mergedListeners(g)) {
    if (!listenerProgrammable(l)) continue;
    const portTransport = transport(l.spec.protocol);
    const key = proxyPortKey(portTransport, l.spec.port);
    if (!ports.has(key))
      ports.set(key, {
        name: `${portTransport}-${l.spec.port}`,
        protocol: portTransport === 'udp' ? 'UDP' : 'TCP',
        port: l.spec.port,
        containerPort: listenPorts.get(key)!,
      });
  }
  const tags = sorted(pc.tags);
  const mounted = mountedPlugins(plugins);
  const metricsOn = pc.metrics?.enabled ?? true;
  const podAnnotations = sorted({
    // For a Prometheus that discovers Pods by annotation (no Operator); the user's may say otherwise.
    ...(metricsOn ? scrapeAnnotations() : {}),
    ...pc.pod?.annotations,
    ...infra.annotations,
    [TAGS_ANNOTATION]: JSON.stringify(tags),
    // What the Pods mount, read back from the Deployment to know when they run it (proxy-rollout.ts).
    ...(Object.keys(mounted).length ? { [PLUGINS_ANNOTATION]: JSON.stringify(mounted) } : {}),
  });
  const out: GatewayInfraIR = {
    gateway: {
      namespace: gw.metadata.namespace ?? '',
      name: gw.metadata.name,
      ...(gw.metadata.uid ? { uid: gw.metadata.uid } : {}),
    },
    name,
    namespace,
    labels,
    annotations: sorted(infra.annotations),
    ports: [...ports.values()].sort((a, b) => a.port - b.port || (a.protocol < b.protocol ? -1 : 1)),
    replicas: pc.replicas ?? 1,
    image: pc.image ?? DEFAULT_PROXY_IMAGE,
    service: {
      type: proxyServiceType(g),
      annotations: sorted({ ...infra.annotations, ...pc.service?.annotations }),
      addresses: [requestedLoadBalancerIP(gw)].filter((a): a is string => !!a),
    },
    pod: { labels: sorted({ ...pc.pod?.labels, ...labels }), annotations: podAnnotations },
    tags,
    plugins,
    scheduling: proxyScheduling(pc.pod, {
      [GATEWAY_NAME_LABEL]: labels[GATEWAY_NAME_LABEL]!,
      [GATEWAY_NAMESPACE_LABEL]: labels[GATEWAY_NAMESPACE_LABEL]!,
      [MANAGED_BY_LABEL]: 'turnpike',
    }),
    disruptionBudget:
      pc.disruptionBudget?.minAvailable !== undefined
        ? { minAvailable: pc.disruptionBudget.minAvailable }
        : { maxUnavailable: pc.disruptionBudget?.maxUnavailable ?? 1 },
    shutdown: proxyShutdown(pc.shutdown),
    metrics: { enabled: metricsOn, podMonitor: metricsOn && (pc.metrics?.podMonitor ?? true) },
  };
  if (pc.resources) out.resources = pc.resources;
  if (pc.autoscaling) {
    const a = pc.autoscaling;
    const cpu = a.targetCPUUtilizationPercentage;
    const memory = a.targetMemoryUtilizationPercentage;
    out.autoscaling = {
      minReplicas: Math.min(a.minReplicas ?? 1, a.maxReplicas),
      maxReplicas: a.maxReplicas,
      ...(cpu !== undefined || memory === undefined ? { cpuPercent: cpu ?? DEFAULT_HPA_CPU_PERCENT } : {}),
      ...(memory !== undefined ? { memoryPercent: memory } : {}),
    };
  }
  if (pc.rollout?.progressDeadlineSeconds !== undefined)
    out.progressDeadlineSeconds = pc.rollout.progressDeadlineSeconds;
  return out;
}

/** `selector`: the labels that select the Gateway's proxy Pods, for a spread constraint that names none. */
function proxyScheduling(pod: ProxyConfigPod | undefined, selector: Record<string, string>): ProxyScheduling {
  const out: ProxyScheduling = {};
  if (pod?.nodeSelector && Object.keys(pod.nodeSelector).length) out.nodeSelector = sorted(pod.nodeSelector);
  if (pod?.tolerations?.length) out.tolerations = pod.tolerations;
  if (pod?.affinity && Object.keys(pod.affinity).length) out.affinity = pod.affinity;
  if (pod?.topologySpreadConstraints?.length)
    out.topologySpreadConstraints = pod.topologySpreadConstraints.map((c) =>
      c.labelSelector ? c : { ...c, labelSelector: { matchLabels: selector } },
    );
  if (pod?.priorityClassName) out.priorityClassName = pod.priorityClassName;
  return out;
}

/**
 * The drain's bounds. A duration the schema would refuse (a file not checked) takes the default; a
 * minimum above the timeout is cut to it (the timeout is the promise to the grace period).
 */
function proxyShutdown(s: ProxyConfig['spec']['shutdown']): GatewayInfraIR['shutdown'] {
  const drainTimeoutMs = (s?.drainTimeout && durationMs(s.drainTimeout)) || DEFAULT_DRAIN_TIMEOUT_MS;
  const min = s?.minDrainDuration !== undefined ? durationMs(s.minDrainDuration) : undefined;
  return { drainTimeoutMs, minDrainMs: Math.min(min ?? DEFAULT_MIN_DRAIN_MS, drainTimeoutMs) };
}

/** The plugins whose file the Pods mount: `namespace/name` → sha256, sorted. */
export function mountedPlugins(plugins: readonly InstalledPlugin[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of [...plugins].filter((x) => x.mountPath).sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1)))
    out[`${p.namespace}/${p.name}`] = p.sha256;
  return sorted(out);
}

/** What the pod template is made of, as the translator decides it (compared with the live one under a hold). */
export function templateWants(ir: GatewayInfraIR): TemplateWants {
  const annotations = { ...ir.pod.annotations };
  delete annotations[PLUGINS_ANNOTATION];
  return {
    image: ir.image,
    ...(ir.resources ? { resources: ir.resources } : {}),
    labels: ir.pod.labels,
    annotations,
    ports: proxyContainerPorts(ir),
    plugins: mountedPlugins(ir.plugins),
    scheduling: ir.scheduling,
    terminationGracePeriodSeconds: terminationGraceSeconds(ir.shutdown),
  };
}

/** The Pod's grace period: the drain's timeout and room for Envoy to exit after it (kubelet kills at the end). */
export function terminationGraceSeconds(shutdown: GatewayInfraIR['shutdown']): number {
  return Math.ceil(shutdown.drainTimeoutMs / 1000) + 15;
}

/** The Envoy container's ports: the Gateway's listeners, then readiness and (when on) metrics. */
export function proxyContainerPorts(ir: GatewayInfraIR): { name: string; containerPort: number; protocol: string }[] {
  return [
    ...ir.ports.map((p) => ({ name: p.name, containerPort: p.containerPort, protocol: p.protocol })),
    { name: 'readiness', containerPort: PROXY_READINESS_PORT, protocol: 'TCP' },
    ...(ir.metrics.enabled ? [{ name: 'metrics', containerPort: PROXY_STATS_PORT, protocol: 'TCP' }] : []),
  ];
}

function scrapeAnnotations(): Record<string, string> {
  return {
    'prometheus.io/scrape': 'true',
    'prometheus.io/port': String(PROXY_STATS_PORT),
    'prometheus.io/path': '/stats/prometheus',
  };
}
