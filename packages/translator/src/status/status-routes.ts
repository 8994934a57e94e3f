// Route status: one entry per parentRef that names a parent of ours (controllerName ours),
// with Accepted, ResolvedRefs and, when some rules are invalid, PartiallyInvalid.
import { CONTROLLER_NAME, type Condition, type RouteParentStatus } from '@turnpike/api';
import { condition, resolvedRefsCondition, sortConditions, type Problem } from './conditions.js';
import { ROUTE_RULES_OVERLAP } from '../routes/route-overlaps.js';
import { CONFIG_WITHHELD } from './status-gateways.js';
import { MAX_ANCESTORS } from '../policies/backend-tls-policies.js';
import { BACKENDS_AVAILABLE } from '../routes/backend-availability.js';
import type { RouteResult } from '../routes/route-result.js';
import { fitted } from '../compact-values.js';

/** `overlaps`: per parent Gateway (`namespace/name`), the matches of this route another route also claims. */
export function routeStatus(
  r: RouteResult,
  controllerName = CONTROLLER_NAME,
  overlaps?: ReadonlyMap<string, readonly string[]>,
  /** Per parent Gateway, the BackendTLSPolicies it may not use (beyond their 16th ancestor). */
  blockedPolicies?: ReadonlyMap<string, readonly string[]>,
  /** Per parent Gateway, what its serving path withheld of this route (turnpike.dev/ConfigWithheld). */
  withheld?: ReadonlyMap<string, readonly string[]>,
): { parents: RouteParentStatus[] } {
  const gen = r.object.metadata.generation;
  const parents: RouteParentStatus[] = [];
  for (const p of r.parents) {
    const conds: Condition[] = [];
    const gateway = `${p.gateway.object.metadata.namespace}/${p.gateway.object.metadata.name}`;
    if (p.problem) conds.push(condition('Accepted', false, p.problem.reason, p.problem.message, gen));
    else if (r.invalid) conds.push(condition('Accepted', false, r.invalid.reason, r.invalid.message, gen));
    else {
      conds.push(
        condition(
          'Accepted',
          true,
          'Accepted',
          `Route is accepted by ${p.attached.length} listener(s): ` +
            `${p.attached.map((a) => a.listener.spec.name).join(', ')}`,
          gen,
        ),
      );
      if (r.partiallyInvalid)
        conds.push(
          condition(
            'PartiallyInvalid',
            true,
            r.partiallyInvalid.reason,
            // A match that cannot be compiled serves nothing at all (routes/http-rules.ts): say so.
            `Invalid rules answer 500${r.leftOut?.length ? ' (a match that cannot be compiled is left out instead)' : ''}: ` +
              r.partiallyInvalid.message,
            gen,
          ),
        );
      // Only for routes that use backends: a redirect-only or direct-response route has none to wait for.
      if (r.unavailable)
        conds.push(condition(BACKENDS_AVAILABLE, false, r.unavailable.reason, r.unavailable.message, gen));
      else if (r.clusters.length)
        conds.push(condition(BACKENDS_AVAILABLE, true, BACKENDS_AVAILABLE, 'Every backend has a ready endpoint', gen));
      const overlap = overlaps?.get(gateway);
      if (overlap?.length)
        conds.push(condition(ROUTE_RULES_OVERLAP, true, ROUTE_RULES_OVERLAP, overlapMessage(overlap), gen));
      const held = withheld?.get(gateway);
      if (held?.length)
        conds.push(
          condition(
            CONFIG_WITHHELD,
            true,
            'RefusedByEnvoyRules',
            `withheld from Gateway ${gateway}'s proxies as Envoy would refuse it: ${held.join('; ')}`,
            gen,
          ),
        );
    }
    const blocked = blockedPolicies?.get(gateway);
    const policyBlocked: Problem | undefined = blocked?.length
      ? {
          reason: 'InvalidBackendTLSPolicy',
          message:
            `BackendTLSPolicy ${blocked.join(', ')} already lists ${MAX_ANCESTORS} Gateways in ` +
            `status.ancestors; Gateway ${gateway} may not use its Service (those backends answer 500)`,
        }
      : undefined;
    conds.push(resolvedRefsCondition(r.unresolved ?? policyBlocked, gen));
    parents.push({ parentRef: p.ref, controllerName, conditions: fitted(sortConditions(conds)) });
  }
  return { parents: fitted(parents) };
}

const MAX_OVERLAP_LINES = 8;

function overlapMessage(lines: readonly string[]): string {
  const shown = lines.slice(0, MAX_OVERLAP_LINES).join('; ');
  return lines.length > MAX_OVERLAP_LINES ? `${shown}; and ${lines.length - MAX_OVERLAP_LINES} more` : shown;
}

/**
 * A route parent whose listeners get the route's configuration: it attached. A route whose rules
 * are all invalid still gets configured, as 500s for its matches, so a typo fails closed instead
 * of letting the requests fall through to another route.
 */
export function parentCarriesTraffic(_r: RouteResult, p: RouteResult['parents'][number]): boolean {
  return !p.problem;
}
