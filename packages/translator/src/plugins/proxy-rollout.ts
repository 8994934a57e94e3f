// The rollout of a Gateway's proxy Deployment, read from the Deployment itself (an input like any
// other, so replay reproduces it): which plugin digests its pod template mounts, whether every
// replica runs that template, whether the rollout failed, and whether its owner holds it.
import {
  GATEWAY_NAMESPACE_LABEL,
  ROLLOUT_HOLD_ANNOTATION,
  isProxyDeployment,
  type Condition,
  type Gateway,
  type KubeObject,
  type ProxyConfig,
} from '@turnpike/api';
import type { Inputs } from '../incremental/inputs.js';
import { proxyPlacement } from '../ir/proxy-placement.js';

/** On the pod template: the mounted plugins' content, `{"namespace/name": sha256}`. */
export const PLUGINS_ANNOTATION = 'turnpike.dev/plugins';
/** On the pod template: rolls the Pods when what they run changes (written by the infra applier). */
export const CONFIG_HASH_ANNOTATION = 'turnpike.dev/config-hash';

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: {
    containers?: { name: string; image?: string; resources?: unknown; ports?: unknown[] }[];
    nodeSelector?: Record<string, string>;
    tolerations?: unknown[];
    affinity?: unknown;
    topologySpreadConstraints?: unknown[];
    priorityClassName?: string;
    terminationGracePeriodSeconds?: number;
  };
}

export interface ProxyDeployment extends KubeObject {
  spec?: { replicas?: number; template?: PodTemplate };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: Condition[];
  };
}

export interface ProxyRollout {
  /** `namespace/name` of the Deployment. */
  deployment: string;
  /** What its pod template mounts: `namespace/name` → sha256. */
  plugins: Record<string, string>;
  desired: number;
  updated: number;
  available: number;
  /** Every replica runs the current template and is available. */
  complete: boolean;
  /** The Deployment's own Progressing=False (its progress deadline passed). */
  failed?: { reason: string; message: string };
  template: PodTemplate;
}

/** The Gateway's proxy Deployment as the cluster reports it; undefined when we have not seen it (yet). */
export function proxyRollout(
  inputs: Inputs,
  gw: Gateway,
  proxyNamespace: string | undefined,
): ProxyRollout | undefined {
  const place = proxyPlacement(gw.metadata.namespace ?? '', gw.metadata.name, proxyNamespace);
  const d = inputs.get<ProxyDeployment>('Deployment', place.namespace, place.name);
  // A namesake someone else made is not ours to read.
  if (!d || !isProxyDeployment(d)) return undefined;
  if (d.metadata.labels?.[GATEWAY_NAMESPACE_LABEL] !== (gw.metadata.namespace ?? '')) return undefined;
  const template = d.spec?.template ?? {};
  const plugins = mountedDigests(template);
  const status = d.status ?? {};
  const desired = d.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  // kubectl rollout status's rule: the controller saw this generation, every desired replica was
  // updated, no old replica is left, and every updated one is available.
  const observed = (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 1);
  const complete = observed && updated >= desired && (status.replicas ?? 0) <= updated && available >= updated;
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  const out: ProxyRollout = {
    deployment: `${place.namespace}/${place.name}`,
    plugins,
    desired,
    updated: observed ? updated : 0,
    available,
    complete,
    template,
  };
  if (observed && progressing?.status === 'False')
    out.failed = { reason: progressing.reason ?? 'ProgressDeadlineExceeded', message: progressing.message ?? '' };
  return out;
}

