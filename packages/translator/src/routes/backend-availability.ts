// BackendsAvailable: whether every Service a route sends traffic to (mirrors included) has a ready
// endpoint. A route whose backends are all resolved can still answer 503 because no pod is ready;
// this condition says so on the route itself instead of leaving the reader to find the Service.
import type { Problem } from '../status/conditions.js';
import type { TranslationContext } from '../context.js';
import type { RouteResult } from './route-result.js';

export const BACKENDS_AVAILABLE = 'BackendsAvailable';
export const ENDPOINTS_NOT_FOUND = 'EndpointsNotFound';

/** The backends of a translated route that have no ready endpoint, as a problem; undefined when all have one. */
export function unavailableBackends(ctx: TranslationContext, result: RouteResult): Problem | undefined {
  const missing = result.clusters
    .filter((c) => !ctx.clusterReady(c))
    .map(
      (c) =>
        `${c.endpointSelector ? 'XBackend ' : 'Service '}${c.service.namespace}/${c.service.name}:${c.service.port}`,
    );
  if (missing.length === 0) return undefined;
  const names = [...new Set(missing)].sort();
  return { reason: ENDPOINTS_NOT_FOUND, message: `No ready endpoints for ${names.join(', ')}` };
}
