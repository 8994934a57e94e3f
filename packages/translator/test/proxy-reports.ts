// ProxyReports for tests: one replica's report of the proxies connected to it.
import { proxyReportObject, type KubeObject, type ReportedGateway, type ReportedProxy } from '@turnpike/api';

export const CONNECTED_AT = '2026-12-05T10:00:00.000Z';

/** A replica's report (renewTime and lease do not matter to the translator). */
export function replicaReport(replica: string, gateways: ReportedGateway[]): KubeObject {
  return proxyReportObject('turnpike-system', replica, gateways, CONNECTED_AT, 15);
}

export interface GatewaySaid {
  /** A proxy's standing rejection (the proxy is behind). */
  rejected?: { typeUrl: string; version: string; message: string; node?: string };
  withheld?: ReportedGateway['withheld'];
  /** Connected proxies (named `proxy-1`…, those in `behind` by their own id) and what all acknowledged. */
  sync?: { connected: number; behind: string[]; plugins?: string[] };
}

/** One Gateway's entry, from what its proxies said in the shape the conditions speak of. */
export function reportedGateway(gateway: string, said: GatewaySaid, connectedAt = CONNECTED_AT): ReportedGateway {
  const [namespace, name] = gateway.split('/') as [string, string];
  const proxies: ReportedProxy[] = [];
  const behind = said.sync?.behind ?? [];
  const rejectedBy = said.rejected ? (said.rejected.node ?? behind[0] ?? 'proxy-0') : undefined;
  for (const id of behind)
    proxies.push({
      id,
      connectedAt,
      behind: true,
      ...(id === rejectedBy ? { rejected: rejection(said.rejected!) } : {}),
    });
  if (rejectedBy !== undefined && !behind.includes(rejectedBy))
    proxies.push({ id: rejectedBy, connectedAt, behind: true, rejected: rejection(said.rejected!) });
  const connected = Math.max(said.sync?.connected ?? 0, proxies.length);
  for (let i = proxies.length; i < connected; i++) proxies.push({ id: `proxy-${i + 1}`, connectedAt });
  return {
    namespace,
    name,
    connected,
    proxies,
    ...(said.sync?.plugins ? { plugins: said.sync.plugins } : {}),
    ...(said.withheld ? { withheld: said.withheld } : {}),
  };
}

const rejection = (r: NonNullable<GatewaySaid['rejected']>) => ({
  typeUrl: r.typeUrl,
  version: r.version,
  message: r.message,
});

/** What one Gateway's proxies said, as the only replica's report. */
export function proxiesSaid(gateway: string, said: GatewaySaid, replica = 'replica-a'): KubeObject {
  return replicaReport(replica, [reportedGateway(gateway, said)]);
}
