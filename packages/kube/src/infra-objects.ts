// The Kubernetes objects that run a Gateway's proxy, from its infra IR: ServiceAccount,
// ConfigMap (the Envoy bootstrap), Secret (the proxy's xDS client certificate, with mTLS),
// Deployment (Envoy and its drain helper), Service, PodDisruptionBudget, and when asked a
// HorizontalPodAutoscaler and a PodMonitor. All in the namespace and under the name the IR
// gives (proxy-placement.ts), labelled with the Gateway's name and namespace and its
// spec.infrastructure labels, and owned by the Gateway when beside it (an owner reference cannot
// cross namespaces: the garbage collector would delete the object). Pure: no I/O.
import { createHash } from 'node:crypto';
import {
  encodeSecretData,
  PROXY_ADMIN_PORT,
  PROXY_DRAIN_PORT,
  PROXY_READINESS_PORT,
  quantityValue,
  type KubeObject,
} from '@turnpike/api';
import {
  CONFIG_HASH_ANNOTATION,
  GATEWAY_NAME_LABEL,
  GATEWAY_NAMESPACE_LABEL,
  MANAGED_BY_LABEL,
  proxyContainerPorts,
  terminationGraceSeconds,
  type GatewayInfraIR,
} from '@turnpike/translator';

export { CONFIG_HASH_ANNOTATION };
// Proxy objects only: the controller's own Secrets (CA, URL key) carry managed-by too, but no Gateway name.
export const MANAGED_SELECTOR = 'app.kubernetes.io/managed-by=turnpike,gateway.networking.k8s.io/gateway-name';

/** Where the proxy container finds its xDS client certificate (tls.crt, tls.key, ca.crt). */
export const XDS_CERT_DIR = '/etc/turnpike/xds';
/** Where it finds the bootstrap and the SDS files next to it. */
export const BOOTSTRAP_DIR = '/etc/envoy';

/** The controller's image, which carries `turnpike proxy-drain` (deploy/controller.yaml, the chart). */
export const DEFAULT_DRAIN_IMAGE = 'turnpike:latest';
/** How the drain container's image runs the CLI (the Dockerfile's entrypoint, for the exec hook). */
const CLI_COMMAND = ['node', '/app/dist/main.js'];

export interface InfraContext {
  /**
   * The Envoy bootstrap JSON for this Gateway; `stats`: with the stats listener; `memoryLimitBytes`:
   * the Envoy container's memory limit, when it has one (its heap is sized from it).
   */
  bootstrap: (namespace: string, name: string, options: { stats: boolean; memoryLimitBytes?: number }) => string;
  /** The image of the drain container (default DEFAULT_DRAIN_IMAGE). */
  drainImage?: string;
  /** More files for the bootstrap ConfigMap (the SDS files of the xDS TLS). */
  bootstrapFiles?: Record<string, string>;
  /**
   * With mTLS: the Gateway's xDS client credentials, or undefined while they are being issued
   * (the proxy objects wait: a proxy without them could not connect).
   */
  xdsCredentials?: (
    gateway: { namespace: string; name: string },
    secret: { namespace: string; name: string },
  ) => { 'tls.crt': string; 'tls.key': string; 'ca.crt': string } | undefined;
  /** Plugin content by sha256, to copy installed plugins into the Gateway's namespace. */
  pluginContent?: (sha256: string) => Buffer | undefined;
}

/** Something the proxy objects need is not ready yet: keep the current objects and try again shortly. */
export class InfraInputPending extends Error {}
export class PluginContentMissing extends InfraInputPending {}

/** The name of a plugin copy ConfigMap, but for its 10-character id (at most 63 characters in all). */
function pluginCopyPrefix(ir: GatewayInfraIR): string {
  return `${ir.name.slice(0, 63 - 18)}-plugin-`;
}

