// Assembles the xDS IR of each Gateway from its listeners and the routes attached to them.
// Only programmable listeners are served. TCP and UDP listeners carry the oldest attached
// route (GEP-2644/2645: all are accepted, one gets traffic).
import { markMisdirectedHosts } from '../gateways/listener-misdirection.js';
import { compareAge, compareNames, sortInPlace } from '../compare.js';
import { mergedListeners } from '../gateways/gateways.js';
import { isWildcard, originalHostnameRank, widerMatchingHosts } from '../routes/hostnames.js';
import { gatewayListenPorts } from '../gateways/listen-ports.js';
import { claimedByMoreSpecific } from '../gateways/listener-isolation.js';
import { listenerProgrammable } from '../gateways/listener-validity.js';
import { tlsMode, transport } from '../gateways/listener-protocols.js';
import type { GatewayModel, ListenerModel } from '../model.js';
import { gatewayHttpSettings } from './http-settings.js';
import { compareRoutePrecedence, type RankedRoute } from '../routes/precedence.js';
import { claimServerNames, recordOverlaps, type RouteOverlaps } from '../routes/route-overlaps.js';
import type { RouteResult } from '../routes/route-result.js';
import { parentCarriesTraffic } from '../status/status-routes.js';
import { proxyPortKey } from '@turnpike/api';
import { flat } from '../compact-values.js';
import type {
  AccessLogIR,
  ClusterIR,
  GatewayIR,
  GatewayListenerIR,
  HTTPRouteIR,
  L4RouteIR,
  PortIR,
  WeightedCluster,
} from '@turnpike/api';

/** Clusters of a route whose BackendTLSPolicy this Gateway may not use (it is beyond the policy's 16th ancestor). */
const NONE_BLOCKED: ReadonlySet<string> = new Set();

function blockedClusters(route: RouteResult, policies: ReadonlySet<string>): ReadonlySet<string> {
  if (!policies.size) return NONE_BLOCKED;
  const blocked = new Set<string>();
  for (const cluster of route.clusters) if (cluster.tls && policies.has(cluster.tls.policy)) blocked.add(cluster.name);
  return blocked;
}

/** The route with the blocked clusters' weight moved to the invalid share (answered 500, or refused on L4). */
function withoutClusters<
  T extends { backends?: WeightedCluster[]; invalidWeight?: number; directResponse?: { status: number } },