/** The digests a pod template mounts, from its plugins annotation (none when it has none or it is not JSON). */
function mountedDigests(template: PodTemplate): Record<string, string> {
  const raw = template.metadata?.annotations?.[PLUGINS_ANNOTATION];
  try {
    return raw ? (JSON.parse(raw) as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** Who holds the rollout of this Gateway's proxies, if anyone: ProxyConfig.spec.rollout.hold or the Gateway's annotation. */
export function rolloutHeldBy(gw: Gateway, pc: ProxyConfig | undefined): string | undefined {
  if (gw.metadata.annotations?.[ROLLOUT_HOLD_ANNOTATION] === 'true')
    return `the Gateway's annotation ${ROLLOUT_HOLD_ANNOTATION}`;
  if (pc?.spec?.rollout?.hold === true)
    return `ProxyConfig ${pc.metadata.namespace}/${pc.metadata.name} spec.rollout.hold`;
  return undefined;
}

/** What the proxy's pod template should be made of, as far as the translator decides it. */
export interface TemplateWants {
  image: string;
  resources?: unknown;
  labels: Record<string, string>;
  /** Without the plugins annotation. */
  annotations: Record<string, string>;
  ports: { name: string; containerPort: number; protocol: string }[];
  plugins: Record<string, string>;
  scheduling: {
    nodeSelector?: Record<string, string>;
    tolerations?: unknown[];
    affinity?: unknown;
    topologySpreadConstraints?: unknown[];
    priorityClassName?: string;
  };
  terminationGracePeriodSeconds: number;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The API server stores no resources as `{}`: the same as none. */
function nonEmptyResources(r: unknown): unknown {
  const o = (r ?? {}) as { requests?: Record<string, string>; limits?: Record<string, string> };
  const out: Record<string, unknown> = {};
  if (o.limits && Object.keys(o.limits).length) out.limits = o.limits;
  if (o.requests && Object.keys(o.requests).length) out.requests = o.requests;
  return Object.keys(out).length ? out : undefined;
}

function sortedEntries(o: Record<string, string> | undefined): [string, string][] {
  return Object.entries(o ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The pod-template fields a held rollout keeps from changing (`image`, `resources`, `pod labels`,
 * `pod annotations`, `ports`, the scheduling fields by name, `shutdown`), and each plugin whose
 * mounted digest would change. The bootstrap is the controller's and is not compared here; it is
 * held all the same.
 */
export function pendingTemplateChanges(
  wants: TemplateWants,
  rollout: ProxyRollout,
): { fields: string[]; plugins: string[] } {
  const live = rollout.template;
  const livePlugins = rollout.plugins;
  const container = live.spec?.containers?.find((c) => c.name === 'envoy') ?? live.spec?.containers?.[0];
  const fields: string[] = [];
  if (container?.image !== wants.image) fields.push('image');
  if (!sameJson(nonEmptyResources(container?.resources), nonEmptyResources(wants.resources))) fields.push('resources');
  if (!sameJson(sortedEntries(live.metadata?.labels), sortedEntries(wants.labels))) fields.push('pod labels');
  const liveAnnotations = { ...live.metadata?.annotations };
  delete liveAnnotations[CONFIG_HASH_ANNOTATION];
  delete liveAnnotations[PLUGINS_ANNOTATION];
  if (!sameJson(sortedEntries(liveAnnotations), sortedEntries(wants.annotations))) fields.push('pod annotations');
  const livePorts = (container?.ports ?? []).map((p) => {
    const port = p as { name?: string; containerPort?: number; protocol?: string };
    return { name: port.name, containerPort: port.containerPort, protocol: port.protocol ?? 'TCP' };
  });
  if (!sameJson(livePorts, wants.ports)) fields.push('ports');
  const spec = live.spec ?? {};
  const liveScheduling = {
    nodeSelector: spec.nodeSelector && Object.keys(spec.nodeSelector).length ? spec.nodeSelector : undefined,
    tolerations: spec.tolerations?.length ? spec.tolerations : undefined,
    affinity: spec.affinity,
    topologySpreadConstraints: spec.topologySpreadConstraints?.length ? spec.topologySpreadConstraints : undefined,
    priorityClassName: spec.priorityClassName || undefined,
  };
  for (const [field, value] of Object.entries(liveScheduling))
    if (!sameJson(value, wants.scheduling[field as keyof TemplateWants['scheduling']])) fields.push(field);
  // The grace period stands for the drain settings (drainTimeout); a live template without one is older.
  if (spec.terminationGracePeriodSeconds !== wants.terminationGracePeriodSeconds) fields.push('shutdown');
  const plugins: string[] = [];
  for (const key of [...new Set([...Object.keys(livePlugins), ...Object.keys(wants.plugins)])].sort()) {
    const was = livePlugins[key];
    const next = wants.plugins[key];
    if (was === next) continue;
    if (!was) plugins.push(`${key} sha256 ${next!.slice(0, 12)} (new)`);
    else if (!next) plugins.push(`${key} (removed)`);
    else plugins.push(`${key} sha256 ${was.slice(0, 12)} → ${next.slice(0, 12)}`);
  }
  return { fields, plugins };
}
