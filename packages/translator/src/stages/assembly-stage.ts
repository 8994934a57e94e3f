// Stage 6: per Gateway, what its listeners and routes add up to: the Gateway's and its
// ListenerSets' status (attachedRoutes), its xDS IR, its infra IR, and the endpoints of the
// clusters it serves. A Gateway is assembled again only when its group was rebuilt, one of its
// routes changed, or what else it read changed (its generated Service's address, its plugins).
import { ROUTE_KINDS, objectKey, type ClusterIR, type GatewayIR, type Service } from '@turnpike/api';
import type { TranslationRun } from '../incremental/run.js';
import { buildGatewayInfra } from '../infra-ir.js';
import type { GatewayModel, ListenerModel } from '../model.js';
import type { RouteOverlaps } from '../route-overlaps.js';
import type { RouteResult } from '../routes/route-result.js';
import { gatewayStatus, listenerSetStatus } from '../status-gateways.js';
import { assembleGateway } from '../xds-assembly.js';
import type { EndpointStage } from './endpoints.js';
import type { GatewayStage } from './gateway-stage.js';
import type { PluginStage } from './plugin-stage.js';
import type { PolicyAncestorsStage } from './policy-ancestors-stage.js';
import type { RouteStage } from './route-stage.js';

const PIECE = 'assembly:';
const KIND_ORDER = new Map<string, number>(ROUTE_KINDS.map((k, i) => [k, i]));

function ageOf(r: RouteResult): number {
  const t = Date.parse(r.object.metadata.creationTimestamp ?? '');
  return Number.isNaN(t) ? Number.MAX_SAFE_INTEGER : t;
}

/** Routes in one canonical order (kind, namespace, name), whatever order they were translated in. */
function canonicalOrder(keys: Iterable<string>): string[] {
  return [...keys].sort((a, b) => {
    const ka = KIND_ORDER.get(a.slice(0, a.indexOf('/'))) ?? 99;
    const kb = KIND_ORDER.get(b.slice(0, b.indexOf('/'))) ?? 99;
    return ka - kb || (a < b ? -1 : a > b ? 1 : 0);
  });
}

export class AssemblyStage {
  /** ListenerSet status key → the Gateway whose assembly wrote it. */
  private readonly listenerSetOwner = new Map<string, string>();
  private readonly listenerSetsOf = new Map<string, string[]>();
  /** Per Gateway the clusters its IR serves; per cluster how many Gateways serve it. */
  private readonly clustersOf = new Map<string, Map<string, ClusterIR>>();
  private readonly servedBy = new Map<string, { gateways: number; cluster: ClusterIR }>();
  /** Per Gateway the routes with a match another route on the same host claims first or too. */
  private readonly overlapsOf = new Map<string, RouteOverlaps>();
  /** Routes whose overlaps changed in the last run. */
  overlapTouched = new Set<string>();

  update(
    run: TranslationRun,
    gateways: GatewayStage,
    routes: RouteStage,
    plugins: PluginStage,
    endpoints: EndpointStage,
    endpointsChanged: Set<string>,
    ancestors: PolicyAncestorsStage,
  ): void {
    const dirty = run.dirtyPieces(PIECE);
    this.overlapTouched = new Set();
    for (const k of gateways.changed) dirty.add(k);
    for (const k of ancestors.changedGateways) dirty.add(k);
    for (const k of routes.touchedGateways) dirty.add(k);
    const orphans = new Set<string>();
    for (const key of [...dirty].sort())
      this.assemble(run, key, gateways, routes, plugins, endpoints, orphans, ancestors);
    for (const k of orphans) if (!this.listenerSetOwner.has(k)) run.out.statuses.delete(k);
    for (const name of endpointsChanged) {
      const cluster = this.servedBy.get(name)?.cluster;
      if (cluster) run.out.endpoints.set(name, endpoints.endpoints(run.inputs, cluster).endpoints);
    }
  }

