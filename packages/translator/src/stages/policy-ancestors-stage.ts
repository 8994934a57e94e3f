// Stage 6 (before assembly): the ancestors of each BackendTLSPolicy, the Gateways whose routes
// use its Service (or whose listeners' auth checks call it), in one stable order. status.ancestors
// lists at most 16; the spec then says the policy is unimplementable for any further ancestor ("no
// additional Gateways would be able to reference the Service targeted by the BackendTLSPolicy"). So
// each Gateway beyond the 16th is told which policies it may not use: its assembly answers those
// route backends 500 and its routes say why (its auth checks are still made under the policy).
// Derived again only when a policy, a route using one or a Gateway's auth policies changed.
import { GATEWAY_GROUP, type PolicyAncestorStatus } from '@turnpike/api';
import { MAX_ANCESTORS } from '../policies/backend-tls-policies.js';
import { parentCarriesTraffic } from '../status/status-routes.js';
import type { PolicyStage } from './policy-stage.js';
import type { RouteStage } from './route-stage.js';
import type { GatewayStage } from './gateway-stage.js';

type AncestorRef = PolicyAncestorStatus['ancestorRef'];

export class PolicyAncestorsStage {
  /** Policy (`namespace/name`) → its ancestor refs, keyed and sorted by their canonical JSON. */
  ancestors = new Map<string, Map<string, AncestorRef>>();
  /**
   * Policy → the ancestors reached through a Service it fails to attach to (a sectionName naming no port
   * of it), keyed likewise; an ancestor also reached through an attached target is in `ancestors` only.
   */
  detachedAncestors = new Map<string, Map<string, AncestorRef>>();
  /** Gateway (`namespace/name`) → the policies it is beyond the 16th ancestor of. */
  private overflow = new Map<string, Set<string>>();
  /** Gateways whose overflow changed in the last run (assembled again). */
  changedGateways = new Set<string>();
  /** Routes on those Gateways that use a policy (their status is written again). */
  changedRoutes = new Set<string>();

  update(policies: PolicyStage, routes: RouteStage, gateways: GatewayStage): void {
    this.changedGateways = new Set();
    this.changedRoutes = new Set();
    if (!policies.changed && !routes.policiesTouched && !gateways.authPoliciesTouched) return;
    const ancestors = new Map<string, Map<string, AncestorRef>>();
    const detached = new Map<string, Map<string, AncestorRef>>();
    const add = (to: Map<string, Map<string, AncestorRef>>, policy: string, ref: AncestorRef) => {
      const m = to.get(policy) ?? new Map<string, AncestorRef>();
      m.set(JSON.stringify(ref), ref);
      to.set(policy, m);
    };
    for (const key of [...routes.routesWithPolicies].sort()) {
      const r = routes.entries.get(key)?.result;
      if (!r) continue;
      for (const p of r.parents) {
        if (!parentCarriesTraffic(r, p)) continue;
        const ref = {
          group: p.ref.group ?? 'gateway.networking.k8s.io',
          kind: p.ref.kind ?? 'Gateway',
          namespace: p.ref.namespace ?? r.object.metadata.namespace ?? '',
          name: p.ref.name,
          ...(p.ref.sectionName !== undefined ? { sectionName: p.ref.sectionName } : {}),
          ...(p.ref.port !== undefined ? { port: p.ref.port } : {}),
        };
        for (const policy of r.backendTLSPolicies ?? []) add(ancestors, policy, ref);
        for (const policy of r.detachedTLSPolicies ?? []) add(detached, policy, ref);
      }
    }
    // A Gateway whose listeners' ExternalAuth checks are made under a policy (GEP-5224 with BackendTLSPolicy).
    for (const [g, used] of gateways.authPolicies) {
      const [namespace, name] = g.split('/') as [string, string];
      const ref = { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name };
      for (const policy of used.attached) add(ancestors, policy, ref);
      for (const policy of used.detached) add(detached, policy, ref);
    }
    const sorted = (refs: Map<string, AncestorRef>) =>
      new Map([...refs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const [policy, refs] of ancestors) ancestors.set(policy, sorted(refs));
    for (const [policy, refs] of detached) {
      const attached = ancestors.get(policy);
      for (const k of attached?.keys() ?? []) refs.delete(k);
      if (refs.size) detached.set(policy, sorted(refs));
      else detached.delete(policy);
    }
    const overflow = new Map<string, Set<string>>();
    for (const [policy, refs] of ancestors) {
      const all = [...refs.values()];
      const listed = new Set(all.slice(0, MAX_ANCESTORS).map(gatewayOf));
      for (const ref of all.slice(MAX_ANCESTORS)) {
        const g = gatewayOf(ref);
        if (listed.has(g)) continue; // another section of a listed Gateway: it is an ancestor already
        const s = overflow.get(g) ?? new Set<string>();
        s.add(policy);
        overflow.set(g, s);
      }
    }
    for (const g of new Set([...this.overflow.keys(), ...overflow.keys()])) {
      const a = this.overflow.get(g),
        b = overflow.get(g);
      if (a?.size === b?.size && [...(a ?? [])].every((x) => b?.has(x))) continue;
      this.changedGateways.add(g);
      for (const rk of routes.routesOfGateway.get(g) ?? [])
        if (routes.routesWithPolicies.has(rk)) this.changedRoutes.add(rk);
    }
    this.ancestors = ancestors;
    this.detachedAncestors = detached;
    this.overflow = overflow;
  }

  /** The policies a Gateway may not use (it is beyond their 16th ancestor). */
  blockedOn(gateway: string): ReadonlySet<string> {
    return this.overflow.get(gateway) ?? EMPTY;
  }
}

const EMPTY: ReadonlySet<string> = new Set();
const gatewayOf = (ref: AncestorRef) => `${ref.namespace}/${ref.name}`;
