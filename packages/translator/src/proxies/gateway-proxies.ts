// What a Gateway's proxies said, summed over every controller replica's ProxyReport: how many are
// connected and which have not acknowledged the current configuration, the plugins all of them run,
// a configuration one rejected, resources the serving path withheld. Read when the Gateway's status
// is reported, never as part of its model: routes attach to the model, and a proxy connecting must not
// re-attach a thousand routes (at a cold start, every Gateway's proxies connect at once).
//
// A proxy that moved from one replica to another can be named by both reports for a while (the old
// replica died and its report has not expired, or has not been rewritten yet): it counts once, as the
// report with its newer connection says. Which reports are live is decided at the edge that reads
// them (the kube source drops an expired one); here is only what the reports say, so the result is a
// function of the snapshot.
import type { Gateway, ProxyReport, ReportedGateway, ReportedProxy } from '@turnpike/api';
import { flat } from '../compact-values.js';
import type { Inputs } from '../incremental/inputs.js';
import type { TranslationRun } from '../incremental/run.js';
import { listObjects } from '../snapshot.js';

/** Connected proxies and those that have not acknowledged the current configuration. */
export interface ProxySync {
  connected: number;
  /** Node ids, sorted. */
  behind: string[];
  /** The plugins (`namespace/name@sha256`) the configuration every connected proxy acknowledged runs. */
  plugins?: string[];
}

export interface GatewayProxies {
  /** A proxy rejected the last configuration: what it said. */
  rejected?: string;
  /** What the serving path withheld from the proxies, one line each. */
  withheld?: string[];
  /** The same, per route it names (`Kind/namespace/name`), for the route's own status. */
  withheldByRoute?: Map<string, string[]>;
  /** Absent while no proxy is connected. */
  sync?: ProxySync;
}

/** The derived fact a Gateway's report piece reads instead of every ProxyReport. */
export const gatewayProxiesDependency = (namespace: string, name: string): string =>
  flat(`@proxies:${namespace}/${name}`);

/** Per report (stored objects do not change), its Gateways by `namespace/name`. */
const gatewaysOf = new WeakMap<ProxyReport, Map<string, ReportedGateway>>();

function reportedGateways(report: ProxyReport): Map<string, ReportedGateway> {
  let byKey = gatewaysOf.get(report);
  if (!byKey) {
    byKey = new Map();
    for (const g of Array.isArray(report.spec?.gateways) ? report.spec.gateways : [])
      if (g && typeof g.namespace === 'string' && typeof g.name === 'string') byKey.set(`${g.namespace}/${g.name}`, g);
    gatewaysOf.set(report, byKey);
  }
  return byKey;
}

/**
 * Publishes, for every changed ProxyReport, the Gateways whose part of it changed: a report rewritten
 * because one Gateway's proxy connected re-reports that Gateway only. Runs before the assembly.
 */
export function publishProxyReportFacts(run: TranslationRun): void {
  for (const c of run.changedObjects('ProxyReport')) {
    const before = c.before ? reportedGateways(c.before as ProxyReport) : new Map<string, ReportedGateway>();
    const after = c.after ? reportedGateways(c.after as ProxyReport) : new Map<string, ReportedGateway>();
    for (const key of new Set([...before.keys(), ...after.keys()])) {
      const a = before.get(key);
      const b = after.get(key);
      if (a && b && JSON.stringify(a) === JSON.stringify(b)) continue;
      const [namespace, name] = key.split('/') as [string, string];
      run.facts.add(gatewayProxiesDependency(namespace, name));
    }
  }
}

interface Claim {
  replica: number;
  proxy: ReportedProxy;
  at: number;
}

/** Every replica's view of one Gateway's proxies, summed up. */
export function gatewayProxies(inputs: Inputs, gw: Gateway): GatewayProxies {
  const namespace = gw.metadata.namespace ?? '';
  inputs.depend(gatewayProxiesDependency(namespace, gw.metadata.name));
  const key = `${namespace}/${gw.metadata.name}`;
  // In a stable order (namespace, name): ties between reports are broken the same way every time.
  const entries: ReportedGateway[] = [];
  for (const report of listObjects<ProxyReport>(inputs.snapshot, 'ProxyReport')) {
    const g = reportedGateways(report).get(key);
    if (g) entries.push(g);
  }
  if (!entries.length) return {};
  return {
    ...proxiesInSync(entries),
    ...withheld(entries),
  };
}

