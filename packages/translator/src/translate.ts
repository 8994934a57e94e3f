// translate(snapshot) → statuses, xDS IR, infra IR, diagnostics. Pure and deterministic: no I/O,
// no clock, no randomness, and the output does not depend on the order objects arrived in.
// Per-route work is memoised by object identity: while nothing but routes changes, an unchanged
// route (same object, thanks to immer) is not translated again.
import {
  CONTROLLER_NAME, ROUTE_KINDS, objectKey,
  type BackendTLSPolicy, type Condition, type PluginInstallation, type ProxyConfig, type GRPCRoute, type HTTPRoute, type KubeObject, type PolicyAncestorStatus,
} from '@turnpike/api';
import { condition, sortConditions } from './conditions.js';
import { buildContext, type TranslationContext } from './context.js';
import { processClasses } from './gateway-classes.js';
import { buildGateways } from './gateways.js';
import { buildGatewayInfra, type GatewayInfraIR, type InfraIR } from './infra-ir.js';
import type { GatewayModel, ListenerModel } from './model.js';
import type { ParentIndex } from './routes/attachment.js';
import { translateGRPCRoute } from './routes/grpcroute.js';
import { translateHTTPRoute } from './routes/httproute.js';
import { translateL4Route } from './routes/l4routes.js';
import type { RouteResult } from './routes/route-result.js';
import { kindStore, listObjects, type Snapshot } from './snapshot.js';
import { gatewayClassStatus, gatewayStatus, listenerSetStatus } from './status-gateways.js';
import { parentCarriesTraffic, routeStatus } from './status-routes.js';
import { assembleGateway } from './xds-assembly.js';
import { pluginInstallationStatus, proxyConfigPlugins } from './plugins.js';
import type { GatewayIR, XdsIR } from '@turnpike/api';

const MAX_ANCESTORS = 16;

export interface Diagnostic { level: 'warning' | 'error'; object: string; message: string }

export interface TranslateResult {
  /** Status for every object we own, keyed `kind/namespace/name`, in sorted key order. */
  statuses: Record<string, Record<string, unknown>>;
  xdsIR: XdsIR;
  infraIR: InfraIR;
  diagnostics: Diagnostic[];
}

export interface TranslateOptions { controllerName?: string }

/** Kinds whose change invalidates every memoised route result. */
const CONTEXT_KINDS = ['GatewayClass', 'Gateway', 'ListenerSet', 'ReferenceGrant', 'Service', 'EndpointSlice', 'Secret',
  'Namespace', 'ConfigMap', 'BackendTLSPolicy', 'ProxyConfig', 'PluginInstallation', 'PluginFetch', 'ProxyStatus'];

interface Memo {
  stores: unknown[];
  routes: WeakMap<KubeObject, RouteResult>;
  routeStatuses: WeakMap<RouteResult, Record<string, unknown>>;
  links: WeakMap<RouteResult, RouteLinks>;
  gatewayStatuses: Map<GatewayModel, { counts: string; status: Record<string, unknown> }>;
  /** Per ProxyConfig, the plugins it installs and its status. */
  proxyConfigs: Map<ProxyConfig, ReturnType<typeof proxyConfigPlugins>>;
  infra: Map<GatewayModel, GatewayInfraIR>;
  /** Per Gateway, the route results it was assembled from and the IR it gave. */
  assembled: Map<GatewayModel, { routes: RouteResult[]; ir: GatewayIR }>;
  ctx: TranslationContext;
  gateways: ReturnType<typeof buildGateways>;
  classes: ReturnType<typeof processClasses>;
}

/**
 * A translator keeps the memo of its last run. `translate` below is a convenience for one-off
 * use; long-running engines hold one Translator so unchanged routes are reused.
 */
export class Translator {
  private memo?: Memo;
  constructor(private readonly options: TranslateOptions = {}) {}

  translate(snapshot: Snapshot): TranslateResult {
    const controllerName = this.options.controllerName ?? CONTROLLER_NAME;
    const stores = CONTEXT_KINDS.map((k) => kindStore(snapshot, k));
    let memo = this.memo;
    if (!memo || memo.stores.some((s, i) => s !== stores[i])) {
      const ctx = buildContext(snapshot);
      const classes = processClasses(snapshot, controllerName);
      memo = { stores, routes: new WeakMap(), routeStatuses: new WeakMap(), links: new WeakMap(), gatewayStatuses: new Map(), proxyConfigs: new Map(), infra: new Map(), assembled: new Map(), ctx, classes, gateways: buildGateways(snapshot, classes, ctx.grants) };
      this.memo = memo;
    } else {
      memo.ctx.snapshot = snapshot;
    }
    return assemble(snapshot, memo, controllerName);
  }

