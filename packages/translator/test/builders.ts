// Small builders for test objects: readable tests, real shapes.
import { CONTROLLER_NAME, type KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate, type TranslateResult } from '../src/index.js';

const GW = 'gateway.networking.k8s.io/v1';

export function gatewayClass(name = 'turnpike', extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name, generation: 1 },
    spec: { controllerName: CONTROLLER_NAME, ...extra },
  };
}

export function gateway(
  name: string,
  listeners: Record<string, unknown>[],
  spec: Record<string, unknown> = {},
  ns = 'infra',
  meta: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name, namespace: ns, generation: 1, ...meta },
    spec: { gatewayClassName: 'turnpike', listeners, ...spec },
  };
}

export const http = (name = 'http', port = 80, extra: Record<string, unknown> = {}) => ({
  name,
  port,
  protocol: 'HTTP',
  allowedRoutes: { namespaces: { from: 'All' } },
  ...extra,
});

export function httpRoute(
  name: string,
  spec: Record<string, unknown>,
  ns = 'apps',
  meta: Record<string, unknown> = {},
): KubeObject {
  return { apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: ns, generation: 1, ...meta }, spec };
}

export function route(kind: string, name: string, spec: Record<string, unknown>, ns = 'apps'): KubeObject {
  return { apiVersion: GW, kind, metadata: { name, namespace: ns, generation: 1 }, spec };
}

export function service(
  name: string,
  ns = 'apps',
  ports: Record<string, unknown>[] = [{ name: 'http', port: 8080, protocol: 'TCP' }],
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns },
    spec: { clusterIP: '10.0.0.1', ports },
  };
}

export function endpointSlice(
  service: string,
  ns = 'apps',
  addresses = ['10.1.0.1'],
  port = 8080,
  portName = 'http',
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-abc`, namespace: ns, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: portName, port, protocol: 'TCP' }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

export function referenceGrant(
  name: string,
  ns: string,
  from: Record<string, unknown>[],
  to: Record<string, unknown>[],
): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name, namespace: ns },
    spec: { from, to },
  };
}

export function tlsSecret(name: string, ns: string, cert: string, key: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': Buffer.from(cert).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
  };
}

export function namespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

export function run(objects: KubeObject[]): TranslateResult {
  return translate(snapshotFromObjects(objects));
}

type Cond = { type: string; status: string; reason: string; message: string; observedGeneration?: number };

export function cond(list: unknown, type: string): Cond | undefined {
  return (list as Cond[] | undefined)?.find((c) => c.type === type);
}

/** `Status/Reason` of a condition, for compact assertions. */
export function sr(list: unknown, type: string): string | undefined {
  const c = cond(list, type);
  return c ? `${c.status}/${c.reason}` : undefined;
}

export function statusOf(r: TranslateResult, kind: string, ns: string | undefined, name: string): Record<string, any> {
  const s = r.statuses.get(`${kind}/${ns ?? ''}/${name}`);
  if (!s) throw new Error(`no status for ${kind}/${ns}/${name}; have ${r.statuses.sortedKeys().join(', ')}`);
  return s as Record<string, any>;
}

export function parent(r: TranslateResult, kind: string, ns: string, name: string, i = 0): Record<string, any> {
  return statusOf(r, kind, ns, name).parents[i];
}

export function listener(r: TranslateResult, ns: string, gw: string, name: string): Record<string, any> {
  return statusOf(r, 'Gateway', ns, gw).listeners.find((l: { name: string }) => l.name === name);
}

/** Every HTTP route of a Gateway's IR, flattened. */
export function irRoutes(r: TranslateResult, gw = 'infra/gw'): any[] {
  const g = r.xdsIR.gateways.get(gw);
  if (!g) return [];
  return g.ports.flatMap((p) =>
    p.listeners.flatMap((l) =>
      (l.virtualHosts ?? []).flatMap((v) => v.routes.map((x) => ({ ...x, domain: v.domains[0] }))),
    ),
  );
}

/** An XBackend (GEP-4894, gateway.networking.x-k8s.io/v1alpha1). */
export function xbackend(name: string, spec: Record<string, unknown>, ns = 'apps'): KubeObject {
  return {
    apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
    kind: 'XBackend',
    metadata: { name, namespace: ns, generation: 1 },
    spec,
  };
}
