// HTTPRoute: hostnames, matches (path, headers, query parameters, method), filters, backends.
import type { HTTPRoute } from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import { validateHostname } from '../hostnames.js';
import { attachRoute, type ParentIndex } from './attachment.js';
import { compileHTTPMatch } from './http-matches.js';
import { translateRules } from './http-rules.js';
import type { RouteResult } from './route-result.js';

export function translateHTTPRoute(ctx: TranslationContext, parents: ParentIndex, route: HTTPRoute): RouteResult {
  const spec = route.spec ?? {};
  const result: RouteResult = { object: route, kind: 'HTTPRoute', parents: [], clusters: [] };
  const badHost = (spec.hostnames ?? []).map((h, i) => [i, validateHostname(h)] as const).find(([, e]) => e);
  result.parents = attachRoute(ctx.snapshot, parents, route, 'HTTPRoute', spec.parentRefs ?? [], spec.hostnames);
  if (result.parents.length === 0) return result;
  if (badHost) {
    result.invalid = { reason: 'UnsupportedValue', message: `spec.hostnames[${badHost[0]}]: ${badHost[1]}` };
    return result;
  }
  const rules = (spec.rules && spec.rules.length ? spec.rules : [{}]).map((r, ri) => ({
    ...r,
    matches: (r.matches && r.matches.length ? r.matches : [{}]).map((m, mi) => compileHTTPMatch(m, `spec.rules[${ri}].matches[${mi}]`)),
  }));
  translateRules(ctx, route, 'HTTPRoute', rules, result);
  return result;
}