  /** The route result of the last translation for this route object, if it was translated. */
  routeResult(route: KubeObject): RouteResult | undefined {
    return this.memo?.routes.get(route);
  }
}

export function translate(snapshot: Snapshot, options: TranslateOptions = {}): TranslateResult {
  return new Translator(options).translate(snapshot);
}

interface RouteLinks { key: string; listeners: ListenerModel[]; gateways: GatewayModel[] }

/** What a route result attaches to, computed once per result. */
function routeLinks(memo: Memo, r: RouteResult): RouteLinks {
  let l = memo.links.get(r);
  if (!l) {
    const listeners = new Set<ListenerModel>();
    const gateways = new Set<GatewayModel>();
    for (const p of r.parents) {
      if (p.problem) continue;
      gateways.add(p.gateway);
      for (const a of p.attached) listeners.add(a.listener);
    }
    l = { key: objectKey(r.kind, r.object.metadata.namespace, r.object.metadata.name), listeners: [...listeners], gateways: [...gateways] };
    memo.links.set(r, l);
  }
  return l;
}

function sameElements<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function translateRoute(ctx: TranslationContext, parents: ParentIndex, kind: string, route: KubeObject): RouteResult {
  switch (kind) {
    case 'HTTPRoute': return translateHTTPRoute(ctx, parents, route as HTTPRoute);
    case 'GRPCRoute': return translateGRPCRoute(ctx, parents, route as GRPCRoute);
    default: return translateL4Route(ctx, parents, route, kind as 'TLSRoute' | 'TCPRoute' | 'UDPRoute');
  }
}

function assemble(snapshot: Snapshot, memo: Memo, controllerName: string): TranslateResult {
  const { ctx, classes } = memo;
  const { gateways, listenerSets } = memo.gateways;
  const diagnostics: Diagnostic[] = [];
  const parents: ParentIndex = {
    gateways: new Map(gateways.map((g) => [`${g.object.metadata.namespace}/${g.object.metadata.name}`, g])),
    listenerSets: new Map(listenerSets.map((s) => [`${s.object.metadata.namespace}/${s.object.metadata.name}`, s])),
  };

  const routes: RouteResult[] = [];
  for (const kind of ROUTE_KINDS) {
    for (const route of listObjects(snapshot, kind)) {
      let r = memo.routes.get(route);
      if (!r) {
        try {
          r = translateRoute(ctx, parents, kind, route);
        } catch (e) {
          // A malformed object must never stall the others: report it and move on.
          diagnostics.push({ level: 'error', object: objectKey(kind, route.metadata?.namespace, route.metadata?.name), message: `translation failed: ${(e as Error).message}` });
          continue;
        }
        memo.routes.set(route, r);
      }
      if (r.parents.length) routes.push(r);
    }
  }

  // attachedRoutes: routes accepted by each listener (a route counts once per listener).
  const attached = new Map<ListenerModel, number>();
  const routesByGateway = new Map<GatewayModel, RouteResult[]>();
  for (const r of routes) {
    const links = routeLinks(memo, r);
    for (const l of links.listeners) attached.set(l, (attached.get(l) ?? 0) + 1);
    for (const g of links.gateways) {
      const list = routesByGateway.get(g);
      if (list) list.push(r);
      else routesByGateway.set(g, [r]);
    }
  }

  // Statuses are written in a fixed order (kind, then namespace/name), so the output does not
  // depend on the order objects arrived in.
  const statuses: Record<string, Record<string, unknown>> = {};
  for (const c of classes.values()) statuses[objectKey('GatewayClass', undefined, c.model.object.metadata.name)] = gatewayClassStatus(c);
  const xdsIR: XdsIR = { gateways: {} };
  const infraIR: InfraIR = { gateways: {} };
  const installs = (pc: ProxyConfig) => {
    let r = memo.proxyConfigs.get(pc);
    if (!r) memo.proxyConfigs.set(pc, (r = proxyConfigPlugins(snapshot, ctx.grants, pc)));
    return r;
  };
  const ageOf = (r: RouteResult) => { const t = Date.parse(r.object.metadata.creationTimestamp ?? ''); return Number.isNaN(t) ? Number.MAX_SAFE_INTEGER : t; };
  for (const g of gateways) {
    const gw = g.object;
    const key = `${gw.metadata.namespace}/${gw.metadata.name}`;
    // Reuse the previous status object while the listeners' attachedRoutes are the same.
    const counts = g.listeners.map((l) => attached.get(l) ?? 0).join(',');
    let gs = memo.gatewayStatuses.get(g);
    if (!gs || gs.counts !== counts) memo.gatewayStatuses.set(g, (gs = { counts, status: gatewayStatus(g, attached, ctx.services) as Record<string, unknown> }));
    statuses[objectKey('Gateway', gw.metadata.namespace, gw.metadata.name)] = gs.status;
    if (g.parametersProblem || g.addressProblem) continue;
    const gwRoutes = routesByGateway.get(g) ?? [];
    const prev = memo.assembled.get(g);
    if (prev && sameElements(prev.routes, gwRoutes)) {
      xdsIR.gateways[key] = prev.ir;
    } else {
      const ir = assembleGateway(g, gwRoutes, ageOf);
      const mounted = g.proxyConfig ? installs(g.proxyConfig).installed.filter((p) => p.mountPath) : [];
      if (mounted.length) ir.installedPlugins = mounted.map((p) => ({ name: `${p.namespace}/${p.name}`, sha256: p.sha256, mountPath: p.mountPath! }));
      memo.assembled.set(g, { routes: gwRoutes, ir });
      xdsIR.gateways[key] = ir;
    }
    let infra = memo.infra.get(g);
    if (!infra) memo.infra.set(g, (infra = buildGatewayInfra(g, g.proxyConfig ? installs(g.proxyConfig).installed : [])));
    infraIR.gateways[key] = infra;
  }
  for (const s of listenerSets) statuses[objectKey('ListenerSet', s.object.metadata.namespace, s.object.metadata.name)] = listenerSetStatus(s, attached);
  for (const r of routes) {
    let s = memo.routeStatuses.get(r);
    if (!s) memo.routeStatuses.set(r, (s = routeStatus(r, controllerName)));
    statuses[routeLinks(memo, r).key] = s;
  }
  backendTLSStatuses(ctx, routes, controllerName, statuses);
  for (const pc of listObjects<ProxyConfig>(snapshot, 'ProxyConfig')) statuses[objectKey('ProxyConfig', pc.metadata.namespace, pc.metadata.name)] = installs(pc).status;
  for (const pi of listObjects<PluginInstallation>(snapshot, 'PluginInstallation')) {
    statuses[objectKey('PluginInstallation', pi.metadata.namespace, pi.metadata.name)] = pluginInstallationStatus(snapshot, ctx.grants, pi);
  }

  return { statuses, xdsIR, infraIR, diagnostics: diagnostics.sort((a, b) => (a.object < b.object ? -1 : a.object > b.object ? 1 : 0)) };
}

