// Stage 7: route status. Written after assembly because one condition (RouteRulesOverlap) is only
// known once a Gateway's routes are merged; a route's status is derived again when the route was
// translated again or its overlaps changed.
import type { TranslationRun } from '../incremental/run.js';
import { routeStatus } from '../status-routes.js';
import type { AssemblyStage } from './assembly-stage.js';
import type { RouteStage } from './route-stage.js';

export class RouteStatusStage {
  update(run: TranslationRun, routes: RouteStage, assembly: AssemblyStage): void {
    for (const key of new Set([...routes.statusDirty, ...assembly.overlapTouched])) {
      const entry = routes.entries.get(key);
      const r = entry?.result;
      if (!entry || !r?.parents.length) {
        run.out.statuses.delete(key);
        continue;
      }
      run.out.statuses.set(key, routeStatus(r, run.controllerName, assembly.overlapsOfRoute(key, entry.gateways)));
    }
  }
}
