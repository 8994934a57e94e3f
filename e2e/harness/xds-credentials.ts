// A proxy's xDS credentials as the controller wrote them into the cluster (the Secret the proxy
// Deployment mounts), written to files for clients that read files (the Go checker).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@turnpike/api';
import { waitFor, xdsCheckBinary, type Cluster } from './cluster.js';
import { proxyObjectsOf } from './proxies.js';

/** The name the controller's serving certificate carries by default (its Service). */
export const XDS_SERVER_NAME = 'turnpike.turnpike-system.svc';

export interface ProxyCredentials {
  cert: string;
  key: string;
  ca: string;
  files: { cert: string; key: string; ca: string };
}

export function credentialFiles(c: { cert: string; key: string; ca: string }): ProxyCredentials {
  const dir = mkdtempSync(join(tmpdir(), 'turnpike-xds-creds-'));
  const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), ca: join(dir, 'ca.crt') };
  writeFileSync(files.cert, c.cert);
  writeFileSync(files.key, c.key, { mode: 0o600 });
  writeFileSync(files.ca, c.ca);
  return { ...c, files };
}

/** The Secret a Gateway's proxies mount their xDS credentials from. */
export function proxySecretOf(gatewayNamespace: string, gateway: string): { namespace: string; name: string } {
  const at = proxyObjectsOf(gatewayNamespace, gateway);
  return { namespace: at.namespace, name: `${at.name}-xds` };
}

/** Waits for a Gateway's xDS client Secret and returns what it holds (optionally: until `accept` says yes). */
export async function proxyCredentials(
  cluster: Cluster,
  gatewayNamespace: string,
  gateway: string,
  accept: (c: ProxyCredentials) => boolean = () => true,
): Promise<ProxyCredentials> {
  const { namespace, name } = proxySecretOf(gatewayNamespace, gateway);
  return waitFor(
    `xDS client Secret ${namespace}/${name}`,
    async () => {
      const s = (await cluster.get({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } })) as
        (KubeObject & { data?: Record<string, string> }) | undefined;
      if (!s?.data?.['tls.crt']) return undefined;
      const d = (k: string) => Buffer.from(s.data![k] ?? '', 'base64').toString('utf8');
      const c = credentialFiles({ cert: d('tls.crt'), key: d('tls.key'), ca: d('ca.crt') });
      return accept(c) ? c : undefined;
    },
    60_000,
  );
}

/** The Go checker's flags for these credentials. */
export function xdsCheckTlsArgs(c: ProxyCredentials): string[] {
  return ['-cert', c.files.cert, '-key', c.files.key, '-ca', c.files.ca, '-server-name', XDS_SERVER_NAME];
}

/** What the Go checker says of one Gateway's resources: ValidateAll's errors and the filters it saw. */
export interface XdsCheckReport {
  errors: string[];
  /** Route configuration name → the connection manager's HTTP filters, in order. */
  httpFilters: Record<string, string[]>;
  /** Route name → the filters it configures (typed_per_filter_config keys). */
  routeFilters: Record<string, string[]>;
}

/** Runs the Go checker as a proxy of `node` (`namespace/gateway`); a failed run throws with what it printed. */
export function runXdsCheck(xdsPort: number, node: string, creds: ProxyCredentials): XdsCheckReport {
  try {
    const out = execFileSync(
      xdsCheckBinary(),
      ['-address', `127.0.0.1:${xdsPort}`, '-node', node, ...xdsCheckTlsArgs(creds)],
      { encoding: 'utf8' },
    );
    return JSON.parse(out) as XdsCheckReport;
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`xds-check failed: ${stdout ?? ''} ${stderr ?? ''}`);
  }
}
