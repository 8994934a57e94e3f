// Stage 6: per Gateway, what its listeners and routes add up to: the Gateway's and its
// ListenerSets' status (attachedRoutes), its xDS IR, its infra IR, and the endpoints of the
// clusters it serves. A Gateway is assembled again only when its group was rebuilt, one of its
// routes changed, or what else it read changed (its generated Service's address, its plugins).
import { ROUTE_KINDS, objectKey, referencedPlugins, type ClusterIR, type GatewayIR, type Service } from '@turnpike/api';
import { sortConditions } from '../status/conditions.js';
import type { TranslationRun } from '../incremental/run.js';
import { buildGatewayInfra, templateWants } from '../ir/infra-ir.js';
import { deepEqual } from '../incremental/deep-equal.js';
import {
  mountedForRoutes,
  notServedStates,
  pluginInstallStates,
  pluginsInstalledCondition,
  rolloutHeldCondition,
  type GatewayInstallReport,
} from '../plugins/plugin-installation.js';
import { gatewayProxies } from '../proxies/gateway-proxies.js';
import { pendingTemplateChanges, proxyRollout, rolloutHeldBy } from '../plugins/proxy-rollout.js';
import type { Condition, GatewayModel, ListenerModel } from '../model.js';
import type { RouteOverlaps } from '../routes/route-overlaps.js';
import type { RouteResult } from '../routes/route-result.js';
import { gatewayStatus, listenerSetStatus } from '../status/status-gateways.js';
import { serviceSpeaksH2 } from '../ir/service-facts.js';
import { assembleGateway, type ClusterResolver } from '../ir/xds-assembly.js';
import { listenerFilterPlugins } from '../gateways/gateways.js';
import { gatewayAccessLog } from '../ir/access-log.js';
import type { AccessLogStage } from './access-log-stage.js';
import type { TelemetryStage } from './telemetry-stage.js';
import type { EndpointStage } from './endpoints.js';
import type { GatewayStage } from './gateway-stage.js';
import type { PluginStage } from './plugin-stage.js';
import type { PolicyAncestorsStage } from './policy-ancestors-stage.js';
import type { RouteStage } from './route-stage.js';

const PIECE = 'assembly:';
const REPORT_PIECE = 'report:';

/** What a Gateway's assembly made and found, as its report needs it. */
interface Assembled {
  model: GatewayModel;
  attached: Map<ListenerModel, number>;
  gatewayServes: boolean;
  installed: ReturnType<PluginStage['installed']>;
  proxyConfig?: string;
  rollout: ReturnType<typeof proxyRollout>;
  holdAsked: ReturnType<typeof rolloutHeldBy>;
  heldBy: ReturnType<typeof rolloutHeldBy> | undefined;
  ir?: GatewayIR;
  held?: string[];
  pending?: ReturnType<typeof pendingTemplateChanges>;
}

/** What a Gateway's proxies run of its ProxyConfig's plugins, and which PluginInstallations it consumes. */
export interface GatewayInstalls {
  /** `namespace/name` of its ProxyConfig. */
  proxyConfig?: string;
  report: GatewayInstallReport;
  /** Installed, or run by its routes. */
  consumes: string[];
}
const KIND_ORDER = new Map<string, number>(ROUTE_KINDS.map((k, i) => [k, i]));

function ageOf(route: RouteResult): number {
  const created = Date.parse(route.object.metadata.creationTimestamp ?? '');
  return Number.isNaN(created) ? Number.MAX_SAFE_INTEGER : created;
}