/** A copy of an installed plugin's content next to the proxy (volumes cannot cross namespaces). */
function pluginCopies(
  ir: GatewayInfraIR,
  ctx: InfraContext,
  meta: (extra?: Record<string, string>) => KubeObject['metadata'],
): { objects: KubeObject[]; volumes: unknown[]; mounts: unknown[] } {
  const out = { objects: [] as KubeObject[], volumes: [] as unknown[], mounts: [] as unknown[] };
  // A held template mounts the copies it has (kept as they are: heldPluginCopies); no new ones.
  if (ir.held) return out;
  for (const p of ir.plugins) {
    if (!p.mountPath) continue;
    const content = ctx.pluginContent?.(p.sha256);
    if (!content)
      throw new PluginContentMissing(
        `content of plugin ${p.namespace}/${p.name} (sha256 ${p.sha256.slice(0, 12)}) is not loaded yet`,
      );
    const id = createHash('sha256').update(`${p.namespace}/${p.name}`).digest('hex').slice(0, 10);
    const name = `${pluginCopyPrefix(ir)}${id}`;
    const file = `plugin.${p.type}`;
    out.objects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        ...meta({ 'turnpike.dev/plugin': `${p.namespace}/${p.name}`, 'turnpike.dev/plugin-sha256': p.sha256 }),
        name,
      },
      ...(p.type === 'lua'
        ? { data: { [file]: content.toString('utf8') } }
        : { binaryData: { [file]: content.toString('base64') } }),
    } as KubeObject);
    out.volumes.push({ name: `plugin-${id}`, configMap: { name, items: [{ key: file, path: file }] } });
    out.mounts.push({
      name: `plugin-${id}`,
      mountPath: p.mountPath.slice(0, p.mountPath.lastIndexOf('/')),
      readOnly: true,
    });
  }
  return out;
}

/** The Secret with the Gateway's xDS client certificate, mounted at XDS_CERT_DIR (renewals update it in place). */
export function xdsClientSecretName(infraName: string): string {
  return `${infraName}-xds`;
}

function xdsClientSecret(
  ir: GatewayInfraIR,
  ctx: InfraContext,
  meta: () => KubeObject['metadata'],
): { objects: KubeObject[]; volumes: unknown[]; mounts: unknown[] } {
  if (!ctx.xdsCredentials) return { objects: [], volumes: [], mounts: [] };
  const name = xdsClientSecretName(ir.name);
  const creds = ctx.xdsCredentials(ir.gateway, { namespace: ir.namespace, name });
  if (!creds)
    throw new InfraInputPending(
      `the xDS client certificate of Gateway ${ir.gateway.namespace}/${ir.gateway.name} is being issued`,
    );
  const data = encodeSecretData(creds);
  return {
    objects: [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { ...meta(), name },
        type: 'kubernetes.io/tls',
        data,
      } as KubeObject,
    ],
    volumes: [{ name: 'xds-tls', secret: { secretName: name, defaultMode: 0o440 } }],
    mounts: [{ name: 'xds-tls', mountPath: XDS_CERT_DIR, readOnly: true }],
  };
}

/**
 * The ConfigMaps a held pod template mounts (plugin copies, named `<infra>-plugin-…`): kept as they
 * are, neither written (their content may be a digest no longer fetched) nor pruned.
 */
export function heldPluginCopies(ir: GatewayInfraIR): string[] {
  const volumes = (ir.held?.template.spec as { volumes?: { configMap?: { name?: string } }[] } | undefined)?.volumes;
  return (volumes ?? [])
    .map((v) => v.configMap?.name)
    .filter((name): name is string => !!name && name.startsWith(pluginCopyPrefix(ir)))
    .map((name) => `ConfigMap/${ir.namespace}/${name}`);
}

/**
 * The memory limit of the Envoy container the Pods run: the held template's while a rollout is held
 * (Pods made meanwhile are made from it, and read the bootstrap as it is then), else the IR's.
 */
function envoyMemoryLimit(ir: GatewayInfraIR): number | undefined {
  const held = ir.held?.template.spec?.containers?.find((c) => c.name === 'envoy');
  const resources = (held ? held.resources : ir.resources) as GatewayInfraIR['resources'] | undefined;
  const limit = resources?.limits?.memory;
  const bytes = limit === undefined ? undefined : quantityValue(limit);
  return bytes !== undefined && bytes > 0 ? Math.floor(bytes) : undefined;
}

