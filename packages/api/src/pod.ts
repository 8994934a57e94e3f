// Pods, read only for XBackends of type EndpointSelector (GEP-4894): Pods chosen by labels are the
// backend's endpoints without a Service. A cluster holds many Pods that change often (every probe,
// restart and image pull rewrites their status), so each is cut down at the edge, before the store and
// the event log, to what the translator reads.
import type { KubeObject } from './meta.js';

export interface PodCondition {
  type: string;
  status: string;
}

/** A Pod as the store holds it: slimPod's form. */
export interface Pod extends KubeObject {
  status?: {
    phase?: string;
    podIPs?: { ip: string }[];
    /** Only the Ready condition. */
    conditions?: PodCondition[];
  };
}

/**
 * The Pod reduced to what an EndpointSelector reads: its identity (namespace, name, uid), labels,
 * addresses (status.podIPs, or the older single status.podIP), the Ready condition, phase and
 * deletionTimestamp. Everything else (spec, other conditions, container statuses, resourceVersion,
 * annotations) is dropped, so an update that changes none of these is the same object.
 */
export function slimPod(o: KubeObject): Pod {
  const m = o.metadata ?? ({} as KubeObject['metadata']);
  const status = (o.status ?? {}) as {
    phase?: unknown;
    podIP?: unknown;
    podIPs?: unknown;
    conditions?: unknown;
  };
  const ips = Array.isArray(status.podIPs)
    ? (status.podIPs as { ip?: unknown }[])
        .filter((p) => typeof p?.ip === 'string')
        .map((p) => ({ ip: p.ip as string }))
    : typeof status.podIP === 'string' && status.podIP
      ? [{ ip: status.podIP }]
      : [];
  const ready = Array.isArray(status.conditions)
    ? (status.conditions as { type?: unknown; status?: unknown }[]).find((c) => c?.type === 'Ready')
    : undefined;
  const slim: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: m.name,
      ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
      ...(m.uid !== undefined ? { uid: m.uid } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    },
    status: {
      ...(typeof status.phase === 'string' ? { phase: status.phase } : {}),
      ...(ips.length ? { podIPs: ips } : {}),
      ...(ready ? { conditions: [{ type: 'Ready', status: String(ready.status) }] } : {}),
    },
  };
  return slim;
}

/** Whether a Pod (slimmed or not) serves: Ready, running, not being deleted. */
export function podServes(pod: Pod): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  if (pod.status?.phase !== undefined && pod.status.phase !== 'Running') return false;
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}
