// HTTPRouteBackendURLRewrite (Gateway API v1.7): a URLRewrite filter on a backendRef. Envoy rewrites
// the host per weighted cluster (ClusterWeight.host_rewrite_literal) but the path only per route
// (RouteAction.regex_rewrite; ClusterWeight has no path rewrite). So a backendRef's path rewrite is
// served as its route's when every backend the rule sends traffic to rewrites the path the same
// way; otherwise a rewrite meant for one backend would reach another, and the rule is refused.
import type { BackendRef, HTTPRouteFilter, WeightedCluster } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import type { CompiledFilters } from './http-filters.js';

type PathRewrite = NonNullable<NonNullable<HTTPRouteFilter['urlRewrite']>['path']>;

function pathRewriteOf(ref: BackendRef): PathRewrite | undefined {
  return ref.filters?.find((f) => f.type === 'URLRewrite' && f.urlRewrite?.path)?.urlRewrite?.path;
}

const sameRewrite = (a: PathRewrite | undefined, b: PathRewrite | undefined) =>
  a?.type === b?.type && a?.replaceFullPath === b?.replaceFullPath && a?.replacePrefixMatch === b?.replacePrefixMatch;

/**
 * Moves the backendRefs' path rewrite onto the rule's own filters, or says why it cannot be served.
 * Only backendRefs that take traffic (weight above 0) count. `backends` are the rule's resolved
 * weighted clusters, their filters compiled; they lose the path rewrite they hand to the rule.
 */
export function hoistBackendPathRewrite(
  refs: readonly BackendRef[],
  rule: CompiledFilters,
  backends: WeightedCluster[],
  field: string,
): Problem | undefined {
  const weighted = refs.map((ref, index) => ({ ref, index })).filter(({ ref }) => (ref.weight ?? 1) > 0);
  const withPath = weighted.find(({ ref }) => pathRewriteOf(ref));
  if (!withPath) return undefined;
  // A combination of filters the proxy cannot honour: the spec's IncompatibleFilters, documented in docs/features.md.
  const unsupported = (message: string): Problem => ({ reason: 'IncompatibleFilters', message });
  if (rule.filters.rewrite?.path)
    return unsupported(
      `${field}.backendRefs[${withPath.index}].filters: the rule's own URLRewrite already rewrites the path; ` +
        `a backendRef may not rewrite it again`,
    );
  const wanted = pathRewriteOf(withPath.ref);
  const other = weighted.find(({ ref }) => !sameRewrite(pathRewriteOf(ref), wanted));
  if (other)
    return unsupported(
      `${field}.backendRefs[${other.index}].filters: backendRefs[${withPath.index}] rewrites the path and this ` +
        `backendRef does not do it the same way; a path rewrite on backendRefs is served only when every ` +
        `backendRef with weight rewrites the path alike (the proxy rewrites a route's path, not a backend's)`,
    );
  const compiled = backends.find((b) => b.filters?.rewrite?.path)?.filters?.rewrite?.path;
  if (!compiled) return undefined; // none resolved: the rule answers 500 and rewrites nothing
  rule.filters.rewrite = { ...rule.filters.rewrite, path: compiled };
  for (const b of backends) {
    const rewrite = b.filters?.rewrite;
    if (!rewrite?.path) continue;
    const { rewrite: _moved, ...others } = b.filters!;
    const filters = rewrite.hostname ? { ...others, rewrite: { hostname: rewrite.hostname } } : others;
    if (Object.keys(filters).length) b.filters = filters;
    else delete b.filters;
  }
  return undefined;
}
