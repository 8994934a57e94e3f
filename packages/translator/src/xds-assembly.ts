// Assembles the xDS IR of each Gateway from its listeners and the routes attached to them.
// Only programmable listeners are served. TCP and UDP listeners carry the oldest attached
// route (GEP-2644/2645: all are accepted, one gets traffic).
import { compareAge, compareNames } from './compare.js';
import { mergedListeners } from './gateways.js';
import { claimedByMoreSpecific } from './listener-isolation.js';
import { listenerProgrammable } from './listener-validity.js';
import { tlsMode, transport } from './listener-protocols.js';
import type { GatewayModel, ListenerModel } from './model.js';
import { compareRoutePrecedence, type RankedRoute } from './precedence.js';
import { recordOverlaps, type RouteOverlaps } from './route-overlaps.js';
import type { RouteResult } from './routes/route-result.js';
import { parentCarriesTraffic } from './status-routes.js';
import type {
  ClusterIR,
  GatewayIR,
  GatewayListenerIR,
  L4RouteIR,
  PortIR,
  VirtualHostIR,
  WeightedCluster,
} from '@turnpike/api';

/** Clusters of a route whose BackendTLSPolicy this Gateway may not use (it is beyond the policy's 16th ancestor). */
function blockedClusters(r: RouteResult, policies: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  if (!policies.size) return out;
  for (const c of r.clusters) if (c.tls && policies.has(c.tls.policy)) out.add(c.name);
  return out;
}

/** The route with the blocked clusters' weight moved to the invalid share (answered 500, or refused on L4). */
function withoutClusters<
  T extends { backends?: WeightedCluster[]; invalidWeight?: number; directResponse?: { status: number } },
>(route: T, blocked: Set<string>): T {
  const backends = route.backends ?? [];
  const lost = backends.filter((b) => blocked.has(b.cluster)).reduce((n, b) => n + b.weight, 0);
  if (!lost) return route;
  const kept = backends.filter((b) => !blocked.has(b.cluster));
  // An HTTP rule left with no backend at all answers 500 directly.
  if (!kept.length && 'match' in route) {
    const { backends: _b, invalidWeight: _w, ...rest } = route;
    return { ...rest, directResponse: { status: 500 } } as T;
  }
  return { ...route, backends: kept, invalidWeight: (route.invalidWeight ?? 0) + lost };
}

/**
 * GatewayHTTPListenerIsolation, per port of HTTP listeners: hosts a more specific listener owns
 * are dropped from the wider ones, and every listener with a hostname has its virtual host, so
 * the proxy never routes a request with another listener's routes. Afterwards no two listeners of
 * a port share a host: the proxy's one route configuration per port needs no ordering of its own.
 */
function isolateHttpListeners(accs: ListenerAccumulator[]): void {
  const byPort = new Map<number, ListenerAccumulator[]>();
  for (const a of accs)
    if (a.model.spec.protocol === 'HTTP') byPort.set(a.model.spec.port, [...(byPort.get(a.model.spec.port) ?? []), a]);
  for (const group of byPort.values()) {
    if (group.length < 2) continue;
    for (const a of group) {
      const others = group.filter((o) => o !== a).map((o) => o.model.spec.hostname);
      for (const h of [...a.hosts.keys()])
        if (claimedByMoreSpecific(a.model.spec.hostname, h, others)) a.hosts.delete(h);
      const own = a.model.spec.hostname;
      if (own && !a.hosts.has(own)) a.hosts.set(own, []);
    }
  }
}

export function listenerIRName(l: ListenerModel): string {
  return `${l.ownerKind}/${l.owner.metadata.namespace}/${l.owner.metadata.name}/${l.spec.name}`;
}

interface ListenerAccumulator {
  model: ListenerModel;
  hosts: Map<string, RankedRoute[]>;
  l4: { route: L4RouteIR; result: RouteResult }[];
}

/**
 * The xDS IR of one Gateway. `overlaps`, when given, receives the routes whose matches another
 * route on the same host already claims (RouteRulesOverlap).
 */
