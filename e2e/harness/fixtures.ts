// Objects the suites create, named per test so several scenarios share one cluster.
import type { KubeObject } from '@turnpike/api';

const GW = 'gateway.networking.k8s.io/v1';

export const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});
export const gatewayClass = (name: string): KubeObject => ({
  apiVersion: GW,
  kind: 'GatewayClass',
  metadata: { name },
  spec: { controllerName: 'turnpike.dev/gateway-controller' },
});
export const gateway = (n: string, name: string, cls: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: GW,
  kind: 'Gateway',
  metadata: { name, namespace: n },
  spec: {
    gatewayClassName: cls,
    listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
    ...extra,
  },
});
export const service = (n: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: n },
  spec: { ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
});
export const httpRoute = (
  n: string,
  name: string,
  parents: Record<string, unknown>[],
  backends: Record<string, unknown>[],
): KubeObject => ({
  apiVersion: GW,
  kind: 'HTTPRoute',
  metadata: { name, namespace: n },
  spec: { parentRefs: parents, rules: [{ backendRefs: backends }] },
});
export const referenceGrant = (n: string, name: string, fromNs: string): KubeObject => ({
  apiVersion: GW,
  kind: 'ReferenceGrant',
  metadata: { name, namespace: n },
  spec: {
    from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: fromNs }],
    to: [{ group: '', kind: 'Service' }],
  },
});

type Cond = { type: string; status: string; reason: string; message?: string; observedGeneration?: number };

export function cond(list: unknown, type: string): Cond | undefined {
  return (list as Cond[] | undefined)?.find((c) => c.type === type);
}

export function ourParents(
  o: KubeObject | undefined,
): { parentRef: Record<string, unknown>; controllerName: string; conditions: Cond[] }[] {
  return (
    (
      o?.status as
        { parents?: { parentRef: Record<string, unknown>; controllerName: string; conditions: Cond[] }[] } | undefined
    )?.parents ?? []
  ).filter((p) => p.controllerName === 'turnpike.dev/gateway-controller');
}
