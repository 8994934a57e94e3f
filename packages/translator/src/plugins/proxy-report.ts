// What a Gateway's proxies said (its ProxyStatus, written by the xDS side): connected and in sync,
// a configuration rejected, resources the serving path withheld. Read when the Gateway is
// assembled, never as part of its model: routes attach to the model, and a proxy connecting must
// not re-attach a thousand routes (at a cold start, every Gateway's proxies connect at once).
import type { Gateway, ProxyStatus } from '@turnpike/api';
import type { Inputs } from '../incremental/inputs.js';

export interface ProxyReport {
  /** The proxies rejected the last configuration: what they said. */
  rejected?: string;
  /** What the serving path withheld from the proxies, one line each. */
  withheld?: string[];
  /** The same, per route it names (`Kind/namespace/name`), for the route's own status. */
  withheldByRoute?: Map<string, string[]>;
  /** Connected proxies and those that have not acknowledged the current configuration. */
  sync?: NonNullable<ProxyStatus['status']['sync']>;
}

export function proxyReport(inputs: Inputs, gw: Gateway): ProxyReport {
  const report: ProxyReport = {};
  const told = inputs.get<ProxyStatus>('ProxyStatus', gw.metadata.namespace, gw.metadata.name)?.status;
  if (told?.sync) report.sync = told.sync;
  if (told?.withheld?.length) {
    const line = (w: (typeof told.withheld)[number]) =>
      `${w.source ? `${w.source} (${w.resource} ${w.field})` : `${w.resource} ${w.field}`}: ${w.message}`;
    report.withheld = told.withheld.map(line);
    report.withheldByRoute = new Map();
    for (const w of told.withheld)
      if (w.object) report.withheldByRoute.set(w.object, [...(report.withheldByRoute.get(w.object) ?? []), line(w)]);
  }
  const ps = told?.rejected;
  if (ps)
    report.rejected =
      `proxy ${ps.node} rejected ${ps.typeUrl.slice(ps.typeUrl.lastIndexOf('.') + 1)} ` +
      `version ${ps.version}: ${ps.message}; the previous configuration stays in force`;
  return report;
}
