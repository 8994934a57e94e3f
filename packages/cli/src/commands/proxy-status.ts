// `turnpike proxy-status`: the proxies of every controller replica, from the ProxyReports each writes
// in the cluster (--kubeconfig, $KUBECONFIG or ~/.kube/config; the turnpike-viewer role may read
// them): which replica each is connected to, since when, whether it runs the current configuration
// and what it last rejected. With --controller URL: one replica's own view, from its /debug/proxies
// (its debug address, loopback: `kubectl port-forward` to port 8081), with the version each proxy
// accepted per resource type.
import type { Command } from 'commander';
import type { ProxyReport } from '@turnpike/api';
import { collectionPath, KubeApiError, resourceInfo } from '@turnpike/kube';
import type { ProxyStream } from '@turnpike/xds';
import { TYPE } from '@turnpike/xds';
import { textFormatFlag } from '../flags.js';
import { CliError } from '../errors.js';
import { format } from '../output.js';
import { kubeconfigPath, liveClient } from '../live-cluster.js';

/** One proxy as a replica's report names it. */
export interface ReportedProxyRow {
  replica: string;
  gateway: string;
  id: string;
  connectedAt: string;
  behind: boolean;
  rejected?: { typeUrl: string; version: string; message: string };
  /** The replica's report is older than its lease: the replica is gone (shown with --all only). */
  expired?: true;
}

const COLUMNS: [string, string][] = [
  ['LDS', TYPE.listener],
  ['RDS', TYPE.route],
  ['CDS', TYPE.cluster],
  ['EDS', TYPE.endpoint],
  ['SDS', TYPE.secret],
];

