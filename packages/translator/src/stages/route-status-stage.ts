// Stage 8: route status. Written after assembly because one condition (RouteRulesOverlap) is only
// known once a Gateway's routes are merged; a route's status is derived again when the route was
// translated again or its overlaps changed.
import type { TranslationRun } from '../incremental/run.js';
import { routeStatus } from '../status/status-routes.js';
import type { AssemblyStage } from './assembly-stage.js';
import type { PolicyAncestorsStage } from './policy-ancestors-stage.js';
import type { RouteStage } from './route-stage.js';

export class RouteStatusStage {
  update(run: TranslationRun, routes: RouteStage, assembly: AssemblyStage, ancestors: PolicyAncestorsStage): void {
    for (const key of new Set([...routes.statusDirty, ...assembly.overlapTouched, ...ancestors.changedRoutes])) {
      const entry = routes.entries.get(key);
      const r = entry?.result;
      if (!entry || !r?.parents.length) {
        run.out.statuses.delete(key);
        continue;
      }
      // Only a route that uses a BackendTLSPolicy can be blocked from one.
      let blocked: Map<string, string[]> | undefined;
      if (r.backendTLSPolicies?.length)
        for (const g of entry.gateways) {
          const policies = r.backendTLSPolicies.filter((p) => ancestors.blockedOn(g).has(p));
          if (policies.length) (blocked ??= new Map()).set(g, policies);
        }
      run.out.statuses.set(
        key,
        routeStatus(
          r,
          run.controllerName,
          assembly.overlapsOfRoute(key, entry.gateways),
          blocked,
          assembly.withheldOfRoute(key, entry.gateways),
        ),
      );
    }
  }
}