/** Routes in one canonical order (kind, namespace, name), whatever order they were translated in. */
function canonicalOrder(keys: Iterable<string>): string[] {
  const kindRank = (key: string) => KIND_ORDER.get(key.slice(0, key.indexOf('/'))) ?? 99;
  return [...keys].sort((a, b) => kindRank(a) - kindRank(b) || (a < b ? -1 : a > b ? 1 : 0));
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
  /** Per Gateway the routes its serving path withheld (from the replicas' ProxyReports). */
  private readonly withheldOf = new Map<string, Map<string, string[]>>();
  /** Routes whose overlaps or withheld lines changed in the last run. */
  overlapTouched = new Set<string>();
  /**
   * Per Gateway what its proxies run of its ProxyConfig's plugins, which ProxyConfig that is, and
   * which PluginInstallations it consumes (installed or run by its routes).
   */
  readonly installs = new Map<string, GatewayInstalls>();
  /** Gateways whose entry in `installs` was set or removed in the last run, with the entry before. */
  installsChanged = new Map<string, GatewayInstalls | undefined>();
  /** Each Gateway's tracing (XTelemetryPolicy), set by the translator before the first update. */
  telemetry?: TelemetryStage;

  update(
    run: TranslationRun,
    gateways: GatewayStage,
    routes: RouteStage,
    plugins: PluginStage,
    endpoints: EndpointStage,
    endpointsChanged: Set<string>,
    ancestors: PolicyAncestorsStage,
    accessLogs: AccessLogStage,
  ): void {
    const dirty = run.dirtyPieces(PIECE);
    this.overlapTouched = new Set();
    this.installsChanged = new Map();
    for (const gatewayKey of gateways.changed) dirty.add(gatewayKey);
    for (const gatewayKey of ancestors.changedGateways) dirty.add(gatewayKey);
    for (const gatewayKey of routes.touchedGateways) dirty.add(gatewayKey);
    const orphans = new Set<string>();
    for (const key of [...dirty].sort())
      this.assemble(run, key, gateways, routes, plugins, endpoints, orphans, ancestors, accessLogs);
    // Gateways whose proxies said something new (or whose generated Service changed), and nothing else.
    for (const key of [...run.dirtyPieces(REPORT_PIECE)].sort()) {
      const assembled = this.assembled.get(key);
      if (!dirty.has(key) && assembled) this.report(run, key, assembled);
    }
    for (const setKey of orphans) if (!this.listenerSetOwner.has(setKey)) run.out.statuses.delete(setKey);
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
    accessLogs: AccessLogStage,
  ): void {
    const [namespace, name] = key.split('/') as [string, string];
    const gatewayKey = objectKey('Gateway', namespace, name);
    const group = gateways.groups.get(key);
    const previousSets = this.listenerSetsOf.get(key) ?? [];
    const setKeys = (group?.listenerSets ?? []).map((set) =>
      objectKey('ListenerSet', set.object.metadata.namespace, set.object.metadata.name),
    );
    for (const setKey of previousSets) {
      if (setKeys.includes(setKey) || this.listenerSetOwner.get(setKey) !== key) continue;
      this.listenerSetOwner.delete(setKey);
      orphans.add(setKey);
    }
    if (!group) {
      run.forget(PIECE, key);
      run.forget(REPORT_PIECE, key);
      this.assembled.delete(key);
      this.setWithheld(key, new Map());
      this.listenerSetsOf.delete(key);
      run.out.statuses.delete(gatewayKey);
      this.serve(run, key, undefined, endpoints);
      this.setOverlaps(key, new Map());
      this.setInstalls(key, undefined);
      return;
    }
    this.listenerSetsOf.set(key, setKeys);
    const model = group.gateway;
    const results: RouteResult[] = [];
    for (const routeKey of canonicalOrder(routes.routesOfGateway.get(key) ?? [])) {
      const result = routes.entries.get(routeKey)?.result;
      if (result && result.parents.length) results.push(result);
    }
    const attached = attachedRoutes(model, results);
    const assembled = run.compute(PIECE, key, (): Assembled => {
      const gw = model.object;
      const gatewayServes = !model.parametersProblem && !model.addressProblem;
      group.listenerSets.forEach((set, index) => {
        this.listenerSetOwner.set(setKeys[index]!, key);
        run.out.statuses.set(setKeys[index]!, listenerSetStatus(set, attached, gatewayServes));
      });
      const installed = model.proxyConfig ? plugins.installed(run, model.proxyConfig) : [];
      const proxyConfig = model.proxyConfig
        ? `${model.proxyConfig.metadata.namespace}/${model.proxyConfig.metadata.name}`
        : undefined;
      const rollout = proxyRollout(run.inputs, gw, run.proxyNamespace);
      const holdAsked = rolloutHeldBy(gw, model.proxyConfig);
      // Nothing to hold until the Deployment exists: it is created as specified.
      const heldBy = rollout ? holdAsked : undefined;
      let ir: GatewayIR | undefined;
      let held: string[] | undefined;
      let pending: ReturnType<typeof pendingTemplateChanges> | undefined;
      if (!gatewayServes) {
        this.serve(run, key, undefined, endpoints);
        this.setOverlaps(key, new Map());
      } else {
        const overlaps: RouteOverlaps = new Map();
        const accessLog = gatewayAccessLog(accessLogs.forGateway(run, model.proxyConfig), { namespace, name });
        const resolver = this.clusterResolver(run);
        ir = assembleGateway(model, results, ageOf, resolver, overlaps, ancestors.blockedOn(key), accessLog);
        const traced = this.telemetry?.forGateway(run, namespace, name);
        if (traced) {
          ir.tracing = traced.tracing;
          // The collector's cluster is one like a GRPCRoute's to the same port (same name, same config).
          if (!ir.clusters.some((c) => c.name === traced.cluster.name))
            ir.clusters = [...ir.clusters, traced.cluster].sort((a, b) =>
              a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
            );
        }
        this.setOverlaps(key, overlaps);
        const mounted = mountedForRoutes(installed, rollout, heldBy);
        if (mounted.length) ir.installedPlugins = mounted;
        this.serve(run, key, ir, endpoints);
        const infra = buildGatewayInfra(model, installed, run.proxyNamespace);
        if (heldBy && rollout) {
          pending = pendingTemplateChanges(templateWants(infra), rollout);
          held = [...pending.fields, ...pending.plugins.map((p) => `plugin ${p}`)];
          infra.held = { by: heldBy, template: rollout.template, pending: held };
        }
        run.out.infra.set(key, infra);
      }
      return { model, attached, gatewayServes, installed, proxyConfig, rollout, holdAsked, heldBy, ir, held, pending };
    });
    this.assembled.set(key, assembled);
    this.report(run, key, assembled);
  }

  /** What a Gateway's assembly found, for its report (status, install states) to be made again without it. */
  private readonly assembled = new Map<string, Assembled>();

  /**
   * A Gateway's status and what its proxies run of its plugins: all that reads what its proxies said
   * (the ProxyReports), a piece of its own, so that a proxy connecting or acknowledging does not assemble
   * the Gateway's IR again (at a cold start, every Gateway's proxies connect: 100k routes took 4.5 s).
   */
  private report(run: TranslationRun, key: string, a: Assembled): void {
    const gw = a.model.object;
    const gatewayKey = objectKey('Gateway', gw.metadata.namespace, gw.metadata.name);
    run.compute(REPORT_PIECE, key, () => {
      const services = (serviceNamespace: string, serviceName: string) =>
        run.inputs.get<Service>('Service', serviceNamespace, serviceName);
      const proxies = gatewayProxies(run.inputs, gw);
      const status = gatewayStatus(a.model, a.attached, services, run.proxyNamespace, proxies) as Record<
        string,
        unknown
      >;
      this.setWithheld(key, a.gatewayServes ? (proxies.withheldByRoute ?? new Map()) : new Map());
      const referenced = a.ir ? referencedPlugins(a.ir) : [];
      const states = a.ir
        ? pluginInstallStates(key, a.installed, a.rollout, a.heldBy, new Set(referenced), proxies.sync)
        : notServedStates(key, a.installed);
      const extra = [
        pluginsInstalledCondition(states, gw.metadata.generation),
        rolloutHeldCondition(a.holdAsked, a.rollout, a.pending, gw.metadata.generation),
      ].filter((c) => c !== undefined);
      if (extra.length) status.conditions = sortConditions([...(status.conditions as Condition[]), ...extra]);
      run.out.statuses.set(gatewayKey, status);
      const consumes = new Set(a.installed.map((p) => `${p.namespace}/${p.name}`));
      for (const ref of referenced) consumes.add(ref.slice(0, ref.lastIndexOf('@')));
      // A listener filter's plugin is consumed before it is fetched: the listener waits for it (GEP-5224).
      for (const plugin of listenerFilterPlugins(a.model)) consumes.add(plugin);
      this.setInstalls(key, {
        ...(a.proxyConfig ? { proxyConfig: a.proxyConfig } : {}),
        report: { gateway: key, states, ...(a.held ? { held: a.held } : {}) },
        consumes: [...consumes].sort(),
      });
    });
  }

  /** HTTP/2 versions of routes' HTTP clusters, one per cluster object, so their identity holds across assemblies. */
  private readonly h2Clusters = new WeakMap<ClusterIR, ClusterIR>();

  private clusterResolver(run: TranslationRun): ClusterResolver {
    return (cluster) => {
      // An XBackend's cluster says its own protocol; `service` names no Service.
      if (cluster.protocol !== 'http' || cluster.external || cluster.endpointSelector) return cluster;
      const { namespace, name, port } = cluster.service;
      if (!serviceSpeaksH2(run.inputs, namespace, name, port)) return cluster;
      let h2 = this.h2Clusters.get(cluster);
      if (!h2) this.h2Clusters.set(cluster, (h2 = { ...cluster, protocol: 'h2' }));
      return h2;
    };
  }

  private setInstalls(key: string, next: GatewayInstalls | undefined): void {
    const before = this.installs.get(key);
    if (!before && !next) return;
    if (before && next && deepEqual(before, next)) return;
    if (!this.installsChanged.has(key)) this.installsChanged.set(key, before);
    if (next) this.installs.set(key, next);
    else this.installs.delete(key);
  }

  /** The overlaps of one route, per Gateway it attaches to (`namespace/name`). */
  overlapsOfRoute(routeKey: string, gatewayKeys: readonly string[]): Map<string, string[]> | undefined {
    let out: Map<string, string[]> | undefined; // none for most routes
    for (const gatewayKey of gatewayKeys) {
      const lines = this.overlapsOf.get(gatewayKey)?.get(routeKey);
      if (lines) (out ??= new Map()).set(gatewayKey, lines);
    }
    return out;
  }

  /** What the serving path withheld of one route, per Gateway it attaches to. */
  withheldOfRoute(routeKey: string, gatewayKeys: readonly string[]): Map<string, string[]> | undefined {
    let out: Map<string, string[]> | undefined; // none for most routes
    for (const gatewayKey of gatewayKeys) {
      const lines = this.withheldOf.get(gatewayKey)?.get(routeKey);
      if (lines) (out ??= new Map()).set(gatewayKey, lines);
    }
    return out;
  }

  private setWithheld(key: string, next: Map<string, string[]>): void {
    const before = this.withheldOf.get(key);
    for (const [route, lines] of next) if (!sameLines(before?.get(route), lines)) this.overlapTouched.add(route);
    for (const route of before?.keys() ?? []) if (!next.has(route)) this.overlapTouched.add(route);
    if (next.size) this.withheldOf.set(key, next);
    else this.withheldOf.delete(key);
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
    const after = new Map((ir?.clusters ?? []).map((cluster) => [cluster.name, cluster] as const));
    if (ir) {
      run.out.gateways.set(key, ir);
      this.clustersOf.set(key, after);
    } else {
      run.out.gateways.delete(key);
      run.out.infra.delete(key);
      this.clustersOf.delete(key);
    }
    for (const [name, cluster] of after) {
      if (before.has(name)) continue;
      const served = this.servedBy.get(name);
      if (served) served.gateways++;
      else {
        this.servedBy.set(name, { gateways: 1, cluster });
        run.out.endpoints.set(name, endpoints.endpoints(run.inputs, cluster).endpoints);
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

function sameLines(before: readonly string[] | undefined, after: readonly string[]): boolean {
  return !!before && before.length === after.length && before.every((line, index) => line === after[index]);
}

/**
 * attachedRoutes: routes accepted by each listener of this Gateway (a route counts once per
 * listener). "Routes with any other value for the Accepted condition MUST NOT be included": a route
 * whose rules are all invalid is still configured (its matches answer 500) but not counted.
 */
function attachedRoutes(gateway: GatewayModel, routes: readonly RouteResult[]): Map<ListenerModel, number> {
  const counts = new Map<ListenerModel, number>();
  for (const route of routes) {
    if (route.invalid) continue;
    const listeners = new Set<ListenerModel>();
    for (const parent of route.parents) {
      if (parent.problem || parent.gateway !== gateway) continue;
      for (const attachment of parent.attached) listeners.add(attachment.listener);
    }
    for (const listener of listeners) counts.set(listener, (counts.get(listener) ?? 0) + 1);
  }
  return counts;
}