export function infraObjects(ir: GatewayInfraIR, ctx: InfraContext): KubeObject[] {
  const { namespace, name } = ir;
  const owner =
    ir.gateway.uid && ir.gateway.namespace === namespace
      ? [
          {
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'Gateway',
            name: ir.gateway.name,
            uid: ir.gateway.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ]
      : undefined;
  const meta = (extra: Record<string, string> = {}) => ({
    name,
    namespace,
    labels: ir.labels,
    annotations: { ...ir.annotations, ...extra },
    ...(owner ? { ownerReferences: owner } : {}),
  });
  const selector = {
    [GATEWAY_NAME_LABEL]: ir.labels[GATEWAY_NAME_LABEL]!,
    [GATEWAY_NAMESPACE_LABEL]: ir.labels[GATEWAY_NAMESPACE_LABEL]!,
    [MANAGED_BY_LABEL]: 'turnpike',
  };
  const memoryLimitBytes = envoyMemoryLimit(ir);
  const bootstrap = ctx.bootstrap(ir.gateway.namespace, ir.gateway.name, {
    stats: ir.metrics.enabled,
    ...(memoryLimitBytes !== undefined ? { memoryLimitBytes } : {}),
  });
  const plugins = pluginCopies(ir, ctx, meta);
  const tls = xdsClientSecret(ir, ctx, meta);
  // Pods roll when what they run changes: the bootstrap, the image, the mounted plugins' content
  // (one served over HTTP reaches the proxies through xDS alone).
  const configHash = createHash('sha256')
    .update(
      JSON.stringify({
        bootstrap,
        image: ir.image,
        drainImage: ctx.drainImage ?? DEFAULT_DRAIN_IMAGE,
        plugins: ir.plugins.filter((p) => p.mountPath).map((p) => p.sha256),
      }),
    )
    .digest('hex')
    .slice(0, 16);
  return [
    ...plugins.objects,
    ...tls.objects,
    // The proxies never talk to the API server: no token is mounted.
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(), automountServiceAccountToken: false } as KubeObject,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(), data: { 'envoy.json': bootstrap, ...ctx.bootstrapFiles } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(),
      spec: {
        // Left to the HorizontalPodAutoscaler when there is one (server-side apply: not ours to set).
        ...(ir.autoscaling ? {} : { replicas: ir.replicas }),
        ...(ir.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: ir.progressDeadlineSeconds } : {}),
        selector: { matchLabels: selector },
        // A held rollout keeps the template the Deployment has, byte for byte.
        template: ir.held?.template ?? {
          metadata: {
            labels: { ...ir.pod.labels, ...selector },
            annotations: { ...ir.pod.annotations, [CONFIG_HASH_ANNOTATION]: configHash },
          },
          spec: {
            serviceAccountName: name,
            automountServiceAccountToken: false,
            ...ir.scheduling,
            terminationGracePeriodSeconds: terminationGraceSeconds(ir.shutdown),
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              runAsGroup: 65532,
              fsGroup: 65532,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: 'envoy',
                image: ir.image,
                args: [
                  '-c',
                  '/etc/envoy/envoy.json',
                  '--log-level',
                  'info',
                  // The graceful drain (/drain_listeners?graceful) lasts this long; `immediate`: every
                  // connection is asked to close at once (Connection: close, GOAWAY), not spread over it.
                  '--drain-time-s',
                  String(Math.ceil(ir.shutdown.drainTimeoutMs / 1000)),
                  '--drain-strategy',
                  'immediate',
                ],
                ports: proxyContainerPorts(ir),
                ...(ir.resources ? { resources: ir.resources } : {}),
                ...envoyProbes(),
                // Returns once the drain container drained Envoy; then kubelet sends SIGTERM.
                lifecycle: { preStop: { httpGet: { path: '/wait', port: PROXY_DRAIN_PORT } } },
                volumeMounts: [
                  { name: 'bootstrap', mountPath: BOOTSTRAP_DIR, readOnly: true },
                  ...tls.mounts,
                  ...plugins.mounts,
                ],
                securityContext: CONTAINER_SECURITY,
              },
              drainContainer(ir, ctx.drainImage ?? DEFAULT_DRAIN_IMAGE),
            ],
            volumes: [{ name: 'bootstrap', configMap: { name } }, ...tls.volumes, ...plugins.volumes],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(ir.service.annotations),
      spec: {
        type: ir.service.type,
        selector,
        ports: ir.ports.length
          ? ir.ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.containerPort, protocol: p.protocol }))
          : [{ name: 'none', port: 1, targetPort: 1 }],
        ...(ir.service.addresses.length && ir.service.type === 'LoadBalancer'
          ? { loadBalancerIP: ir.service.addresses[0] }
          : {}),
      },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: meta(),
      spec: { ...ir.disruptionBudget, selector: { matchLabels: selector } },
    },
    ...(ir.autoscaling ? [autoscaler(ir, meta())] : []),
    ...(ir.metrics.podMonitor ? [podMonitor(meta(), selector)] : []),
  ];
}

