// Stage 9: BackendTLSPolicy status. Its ancestors are the route parents (Gateways) whose routes
// use the policy's Service, and the Gateways whose listeners' auth checks call it; derived again
// only when a policy, a route using one or such a Gateway changed. An ancestor reached only through
// a target the policy fails to attach to (its sectionName names no port of the Service) is told so:
// Accepted=False, TargetNotFound, naming the section.
import { type BackendTLSPolicy, type Condition } from '@turnpike/api';
import { condition, conditionOf, resolvedRefsCondition, sortConditions } from '../status/conditions.js';
import type { TranslationRun } from '../incremental/run.js';
import { MAX_ANCESTORS } from '../policies/backend-tls-policies.js';
import type { PolicyAncestorsStage } from './policy-ancestors-stage.js';
import type { PolicyStage } from './policy-stage.js';
import type { RouteStage } from './route-stage.js';
import type { GatewayStage } from './gateway-stage.js';

export class BackendTLSStatusStage {
  private written = new Set<string>();

  update(
    run: TranslationRun,
    policies: PolicyStage,
    routes: RouteStage,
    gateways: GatewayStage,
    stage: PolicyAncestorsStage,
  ): void {
    if (!policies.changed && !routes.policiesTouched && !gateways.authPoliciesTouched) return;
    const ancestors = stage.ancestors;
    const written = new Set<string>();
    for (const model of policies.index.models) {
      const p: BackendTLSPolicy = model.policy;
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      // A policy that lost a conflict reports on the ancestors of the winner it lost to.
      const winner = model.lostTo?.policy;
      const attached =
        ancestors.get(key) ??
        (winner ? ancestors.get(`${winner.metadata.namespace}/${winner.metadata.name}`) : undefined);
      const detached = stage.detachedAncestors.get(key);
      if (!attached && !detached) continue;
      const refs = new Map([...(attached ?? []), ...(detached ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const gen = p.metadata.generation;
      const conds: Condition[] = [
        conditionOf('Accepted', model.notAccepted, { reason: 'Accepted', message: 'Policy is accepted' }, gen),
        resolvedRefsCondition(model.refsProblem, gen),
      ];
      // "If a SectionName is specified, but does not exist on the targeted object, the Policy must fail to
      // attach, and the policy implementation should record a `ResolvedRefs` or similar Condition in the
      // Policy's status": Accepted=False with TargetNotFound ("the policy is attached to an invalid target
      // resource"), on the ancestors that reach the policy through that target only.
      const notFound = model.detached?.map((d) => d.problem.message).join('; ');
      const detachedConds: Condition[] = [
        condition('Accepted', false, 'TargetNotFound', notFound ?? '', gen),
        resolvedRefsCondition(model.refsProblem, gen),
      ];
      // Keep the first 16 ancestors in a stable order; the last one listed says how many are not.
      const all = [...refs.keys()];
      const list = all.slice(0, MAX_ANCESTORS).map((k) => ({
        ancestorRef: refs.get(k)!,
        controllerName: run.controllerName,
        conditions: sortConditions((detached?.has(k) ? detachedConds : conds).map((c) => ({ ...c }))),
      }));
      if (all.length > MAX_ANCESTORS) {
        const rest = all.slice(MAX_ANCESTORS).map((k) => `${refs.get(k)!.namespace}/${refs.get(k)!.name}`);
        const last = list[list.length - 1]!;
        last.conditions = sortConditions([
          ...last.conditions,
          condition(
            'Aggregated',
            true,
            'Aggregated',
            `status.ancestors holds ${MAX_ANCESTORS} entries; ${rest.length} more are not listed: ` +
              `${rest.join(', ')}. A Gateway not listed at all may not use this policy's Service as a route ` +
              `backend (those backends answer 500); its listeners' ExternalAuth checks are still made under it`,
            gen,
          ),
        ]);
      }
      const statusKey = `BackendTLSPolicy/${key}`;
      written.add(statusKey);
      run.out.statuses.set(statusKey, { ancestors: list });
    }
    for (const k of this.written) if (!written.has(k)) run.out.statuses.delete(k);
    this.written = written;
  }
}
