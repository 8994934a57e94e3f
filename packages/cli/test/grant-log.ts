// A recorded log where a ReferenceGrant is deleted at a known event among hundreds of unrelated ones,
// for bisect and the console.
import type { WatchEvent } from '@turnpike/engine';
import { proxyReportObject } from '@turnpike/api';

const GW = 'gateway.networking.k8s.io/v1';
const OBJECTS = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'infra' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'backends' } },
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'tp' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'tp',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'db', namespace: 'backends' },
    spec: { ports: [{ name: 'http', port: 80 }] },
  },
  {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: 'apps' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      rules: [{ backendRefs: [{ name: 'db', namespace: 'backends', port: 80 }] }],
    },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name: 'let-apps', namespace: 'backends' },
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }],
      to: [{ group: '', kind: 'Service' }],
    },
  },
];
export const DELETED_AT = 318;
export const EVENTS = 600;
/** The xDS server reports that one of the Gateway's two proxies has not acknowledged its configuration. */
export const PROXY_BEHIND_AT = 400;

export function recordedLog(): string {
  const events: WatchEvent[] = [];
  const at = (seq: number) => new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString();
  const push = (e: Omit<WatchEvent, 'seq' | 'at' | 'source'>) =>
    events.push({ seq: events.length + 1, at: at(events.length + 1), source: 'kube', ...e } as WatchEvent);
  for (const o of OBJECTS)
    push({
      type: 'upsert',
      kind: o.kind,
      ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
      name: o.metadata.name,
      object: o,
    } as never);
  push({ type: 'synced', kind: '*' } as never);
  while (events.length < EVENTS) {
    const seq = events.length + 1;
    if (seq === DELETED_AT)
      push({ type: 'delete', kind: 'ReferenceGrant', namespace: 'backends', name: 'let-apps' } as never);
    else if (seq === PROXY_BEHIND_AT) {
      // One replica reports both of the Gateway's proxies, one of them behind.
      const object = proxyReportObject(
        'turnpike-system',
        'replica-a',
        [
          {
            namespace: 'infra',
            name: 'gw',
            connected: 2,
            proxies: [
              { id: 'proxy-b', connectedAt: '2026-01-01T00:00:00.000Z', behind: true },
              { id: 'proxy-a', connectedAt: '2026-01-01T00:00:00.000Z' },
            ],
          },
        ],
        '2026-01-01T00:00:00.000Z',
        15,
      );
      push({
        type: 'upsert',
        kind: 'ProxyReport',
        namespace: 'turnpike-system',
        name: 'replica-a',
        object,
        source: 'kube',
      } as never);
    } else
      push({
        type: 'upsert',
        kind: 'ConfigMap',
        namespace: 'apps',
        name: `noise-${seq % 7}`,
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `noise-${seq % 7}`, namespace: 'apps' },
          data: { seq: String(seq) },
        },
      } as never);
  }
  const header = {
    format: 'turnpike.events',
    version: 1,
    createdAt: at(0),
    quietMs: 50,
    maxDelayMs: 500,
    source: 'test',
  };
  return [header, ...events].map((l) => JSON.stringify(l)).join('\n') + '\n';
}