  private assemble(
    run: TranslationRun,
    key: string,
    gateways: GatewayStage,
    routes: RouteStage,
    plugins: PluginStage,
    endpoints: EndpointStage,
    orphans: Set<string>,
    ancestors: PolicyAncestorsStage,
  ): void {
    const [ns, name] = key.split('/') as [string, string];
    const gatewayKey = objectKey('Gateway', ns, name);
    const group = gateways.groups.get(key);
    const previousSets = this.listenerSetsOf.get(key) ?? [];
    const setKeys = (group?.listenerSets ?? []).map((s) =>
      objectKey('ListenerSet', s.object.metadata.namespace, s.object.metadata.name),
    );
    for (const k of previousSets) {
      if (setKeys.includes(k) || this.listenerSetOwner.get(k) !== key) continue;
      this.listenerSetOwner.delete(k);
      orphans.add(k);
    }
    if (!group) {
      run.forget(PIECE, key);
      this.listenerSetsOf.delete(key);
      run.out.statuses.delete(gatewayKey);
      this.serve(run, key, undefined, endpoints);
      this.setOverlaps(key, new Map());
      return;
    }
    this.listenerSetsOf.set(key, setKeys);
    const g = group.gateway;
    const results: RouteResult[] = [];
    for (const rk of canonicalOrder(routes.routesOfGateway.get(key) ?? [])) {
      const r = routes.entries.get(rk)?.result;
      if (r && r.parents.length) results.push(r);
    }
    const attached = attachedRoutes(g, results);
    run.compute(PIECE, key, () => {
      const services = (sns: string, sname: string) => run.inputs.get<Service>('Service', sns, sname);
      run.out.statuses.set(gatewayKey, gatewayStatus(g, attached, services) as Record<string, unknown>);
      group.listenerSets.forEach((s, i) => {
        this.listenerSetOwner.set(setKeys[i]!, key);
        run.out.statuses.set(setKeys[i]!, listenerSetStatus(s, attached, !g.parametersProblem && !g.addressProblem));
      });
      const installed = g.proxyConfig ? plugins.installed(run, g.proxyConfig) : [];
      if (g.parametersProblem || g.addressProblem) {
        this.serve(run, key, undefined, endpoints);
        this.setOverlaps(key, new Map());
        return;
      }
      const overlaps: RouteOverlaps = new Map();
      const ir = assembleGateway(g, results, ageOf, overlaps, ancestors.blockedOn(key));
      this.setOverlaps(key, overlaps);
      const mounted = installed.filter((p) => p.mountPath);
      if (mounted.length)
        ir.installedPlugins = mounted.map((p) => ({
          name: `${p.namespace}/${p.name}`,
          sha256: p.sha256,
          mountPath: p.mountPath!,
        }));
      this.serve(run, key, ir, endpoints);
      run.out.infra.set(key, buildGatewayInfra(g, installed));
    });
  }

  /** The overlaps of one route, per Gateway it attaches to (`namespace/name`). */
  overlapsOfRoute(routeKey: string, gatewayKeys: readonly string[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const g of gatewayKeys) {
      const lines = this.overlapsOf.get(g)?.get(routeKey);
      if (lines) out.set(g, lines);
    }
    return out;
  }

  private setOverlaps(key: string, next: RouteOverlaps): void {
    const before = this.overlapsOf.get(key);
    for (const [route, lines] of next) if (!sameLines(before?.get(route), lines)) this.overlapTouched.add(route);
    for (const route of before?.keys() ?? []) if (!next.has(route)) this.overlapTouched.add(route);
    if (next.size) this.overlapsOf.set(key, next);
    else this.overlapsOf.delete(key);
  }

  /** Sets (or removes) a Gateway's IR and keeps the served endpoints in step with its clusters. */
  private serve(run: TranslationRun, key: string, ir: GatewayIR | undefined, endpoints: EndpointStage): void {
    const before = this.clustersOf.get(key) ?? new Map<string, ClusterIR>();
    const after = new Map((ir?.clusters ?? []).map((c) => [c.name, c] as const));
    if (ir) {
      run.out.gateways.set(key, ir);
      this.clustersOf.set(key, after);
    } else {
      run.out.gateways.delete(key);
      run.out.infra.delete(key);
      this.clustersOf.delete(key);
    }
    for (const [name, c] of after) {
      if (before.has(name)) continue;
      const served = this.servedBy.get(name);
      if (served) served.gateways++;
      else {
        this.servedBy.set(name, { gateways: 1, cluster: c });
        run.out.endpoints.set(name, endpoints.endpoints(run.inputs, c).endpoints);
      }
    }
    for (const name of before.keys()) {
      if (after.has(name)) continue;
      const served = this.servedBy.get(name)!;
      if (--served.gateways > 0) continue;
      else {
        this.servedBy.delete(name);
        run.out.endpoints.delete(name);
      }
    }
  }
}

function sameLines(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return !!a && a.length === b.length && a.every((x, i) => x === b[i]);
}

/** attachedRoutes: routes accepted by each listener of this Gateway (a route counts once per listener). */
function attachedRoutes(g: GatewayModel, routes: readonly RouteResult[]): Map<ListenerModel, number> {
  const out = new Map<ListenerModel, number>();
  for (const r of routes) {
    const seen = new Set<ListenerModel>();
    for (const p of r.parents) {
      if (p.problem || p.gateway !== g) continue;
      for (const a of p.attached) seen.add(a.listener);
    }
    for (const l of seen) out.set(l, (out.get(l) ?? 0) + 1);
  }
  return out;
}