function proxiesInSync(entries: readonly ReportedGateway[]): Pick<GatewayProxies, 'sync' | 'rejected'> {
  // The newest connection of each proxy is the one that counts.
  const claims = new Map<string, Claim>();
  entries.forEach((g, replica) => {
    for (const proxy of Array.isArray(g.proxies) ? g.proxies : []) {
      const parsed = Date.parse(proxy.connectedAt);
      const at = Number.isFinite(parsed) ? parsed : -Infinity;
      const prev = claims.get(proxy.id);
      // On a tie the first report (in name order) keeps it.
      if (!prev || at > prev.at) claims.set(proxy.id, { replica, proxy, at });
    }
  });
  let connected = 0;
  let plugins: string[] | undefined;
  let everyAcknowledged = true;
  let awaitingFirst = false;
  entries.forEach((g, replica) => {
    const listed = Array.isArray(g.proxies) ? g.proxies : [];
    const superseded = listed.filter((p) => claims.get(p.id)?.replica !== replica).length;
    const own = Math.max(0, (Number.isInteger(g.connected) ? g.connected : listed.length) - superseded);
    if (own === 0) return;
    connected += own;
    // Every replica that still has proxies of the Gateway must have seen them all acknowledge it. One
    // whose proxies just connected (none acknowledged yet, none late) is given the grace a proxy gets
    // before it counts as behind: a proxy that moved there after a replica died still runs what it ran.
    if (Array.isArray(g.plugins)) plugins = plugins ? plugins.filter((p) => g.plugins!.includes(p)) : [...g.plugins];
    else if (listed.some((p) => p.behind && claims.get(p.id)?.replica === replica)) everyAcknowledged = false;
    else awaitingFirst = true;
  });
  // Nothing acknowledged anywhere yet: nothing is known to run.
  if (awaitingFirst && !plugins) everyAcknowledged = false;
  if (connected === 0) return {};
  const winners = [...claims.values()].sort((a, b) => cmp(a.proxy.id, b.proxy.id));
  const behind = winners.filter((c) => c.proxy.behind).map((c) => c.proxy.id);
  const sync: ProxySync = { connected, behind, ...(everyAcknowledged && plugins ? { plugins } : {}) };
  const refused = winners.find((c) => c.proxy.rejected)?.proxy;
  if (!refused?.rejected) return { sync };
  const r = refused.rejected;
  return {
    sync,
    rejected:
      `proxy ${refused.id} rejected ${r.typeUrl.slice(r.typeUrl.lastIndexOf('.') + 1)} ` +
      `version ${r.version}: ${r.message}; the previous configuration stays in force`,
  };
}

function withheld(entries: readonly ReportedGateway[]): Pick<GatewayProxies, 'withheld' | 'withheldByRoute'> {
  // Every replica serves the same configuration, so they withhold the same: each line once.
  const lines: string[] = [];
  const byRoute = new Map<string, string[]>();
  for (const g of entries)
    for (const w of Array.isArray(g.withheld) ? g.withheld : []) {
      const line = `${w.source ? `${w.source} (${w.resource} ${w.field})` : `${w.resource} ${w.field}`}: ${w.message}`;
      if (lines.includes(line)) continue;
      lines.push(line);
      if (w.object) byRoute.set(w.object, [...(byRoute.get(w.object) ?? []), line]);
    }
  return lines.length ? { withheld: lines, withheldByRoute: byRoute } : {};
}

/** Up to ten proxies by node id, for a condition's message. */
export function proxyNames(ids: readonly string[]): string {
  return ids.slice(0, 10).join(', ') + (ids.length > 10 ? `, and ${ids.length - 10} more` : '');
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
