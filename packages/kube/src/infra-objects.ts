// The Kubernetes objects that run a Gateway's proxy, from its infra IR: ServiceAccount,
// ConfigMap (the Envoy bootstrap), Secret (the proxy's xDS client certificate, with mTLS),
// Deployment, Service and PodDisruptionBudget. All in the namespace and under the name the IR
// gives (proxy-placement.ts), labelled with the Gateway's name and namespace and its
// spec.infrastructure labels, and owned by the Gateway when beside it (an owner reference cannot
// cross namespaces: the garbage collector would delete the object). Pure: no I/O.
import { createHash } from 'node:crypto';
import { encodeSecretData, type KubeObject } from '@turnpike/api';
import {
  CONFIG_HASH_ANNOTATION,
  GATEWAY_NAME_LABEL,
  GATEWAY_NAMESPACE_LABEL,
  MANAGED_BY_LABEL,
  type GatewayInfraIR,
} from '@turnpike/translator';

export { CONFIG_HASH_ANNOTATION };
// Proxy objects only: the controller's own Secrets (CA, URL key) carry managed-by too, but no Gateway name.
export const MANAGED_SELECTOR = 'app.kubernetes.io/managed-by=turnpike,gateway.networking.k8s.io/gateway-name';

/** Where the proxy container finds its xDS client certificate (tls.crt, tls.key, ca.crt). */
export const XDS_CERT_DIR = '/etc/turnpike/xds';
/** Where it finds the bootstrap and the SDS files next to it. */
export const BOOTSTRAP_DIR = '/etc/envoy';

export interface InfraContext {
  /** The Envoy bootstrap JSON for this Gateway. */
  bootstrap: (namespace: string, name: string) => string;
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
  const bootstrap = ctx.bootstrap(ir.gateway.namespace, ir.gateway.name);
  const plugins = pluginCopies(ir, ctx, meta);
  const tls = xdsClientSecret(ir, ctx, meta);
  // Pods roll when what they run changes: the bootstrap, the image, the mounted plugins' content
  // (one served over HTTP reaches the proxies through xDS alone).
  const configHash = createHash('sha256')
    .update(
      JSON.stringify({
        bootstrap,
        image: ir.image,
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
        replicas: ir.replicas,
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
                args: ['-c', '/etc/envoy/envoy.json', '--log-level', 'info'],
                ports: ir.ports.map((p) => ({ name: p.name, containerPort: p.containerPort, protocol: p.protocol })),
                ...(ir.resources ? { resources: ir.resources } : {}),
                volumeMounts: [
                  { name: 'bootstrap', mountPath: BOOTSTRAP_DIR, readOnly: true },
                  ...tls.mounts,
                  ...plugins.mounts,
                ],
                securityContext: {
                  runAsNonRoot: true,
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                  seccompProfile: { type: 'RuntimeDefault' },
                },
              },
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
      spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
    },
  ];
}
