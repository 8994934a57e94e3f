// Stage 5: routes of every kind. A route is translated again only when it changed or something it
// read did: its parents (`@gateway:…`), its backend Services, the grants of their namespaces,
// Namespace labels a listener selects on, BackendTLSPolicies (`@btls:…`), plugins, and whether its
// clusters have a ready endpoint (`@ready:…`). Endpoints themselves are not route inputs.
import { ROUTE_KINDS, objectKey, type ClusterIR, type GRPCRoute, type HTTPRoute, type KubeObject } from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import type { Diagnostic, TranslationRun } from '../incremental/run.js';
import type { ParentIndex } from '../routes/attachment.js';
import { translateGRPCRoute } from '../routes/grpcroute.js';
import { translateHTTPRoute } from '../routes/httproute.js';
import { translateL4Route } from '../routes/l4routes.js';
import { unavailableBackends } from '../routes/backend-availability.js';
import type { RouteResult } from '../routes/route-result.js';
import { getObject } from '../snapshot.js';
import { readyDependency, type EndpointStage } from './endpoints.js';
import type { GatewayStage } from './gateway-stage.js';
import type { PolicyStage } from './policy-stage.js';
import { fitted } from '../compact-values.js';

const PIECE = 'route:';

export interface RouteEntry {
  result?: RouteResult;
  diagnostic?: Diagnostic;
  /** `namespace/name` of every Gateway among its parents. */
  gateways: string[];
  /** Names of the clusters it uses. */
  clusters: string[];
}

function translateRoute(ctx: TranslationContext, parents: ParentIndex, kind: string, route: KubeObject): RouteResult {
  switch (kind) {
    case 'HTTPRoute':
      return translateHTTPRoute(ctx, parents, route as HTTPRoute);
    case 'GRPCRoute':
      return translateGRPCRoute(ctx, parents, route as GRPCRoute);
    default:
      return translateL4Route(ctx, parents, route, kind as 'TLSRoute' | 'TCPRoute' | 'UDPRoute');
  }
}

/** The distinct keys of a list, in first-seen order; a route has a parent or two and a few clusters. */
function distinct<T>(list: readonly T[], keyOf: (item: T) => string): string[] {
  if (list.length > 16) return [...new Set(list.map(keyOf))];
  const out: string[] = [];
  for (const item of list) {
    const key = keyOf(item);
    if (!out.includes(key)) out.push(key);
  }
  return fitted(out);
}

export class RouteStage {
  /** Route key (`Kind/namespace/name`) → what translating it gave. */
  readonly entries = new Map<string, RouteEntry>();
  /** Gateway `namespace/name` → keys of the routes that name it as a parent. */
  readonly routesOfGateway = new Map<string, Set<string>>();
  /** Routes that use a BackendTLSPolicy, or a Service one fails to attach to (they feed its ancestors). */
  readonly routesWithPolicies = new Set<string>();
  private readonly clusterUsers = new Map<string, number>();

  /** Gateways whose routes changed, and whether a route using a BackendTLSPolicy changed, in the last run. */
  touchedGateways = new Set<string>();
  /** Routes translated again or deleted in the last run: their status is written by the route-status stage. */
  statusDirty = new Set<string>();
  policiesTouched = false;
  diagnosticsChanged = false;