export function assembleGateway(
  g: GatewayModel,
  routes: readonly RouteResult[],
  ageOf: (r: RouteResult) => number,
  overlaps?: RouteOverlaps,
  blockedPolicies: ReadonlySet<string> = new Set(),
): GatewayIR {
  const acc = new Map<ListenerModel, ListenerAccumulator>();
  const listeners = mergedListeners(g).filter(listenerProgrammable);
  for (const l of listeners) acc.set(l, { model: l, hosts: new Map(), l4: [] });
  const clusters = new Map<string, ClusterIR>();
  for (const r of routes) {
    for (const p of r.parents) {
      if (p.gateway !== g || !parentCarriesTraffic(r, p)) continue;
      for (const { listener, hostnames } of p.attached) {
        const a = acc.get(listener);
        if (!a) continue;
        const blocked = blockedClusters(r, blockedPolicies);
        for (const c of r.clusters) if (!blocked.has(c.name)) clusters.set(c.name, c);
        if (r.http) {
          const order = `${r.object.metadata.namespace}/${r.object.metadata.name}`;
          const age = ageOf(r);
          const http = blocked.size ? r.http.map((x) => withoutClusters(x, blocked)) : r.http;
          for (const h of hostnames) {
            const list = a.hosts.get(h) ?? [];
            for (const route of http) list.push({ route, age, order });
            a.hosts.set(h, list);
          }
        } else if (r.l4 && !r.invalid) {
          // A refused L4 route serves nothing (it must not take the listener from a valid one).
          const l4 = blocked.size ? withoutClusters(r.l4, blocked) : r.l4;
          a.l4.push({ route: r.kind === 'TLSRoute' ? { ...l4, hostnames } : l4, result: r });
        }
      }
    }
  }
  isolateHttpListeners([...acc.values()]);
  const ports = new Map<string, PortIR>();
  for (const a of acc.values()) {
    const l = a.model.spec;
    const t = transport(l.protocol);
    const key = `${t}/${l.port}`;
    let port = ports.get(key);
    if (!port) ports.set(key, (port = { name: `${t}-${l.port}`, port: l.port, transport: t, listeners: [] }));
    const ir: GatewayListenerIR = { name: listenerIRName(a.model), protocol: l.protocol };
    if (l.hostname) ir.hostname = l.hostname;
    if (l.protocol === 'HTTPS' || l.protocol === 'TLS') {
      ir.tls = {
        mode: l.protocol === 'HTTPS' ? 'Terminate' : tlsMode(l),
        certificates: a.model.certificates.map((c) => c.secret),
      };
      if (a.model.clientCA) ir.tls.clientCA = a.model.clientCA;
      if (a.model.clientCA && a.model.clientCAOptional) ir.tls.clientCAOptional = true;
    }
    if (l.protocol === 'HTTP' || l.protocol === 'HTTPS') {
      const vhosts: VirtualHostIR[] = [];
      for (const h of [...a.hosts.keys()].sort()) {
        const ranked = (a.hosts.get(h) as RankedRoute[]).sort(compareRoutePrecedence);
        if (overlaps) recordOverlaps(ranked, ir.name, h, overlaps);
        vhosts.push({ name: `${ir.name}/${h}`, domains: [h], routes: ranked.map((r) => r.route) });
      }
      ir.virtualHosts = vhosts;
    } else {
      const sorted = a.l4.sort(
        (x, y) => compareAge(x.result.object, y.result.object) || compareNames(x.result.object, y.result.object),
      );
      ir.routes = l.protocol === 'TLS' ? sorted.map((x) => x.route) : sorted.slice(0, 1).map((x) => x.route);
    }
    port.listeners.push(ir);
  }
  const secrets = new Map<string, string>();
  for (const l of listeners) for (const c of l.certificates) secrets.set(c.secret, c.sha256);
  if (g.backendClientCertificate) secrets.set(g.backendClientCertificate.secret, g.backendClientCertificate.sha256);
  const gw = g.object;
  const out: GatewayIR = {
    name: gw.metadata.name,
    namespace: gw.metadata.namespace ?? '',
    ports: [...ports.values()].sort((a, b) => a.port - b.port || (a.transport < b.transport ? -1 : 1)),
    clusters: [...clusters.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    secrets: [...secrets.keys()].sort().map((name) => ({ name, sha256: secrets.get(name)! })),
  };
  for (const p of out.ports) p.listeners.sort((a, b) => (a.name < b.name ? -1 : 1));
  if (g.proxyConfig?.spec?.proxylessGRPC) out.proxyless = true;
  // Only worth sending when some backend speaks TLS (GatewayBackendClientCertificate).
  if (g.backendClientCertificate && out.clusters.some((c) => c.tls))
    out.backendClientCertificate = g.backendClientCertificate.secret;
  return out;
}
