// HTTPRoute / GRPCRoute match precedence inside one virtual host (httproute_types.go Matches):
// Exact path, then the longest PathPrefix, then a method match, then the most header matches,
// then the most query matches; remaining ties go to the oldest route, then namespace/name, then
// rule and match order. Regular expressions rank between Exact and PathPrefix (implementation-
// specific in the spec), longer first.
import type { HTTPRouteIR } from '@turnpike/api';

const PATH_RANK = { Exact: 3, RegularExpression: 2, PathPrefix: 1 } as const;

export interface RankedRoute {
  route: HTTPRouteIR;
  age: number;
  order: string;
}

export function compareRoutePrecedence(a: RankedRoute, b: RankedRoute): number {
  const ma = a.route.match,
    mb = b.route.match;
  const ra = PATH_RANK[ma.path.type],
    rb = PATH_RANK[mb.path.type];
  if (ra !== rb) return rb - ra;
  if (ma.path.value.length !== mb.path.value.length) return mb.path.value.length - ma.path.value.length;
  const meA = ma.method ? 1 : 0,
    meB = mb.method ? 1 : 0;
  if (meA !== meB) return meB - meA;
  if (ma.headers.length !== mb.headers.length) return mb.headers.length - ma.headers.length;
  if (ma.queryParams.length !== mb.queryParams.length) return mb.queryParams.length - ma.queryParams.length;
  if (a.age !== b.age) return a.age - b.age;
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  const sa = a.route.source,
    sb = b.route.source;
  if (sa.rule !== sb.rule) return sa.rule - sb.rule;
  return (sa.match ?? 0) - (sb.match ?? 0);
}
