// A semantic diff of two translations: per object the conditions and attachedRoutes that
// changed, per Gateway the listeners, routes and clusters added, removed or changed in the xDS
// IR, and the infra changes. Pure; printing is separate.
import type { Condition } from '@turnpike/api';
import type { GatewayIR, XdsIR } from '@turnpike/api';
import type { TranslateResult } from '@turnpike/translator';
import { canonical } from './canonical.js';
import { flatten } from './status-conditions.js';

type AnyStatus = Record<string, unknown>;

export interface ConditionChange {
  where: string;
  type: string;
  old?: string;
  new?: string;
}
export interface ObjectChange {
  object: string;
  change: 'added' | 'removed' | 'changed';
  conditions: ConditionChange[];
  attachedRoutes: { listener: string; old?: number; new?: number }[];
}
export interface SetChange {
  added: string[];
  removed: string[];
  changed: string[];
}
export interface GatewayXdsChange {
  gateway: string;
  change: 'added' | 'removed' | 'changed';
  listeners: SetChange;
  routes: SetChange;
  clusters: SetChange;
}
export interface InfraChange {
  gateway: string;
  change: 'added' | 'removed' | 'changed';
  fields: string[];
}
export interface SemanticDiff {
  objects: ObjectChange[];
  xds: GatewayXdsChange[];
  infra: InfraChange[];
  same: boolean;
}

function condText(c: Condition | undefined): string | undefined {
  return c ? `${c.status}/${c.reason}` : undefined;
}

function attached(status: AnyStatus | undefined): Map<string, number> {
  return new Map(
    ((status?.listeners as AnyStatus[] | undefined) ?? []).map((l) => [String(l.name), Number(l.attachedRoutes ?? 0)]),
  );
}

function diffObject(key: string, a: AnyStatus | undefined, b: AnyStatus | undefined): ObjectChange | undefined {
  const fa = flatten(a),
    fb = flatten(b);
  const conditions: ConditionChange[] = [];
  for (const where of [...new Set([...fa.keys(), ...fb.keys()])].sort()) {
    const ca = fa.get(where) ?? new Map(),
      cb = fb.get(where) ?? new Map();
    for (const type of [...new Set([...ca.keys(), ...cb.keys()])].sort()) {
      const o = condText(ca.get(type)),
        n = condText(cb.get(type));
      if (o !== n) {
        const ch: ConditionChange = { where, type };
        if (o) ch.old = o;
        if (n) ch.new = n;
        conditions.push(ch);
      }
    }
  }
  const aa = attached(a),
    ab = attached(b);
  const routes: ObjectChange['attachedRoutes'] = [];
  for (const l of [...new Set([...aa.keys(), ...ab.keys()])].sort()) {
    if (aa.get(l) !== ab.get(l))
      routes.push({ listener: l, ...(aa.has(l) ? { old: aa.get(l) } : {}), ...(ab.has(l) ? { new: ab.get(l) } : {}) });
  }
  const change = !a ? 'added' : !b ? 'removed' : 'changed';
  if (change === 'changed' && !conditions.length && !routes.length) return undefined;
  return { object: key, change, conditions, attachedRoutes: routes };
}

function diffKeyed(a: Map<string, string>, b: Map<string, string>): SetChange {
  const out: SetChange = { added: [], removed: [], changed: [] };
  for (const k of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    if (!a.has(k)) out.added.push(k);
    else if (!b.has(k)) out.removed.push(k);
    else if (a.get(k) !== b.get(k)) out.changed.push(k);
  }
  return out;
}

function gatewayParts(
  g: GatewayIR | undefined,
  endpoints: XdsIR['endpoints'],
): { listeners: Map<string, string>; routes: Map<string, string>; clusters: Map<string, string> } {
  const listeners = new Map<string, string>(),
    routes = new Map<string, string>(),
    clusters = new Map<string, string>();
  for (const p of g?.ports ?? []) {
    for (const l of p.listeners) {
      const { virtualHosts, routes: l4, ...rest } = l;
      listeners.set(`${p.name} ${l.name}`, canonical(rest));
      for (const vh of virtualHosts ?? [])
        for (const r of vh.routes) routes.set(`${vh.domains.join(',')} ${r.name}`, canonical(r));
      for (const r of l4 ?? []) routes.set(`${p.name} ${r.name}`, canonical(r));
    }
  }
  // A cluster's endpoints are part of what changes about it.
  for (const c of g?.clusters ?? []) clusters.set(c.name, canonical({ ...c, endpoints: endpoints.get(c.name) ?? [] }));
  return { listeners, routes, clusters };
}

const empty = (s: SetChange) => !s.added.length && !s.removed.length && !s.changed.length;

export function semanticDiff(a: TranslateResult, b: TranslateResult): SemanticDiff {
  const objects: ObjectChange[] = [];
  for (const key of [...new Set([...a.statuses.keys(), ...b.statuses.keys()])].sort()) {
    const d = diffObject(key, a.statuses.get(key), b.statuses.get(key));
    if (d) objects.push(d);
  }
  const xds: GatewayXdsChange[] = [];
  for (const gw of [...new Set([...a.xdsIR.gateways.keys(), ...b.xdsIR.gateways.keys()])].sort()) {
    const ga = a.xdsIR.gateways.get(gw),
      gb = b.xdsIR.gateways.get(gw);
    const pa = gatewayParts(ga, a.xdsIR.endpoints),
      pb = gatewayParts(gb, b.xdsIR.endpoints);
    const d: GatewayXdsChange = {
      gateway: gw,
      change: !ga ? 'added' : !gb ? 'removed' : 'changed',
      listeners: diffKeyed(pa.listeners, pb.listeners),
      routes: diffKeyed(pa.routes, pb.routes),
      clusters: diffKeyed(pa.clusters, pb.clusters),
    };
    if (d.change !== 'changed' || !empty(d.listeners) || !empty(d.routes) || !empty(d.clusters)) xds.push(d);
  }
  const infra: InfraChange[] = [];
  for (const gw of [...new Set([...a.infraIR.gateways.keys(), ...b.infraIR.gateways.keys()])].sort()) {
    const ia = a.infraIR.gateways.get(gw) as unknown as AnyStatus | undefined,
      ib = b.infraIR.gateways.get(gw) as unknown as AnyStatus | undefined;
    if (!ia || !ib) {
      infra.push({ gateway: gw, change: !ia ? 'added' : 'removed', fields: [] });
      continue;
    }
    const fields = [...new Set([...Object.keys(ia), ...Object.keys(ib)])]
      .sort()
      .filter((k) => canonical(ia[k]) !== canonical(ib[k]));
    if (fields.length) infra.push({ gateway: gw, change: 'changed', fields });
  }
  return { objects, xds, infra, same: !objects.length && !xds.length && !infra.length };
}