  update(run: TranslationRun, gateways: GatewayStage, policies: PolicyStage, endpoints: EndpointStage): void {
    const dirty = run.dirtyPieces(PIECE);
    for (const kind of ROUTE_KINDS)
      for (const changed of run.changedObjects(kind)) dirty.add(objectKey(kind, changed.namespace, changed.name));
    this.touchedGateways = new Set();
    this.statusDirty = new Set();
    this.policiesTouched = false;
    this.diagnosticsChanged = false;
    const ctx: TranslationContext = {
      inputs: run.inputs,
      backendTLS: (namespace, service, port) => policies.forBackend(run, namespace, service, port),
      detachedTLS: (namespace, service) => policies.detachedFrom(run, namespace, service),
      clusterReady: (cluster: ClusterIR) => {
        run.inputs.depend(readyDependency(cluster.name));
        return endpoints.endpoints(run.inputs, cluster).ready;
      },
    };
    const parents = gateways.parents(run);
    for (const key of [...dirty].sort()) {
      const [kind, namespace, name] = key.split('/') as [string, string, string];
      const before = this.entries.get(key);
      const route = getObject<KubeObject>(run.inputs.snapshot, kind, namespace, name);
      if (!route) {
        if (before) this.unlink(key, before, endpoints);
        run.forget(PIECE, key);
        this.entries.delete(key);
        this.statusDirty.add(key);
        if (before?.diagnostic) this.diagnosticsChanged = true;
        continue;
      }
      const entry = run.compute(PIECE, key, () => this.translate(ctx, parents, kind, route, key));
      this.entries.set(key, entry);
      // Link before unlinking, so a cluster the route keeps using is not forgotten in between.
      this.link(key, entry);
      if (before) this.unlink(key, before, endpoints, entry);
      this.statusDirty.add(key);
      if (!!before?.diagnostic !== !!entry.diagnostic || before?.diagnostic?.message !== entry.diagnostic?.message)
        this.diagnosticsChanged = true;
    }
  }

  private translate(
    ctx: TranslationContext,
    parents: ParentIndex,
    kind: string,
    route: KubeObject,
    key: string,
  ): RouteEntry {
    try {
      const result = translateRoute(ctx, parents, kind, route);
      const unavailable = unavailableBackends(ctx, result);
      if (unavailable) result.unavailable = unavailable;
      const gateways = distinct(
        result.parents,
        (p) => `${p.gateway.object.metadata.namespace}/${p.gateway.object.metadata.name}`,
      );
      if (gateways.length > 1) gateways.sort();
      return { result, gateways, clusters: distinct(result.clusters, (cluster) => cluster.name) };
    } catch (error) {
      // A malformed object must never stall the others: report it and move on.
      return {
        diagnostic: { level: 'error', object: key, message: `translation failed: ${(error as Error).message}` },
        gateways: [],
        clusters: [],
      };
    }
  }

  private link(key: string, entry: RouteEntry): void {
    for (const gateway of entry.gateways) {
      let routes = this.routesOfGateway.get(gateway);
      if (!routes) this.routesOfGateway.set(gateway, (routes = new Set()));
      routes.add(key);
      this.touchedGateways.add(gateway);
    }
    for (const cluster of entry.clusters) this.clusterUsers.set(cluster, (this.clusterUsers.get(cluster) ?? 0) + 1);
    if (usesPolicies(entry.result)) {
      this.routesWithPolicies.add(key);
      this.policiesTouched = true;
    }
  }

  private unlink(key: string, entry: RouteEntry, endpoints: EndpointStage, keep?: RouteEntry): void {
    for (const gateway of entry.gateways) {
      this.touchedGateways.add(gateway);
      if (keep?.gateways.includes(gateway)) continue;
      const routes = this.routesOfGateway.get(gateway);
      routes?.delete(key);
      if (routes?.size === 0) this.routesOfGateway.delete(gateway);
    }
    for (const cluster of entry.clusters) {
      const users = (this.clusterUsers.get(cluster) ?? 0) - 1;
      if (users > 0) this.clusterUsers.set(cluster, users);
      else {
        this.clusterUsers.delete(cluster);
        endpoints.forget(cluster);
      }
    }
    if (usesPolicies(entry.result)) this.policiesTouched = true;
    if (!usesPolicies(keep?.result)) this.routesWithPolicies.delete(key);
  }

  diagnostics(): Diagnostic[] {
    const out: Diagnostic[] = [];
    for (const entry of this.entries.values()) if (entry.diagnostic) out.push(entry.diagnostic);
    return out.sort((a, b) => (a.object < b.object ? -1 : a.object > b.object ? 1 : 0));
  }
}

const usesPolicies = (r: RouteResult | undefined): boolean =>
  !!(r?.backendTLSPolicies?.length || r?.detachedTLSPolicies?.length);