const CONTAINER_SECURITY = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

/**
 * Ready only while Envoy's /ready answers 200 (LIVE: its first configuration arrived and warmed; not
 * once draining). The startup probe gives a proxy ten minutes to hear from the controller before
 * kubelet restarts it; until it succeeds the others wait. Liveness is a TCP connect to the readiness
 * listener, which the drain leaves open (a liveness check on /ready would kill a draining proxy).
 */
function envoyProbes(): Record<string, unknown> {
  const ready = { httpGet: { path: '/ready', port: PROXY_READINESS_PORT }, timeoutSeconds: 1 };
  return {
    startupProbe: { ...ready, periodSeconds: 2, failureThreshold: 300 },
    readinessProbe: { ...ready, periodSeconds: 5, successThreshold: 1, failureThreshold: 1 },
    livenessProbe: {
      tcpSocket: { port: PROXY_READINESS_PORT },
      periodSeconds: 10,
      timeoutSeconds: 1,
      failureThreshold: 3,
    },
  };
}

/**
 * `turnpike proxy-drain serve` beside Envoy. At Pod deletion kubelet runs both containers' preStop
 * hooks at once: this one's exec starts the drain from loopback (only loopback may start one: the
 * /wait port is on the Pod network), Envoy's httpGet /wait returns when it is done.
 */
function drainContainer(ir: GatewayInfraIR, image: string): Record<string, unknown> {
  return {
    name: 'drain',
    image,
    args: [
      'proxy-drain',
      'serve',
      '--admin-port',
      String(PROXY_ADMIN_PORT),
      '--port',
      String(PROXY_DRAIN_PORT),
      '--drain-timeout',
      durationText(ir.shutdown.drainTimeoutMs),
      '--min-drain-duration',
      durationText(ir.shutdown.minDrainMs),
    ],
    ports: [{ name: 'drain', containerPort: PROXY_DRAIN_PORT, protocol: 'TCP' }],
    lifecycle: {
      preStop: { exec: { command: [...CLI_COMMAND, 'proxy-drain', 'start', '--port', String(PROXY_DRAIN_PORT)] } },
    },
    resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
    securityContext: CONTAINER_SECURITY,
  };
}

/** A Gateway API duration: at most five digits a unit, so 123456 ms is written 2m3s456ms. */
export function durationText(ms: number): string {
  const parts: string[] = [];
  let left = Math.round(ms);
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(left / size);
    if (n) parts.push(`${n}${unit}`);
    left -= n * size;
  }
  return parts.join('') || '0s';
}

function autoscaler(ir: GatewayInfraIR, metadata: KubeObject['metadata']): KubeObject {
  const a = ir.autoscaling!;
  const target = (name: string, percent: number) => ({
    type: 'Resource',
    resource: { name, target: { type: 'Utilization', averageUtilization: percent } },
  });
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: ir.name },
      minReplicas: a.minReplicas,
      maxReplicas: a.maxReplicas,
      metrics: [
        ...(a.cpuPercent !== undefined ? [target('cpu', a.cpuPercent)] : []),
        ...(a.memoryPercent !== undefined ? [target('memory', a.memoryPercent)] : []),
      ],
    },
  } as KubeObject;
}

/** For the Prometheus Operator (applied only where its CRD is served: infra-applier.ts). */
function podMonitor(metadata: KubeObject['metadata'], selector: Record<string, string>): KubeObject {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata,
    spec: {
      selector: { matchLabels: selector },
      podMetricsEndpoints: [{ port: 'metrics', path: '/stats/prometheus' }],
    },
  } as KubeObject;
}