export function proxyStatusTable(proxies: readonly ProxyStream[]): string {
  const rows = [['GATEWAY', 'ID', 'STREAM', 'SINCE', ...COLUMNS.map(([c]) => c), 'SYNC', 'REJECTED']];
  for (const p of proxies) {
    rows.push([
      p.node,
      p.id || '-',
      p.protocol,
      p.connectedAt,
      ...COLUMNS.map(([, t]) => (p.acked[t] ?? '-').slice(0, 12)),
      syncText(p),
      p.rejected
        ? `${p.rejected.typeUrl.slice(p.rejected.typeUrl.lastIndexOf('.') + 1)} ` +
          `${p.rejected.version.slice(0, 12)}: ${p.rejected.message}`
        : '-',
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

/**
 * In sync, or behind: awaiting an answer for these types, or running older config after a rejection;
 * a debug read (`turnpike proxy-config`, no proxy) says so and who reads.
 */
function syncText(p: ProxyStream): string {
  if (p.debug) return `debug read from ${p.peer}`;
  const awaiting = COLUMNS.filter(([, t]) => p.pending?.[t] !== undefined).map(([c]) => c);
  if (awaiting.length) return `behind (${awaiting.join(',')} unanswered)`;
  return p.rejected ? 'behind (rejected)' : 'in sync';
}

/** Every proxy every report names, by replica, Gateway and id; a Gateway with more than listed gets a row saying so. */
export function reportedProxyRows(reports: readonly ProxyReport[], now: number): ReportedProxyRow[] {
  const rows: ReportedProxyRow[] = [];
  for (const r of [...reports].sort((a, b) => (a.spec.replica < b.spec.replica ? -1 : 1))) {
    const expired = now - Date.parse(r.spec.renewTime) >= r.spec.leaseDurationSeconds * 1000;
    for (const g of r.spec.gateways ?? []) {
      const gateway = `${g.namespace}/${g.name}`;
      for (const p of g.proxies ?? [])
        rows.push({
          replica: r.spec.replica,
          gateway,
          id: p.id,
          connectedAt: p.connectedAt,
          behind: !!p.behind,
          ...(p.rejected ? { rejected: p.rejected } : {}),
          ...(expired ? { expired: true as const } : {}),
        });
      const unlisted = g.connected - (g.proxies?.length ?? 0);
      if (unlisted > 0)
        rows.push({
          replica: r.spec.replica,
          gateway,
          id: `(${unlisted} more)`,
          connectedAt: '-',
          behind: false,
          ...(expired ? { expired: true as const } : {}),
        });
    }
  }
  return rows;
}

export function reportedProxyTable(rows: readonly ReportedProxyRow[]): string {
  const table = [['REPLICA', 'GATEWAY', 'ID', 'SINCE', 'SYNC', 'REJECTED']];
  for (const p of rows)
    table.push([
      p.expired ? `${p.replica} (expired)` : p.replica,
      p.gateway,
      p.id,
      p.connectedAt,
      p.behind ? (p.rejected ? 'behind (rejected)' : 'behind') : p.connectedAt === '-' ? '-' : 'in sync',
      p.rejected
        ? `${p.rejected.typeUrl.slice(p.rejected.typeUrl.lastIndexOf('.') + 1)} ` +
          `${p.rejected.version.slice(0, 12)}: ${p.rejected.message}`
        : '-',
    ]);
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  return (
    table.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n'
  );
}

interface ProxyStatusFlags {
  controller?: string;
  kubeconfig?: string;
  context?: string;
  all?: boolean;
  gateway?: string;
  output: string;
}

async function fromController(opts: ProxyStatusFlags & { controller: string }): Promise<void> {
  const url = `${opts.controller.replace(/\/$/, '')}/debug/proxies`;
  let proxies: ProxyStream[];
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    proxies = (await res.json()) as ProxyStream[];
  } catch (e) {
    throw new CliError(`--controller ${opts.controller}: cannot read ${url} (${(e as Error).message})`);
  }
  if (opts.gateway) proxies = proxies.filter((p) => p.node === opts.gateway);
  process.stdout.write(
    opts.output === 'text' ? proxyStatusTable(proxies) : format(proxies, opts.output as 'json' | 'yaml'),
  );
}

async function fromReports(opts: ProxyStatusFlags): Promise<void> {
  const kubeconfig = kubeconfigPath(opts.kubeconfig);
  if (kubeconfig === undefined)
    throw new CliError('give a cluster (--kubeconfig PATH, $KUBECONFIG or ~/.kube/config), or --controller URL');
  const client = liveClient({ kubeconfig, ...(opts.context !== undefined ? { context: opts.context } : {}) });
  let reports: ProxyReport[];
  try {
    const path = collectionPath(resourceInfo('ProxyReport')!);
    reports = (await client.must<{ items?: ProxyReport[] }>('GET', path)).items ?? [];
  } catch (e) {
    const hint =
      e instanceof KubeApiError && e.status === 404
        ? ' (the ProxyReport CRD is not installed: deploy/crds/turnpike.dev_proxyreports.yaml)'
        : e instanceof KubeApiError && e.status === 403
          ? ' (bind the ClusterRole turnpike-viewer)'
          : '';
    throw new CliError(`cannot list proxyreports: ${(e as Error).message}${hint}`);
  } finally {
    client.close();
  }
  let rows = reportedProxyRows(reports, Date.now());
  if (!opts.all) rows = rows.filter((r) => !r.expired);
  if (opts.gateway) rows = rows.filter((r) => r.gateway === opts.gateway);
  process.stdout.write(
    opts.output === 'text' ? reportedProxyTable(rows) : format(rows, opts.output as 'json' | 'yaml'),
  );
}

export function registerProxyStatus(program: Command): void {
  program
    .command('proxy-status')
    .description(
      "list every controller replica's proxies (from their ProxyReports), whether they run the current " +
        'configuration and what they rejected; --controller: one replica, with the versions each proxy accepted',
    )
    .option('--kubeconfig <path>', 'the cluster (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', "one of the kubeconfig's contexts")
    .option('--all', 'also the proxies of replicas whose report expired')
    .option('--controller <url>', "one replica's debug address (--debug-address), e.g. http://127.0.0.1:8081")
    .option('--gateway <ns/name>', "only this Gateway's proxies")
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .action(async (opts: ProxyStatusFlags) => {
      opts.output = textFormatFlag(opts.output);
      if (opts.controller !== undefined) {
        if (opts.kubeconfig !== undefined || opts.context !== undefined || opts.all)
          throw new CliError('--controller reads one replica; --kubeconfig, --context and --all are for the reports');
        return fromController(opts as ProxyStatusFlags & { controller: string });
      }
      return fromReports(opts);
    });
}
