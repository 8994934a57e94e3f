// Stage 4c: XTelemetryPolicy (GEP-4768). Which policy applies to each Gateway it targets, what tracing
// that Gateway gets, and every policy's status (one ancestor per targeted Gateway of ours). Derived again
// as a whole when a policy or anything one read changed (the provider's Service, a ReferenceGrant, a
// targeted Gateway or its class): policies are few. Publishes `@telemetry:<namespace>/<name>` for each
// Gateway whose tracing changed, which assembles it again.
import {
  GATEWAY_GROUP,
  objectKey,
  type ClusterIR,
  type Condition,
  type Gateway,
  type GatewayClass,
  type PolicyAncestorStatus,
  type TracingIR,
  type XTelemetryPolicy,
} from '@turnpike/api';
import { flat } from '../compact-values.js';
import { deepEqual } from '../incremental/deep-equal.js';
import type { TranslationRun } from '../incremental/run.js';
import { judgeTelemetryPolicy, telemetryPrecedence, type TelemetryVerdict } from '../policies/telemetry-policies.js';
import { condition, conditionOf, sortConditions } from '../status/conditions.js';
import type { PolicyStage } from './policy-stage.js';

const PIECE = 'telemetry:';
const ALL = 'all';
export const telemetryFact = (namespace: string, name: string): string => flat(`@telemetry:${namespace}/${name}`);

export interface GatewayTracing {
  tracing: TracingIR;
  cluster: ClusterIR;
}

interface Derived {
  /** Gateway (`namespace/name`) → its tracing. */
  gateways: Map<string, GatewayTracing>;
  /** Status key → status. */
  statuses: Map<string, { ancestors: PolicyAncestorStatus[] }>;
}

export class TelemetryStage {
  private derived: Derived = { gateways: new Map(), statuses: new Map() };
  private started = false;

  update(run: TranslationRun, policies: PolicyStage): void {
    const dirty = !this.started || run.changedObjects('XTelemetryPolicy').length > 0 || run.dirtyPieces(PIECE).has(ALL);
    if (!dirty) return;
    this.started = true;
    const ctx = {
      inputs: run.inputs,
      backendTLS: (namespace: string, service: string, port: string | undefined) =>
        policies.forBackend(run, namespace, service, port),
    };
    const next = run.compute(PIECE, ALL, () => derive(run, ctx));
    for (const g of new Set([...this.derived.gateways.keys(), ...next.gateways.keys()])) {
      if (deepEqual(this.derived.gateways.get(g), next.gateways.get(g))) continue;
      const [namespace, name] = g.split('/') as [string, string];
      run.facts.add(telemetryFact(namespace, name));
    }
    for (const k of this.derived.statuses.keys()) if (!next.statuses.has(k)) run.out.statuses.delete(k);
    for (const [k, s] of next.statuses) if (!deepEqual(this.derived.statuses.get(k), s)) run.out.statuses.set(k, s);
    this.derived = next;
  }

  /** A Gateway's tracing, recording the dependency on it. */
  forGateway(run: TranslationRun, namespace: string, name: string): GatewayTracing | undefined {
    run.inputs.depend(telemetryFact(namespace, name));
    return this.derived.gateways.get(`${namespace}/${name}`);
  }
}

function derive(run: TranslationRun, ctx: Parameters<typeof judgeTelemetryPolicy>[0]): Derived {
  const all = run.inputs.list<XTelemetryPolicy>('XTelemetryPolicy');
  const verdicts = new Map<XTelemetryPolicy, TelemetryVerdict>(all.map((p) => [p, judgeTelemetryPolicy(ctx, p)]));
  // Gateway → the policies targeting it; a Gateway that is not there is kept apart (TargetNotFound).
  const byGateway = new Map<string, XTelemetryPolicy[]>();
  const missing = new Map<XTelemetryPolicy, string[]>();
  for (const p of all) {
    const ns = p.metadata.namespace ?? '';
    const seen = new Set<string>();
    for (const ref of p.spec.targetRefs ?? []) {
      if (ref.group !== GATEWAY_GROUP || ref.kind !== 'Gateway' || seen.has(ref.name)) continue;
      seen.add(ref.name);
      const gw = run.inputs.get<Gateway>('Gateway', ns, ref.name);
      if (!gw) {
        missing.set(p, [...(missing.get(p) ?? []), ref.name]);
        continue;
      }
      const cls = run.inputs.get<GatewayClass>('GatewayClass', undefined, gw.spec.gatewayClassName);
      if (cls?.spec.controllerName !== run.controllerName) continue; // another controller's Gateway
      const key = `${ns}/${ref.name}`;
      byGateway.set(key, [...(byGateway.get(key) ?? []), p]);
    }
  }
  const gateways = new Map<string, GatewayTracing>();
  const ancestors = new Map<XTelemetryPolicy, PolicyAncestorStatus[]>();
  const entry = (p: XTelemetryPolicy, gateway: string, conditions: Condition[]) => {
    const list = ancestors.get(p) ?? [];
    list.push({
      ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace: p.metadata.namespace ?? '', name: gateway },
      controllerName: run.controllerName,
      conditions: sortConditions(conditions),
    });
    ancestors.set(p, list);
  };
  for (const [key, targeting] of [...byGateway].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const gateway = key.slice(key.indexOf('/') + 1);
    // Only a policy that can apply takes precedence: one refused (Invalid) applies to no Gateway.
    const [winner, ...losers] = targeting.filter((p) => !verdicts.get(p)!.invalid).sort(telemetryPrecedence);
    for (const p of targeting) {
      const v = verdicts.get(p)!;
      const gen = p.metadata.generation;
      const refs = v.refs
        ? [condition('ResolvedRefs', false, v.refs.reason, v.refs.message, gen)]
        : v.resolved
          ? [condition('ResolvedRefs', true, 'ResolvedRefs', `the provider resolves to cluster ${v.resolved}`, gen)]
          : [];
      if (losers.includes(p)) {
        // "For any TelemetryPolicy that does not take precedence, the controller MUST set the `Accepted`
        // condition on the policy status to `status: False` with Reason `Conflicted`."
        const w = `${winner!.metadata.namespace ?? ''}/${winner!.metadata.name}`;
        entry(p, gateway, [
          condition('Accepted', false, 'Conflicted', `XTelemetryPolicy ${w} takes precedence on this Gateway`, gen),
          ...refs,
        ]);
        continue;
      }
      entry(p, gateway, [
        conditionOf('Accepted', v.invalid, { reason: 'Accepted', message: 'Policy is accepted' }, gen),
        ...refs,
      ]);
      if (p === winner && v.tracing) gateways.set(key, { tracing: v.tracing.ir, cluster: v.tracing.cluster });
    }
  }
  for (const [p, names] of missing)
    for (const name of names)
      entry(p, name, [
        condition(
          'Accepted',
          false,
          'TargetNotFound',
          `Gateway ${p.metadata.namespace}/${name} not found`,
          p.metadata.generation,
        ),
      ]);
  const statuses = new Map<string, { ancestors: PolicyAncestorStatus[] }>();
  for (const [p, list] of ancestors) {
    list.sort((a, b) =>
      a.ancestorRef.name < b.ancestorRef.name ? -1 : a.ancestorRef.name > b.ancestorRef.name ? 1 : 0,
    );
    statuses.set(objectKey('XTelemetryPolicy', p.metadata.namespace, p.metadata.name), { ancestors: list });
  }
  return { gateways, statuses };
}