/** BackendTLSPolicy ancestors are the route parents (Gateways) whose routes use the target. */
function backendTLSStatuses(ctx: TranslationContext, routes: RouteResult[], controllerName: string, out: Record<string, Record<string, unknown>>): void {
  const ancestors = new Map<string, Map<string, PolicyAncestorStatus['ancestorRef']>>();
  for (const r of routes) {
    for (const policy of r.backendTLSPolicies ?? []) {
      for (const p of r.parents) {
        if (!parentCarriesTraffic(r, p)) continue;
        const ref = { group: p.ref.group ?? 'gateway.networking.k8s.io', kind: p.ref.kind ?? 'Gateway', namespace: p.ref.namespace ?? r.object.metadata.namespace ?? '', name: p.ref.name,
          ...(p.ref.sectionName !== undefined ? { sectionName: p.ref.sectionName } : {}), ...(p.ref.port !== undefined ? { port: p.ref.port } : {}) };
        const m = ancestors.get(policy) ?? new Map();
        m.set(JSON.stringify(ref), ref);
        ancestors.set(policy, m);
      }
    }
  }
  for (const model of ctx.backendTLS.models) {
    const p: BackendTLSPolicy = model.policy;
    const key = `${p.metadata.namespace}/${p.metadata.name}`;
    // A policy that lost a conflict reports on the ancestors of the winner it lost to.
    const winner = model.lostTo?.policy;
    const refs = ancestors.get(key) ?? (winner ? ancestors.get(`${winner.metadata.namespace}/${winner.metadata.name}`) : undefined);
    if (!refs) continue;
    const gen = p.metadata.generation;
    const conds: Condition[] = [
      model.notAccepted ? condition('Accepted', false, model.notAccepted.reason, model.notAccepted.message, gen) : condition('Accepted', true, 'Accepted', 'Policy is accepted', gen),
      model.refsProblem ? condition('ResolvedRefs', false, model.refsProblem.reason, model.refsProblem.message, gen) : condition('ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved', gen),
    ];
    // status.ancestors holds at most 16 entries (CRD maxItems): keep the first 16 in a stable order.
    const list = [...refs.keys()].sort().slice(0, MAX_ANCESTORS).map((k) => ({ ancestorRef: refs.get(k)!, controllerName, conditions: sortConditions(conds.map((c) => ({ ...c }))) }));
    out[`BackendTLSPolicy/${p.metadata.namespace}/${p.metadata.name}`] = { ancestors: list };
  }
}

