// What a Gateway's proxy objects are made from beyond its infra IR: the bootstrap (where xDS is
// served, with which TLS) and the drain container's image. One place, so that the controller's
// applier and `translate --to objects` print the same objects.
import type { KubeObject } from '@turnpike/api';
import { BOOTSTRAP_DIR, infraObjects, XDS_CERT_DIR, type InfraContext } from '@turnpike/kube';
import type { GatewayInfraIR } from '@turnpike/translator';
import { bootstrapSdsFiles, buildBootstrap, type BootstrapTls } from '@turnpike/xds';

/** Where the proxy objects mount the xDS credentials, and the name they check on the controller. */
export function controlPlaneTls(serverName: string): BootstrapTls {
  return { certDir: XDS_CERT_DIR, sdsDir: BOOTSTRAP_DIR, serverName };
}

/** The names the controller's serving certificate carries: the public host and, for a Service, its FQDN. */
export function xdsServerNames(host: string, given?: string[]): string[] {
  return given?.length ? given : [host, ...(host.endsWith('.svc') ? [`${host}.cluster.local`] : [])];
}

/** The bootstrap and drain parts of the proxy objects' context (credentials and plugin content are the caller's). */
export function proxyObjectsContext(
  xdsPublic: { host: string; port: number },
  tls: BootstrapTls | undefined,
  drainImage: string | undefined,
): Pick<InfraContext, 'bootstrap' | 'bootstrapFiles' | 'drainImage'> {
  return {
    ...(drainImage ? { drainImage } : {}),
    bootstrap: (namespace, name, { stats, memoryLimitBytes }) =>
      JSON.stringify(
        buildBootstrap({
          namespace,
          name,
          stats,
          ...(memoryLimitBytes !== undefined ? { memoryLimitBytes } : {}),
          xdsHost: xdsPublic.host,
          xdsPort: xdsPublic.port,
          ...(tls ? { tls } : {}),
        }),
      ),
    ...(tls ? { bootstrapFiles: bootstrapSdsFiles(tls) } : {}),
  };
}

export interface OfflineProxyObjectsOptions {
  xdsPublic: { host: string; port: number };
  /** Plaintext xDS (--xds-plaintext in the cluster): no client certificate, no TLS in the bootstrap. */
  plaintext: boolean;
  drainImage?: string;
}

/**
 * Every Gateway's proxy objects as the controller's applier would apply them, but for what only the
 * running controller has: the xDS client certificate it issues (its Secret is left out) and the plugin
 * content it fetches (the copies' data is left out). `notes` says what was left out, per object.
 */
export function offlineProxyObjects(
  infra: Iterable<GatewayInfraIR>,
  o: OfflineProxyObjectsOptions,
): { objects: KubeObject[]; notes: string[] } {
  const tls = o.plaintext ? undefined : controlPlaneTls(xdsServerNames(o.xdsPublic.host)[0]!);
  const ctx: InfraContext = {
    ...proxyObjectsContext(o.xdsPublic, tls, o.drainImage),
    ...(tls ? { xdsCredentials: () => ({ 'tls.crt': '', 'tls.key': '', 'ca.crt': '' }) } : {}),
    pluginContent: () => Buffer.alloc(0),
  };
  const objects: KubeObject[] = [];
  const notes: string[] = [];
  for (const ir of infra)
    for (const obj of infraObjects(ir, ctx)) {
      const where = `${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`;
      if (obj.kind === 'Secret') {
        notes.push(
          `${where}: the proxies' xDS client certificate, issued by the controller in the cluster (not printed)`,
        );
        continue;
      }
      const plugin = obj.metadata.annotations?.['turnpike.dev/plugin'];
      if (obj.kind === 'ConfigMap' && plugin) {
        const copy = { ...obj } as KubeObject & { data?: unknown; binaryData?: unknown };
        delete copy.data;
        delete copy.binaryData;
        objects.push(copy);
        notes.push(`${where}: the copy of plugin ${plugin}, whose content the controller fetches (data not printed)`);
        continue;
      }
      objects.push(obj);
    }
  return { objects, notes };
}
