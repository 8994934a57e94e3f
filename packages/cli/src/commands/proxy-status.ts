// `turnpike proxy-status --controller URL`: the proxies connected to a running controller, the
// configuration version each accepted per resource type, whether it runs the current configuration,
// and what it last rejected. Reads the
// controller's /debug/proxies (its debug address, loopback: `kubectl port-forward` to port 8081).
import type { Command } from 'commander';
import type { ProxyStream } from '@turnpike/xds';
import { TYPE } from '@turnpike/xds';
import { textFormatFlag } from '../flags.js';
import { CliError } from '../errors.js';
import { format } from '../output.js';

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

/** In sync, or behind: awaiting an answer for these types, or running older config after a rejection. */
function syncText(p: ProxyStream): string {
  const awaiting = COLUMNS.filter(([, t]) => p.pending?.[t] !== undefined).map(([c]) => c);
  if (awaiting.length) return `behind (${awaiting.join(',')} unanswered)`;
  return p.rejected ? 'behind (rejected)' : 'in sync';
}

export function registerProxyStatus(program: Command): void {
  program
    .command('proxy-status')
    .description(
      'list the proxies connected to a running controller, the versions they accepted and what they rejected',
    )
    .option('--controller <url>', "the controller's debug address (--debug-address)", 'http://127.0.0.1:8081')
    .option('--gateway <ns/name>', "only this Gateway's proxies")
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .action(async (opts: { controller: string; gateway?: string; output: string }) => {
      opts.output = textFormatFlag(opts.output);
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
    });
}