>(route: T, blocked: ReadonlySet<string>): T {
  const backends = route.backends ?? [];
  const lost = backends.filter((b) => blocked.has(b.cluster)).reduce((sum, b) => sum + b.weight, 0);
  if (!lost) return route;
  const kept = backends.filter((b) => !blocked.has(b.cluster));
  // An HTTP rule left with no backend at all answers 500 directly.
  if (!kept.length && 'match' in route) {
    const { backends: _backends, invalidWeight: _invalidWeight, ...rest } = route;
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
function isolateHttpListeners(listeners: ListenerAccumulator[]): void {
  const byPort = new Map<number, ListenerAccumulator[]>();
  for (const listener of listeners) {
    const { protocol, port } = listener.model.spec;
    if (protocol === 'HTTP') byPort.set(port, [...(byPort.get(port) ?? []), listener]);
  }
  for (const samePort of byPort.values()) {
    if (samePort.length < 2) continue;
    for (const listener of samePort) {
      const own = listener.model.spec.hostname;
      const others = samePort.filter((other) => other !== listener).map((other) => other.model.spec.hostname);
      for (const host of [...listener.hosts.keys()])
        if (claimedByMoreSpecific(own, host, others)) listener.hosts.delete(host);
      if (own && !listener.hosts.has(own)) listener.hosts.set(own, []);
    }
  }
}

function routeKey(result: RouteResult): string {
  return `${result.kind}/${result.object.metadata.namespace}/${result.object.metadata.name}`;
}

export function listenerIRName(listener: ListenerModel): string {
  const owner = listener.owner.metadata;
  return `${listener.ownerKind}/${owner.namespace}/${owner.name}/${listener.spec.name}`;
}

/** What one programmable listener collects: its HTTP routes by host, or its L4 routes. */
interface ListenerAccumulator {
  model: ListenerModel;
  hosts: Map<string, RankedRoute[]>;
  l4: { route: L4RouteIR; result: RouteResult }[];
}

/** Puts each route's rules on the listeners (and hosts) it attached to on this Gateway. */
function collectRoutes(
  gateway: GatewayModel,
  routes: readonly RouteResult[],
  ageOf: (r: RouteResult) => number,
  listeners: ReadonlyMap<ListenerModel, ListenerAccumulator>,
  clusters: Map<string, ClusterIR>,
  blockedPolicies: ReadonlySet<string>,
  resolveCluster: ClusterResolver,
): void {
  for (const route of routes) {
    // Per route, not per listener it attached to: most attach to one or two.
    let blocked: ReadonlySet<string> | undefined;
    let rules: HTTPRouteIR[] | undefined;
    let order: string | undefined;
    for (const parent of route.parents) {
      if (parent.gateway !== gateway || !parentCarriesTraffic(route, parent)) continue;
      for (const { listener, hostnames } of parent.attached) {
        const accumulator = listeners.get(listener);
        if (!accumulator) continue;
        blocked ??= blockedClusters(route, blockedPolicies);
        for (const cluster of route.clusters)
          if (!blocked.has(cluster.name) && !clusters.has(cluster.name))
            clusters.set(cluster.name, resolveCluster(cluster));
        if (route.http) {
          order ??= `${route.object.metadata.namespace}/${route.object.metadata.name}`;
          const age = ageOf(route);
          const without = blocked;
          rules ??= without.size ? route.http.map((rule) => withoutClusters(rule, without)) : route.http;
          const own = (route.object.spec as { hostnames?: string[] } | undefined)?.hostnames;
          for (const host of hostnames) {
            const ranked = accumulator.hosts.get(host) ?? [];
            const hostRank = originalHostnameRank(own, host);
            for (const rule of rules) ranked.push({ route: rule, hostRank, age, order });
            accumulator.hosts.set(host, ranked);
          }
        } else if (route.l4 && !route.invalid) {
          // A refused L4 route serves nothing (it must not take the listener from a valid one).
          const l4 = blocked.size ? withoutClusters(route.l4, blocked) : route.l4;
          accumulator.l4.push({ route: route.kind === 'TLSRoute' ? { ...l4, hostnames } : l4, result: route });
        }
      }
    }
  }
}

/** One listener of the IR: its TLS, and its virtual hosts (routes in precedence order) or its L4 routes. */
function listenerIR(accumulator: ListenerAccumulator, overlaps: RouteOverlaps | undefined): GatewayListenerIR {
  const model = accumulator.model;
  const spec = model.spec;
  const ir: GatewayListenerIR = { name: listenerIRName(model), protocol: spec.protocol };
  if (spec.hostname) ir.hostname = spec.hostname;
  if (model.preRouting?.length) ir.preRouting = model.preRouting.map((f) => f.ir);
  if (spec.protocol === 'HTTPS' || spec.protocol === 'TLS') {
    ir.tls = {
      mode: spec.protocol === 'HTTPS' ? 'Terminate' : tlsMode(spec),
      certificates: model.certificates.map((certificate) => certificate.secret),
    };
    if (model.clientCA) ir.tls.clientCA = model.clientCA;
    if (model.clientCA && model.clientCAOptional) ir.tls.clientCAOptional = true;
  }
  if (spec.protocol === 'HTTP' || spec.protocol === 'HTTPS') {
    const hosts = [...accumulator.hosts.keys()].sort();
    const ranked = new Map<string, RankedRoute[]>();
    for (const host of hosts) {
      const own = sortInPlace(accumulator.hosts.get(host)!, compareRoutePrecedence);
      if (overlaps) recordOverlaps(own, ir.name, host, overlaps);
      ranked.set(host, own);
    }
    // The proxy serves a request from one virtual host, the most specific: it also carries the
    // routes of the wider hosts that match the same requests, after its own. Only "*" and wildcards
    // can be wider: looking among them alone keeps a listener of a thousand exact hosts linear.
    const wildcards = hosts.filter((host) => host === '*' || isWildcard(host));
    ir.virtualHosts = hosts.map((host) => {
      const routes = ranked.get(host)!.map((r) => r.route);
      if (wildcards.length)
        for (const wider of widerMatchingHosts(host, wildcards))
          for (const r of ranked.get(wider)!) routes.push(r.route);
      return { name: flat(`${ir.name}/${host}`), domains: [host], routes };
    });
  } else {
    const byAge = accumulator.l4.sort(
      (x, y) => compareAge(x.result.object, y.result.object) || compareNames(x.result.object, y.result.object),
    );
    // TLS listeners route by SNI; TCP and UDP ones carry the oldest route.
    ir.routes =
      spec.protocol === 'TLS'
        ? claimServerNames(
            byAge.map((x) => ({
              route: x.route,
              key: routeKey(x.result),
              originals: (x.result.object.spec as { hostnames?: string[] } | undefined)?.hostnames,
            })),
            ir.name,
            overlaps,
          )
        : byAge.slice(0, 1).map((x) => x.route);
  }
  return ir;
}

/**
 * A route's cluster as the Gateway serves it: what the route asked for (`http`) may become HTTP/2
 * by the Service port's appProtocol (service-facts.ts). Identity: the same object for the same
 * answer, so the xDS side builds and encodes it once.
 */
export type ClusterResolver = (cluster: ClusterIR) => ClusterIR;

/**
 * The xDS IR of one Gateway. `overlaps`, when given, receives the routes whose matches another
 * route on the same host already claims (RouteRulesOverlap). `accessLog`: what its proxies log
 * (access-log.ts), with the collector's cluster they send it to.
 */
export function assembleGateway(
  gateway: GatewayModel,
  routes: readonly RouteResult[],
  ageOf: (r: RouteResult) => number,
  resolveCluster: ClusterResolver,
  overlaps?: RouteOverlaps,
  blockedPolicies: ReadonlySet<string> = new Set(),
  accessLog: { accessLog?: AccessLogIR; cluster?: ClusterIR } = {},
): GatewayIR {
  const programmable = mergedListeners(gateway).filter(listenerProgrammable);
  const accumulators = new Map<ListenerModel, ListenerAccumulator>();
  for (const listener of programmable) accumulators.set(listener, { model: listener, hosts: new Map(), l4: [] });
  const clusters = new Map<string, ClusterIR>();
  collectRoutes(gateway, routes, ageOf, accumulators, clusters, blockedPolicies, resolveCluster);
  // The collector's cluster is one like a GRPCRoute's to the same port (same name, same config).
  if (accessLog.cluster && !clusters.has(accessLog.cluster.name))
    clusters.set(accessLog.cluster.name, accessLog.cluster);
  // The services the listeners' pre-routing filters call (GEP-5224 ExternalAuth).
  for (const listener of programmable)
    for (const f of listener.preRouting ?? [])
      if (f.cluster && !clusters.has(f.cluster.name)) clusters.set(f.cluster.name, resolveCluster(f.cluster));
  isolateHttpListeners([...accumulators.values()]);
  const ports = new Map<string, PortIR>();
  const listenPorts = gatewayListenPorts(gateway);
  for (const accumulator of accumulators.values()) {
    const { protocol, port: number } = accumulator.model.spec;
    const portTransport = transport(protocol);
    const key = `${portTransport}/${number}`;
    let port = ports.get(key);
    if (!port)
      ports.set(
        key,
        (port = {
          name: `${portTransport}-${number}`,
          port: number,
          listenPort: listenPorts.get(proxyPortKey(portTransport, number))!,
          transport: portTransport,
          listeners: [],
        }),
      );
    port.listeners.push(listenerIR(accumulator, overlaps));
  }
  const secrets = new Map<string, string>();
  for (const listener of programmable)
    for (const certificate of listener.certificates) secrets.set(certificate.secret, certificate.sha256);
  const backendCertificate = gateway.backendClientCertificate;
  if (backendCertificate) secrets.set(backendCertificate.secret, backendCertificate.sha256);
  // An XBackend's own client certificate (TLS ClientAndServer), served over SDS like the Gateway's.
  for (const c of clusters.values())
    if (c.tls?.clientCertificate) secrets.set(c.tls.clientCertificate.secret, c.tls.clientCertificate.sha256);
  const object = gateway.object;
  const out: GatewayIR = {
    name: object.metadata.name,
    namespace: object.metadata.namespace ?? '',
    ports: [...ports.values()].sort((a, b) => a.port - b.port || (a.transport < b.transport ? -1 : 1)),
    clusters: [...clusters.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    secrets: [...secrets.keys()].sort().map((name) => ({ name, sha256: secrets.get(name)! })),
  };
  for (const port of out.ports) {
    port.listeners.sort((a, b) => (a.name < b.name ? -1 : 1));
    markMisdirectedHosts(port);
  }
  if (gateway.proxyConfig?.spec?.proxylessGRPC) out.proxyless = true;
  if (accessLog.accessLog) out.accessLog = accessLog.accessLog;
  const http = gatewayHttpSettings(gateway.proxyConfig);
  if (http) out.http = http;
  // Only worth sending when some backend speaks TLS (GatewayBackendClientCertificate).
  if (backendCertificate && out.clusters.some((cluster) => cluster.tls))
    out.backendClientCertificate = backendCertificate.secret;
  return out;
}
