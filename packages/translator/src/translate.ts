// translate(snapshot) → statuses, xDS IR, infra IR, diagnostics. Pure and deterministic: no I/O,
// no clock, no randomness, and the output does not depend on the order objects arrived in.
// Per-route work is memoised by object identity: while nothing but routes changes, an unchanged
// route (same object, thanks to immer) is not translated again.
import {
  CONTROLLER_NAME, OWNED_STATUS_KINDS, ROUTE_KINDS, objectKey,
  type BackendTLSPolicy, type Condition, type GRPCRoute, type HTTPRoute, type KubeObject, type PolicyAncestorStatus,
} from '@turnpike/api';
import { condition, sortConditions } from './conditions.js';
import { buildContext, type TranslationContext } from './context.js';
import { processClasses } from './gateway-classes.js';
import { buildGateways } from './gateways.js';
import { buildGatewayInfra, type InfraIR } from './infra-ir.js';
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
import type { XdsIR } from './xds-ir.js';

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
  'Namespace', 'ConfigMap', 'BackendTLSPolicy', 'ProxyConfig', 'PluginInstallation'];

interface Memo { stores: unknown[]; routes: WeakMap<KubeObject, RouteResult>; ctx: TranslationContext; gateways: ReturnType<typeof buildGateways>; classes: ReturnType<typeof processClasses> }

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
      memo = { stores, routes: new WeakMap(), ctx, classes, gateways: buildGateways(snapshot, classes, ctx.grants) };
      this.memo = memo;
    } else {
      memo.ctx.snapshot = snapshot;
    }
    return assemble(snapshot, memo, controllerName);
  }
}

export function translate(snapshot: Snapshot, options: TranslateOptions = {}): TranslateResult {
  return new Translator(options).translate(snapshot);
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
    const seen = new Set<ListenerModel>();
    for (const p of r.parents) {
      if (p.problem) continue;
      for (const a of p.attached) if (!seen.has(a.listener)) { seen.add(a.listener); attached.set(a.listener, (attached.get(a.listener) ?? 0) + 1); }
      const list = routesByGateway.get(p.gateway) ?? [];
      if (list[list.length - 1] !== r) list.push(r);
      routesByGateway.set(p.gateway, list);
    }
  }

  const statuses = new Map<string, Record<string, unknown>>();
  for (const c of classes.values()) statuses.set(objectKey('GatewayClass', undefined, c.model.object.metadata.name), gatewayClassStatus(c));
  const xdsIR: XdsIR = { gateways: {} };
  const infraIR: InfraIR = { gateways: {} };
  const ageOf = (r: RouteResult) => { const t = Date.parse(r.object.metadata.creationTimestamp ?? ''); return Number.isNaN(t) ? Number.MAX_SAFE_INTEGER : t; };
  for (const g of gateways) {
    const gw = g.object;
    const key = `${gw.metadata.namespace}/${gw.metadata.name}`;
    statuses.set(objectKey('Gateway', gw.metadata.namespace, gw.metadata.name), gatewayStatus(g, attached, ctx.services) as Record<string, unknown>);
    if (g.parametersProblem || g.addressProblem) continue;
    xdsIR.gateways[key] = assembleGateway(g, routesByGateway.get(g) ?? [], ageOf);
    infraIR.gateways[key] = buildGatewayInfra(g, []);
  }
  for (const s of listenerSets) statuses.set(objectKey('ListenerSet', s.object.metadata.namespace, s.object.metadata.name), listenerSetStatus(s, attached));
  for (const r of routes) statuses.set(objectKey(r.kind, r.object.metadata.namespace, r.object.metadata.name), routeStatus(r, controllerName));
  backendTLSStatuses(ctx, routes, controllerName, statuses);

  const sortedStatuses: Record<string, Record<string, unknown>> = {};
  for (const k of [...statuses.keys()].sort()) sortedStatuses[k] = statuses.get(k) as Record<string, unknown>;
  return { statuses: sortedStatuses, xdsIR, infraIR, diagnostics: diagnostics.sort((a, b) => (a.object < b.object ? -1 : a.object > b.object ? 1 : 0)) };
}

/** BackendTLSPolicy ancestors are the route parents (Gateways) whose routes use the target. */
function backendTLSStatuses(ctx: TranslationContext, routes: RouteResult[], controllerName: string, out: Map<string, Record<string, unknown>>): void {
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
    const refs = ancestors.get(key);
    if (!refs) continue;
    const gen = p.metadata.generation;
    const conds: Condition[] = [
      model.notAccepted ? condition('Accepted', false, model.notAccepted.reason, model.notAccepted.message, gen) : condition('Accepted', true, 'Accepted', 'Policy is accepted', gen),
      model.refsProblem ? condition('ResolvedRefs', false, model.refsProblem.reason, model.refsProblem.message, gen) : condition('ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved', gen),
    ];
    // status.ancestors holds at most 16 entries (CRD maxItems): keep the first 16 in a stable order.
    const list = [...refs.keys()].sort().slice(0, MAX_ANCESTORS).map((k) => ({ ancestorRef: refs.get(k)!, controllerName, conditions: sortConditions(conds.map((c) => ({ ...c }))) }));
    out.set(`BackendTLSPolicy/${p.metadata.namespace}/${p.metadata.name}`, { ancestors: list });
  }
}

export { OWNED_STATUS_KINDS };
